"""Tool specs: parsing every class of bad input into ToolError, strict schemas, results."""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import (
    MAX_CALL_BYTES,
    MAX_CALL_CHARS,
    MAX_DEPTH,
    MAX_OBJECT_DEPTH,
    MAX_REASON_CHARS,
    CallResultOf,
    Strip,
    ToolArgs,
    ToolBox,
    ToolError,
    ToolOutcome,
    ToolOutput,
    ToolResult,
    ToolSpec,
    mcp_schema,
    openai_strict,
    quote,
    strict_schema,
)
from salesgym.testing.hostile import Boom, CollidingKey, RaisingDict, RaisingMapping


class Inner(ToolArgs):
    name: Annotated[str, StringConstraints(max_length=5), Strip] = Field(description="a name")
    value: str


class EchoArgs(ToolArgs):
    text: str = Field(max_length=50, description="what to echo")
    times: int = Field(ge=1, le=3, description="how often")
    mode: Literal["loud", "quiet"] | None = Field(None, description="optional mode")
    items: list[Inner] = Field(default_factory=list, max_length=2)


def _echo(ctx: object, a: EchoArgs) -> ToolOutcome:
    return ToolOutcome({"echo": a.text * a.times}, 0.5)


class EchoOutput(ToolOutput):
    echo: str


class NoOutput(ToolOutput):
    pass


BOX: ToolBox[object] = ToolBox([ToolSpec("echo", "Echo text back.", EchoArgs, _echo, "0.5 h", output=EchoOutput)])
GOOD = {"text": "hi", "times": 2, "mode": None, "items": []}


@pytest.mark.parametrize("action", [{"tool": "echo", "args": GOOD}, json.dumps({"tool": "echo", "args": GOOD}),
                                    json.dumps({"tool": "echo", "args": GOOD}).encode(),
                                    {"name": "echo", "arguments": json.dumps(GOOD)},
                                    {"type": "function", "id": "c1", "name": "echo", "arguments": GOOD}])
def test_parse_accepts_the_documented_spellings(action: object) -> None:
    spec, args = BOX.parse(action)
    assert spec.name == "echo" and isinstance(args, EchoArgs) and args.times == 2


def test_lengths_are_checked_as_sent_then_strip_strips_and_args_are_frozen() -> None:
    # the schema's maxLength is checked on the string the agent sent, and so is the parser's: padding that
    # stripping would remove does not let a too-long string through
    _, args = BOX.parse({"tool": "echo", "args": {**GOOD, "text": "  hi  "}})
    assert args.text == "  hi  "  # type: ignore[attr-defined]  # a plain str is taken as given
    _, args = BOX.parse({"tool": "echo", "args": {**GOOD, "items": [{"name": " a ", "value": "b"}]}})
    assert args.items[0].name == "a"  # type: ignore[attr-defined]  # a Strip type is stripped after the check
    with pytest.raises(ToolError, match="at most 50 characters"):
        BOX.parse({"tool": "echo", "args": {**GOOD, "text": "hi" + " " * 49}})
    with pytest.raises(ToolError, match="at most 5 characters"):
        BOX.parse({"tool": "echo", "args": {**GOOD, "items": [{"name": "a" + " " * 5, "value": "b"}]}})
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
                "properties": {"name": {"type": "string", "maxLength": 5, "description": "a name"},
                               "value": {"type": "string"}}}},
        },
    }


def test_openai_and_mcp_exports() -> None:
    spec = BOX.specs["echo"]
    assert spec.openai() == {"type": "function", "function": {"name": "echo", "description": "Echo text back.",
                                                              "parameters": openai_strict(strict_schema(EchoArgs)),
                                                              "strict": True}}
    assert spec.mcp() == {"name": "echo", "description": "Echo text back.", "inputSchema": mcp_schema(EchoArgs),
                          "outputSchema": mcp_schema(CallResultOf[EchoOutput])}
    assert BOX.names() == ["echo"] and BOX.openai() == [spec.openai()] and BOX.mcp() == [spec.mcp()]


