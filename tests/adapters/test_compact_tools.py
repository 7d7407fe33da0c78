"""Compact tool schemas: every tool, every argument and every required argument kept, the long text left out."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import salesgym
from salesgym.adapters.rollout import RolloutConfig
from salesgym.llm.compact_tools import compact_tools, first_sentence


def _fields(schema: Mapping[str, Any], defs: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, bool]]:
    """(argument path, required) of every named field of a schema, nested ones included."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        yield from _fields(defs[ref.rsplit("/", 1)[-1]], defs, path)
        return
    for option in (*schema.get("anyOf", ()), *schema.get("oneOf", ())):
        yield from _fields(option, defs, path)
    if isinstance(schema.get("items"), Mapping):
        yield from _fields(schema["items"], defs, path + "[]")
    required = set(schema.get("required", ()))
    for name, sub in (schema.get("properties") or {}).items():
        yield f"{path}.{name}", name in required
        yield from _fields(sub, defs, f"{path}.{name}")


@pytest.mark.parametrize("env_id", ["workflows-v0", "territory-debug-v0"])
def test_compact_keeps_every_tool_and_every_required_argument(env_id: str) -> None:
    env = salesgym.make(env_id)
    full = env.tool_schemas()
    compact = compact_tools(full)
    assert [t["function"]["name"] for t in compact] == [t["function"]["name"] for t in full]
    for before, after in zip(full, compact, strict=True):
        params = before["function"].get("parameters") or {}
        wanted = set(_fields(params, params.get("$defs", {})))
        kept = set(_fields(after["function"]["parameters"], {}))
        assert wanted == kept, before["function"]["name"]  # same names, same required ones, at every depth
        assert "description" not in json.dumps(after["function"]["parameters"])
        assert after["function"]["parameters"]["type"] == "object"
        assert "\n" not in after["function"]["description"]
    assert len(json.dumps(compact)) < 0.6 * len(json.dumps(full))


def test_an_optional_argument_keeps_its_type_and_allowed_values() -> None:
    tools = {t["function"]["name"]: t["function"] for t in compact_tools(salesgym.make("workflows-v0").tool_schemas())}
    update = tools["hubspot-batch-update-objects"]
    assert update["description"] == "Update properties of contacts, companies or deals by id"
    props = update["parameters"]["properties"]
    assert props["objectType"] == {"type": "string", "enum": ["contacts", "companies", "deals"]}
    assert props["inputs"]["items"]["properties"]["properties"]["properties"]["email"] == {"type": "string"}


def test_first_sentence() -> None:
    assert first_sentence("Book a slot. The host's rules apply.\nMore.") == "Book a slot"
    assert first_sentence("List owners; paged") == "List owners"
    assert first_sentence("") == ""


def test_the_rollout_config_takes_full_or_compact() -> None:
    assert RolloutConfig().tool_schemas == "full"
    assert RolloutConfig(tool_schemas="compact").tool_schemas == "compact"
    with pytest.raises(ValueError, match="tool_schemas"):
        RolloutConfig(tool_schemas="short")  # type: ignore[arg-type]
