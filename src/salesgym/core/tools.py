"""Tool specs: typed arguments (pydantic) are the one source of each tool's JSON Schema.

A call is parsed here into ``(spec, args)`` or a :class:`ToolError` with a reason a model can act on.
Nothing here raises on bad input: malformed JSON, unknown tools, wrong or missing or extra fields,
oversized or deeply nested input and objects that are not JSON data all come back as ``ToolError``.

The parser accepts what the exported (strict) JSON Schema accepts, with JSON's data model:

* Arguments are validated in pydantic's strict mode: no coercion. ``true`` is not a number, ``"2"`` is
  not a number, ``b"o000"`` is not a string. Length limits apply to the string as sent; a type marked
  with :data:`Strip` is stripped of surrounding whitespace only after that check.
* A number with no fractional part (``2.0``) is an integer, as in JSON Schema; an integer is a number.
* A field with a default may be omitted: it means that default (``null`` for most optional fields). The
  MCP export (:func:`mcp_schema`) says so: only fields without a default are ``required``. The OpenAI strict
  form lists every field as required only because strict mode demands it; a call that gives every field
  is accepted exactly when that schema accepts it. A call without
  arguments (``args`` absent, ``null``, or a text of only whitespace) has the arguments ``{}``.
* A call names its tool once and gives its arguments once: ``tool`` or ``name``, ``args`` or
  ``arguments``; a call that gives both keys of a pair is refused, even with equal values.
* Input is bounded before it is decoded or described: a JSON text (or its UTF-8 bytes) by its length and
  nesting depth before ``json.loads``; a Python object by one structural check (exact JSON types, string
  keys, 64-bit integers, valid Unicode, nesting depth, encoded size) before anything reads it. A refusal
  quotes agent text only through :func:`quote`: short, escaped, and never by calling the object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from types import MappingProxyType
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic_core import CoreSchema, SchemaValidator, core_schema

MAX_CALL_CHARS = 20_000  # a whole call, as JSON text; far above any legitimate call
# a call given as a Python object, measured as its UTF-8 JSON encoding: every JSON text of at most
# MAX_CALL_CHARS characters re-encodes to at most four bytes a character, so no spelling is stricter
MAX_CALL_BYTES = 4 * MAX_CALL_CHARS
MAX_DEPTH = 32  # nesting of a JSON text's arrays and objects; the deepest legitimate call (update_crm) has 4
# nesting of a call given as a Python object: orjson's limit, checked in the same C pass. Nothing recurses
# into an object that passed (strict validation reads no deeper than the schema), and counting brackets, as
# for a JSON text, would cost more than the whole structural check
MAX_OBJECT_DEPTH = 254
MAX_REASON_CHARS = 480  # a refusal reason, counted as JSON text (a backslash or a quote counts twice)
QUOTE_CHARS = 40  # the most of any one piece of agent text a reason quotes, after escaping
INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # what a JSON number may hold as an integer (orjson's range)

A = TypeVar("A", bound=BaseModel)
C = TypeVar("C")


class ToolArgs(BaseModel):
    """Base of every argument model: strict types (see the module docstring), unknown fields are an error,
    numbers are finite, instances are frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class ToolOutput(BaseModel):
    """Base of every output model: what a handler returns, as JSON (an agent reads it decoded), with no key
    the model does not name. Checked by the conformance kit, never on the step path."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorOutput(ToolOutput):
    """The output of a refused call (and of any call after the episode's end)."""

    error: str


Out = TypeVar("Out")


class ResultOf(BaseModel, Generic[Out]):
    """A tool result (:meth:`ToolResult.to_dict`) whose output is the tool's model, or an error."""

    model_config = ConfigDict(extra="forbid", strict=True)
    status: Literal["ok", "error"]
    state_version: int
    time_cost: float
    resource_cost: dict[str, float]
    event_ids: list[str]
    output: Out | ErrorOutput


class Episode(ToolOutput):
    """The episode's flags every observation's data carries."""

    terminated: bool
    truncated: bool
    invalid_actions: int


# the last tool result as an observation shows it: each output checked against its own tool's model elsewhere
LastResult = ResultOf[dict[str, Any]]


class CallResultOf(BaseModel, Generic[Out]):
    """What an MCP tool call returns as structured content: the tool result and the step's outcome."""

    model_config = ConfigDict(extra="forbid", strict=True)
    tool_result: ResultOf[Out]
    reward: float
    terminated: bool
    truncated: bool
    state_version: int


class _StripAfterCheck:
    """``Annotated[str, StringConstraints(...), Strip]``: strip surrounding whitespace *after* the length
    constraints were checked on the string as sent (pydantic's ``str_strip_whitespace`` strips first, which
    lets a padded string the schema refuses through). pydantic-core calls ``str.strip`` itself, with no
    Python frame in between; the JSON Schema is the constrained string's."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(str.strip, handler(source))


Strip = _StripAfterCheck()


class ToolError(Exception):
    """A call that cannot be carried out; ``reason`` is shown to the agent (bounded: ``MAX_REASON_CHARS``)."""

    def __init__(self, reason: str) -> None:
        reason = _bounded_reason(reason)
        super().__init__(reason)
        self.reason = reason


NO_COST: Mapping[str, float] = MappingProxyType({})  # a call that costs no resources besides time


class ToolOutcome(NamedTuple):
    """What a handler returns: its output for the agent and what it cost. With ``until_public`` the call
    ends early at the first event the agent can see ("wait until something happens"), at most ``time_cost``."""

    output: Mapping[str, Any]
    time_cost: float
    resource_cost: Mapping[str, float] = NO_COST
    until_public: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[A, C]):
    """One tool: name, model-facing description, argument model, output model and its documented contract."""

    name: str
    description: str
    args: type[A]
    handler: Callable[[C, A], ToolOutcome]
    time_cost: str
    resource_cost: str = "none"
    side_effects: str = "none"
    failure_modes: tuple[str, ...] = ()
    writes: bool = True
    # what the handler's output is, as JSON (keyword-only and required: a spec without one does not type-check)
    output: type[BaseModel] = field(kw_only=True)

    def json_schema(self) -> dict[str, Any]:
        return strict_schema(self.args)

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": openai_strict(self.json_schema()),
                "strict": True,
            },
        }

    def output_schema(self) -> dict[str, Any]:
        """The JSON Schema of the handler's output alone (what ``tool_result["output"]`` holds when ok)."""
        return mcp_schema(self.output)

    def output_problem(self, output: Mapping[str, Any]) -> str | None:
        """Why ``output`` (a handler's, read as the JSON an agent receives) does not fit the output model, or
        None when it does. For checks off the step path (the conformance kit): validation costs."""
        return json_problem(self.output, output)

    def mcp(self) -> dict[str, Any]:
        """The MCP tool: its ``outputSchema`` describes the structured content of every call, refused ones
        included (:class:`CallResultOf` this tool's output)."""
        return {"name": self.name, "description": self.description, "inputSchema": mcp_schema(self.args),
                "outputSchema": mcp_schema(CallResultOf[self.output])}  # type: ignore[name-defined]


class ToolResult(NamedTuple):
    status: str  # "ok" or "error"
    state_version: int
    time_cost: float
    resource_cost: Mapping[str, float]
    event_ids: tuple[str, ...]
    output: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return result_dict(self.status, self.state_version, self.time_cost, self.resource_cost,
                           list(self.event_ids), self.output)  # fmt: skip


def result_dict(
    status: str,
    state_version: int,
    time_cost: float,
    resource_cost: Mapping[str, float],
    event_ids: list[str],
    output: Mapping[str, Any],
) -> dict[str, Any]:
    """A tool result as the agent gets it (what ``ToolResult.to_dict`` gives; the engine's step builds it directly,
    without the named tuple)."""
    return {"status": status, "state_version": state_version, "time_cost": time_cost,
            "resource_cost": dict(resource_cost), "event_ids": event_ids, "output": dict(output)}  # fmt: skip


def json_problem(model: type[BaseModel], value: object) -> str | None:
    """Why ``value``, encoded as JSON and read back, does not validate against ``model``; None when it does."""
    try:
        text = _dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:  # a lone surrogate in agent text: what is checked is its type, not its spelling
        text = json.dumps(value, ensure_ascii=False).encode("utf-8", "replace")
    try:
        model.model_validate_json(text)
    except ValidationError as err:
        return f"{model.__name__}: {describe_validation_error(err)}"
    return None


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema in OpenAI ``strict`` form: inlined refs, every field required,
    optional fields as ``[type, "null"]``, no extra properties, no titles or defaults."""
    return _inlined_schema(model, strict=True)


def mcp_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema for MCP clients: the :func:`strict_schema` but for ``required``, which lists
    only the fields without a default (no ``required`` when there are none), and the defaults, which are
    stated. A client leaves an optional field out to mean its default; it never has to send ``null``."""
    return _inlined_schema(model, strict=False)


def _inlined_schema(model: type[BaseModel], strict: bool) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    dropped = ("title", "default") if strict else ("title",)

    def walk(node: Any, names: bool = False) -> Any:
        if isinstance(node, dict):
            if names:  # a "properties" mapping: its keys are field names (a field may be called "title")
                return {k: walk(v) for k, v in node.items()}
            if "$ref" in node:
                return walk(defs[node["$ref"].split("/")[-1]])
            out = {k: walk(v, k == "properties") for k, v in node.items() if k not in dropped}
            if out.get("type") == "object" and "properties" in out:
                required = [k for k in out["properties"] if strict or k in node.get("required", ())]
                out.pop("required", None)
                if required or strict:
                    out["required"] = required
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(raw)  # type: ignore[no-any-return]


# The JSON Schema keywords OpenAI's strict mode documents as supported (Structured Outputs, "Supported
# schemas"); anything else makes the endpoint refuse the tool. String lengths are not among them.
OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "type", "description", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "pattern", "format", "multipleOf", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minItems", "maxItems",
    }
)  # fmt: skip


