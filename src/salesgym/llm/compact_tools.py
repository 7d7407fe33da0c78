"""Compact tool schemas for a rollout whose model has a short context (``RolloutConfig.tool_schemas="compact"``):
each tool keeps its name, the first sentence of its description and its arguments' names, types and allowed
values (nested objects and lists keep their fields' names and types); every other description, limit and flag is
left out. The environment still checks every call against its full schema: only the prompt is shorter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_KEEP = ("type", "enum", "const")  # what a compact argument keeps of its schema, beside its structure


def first_sentence(text: str) -> str:
    """The description's first line up to its first sentence end (the rest explains; the name and types remain)."""
    line = text.strip().split("\n", 1)[0]
    for end in (". ", "; "):
        cut = line.find(end)
        if cut > 0:
            line = line[:cut]
    return line.rstrip(".")


def compact_schema(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """An argument's schema cut to its structure: types, allowed values, fields and what is required."""
    ref = schema.get("$ref")
    if isinstance(ref, str):  # an inlined definition: the compact prompt carries no $defs
        return compact_schema(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    out: dict[str, Any] = {k: schema[k] for k in _KEEP if k in schema}
    for key in ("anyOf", "oneOf"):
        options = [compact_schema(s, defs) for s in schema.get(key, ()) if s.get("type") != "null"]
        if len(options) == 1:  # an optional argument (X or null): its type is X's
            out.update(options[0])
        elif options:
            out[key] = options
    if isinstance(schema.get("items"), Mapping):
        out["items"] = compact_schema(schema["items"], defs)
    if isinstance(schema.get("properties"), Mapping):
        out["properties"] = {name: compact_schema(s, defs) for name, s in schema["properties"].items()}
        if schema.get("required"):
            out["required"] = list(schema["required"])
    return out


def compact_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools with the long descriptions left out (every tool and every argument kept)."""
    compact = []
    for tool in tools:
        fn = tool["function"]
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        compact.append({"type": "function", "function": {
            "name": fn["name"], "description": first_sentence(fn.get("description", "")),
            "parameters": {"type": "object", **compact_schema(params, params.get("$defs", {}))}}})  # fmt: skip
    return compact