def test_the_exports_are_built_once_and_each_caller_gets_its_own_copy() -> None:
    box: ToolBox[object] = ToolBox([ToolSpec("echo", "Echo text back.", EchoArgs, _echo, "0.5 h", output=EchoOutput)])
    first, mcp = box.openai(), box.mcp()
    first[0]["function"]["parameters"]["properties"].clear()
    mcp[0]["inputSchema"]["required"].append("nonsense")
    assert box.openai() == BOX.openai() and box.mcp() == BOX.mcp()
    assert box.openai() is not box.openai()


def test_openai_export_keeps_only_strict_mode_keywords_and_says_lengths_in_words() -> None:
    params = BOX.specs["echo"].openai()["function"]["parameters"]
    text, name = params["properties"]["text"], params["properties"]["items"]["items"]["properties"]["name"]
    assert "maxLength" not in text and "maxLength" not in name and "maxLength" in json.dumps(strict_schema(EchoArgs))
    assert name["description"] == "a name (at most 5 characters)"
    assert params["properties"]["items"]["maxItems"] == 2  # array bounds are in strict mode's subset
    with pytest.raises(ToolError, match="50"):  # the limit is still enforced by the parser
        BOX.parse({"tool": "echo", "args": {"text": "x" * 51, "times": 1}})


def test_mcp_schema_requires_only_fields_without_a_default_and_states_the_defaults() -> None:
    """An MCP client may leave an optional field out (it means the default) and never has to send null; the
    schema is otherwise the strict one, so the OpenAI export is unchanged."""
    schema = mcp_schema(EchoArgs)
    assert schema["required"] == ["text", "times"]
    assert schema["properties"]["mode"]["default"] is None and "default" not in schema["properties"]["items"]
    assert schema["properties"]["items"]["items"]["required"] == ["name", "value"]
    strict = strict_schema(EchoArgs)

    def without_defaults(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: without_defaults(v) for k, v in node.items() if k not in ("default", "required")}
        return [without_defaults(v) for v in node] if isinstance(node, list) else node

    assert without_defaults(schema) == without_defaults(strict)
    for args in ({"text": "hi", "times": 1}, {"text": "hi", "times": 1, "mode": "loud"}):  # the parser agrees
        _, parsed = BOX.parse({"tool": "echo", "args": args})
        assert parsed.mode == args.get("mode") and parsed.items == []  # type: ignore[attr-defined]


def test_mcp_schema_of_a_model_with_no_required_field_has_no_required_list() -> None:
    class Opt(ToolArgs):
        page: int = Field(0, ge=0, description="page")

    assert mcp_schema(Opt) == {"type": "object", "additionalProperties": False,
                               "properties": {"page": {"type": "integer", "minimum": 0, "default": 0,
                                                       "description": "page"}}}


def test_strict_schema_of_a_plain_model_without_fields() -> None:
    class Empty(BaseModel):
        pass

    assert strict_schema(Empty) == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


def test_tool_result_to_dict_is_plain() -> None:
    r = ToolResult("ok", 12, 0.25, {"seller": 0.25}, ("ev000010", "ev000011"), {"a": 1})
    assert r.to_dict() == {"status": "ok", "state_version": 12, "time_cost": 0.25, "resource_cost": {"seller": 0.25},
                           "event_ids": ["ev000010", "ev000011"], "output": {"a": 1}}
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()


# --- hardening: strict types, bounded input, short escaped reasons ---------------------------------------------


class NumArgs(ToolArgs):
    ratio: float | None = Field(ge=0, le=10, description="a number")
    count: int = Field(ge=0, le=100, description="an integer")


NUMS: ToolBox[object] = ToolBox([ToolSpec("nums", "Numbers.", NumArgs, lambda ctx, a: ToolOutcome({}, 0.0), "0 h",
                                          output=NoOutput)])


def _reason(action: object, box: ToolBox[object] = BOX) -> str:
    with pytest.raises(ToolError) as err:
        box.parse(action)
    reason = err.value.reason
    assert reason.isprintable() and len(reason) <= MAX_REASON_CHARS
    assert len(json.dumps({"error": reason})) <= 500
    return reason


def _deep_list(n: int) -> Any:
    return functools.reduce(lambda a, _: [a], range(n), [])