def openai_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a :func:`strict_schema`) cut to the keywords OpenAI's strict mode accepts.

    String length limits leave the schema and join the field's description ("at most 40 characters"), so
    a model still reads them; the parser keeps enforcing them (the MCP schema carries them as keywords).
    """

    def walk(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if in_properties:  # property names, not keywords
            return {k: walk(v) for k, v in node.items()}
        out = {k: walk(v, k == "properties") for k, v in node.items() if k in OPENAI_STRICT_KEYWORDS}
        limits = [f"at least {node['minLength']}" if node.get("minLength", 0) > 1 else "",
                  f"at most {node['maxLength']}" if "maxLength" in node else ""]  # fmt: skip
        said = " and ".join(x for x in limits if x)
        if said:
            text = f"{said} characters"
            out["description"] = f"{out['description'].rstrip('.')} ({text})" if out.get("description") else text
        return out

    return walk(schema)  # type: ignore[no-any-return]


def _bounded_reason(reason: str) -> str:
    """``reason``, cut to ``MAX_REASON_CHARS`` counted as JSON text (json.dumps doubles a backslash or a quote;
    agent text in a reason is ASCII, escaped by ``quote``)."""
    if len(reason) * 2 <= MAX_REASON_CHARS:  # the common case: short enough however it is escaped
        return reason
    weight = 0
    for i, ch in enumerate(reason):
        weight += 2 if ch in '\\"' else 1
        if weight > MAX_REASON_CHARS - 3:
            return reason[:i] + "..."
    return reason


# what quote() calls a value that is not a string, by exact type (a subclass may override anything)
_NOUNS: dict[type, str] = {
    list: "a list",
    dict: "an object",
    tuple: "a tuple",
    bytes: "bytes",
    bytearray: "a bytearray",
    set: "a set",
    frozenset: "a frozenset",
    complex: "a complex number",
}


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """A short, escaped excerpt of agent-supplied data, for a refusal reason. Never raises.

    A string is quoted with every non-ASCII and non-printable character escaped (``ascii``), at most
    ``limit`` characters of it after escaping, and its length when cut; JSON scalars are spelled as in JSON;
    anything else is named by its kind, never by calling a method of the object."""
    t = type(value)
    if t is str:
        text: str = value  # type: ignore[assignment]
        cut = min(len(text), limit)
        shown = ascii(text[:cut])
        while len(shown) > limit + 2 and cut > 1:  # an escape takes up to 10 characters
            cut = max(1, cut * limit // len(shown))
            shown = ascii(text[:cut])
        return shown if cut == len(text) else f"{shown}... ({len(text):,} characters)"
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is int:
        number: int = value  # type: ignore[assignment]
        if -(10**15) < number < 10**15:
            return str(number)
        return f"an integer of about {int(number.bit_length() * 0.30103) + 1:,} digits"
    if t is float:
        return repr(value)
    return _NOUNS.get(t, "a Python object")


def _clip(text: str, limit: int = 120) -> str:
    """Pydantic's own message, bounded and printable (a custom validator may put input into it)."""
    if len(text) <= limit and text.isascii() and text.isprintable():
        return text
    return ascii(text[:limit])[1:-1]


