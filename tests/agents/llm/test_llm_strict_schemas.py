"""The tool schemas sent to the endpoint are what OpenAI's strict mode accepts: checked with the SDK's own
strict-schema helper (its output is a fixed point for an accepted schema) and against the documented keyword
subset (``OPENAI_STRICT_KEYWORDS``), for every registered environment."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from openai.lib._pydantic import _ensure_strict_json_schema, to_strict_json_schema

import salesgym
from salesgym.core.tools import OPENAI_STRICT_KEYWORDS

# The browser family is left out: its environment drives Playwright's sync API in this thread, whose event loop
# outlives the episode and would stop later asyncio tests in this process (tests/workflows_ui checks its schemas).
ENV_IDS = sorted(i for i in salesgym.registry() if not salesgym.family(i).kit_campaign)


def schemas(node: Any, in_properties: bool = False) -> Iterator[dict[str, Any]]:
    """Every schema node (property maps are walked, not yielded)."""
    if isinstance(node, list):
        for v in node:
            yield from schemas(v)
    elif isinstance(node, dict):
        if in_properties:
            for v in node.values():
                yield from schemas(v)
            return
        yield node
        for k, v in node.items():
            if k in ("properties", "$defs"):
                yield from schemas(v, in_properties=True)
            elif isinstance(v, dict | list):
                yield from schemas(v)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_exported_tools_are_strict_mode_schemas(env_id: str) -> None:
    env = salesgym.make(env_id)
    env.reset(seed=1)
    tools = env.tool_schemas()
    assert tools
    for tool in tools:
        assert set(tool) == {"type", "function"} and tool["type"] == "function"
        fn = tool["function"]
        assert fn["strict"] is True and set(fn) == {"name", "description", "parameters", "strict"}
        params = fn["parameters"]
        assert params["type"] == "object"
        # the SDK's own strict transform changes nothing in a schema strict mode already accepts
        assert _ensure_strict_json_schema(copy.deepcopy(params), path=(), root=copy.deepcopy(params)) == params
        for node in schemas(params):
            assert set(node) <= OPENAI_STRICT_KEYWORDS, (fn["name"], sorted(set(node) - OPENAI_STRICT_KEYWORDS))
            if node.get("type") == "object" or "properties" in node:
                assert node.get("additionalProperties") is False, fn["name"]
                assert node.get("required") == list(node.get("properties", {})), fn["name"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_exported_schema_is_the_sdks_strict_schema_of_the_argument_model_minus_length_keywords(env_id: str) -> None:
    """Same fields, same required lists, same types as the SDK makes from the pydantic model; only the
    keywords strict mode does not document (string lengths, titles) are left out."""
    env = salesgym.make(env_id)
    env.reset(seed=1)
    exported = {t["function"]["name"]: t["function"]["parameters"] for t in env.tool_schemas()}
    specs = env.family.tools.specs
    assert set(exported) == set(specs)

    def shape(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items() if k in ("type", "properties", "required", "items", "anyOf",
                                                                  "enum", "additionalProperties")}  # fmt: skip
        if isinstance(node, list):
            return [shape(v) for v in node]
        return node

    for name, spec in specs.items():
        sdk = to_strict_json_schema(spec.args)
        defs = sdk.pop("$defs", {})

        def inline(node: Any, defs: dict[str, Any] = defs) -> Any:
            if isinstance(node, dict):
                if "$ref" in node:
                    return inline(defs[node["$ref"].split("/")[-1]])
                return {k: inline(v) for k, v in node.items()}
            if isinstance(node, list):
                return [inline(v) for v in node]
            return node

        assert shape(inline(sdk)) == shape(exported[name]), name