@pytest.mark.parametrize(("value", "ratio_ok", "count_ok"), [
    (2, True, True),
    (2.0, True, True),  # an integral float is an integer, as in JSON Schema
    (-0.0, True, True),
    (2.5, True, False),
    (True, False, False),  # a boolean is not a number
    ("2", False, False),  # nor is a numeric string
    (b"2", False, False),
    (float("nan"), False, False),
    (float("inf"), False, False),
    (10**30, False, False),
    (None, True, False),
])
def test_numbers_are_strict_with_json_semantics(value: object, ratio_ok: bool, count_ok: bool) -> None:
    for field, ok in (("ratio", ratio_ok), ("count", count_ok)):
        args = {"ratio": 1, "count": 1, field: value}
        if ok:
            _, parsed = NUMS.parse({"tool": "nums", "args": args})
            got = getattr(parsed, field)
            assert got == value and (value is None or type(got) is (float if field == "ratio" else int))
        else:
            reason = _reason({"tool": "nums", "args": args}, NUMS)
            assert f"field '{field}'" in reason or f"at 'args.{field}'" in reason  # by validation, or the check


def test_an_integral_float_in_json_text_is_an_integer() -> None:
    _, args = BOX.parse('{"tool": "echo", "args": {"text": "hi", "times": 2.0, "mode": null, "items": []}}')
    assert args.times == 2 and type(args.times) is int  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [b"hi", bytearray(b"hi"), ("h", "i"), ["hi"], {"hi": 1}, 7, True])
def test_only_a_str_is_a_string(value: object) -> None:
    assert "field 'text'" in _reason({"tool": "echo", "args": {**GOOD, "text": value}}) or \
        "not JSON data" in _reason({"tool": "echo", "args": {**GOOD, "text": value}})


@pytest.mark.parametrize(("action", "fragment"), [
    ({"tool": "echo", "name": "echo", "args": GOOD}, "'tool' or 'name', not both"),
    ({"tool": "echo", "name": "other", "args": GOOD}, "'tool' or 'name', not both"),
    ({"tool": "echo", "args": GOOD, "arguments": GOOD}, "'args' or 'arguments', not both"),
    ({"name": "echo", "args": GOOD, "arguments": json.dumps(GOOD)}, "'args' or 'arguments', not both"),
])
def test_a_call_names_its_tool_and_gives_its_arguments_once(action: object, fragment: str) -> None:
    assert fragment in _reason(action)


def test_the_mixed_spellings_are_still_one_name_and_one_argument_set() -> None:
    assert BOX.parse({"tool": "echo", "arguments": json.dumps(GOOD)})[0].name == "echo"
    assert BOX.parse({"name": "echo", "args": GOOD})[0].name == "echo"


def _nested_text(depth: int) -> str:
    """A call whose JSON text nests ``depth`` levels: the call, its args, then lists in 'text'."""
    return '{"tool": "echo", "args": {"text": ' + "[" * (depth - 2) + "]" * (depth - 2) + "}}"