def describe_validation_error(err: ValidationError) -> str:
    """The first problems, one clause each, naming the field; input is only ever quoted by ``quote``."""
    errors = err.errors(include_url=False, include_context=False)
    parts = []
    for e in errors[:3]:
        loc = quote(".".join(str(p) for p in e["loc"]) or "(arguments)", 60)
        if e["type"] == "extra_forbidden":
            parts.append(f"unknown field {loc}")
        elif e["type"] == "missing":
            parts.append(f"missing required field {loc}")
        else:
            parts.append(f"field {loc}: {_clip(e['msg'])} (got {quote(e.get('input'))})")
    if len(errors) > 3:
        parts.append(f"and {len(errors) - 3} more")
    return "; ".join(parts)


# --- bounding input before it is decoded or described ---------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)  # an unterminated string runs to the end: linear
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _refuse_if_deep(text: str, what: str) -> None:
    """Refuse a JSON text nested deeper than ``MAX_DEPTH`` (brackets inside strings do not count); only
    called when the number of opening brackets, a bound on the depth, is over the limit."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    # a stray closer makes the running sum an underestimate only past it, where json.loads stops anyway
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > MAX_DEPTH:
        raise ToolError(f"{what} nested {depth:,} levels deep; the limit is {MAX_DEPTH}")


def _decode(text: str, what: str) -> object:
    """A JSON text, bounded by length and depth before ``json.loads`` sees it; ``what`` names it, with its
    verb ('call is', 'arguments are'). What ``json.loads`` returns is plain JSON data, bounded by the text."""
    if len(text) > MAX_CALL_CHARS:
        raise ToolError(f"{what} {len(text):,} characters; the limit is {MAX_CALL_CHARS:,}")
    if len(text) > MAX_DEPTH and text.count("[") + text.count("{") > MAX_DEPTH:  # a bound on the depth
        _refuse_if_deep(text, what)
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or an integer of more than 4300 digits
        raise ToolError(f"{what} not valid JSON: {_clip(str(exc))}") from None


# orjson is the structural check of a call given as a Python object: one C pass that refuses subclasses
# (which may override anything), non-string keys, integers beyond 64 bits, lone surrogates, nesting beyond
# MAX_OBJECT_DEPTH and whatever it cannot encode, and gives the encoded size. What it lets through that is
# not JSON (tuples, enum members, UUIDs) strict validation refuses, or, for an enum member that is a str or
# an int, reads as its value.
_dumps = orjson.dumps
_PLAIN_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _decode_call(action: object) -> dict[str, Any]:
    """A call that is not a dict: its JSON text, or that text as UTF-8 bytes; anything else is refused."""
    if type(action) is bytes:
        if len(action) > MAX_CALL_BYTES:  # more bytes than any text within MAX_CALL_CHARS has
            raise ToolError(f"call is {len(action):,} bytes; the limit is {MAX_CALL_BYTES:,}")
        try:
            action = action.decode()
        except UnicodeDecodeError:
            raise ToolError("call is not valid JSON: its bytes are not UTF-8") from None
    elif type(action) is not str and type(action) not in _JSON_NOT_OBJECT:  # a dict subclass, a custom object
        raise ToolError(f"call is not JSON data: {quote(action)}")  # read nothing of it
    if type(action) is str:
        action = _decode(action, "call is")
    if type(action) is not dict:
        raise ToolError('a call must be an object like {"tool": NAME, "args": {...}}')
    return action


_JSON_NOT_OBJECT = frozenset({list, int, float, bool, type(None)})  # JSON data, just not a call


_Path = tuple[Any, str | int] | None  # (parent path, key or index): a child shares its parent's path


def _path_text(path: _Path) -> str:
    parts: list[str | int] = []
    while path is not None:
        path, part = path
        parts.append(part)
    text = ""
    for part in reversed(parts):
        if isinstance(part, int):
            text += f"[{part}]"
        else:  # a key may be a megabyte long: the quote shows 60 characters of the path anyway
            text += f".{part[:QUOTE_CHARS]}" if text else part[:QUOTE_CHARS]
    return f" at {quote(text, 60)}" if text else ""


def _not_plain(value: object) -> str:
    """Where and why ``value`` is not JSON data: an iterative walk over exact built-in containers only,
    bounded in depth and in the number of values it visits."""
    stack: list[tuple[object, _Path, int]] = [(value, None, 0)]
    budget = MAX_CALL_BYTES
    while stack and budget > 0:
        v, path, depth = stack.pop()
        budget -= 1
        t = type(v)
        if t is dict or t is list or t is tuple:
            if depth >= MAX_OBJECT_DEPTH:
                return f"nested more than {MAX_OBJECT_DEPTH} levels deep{_path_text(path)}"
            if len(v) > budget:  # type: ignore[arg-type]
                return f"too large to check{_path_text(path)}"
            if t is dict:
                items: dict[object, object] = v  # type: ignore[assignment]
                for k, x in items.items():
                    if type(k) is not str:
                        return f"a key that is not a string ({quote(k)}){_path_text(path)}"
                    stack.append((x, (path, k), depth + 1))
            else:
                seq: Sequence[object] = v  # type: ignore[assignment]
                stack.extend((x, (path, i), depth + 1) for i, x in enumerate(seq))
        elif t is str:
            text: str = v  # type: ignore[assignment]
            if not text.isascii():
                try:
                    text.encode()
                except UnicodeEncodeError:
                    return f"a string with a lone surrogate, which is not Unicode text{_path_text(path)}"
        elif t is int:
            if not INT_MIN <= v <= INT_MAX:  # type: ignore[operator]
                return f"{quote(v)}, outside the 64-bit integers{_path_text(path)}"
        elif v is not None and t is not float and t is not bool:
            return f"{quote(v)}{_path_text(path)}"
    return "too large to check" if stack else "not JSON data"


def _integral(value: object, depth: int = 0) -> object:
    """``value`` with every float that has no fractional part as an int (JSON Schema: 2.0 is an integer).
    Only called on plain data; it leaves alone what lies deeper than any schema reads (``MAX_DEPTH``)."""
    t = type(value)
    if t is float:
        number: float = value  # type: ignore[assignment]
        return int(number) if number.is_integer() else number
    if depth >= MAX_DEPTH:
        return value
    if t is dict:
        obj: dict[str, object] = value  # type: ignore[assignment]
        return {k: _integral(v, depth + 1) for k, v in obj.items()}
    if t is list:
        seq: list[object] = value  # type: ignore[assignment]
        return [_integral(v, depth + 1) for v in seq]
    return value


def _integral_float_refused(err: ValidationError) -> bool:
    return any(
        e["type"] == "int_type" and type(e["input"]) is float and e["input"].is_integer()
        for e in err.errors(include_url=False, include_context=False)
    )


CALL_KEYS = frozenset({"tool", "name", "args", "arguments", "id", "type"})  # what a call object may hold


def _one_of(action: Mapping[str, Any], key: str, alias: str, what: str) -> Any:
    """The value under ``key`` or its ``alias`` (the OpenAI spelling); giving both is ambiguous, so refused."""
    if key in action:
        if alias in action:
            raise ToolError(f"give {what} once: {key!r} or {alias!r}, not both")
        return action[key]
    return action.get(alias)


class ToolBox(Generic[C]):
    """The tools of one environment, in a fixed order (the order is part of the schema snapshot)."""

    def __init__(self, specs: Sequence[ToolSpec[Any, C]]) -> None:
        self.specs: dict[str, ToolSpec[Any, C]] = {s.name: s for s in specs}
        # each spec with its model's validator: the class attribute lookup costs as much as a small validation
        self._validators: dict[str, tuple[ToolSpec[Any, C], SchemaValidator]] = {
            s.name: (s, s.args.__pydantic_validator__) for s in specs
        }
        self._encoded: dict[str, bytes] = {}

    def names(self) -> list[str]:
        return list(self.specs)

    def openai(self) -> list[dict[str, Any]]:
        return self._schemas("openai")

    def mcp(self) -> list[dict[str, Any]]:
        return self._schemas("mcp")

    def _schemas(self, kind: str) -> list[dict[str, Any]]:
        """The tools' schemas, built once per toolbox (pydantic's schema generation cost ~30 ms for a
        toolbox, paid at every session a service opened) and handed out as a fresh copy each time, so a
        caller that edits its copy changes nothing for the next."""
        encoded = self._encoded.get(kind)
        if encoded is None:
            encoded = self._encoded[kind] = _dumps([getattr(s, kind)() for s in self.specs.values()])
        decoded: list[dict[str, Any]] = orjson.loads(encoded)
        return decoded

    def parse(self, action: Any) -> tuple[ToolSpec[Any, C], BaseModel]:
        """Turn an action (a dict, its JSON text, or that text as UTF-8 bytes) into a spec and validated
        arguments; any other input is a ``ToolError``."""
        if type(action) is dict:  # the common case first
            try:
                encoded = _dumps(action, option=_PLAIN_OPTIONS)
            except Exception:  # orjson may pass on an error raised by a foreign object (an enum's value)
                raise ToolError(f"call is not JSON data: {_not_plain(action)}") from None
            if len(encoded) > MAX_CALL_BYTES:
                raise ToolError(f"call is {len(encoded):,} bytes as JSON; the limit is {MAX_CALL_BYTES:,}")
            if len(action) == 2 and "tool" in action and "args" in action:  # the plain call: no alias to resolve
                name, args = action["tool"], action["args"]
                if type(name) is str and type(args) is dict:
                    entry = self._validators.get(name)
                    if entry is not None:
                        return self._validated(name, *entry, args)
        else:
            action = _decode_call(action)
        if not action.keys() <= CALL_KEYS:  # safe: a decoded text and a call orjson took have only str keys
            extra = sorted(action.keys() - CALL_KEYS)
            shown = ", ".join(map(quote, extra[:3])) + (f", ... ({len(extra)} in all)" if len(extra) > 3 else "")
            raise ToolError(f"unknown keys in call: [{shown}]; use 'tool' and 'args'")
        name = _one_of(action, "tool", "name", "the tool's name")
        args = _one_of(action, "args", "arguments", "the arguments")
        if type(name) is not str:
            raise ToolError("missing tool name: give 'tool' as a string")
        entry = self._validators.get(name)
        if entry is None:
            raise ToolError(f"unknown tool {quote(name)}; available: {', '.join(self.specs)}")
        spec, validator = entry
        if type(args) is str:
            args = _decode(args, "arguments are") if args.strip() else None
        if args is None:
            args = {}
        if type(args) is not dict:
            raise ToolError(f"'args' must be an object for {name}")
        return self._validated(name, spec, validator, args)

    def _validated(
        self, name: str, spec: ToolSpec[Any, C], validator: SchemaValidator, args: dict[str, Any]
    ) -> tuple[ToolSpec[Any, C], BaseModel]:
        """``spec`` and ``args`` validated against its model, or the ``ToolError`` that says why not."""
        try:
            return spec, validator.validate_python(args)  # model_validate, minus a layer
        except ValidationError as exc:
            err = exc
        if _integral_float_refused(err):  # rare: only then pay for a copy with 2.0 read as 2
            try:
                return spec, validator.validate_python(_integral(args))
            except ValidationError as exc:
                err = exc
        raise ToolError(f"invalid arguments for {name}: {describe_validation_error(err)}")
