"""Tool specs: parsing every class of bad input into ToolError, strict schemas, results."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from salesgym.core.tools import (
    MAX_CALL_CHARS,
    ToolArgs,
    ToolBox,
    ToolError,
    ToolOutcome,
    ToolResult,
    ToolSpec,
    strict_schema,
)


class Inner(ToolArgs):
    name: str = Field(description="a name")
    value: str


class EchoArgs(ToolArgs):
    text: str = Field(max_length=50, description="what to echo")
    times: int = Field(ge=1, le=3, description="how often")
    mode: Literal["loud", "quiet"] | None = Field(None, description="optional mode")
    items: list[Inner] = Field(default_factory=list, max_length=2)


def _echo(ctx: object, a: EchoArgs) -> ToolOutcome:
    return ToolOutcome({"echo": a.text * a.times}, 0.5)


BOX: ToolBox[object] = ToolBox([ToolSpec("echo", "Echo text back.", EchoArgs, _echo, "0.5 h")])
GOOD = {"text": "hi", "times": 2, "mode": None, "items": []}


@pytest.mark.parametrize("action", [{"tool": "echo", "args": GOOD}, json.dumps({"tool": "echo", "args": GOOD}),
                                    json.dumps({"tool": "echo", "args": GOOD}).encode(),
                                    {"name": "echo", "arguments": json.dumps(GOOD)},
                                    {"type": "function", "id": "c1", "name": "echo", "arguments": GOOD}])
def test_parse_accepts_the_documented_spellings(action: object) -> None:
    spec, args = BOX.parse(action)
    assert spec.name == "echo" and isinstance(args, EchoArgs) and args.times == 2


def test_strings_are_stripped_and_args_frozen() -> None:
    _, args = BOX.parse({"tool": "echo", "args": {**GOOD, "text": "  hi  "}})
    assert args.text == "hi"  # type: ignore[attr-defined]
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises its own ValidationError subclass
        args.text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(("action", "fragment"), [
    ("{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    ("[1, 2]", "must be an object"),
    (None, "must be an object"),
    (3, "must be an object"),
    ([{"tool": "echo"}], "must be an object"),
    ("x" * (MAX_CALL_CHARS + 1), "the limit is"),
    ({"tool": "echo", "args": "y" * (MAX_CALL_CHARS + 1)}, "the limit is"),
    ({"args": GOOD}, "missing tool name"),
    ({"tool": 5, "args": GOOD}, "missing tool name"),
    ({"tool": "nope", "args": GOOD}, "nope"),
    ({"tool": "n" * 500, "args": GOOD}, "unknown tool"),
    ({"tool": "echo", "args": GOOD, "evidence": {}}, "unknown keys in call: ['evidence']"),
    ({"tool": "echo", "args": "{oops"}, "arguments are not valid JSON"),
    ({"tool": "echo", "args": [1]}, "'args' must be an object"),
    ({"tool": "echo", "args": {**GOOD, "extra": 1}}, "unknown field 'extra'"),
    ({"tool": "echo", "args": {"text": "hi"}}, "missing required field 'times'"),
    ({"tool": "echo", "args": {**GOOD, "times": "two"}}, "field 'times'"),
    ({"tool": "echo", "args": {**GOOD, "times": 9}}, "field 'times'"),
    ({"tool": "echo", "args": {**GOOD, "times": 1.5}}, "field 'times'"),
    ({"tool": "echo", "args": {**GOOD, "mode": "shout"}}, "field 'mode'"),
    ({"tool": "echo", "args": {**GOOD, "text": "z" * 10_000}}, "field 'text'"),
    ({"tool": "echo", "args": {**GOOD, "items": [{"name": "a"}]}}, "missing required field 'items.0.value'"),
    ({"tool": "echo", "args": {**GOOD, "items": [{"name": "a", "value": "b", "x": 1}]}}, "unknown field 'items.0.x'"),
])
def test_parse_turns_bad_input_into_a_tool_error_with_a_reason(action: object, fragment: str) -> None:
    with pytest.raises(ToolError) as err:
        BOX.parse(action)
    assert fragment in err.value.reason
    assert len(err.value.reason) < 1000  # never echoes a huge input


def test_unknown_tool_reason_quotes_the_name_once() -> None:
    with pytest.raises(ToolError) as err:
        BOX.parse({"tool": "nope", "args": GOOD})
    assert err.value.reason == "unknown tool 'nope'; available: echo"


def test_missing_args_means_empty_args() -> None:
    with pytest.raises(ToolError, match="missing required field 'text'"):
        BOX.parse({"tool": "echo"})
    with pytest.raises(ToolError, match="missing required field 'text'"):
        BOX.parse({"tool": "echo", "args": "  "})


def test_strict_schema_inlines_refs_and_requires_every_field() -> None:
    schema = strict_schema(EchoArgs)
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "required": ["text", "times", "mode", "items"],
        "properties": {
            "text": {"type": "string", "maxLength": 50, "description": "what to echo"},
            "times": {"type": "integer", "minimum": 1, "maximum": 3, "description": "how often"},
            "mode": {"anyOf": [{"enum": ["loud", "quiet"], "type": "string"}, {"type": "null"}],
                     "description": "optional mode"},
            "items": {"type": "array", "maxItems": 2, "items": {
                "type": "object", "additionalProperties": False, "required": ["name", "value"],
                "properties": {"name": {"type": "string", "description": "a name"}, "value": {"type": "string"}}}},
        },
    }


def test_openai_and_mcp_exports() -> None:
    spec = BOX.specs["echo"]
    assert spec.openai() == {"type": "function", "function": {"name": "echo", "description": "Echo text back.",
                                                              "parameters": strict_schema(EchoArgs), "strict": True}}
    assert spec.mcp() == {"name": "echo", "description": "Echo text back.", "inputSchema": strict_schema(EchoArgs)}
    assert BOX.names() == ["echo"] and BOX.openai() == [spec.openai()] and BOX.mcp() == [spec.mcp()]


def test_strict_schema_of_a_plain_model_without_fields() -> None:
    class Empty(BaseModel):
        pass

    assert strict_schema(Empty) == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


def test_tool_result_to_dict_is_plain() -> None:
    r = ToolResult("ok", 12, 0.25, {"seller": 0.25}, ("ev000010", "ev000011"), {"a": 1})
    assert r.to_dict() == {"status": "ok", "state_version": 12, "time_cost": 0.25, "resource_cost": {"seller": 0.25},
                           "event_ids": ["ev000010", "ev000011"], "output": {"a": 1}}
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()