def test_json_text_is_bounded_in_depth_before_it_is_decoded() -> None:
    assert "field 'text'" in _reason(_nested_text(MAX_DEPTH))  # decoded, then refused by validation
    too_deep = _reason(_nested_text(MAX_DEPTH + 1))
    assert f"call is nested {MAX_DEPTH + 1} levels deep; the limit is {MAX_DEPTH}" in too_deep
    for text in ("[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000, "[" * 19_999, "{" * 5000):
        assert "levels deep" in _reason(text)
    deep_args = json.dumps({"tool": "echo", "args": "[" * 1000 + "]" * 1000})
    assert "arguments are nested 1,000 levels deep" in _reason(deep_args)
    assert "arguments are nested" in _reason({"name": "echo", "arguments": "[" * 5000})


def test_brackets_inside_json_strings_are_not_nesting() -> None:
    text = json.dumps({"tool": "echo", "args": {**GOOD, "text": "[{" * 20 + '\\"[' + "]" * 5}})
    assert text.count("[") + text.count("{") > MAX_DEPTH
    _, args = BOX.parse(text)
    assert args.text.startswith("[{[{")  # type: ignore[attr-defined]
    # an unterminated string hides nothing: the text is refused, never decoded into a deep value
    assert "not valid JSON" in _reason('{"tool": "echo", "args": "' + "[" * 100)


@pytest.mark.parametrize(("value", "fragment"), [
    (_deep_list(MAX_OBJECT_DEPTH + 10), f"nested more than {MAX_OBJECT_DEPTH} levels deep at 'args.text"),
    (_deep_list(5000), "nested more than"),
    (10**5000, "an integer of about 5,001 digits, outside the 64-bit integers at 'args.text'"),
    (2**64, "outside the 64-bit integers"),
    (Boom(), "a Python object at 'args.text'"),
    (RaisingMapping(), "a Python object at 'args.text'"),
    (RaisingDict(a=1), "a Python object at 'args.text'"),
    ("a\ud800", "lone surrogate"),
    ({5: "x"}, "a key that is not a string (5) at 'args.text'"),
    ({10**5000: "x"}, "a key that is not a string (an integer of about 5,001 digits)"),
    ({Boom(): "x"}, "a key that is not a string (a Python object)"),
    (b"hi", "bytes at 'args.text'"),
], ids=["deep_list", "very_deep_list", "5000_digit_int", "2**64", "raising_object", "raising_mapping", "raising_dict",
        "lone_surrogate", "int_key", "5000_digit_int_key", "raising_key", "bytes"])
def test_python_objects_are_checked_before_anything_reads_them(value: object, fragment: str) -> None:
    assert fragment in _reason({"tool": "echo", "args": {**GOOD, "text": value}})


def test_a_cyclic_object_is_refused() -> None:
    a: list[Any] = []
    a.append(a)
    assert "nested more than" in _reason({"tool": "echo", "args": {**GOOD, "items": a}})


@pytest.mark.parametrize("action", [
    {"tool": "echo", 10**5000: 1},
    {"tool": "echo", Boom(): 1},
    {CollidingKey("tool"): "echo", "args": GOOD},
    RaisingDict(tool="echo", args=GOOD),
    RaisingMapping(),
    Boom(),
    {"tool": Boom(), "args": GOOD},
    {"tool": "echo", "args": RaisingDict(GOOD)},
    {"tool": "echo", "args": {**GOOD, "items": [RaisingDict(name="a", value="b")]}},
], ids=["5000_digit_int_key", "raising_key", "key_colliding_with_tool", "raising_dict_call", "raising_mapping_call",
        "raising_object_call", "raising_tool_name", "raising_dict_args", "raising_dict_item"])
def test_objects_whose_methods_raise_are_refused_without_calling_them(action: object) -> None:
    assert "not JSON data" in _reason(action)


def test_the_size_of_a_python_call_is_bounded() -> None:
    assert "bytes as JSON; the limit is" in _reason({"tool": "echo", "args": {**GOOD, "text": "x" * 1_000_000}})
    assert "bytes as JSON" in _reason({"tool": "echo", "args": GOOD, "k" * 1_000_000: 1})
    assert "bytes as JSON" in _reason({"tool": "echo", "args": {**GOOD, "items": list(range(100_000))}})
    assert f"bytes; the limit is {MAX_CALL_BYTES:,}" in _reason(b" " * (MAX_CALL_BYTES + 1))  # checked before decoding


@pytest.mark.parametrize("action", [
    {"tool": "echo", "args": {**GOOD, "k" * 19_000: 1}},
    json.dumps({"tool": "echo", "args": {**GOOD, "k" * 19_000: 1}}),
    {"tool": "echo", "args": GOOD, "k" * 50_000: 1},
    {"tool": "k" * 19_000, "args": GOOD},
    {"tool": "echo", "args": {**GOOD, "text": "\\" * 50, "times": "\\" * 50, "mode": '"' * 50, "\\" * 50: 1}},
    {"tool": "echo", "args": {"\\" * 60 + str(i): 1 for i in range(10)}},
    {"tool": "echo", "args": {**GOOD, "text": "😀" * 100, "😀" * 100: 1}},
])
def test_reasons_quote_a_short_excerpt_of_any_input(action: object) -> None:
    reason = _reason(action)
    assert "kkkkk" not in reason or "characters)" in reason  # a long name is cut, and says how long it was
    assert reason.count("k") <= 2 * 40 + 10


@pytest.mark.parametrize(("text", "fragment"), [
    ("\x1b[2J\x1b[31mx", "'\\x1b[2J\\x1b[31mx'"),
    ("a\x00b", "'a\\x00b'"),
    ("\u202eevil", "'\\u202eevil'"),
    ("caf\u00e9", "'caf\\xe9'"),
])
def test_reasons_escape_control_and_non_ascii_characters(text: str, fragment: str) -> None:
    reason = _reason({"tool": text, "args": GOOD})
    assert reason.startswith(f"unknown tool {fragment}") and reason.isascii()


def test_a_lone_surrogate_is_escaped_from_json_text_and_refused_in_an_object() -> None:
    assert _reason('{"tool": "a\\ud800"}').startswith("unknown tool 'a\\ud800'")
    assert "lone surrogate" in _reason({"tool": "a\ud800"})


def test_quote_is_short_escaped_and_never_calls_the_value() -> None:
    assert quote("o003") == "'o003'"
    assert quote("x" * 1000) == "'" + "x" * 40 + "'... (1,000 characters)"
    assert quote("\x1b" * 100).startswith("'\\x1b") and len(quote("\x1b" * 100)) < 80
    assert len(quote("😀" * 1000)) < 80 and quote("😀" * 1000).isascii()
    assert [quote(v) for v in (None, True, False, 3, -2.5, 10**20)] == [
        "null", "true", "false", "3", "-2.5", "an integer of about 21 digits"]
    assert quote(10**5000) == "an integer of about 5,001 digits"
    assert [quote(v) for v in ([1], {"a": 1}, (1,), b"x", Boom(), RaisingDict(), _deep_list(10_000))] == [
        "a list", "an object", "a tuple", "bytes", "a Python object", "a Python object", "a list"]


def test_a_reason_is_bounded_however_it_is_escaped() -> None:
    assert len(ToolError("x" * 10_000).reason) <= MAX_REASON_CHARS
    assert len(json.dumps(ToolError("\\" * 10_000).reason)) <= MAX_REASON_CHARS + 2
    assert ToolError("short").reason == "short"


def test_unknown_call_keys_are_listed_short() -> None:
    reason = _reason({"tool": "echo", "args": GOOD, **{f"k{i}": i for i in range(50)}})
    assert reason.startswith("unknown keys in call: ['k0', 'k1', 'k10', ... (50 in all)]")


def test_mcp_output_schema_describes_the_structured_content_of_ok_and_refused_calls() -> None:
    schema = BOX.mcp()[0]["outputSchema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"  # MCP requires an object schema
    ok = ToolResult("ok", 1, 0.5, {"seller": 0.5}, ("e0001",), {"echo": "hihi"}).to_dict()
    refused = ToolResult("error", 1, 0.0, {}, (), {"error": "invalid arguments"}).to_dict()
    for result in (ok, refused):
        jsonschema.validate({"tool_result": result, "reward": 0.0, "terminated": False, "truncated": False,
                             "state_version": 1}, schema)
    for wrong in ({"echo": 3}, {"echo": "hi", "more": 1}, {}):  # mistyped, an extra key, a missing key
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"tool_result": {**ok, "output": wrong}, "reward": 0.0, "terminated": False,
                                 "truncated": False, "state_version": 1}, schema)


def test_output_problem_reads_the_output_as_json_and_names_what_is_wrong() -> None:
    spec = BOX.specs["echo"]
    assert spec.output_problem({"echo": "hi"}) is None
    assert "missing required field 'echo'" in str(spec.output_problem({}))
    assert "unknown field 'extra'" in str(spec.output_problem({"echo": "hi", "extra": 1}))
    assert "field 'echo'" in str(spec.output_problem({"echo": 2}))
    assert spec.output_problem({"echo": "a lone \udc80 surrogate"}) is None  # text orjson refuses is still text
    assert "field 'echo'" in str(spec.output_problem({"echo": ["\udc80"]}))
