"""Tool specs: typed arguments (pydantic) are the one source of each tool's JSON Schema.

A call is parsed here into ``(spec, args)`` or a :class:`ToolError` with a reason a model can act on.
Nothing here raises on bad input: malformed JSON, unknown tools, wrong or missing or extra fields and
oversized strings all come back as ``ToolError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

MAX_CALL_CHARS = 20_000  # a whole call, as JSON text; far above any legitimate call

A = TypeVar("A", bound=BaseModel)
C = TypeVar("C")


class ToolArgs(BaseModel):
    """Base of every argument model: unknown fields are an error, strings are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)


class ToolError(Exception):
    """A call that cannot be carried out; ``reason`` is shown to the agent."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolOutcome(NamedTuple):
    """What a handler returns: its output for the agent and what it cost. With ``until_public`` the call
    ends early at the first event the agent can see ("wait until something happens"), at most ``time_cost``."""

    output: Mapping[str, Any]
    time_cost: float
    resource_cost: Mapping[str, float] = MappingProxyType({})
    until_public: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[A, C]):
    """One tool: name, model-facing description, argument model and its documented contract."""

    name: str
    description: str
    args: type[A]
    handler: Callable[[C, A], ToolOutcome]
    time_cost: str
    resource_cost: str = "none"
    side_effects: str = "none"
    failure_modes: tuple[str, ...] = ()
    writes: bool = True

    def json_schema(self) -> dict[str, Any]:
        return strict_schema(self.args)

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
                "strict": True,
            },
        }

    def mcp(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.json_schema()}


class ToolResult(NamedTuple):
    status: str  # "ok" or "error"
    state_version: int
    time_cost: float
    resource_cost: Mapping[str, float]
    event_ids: tuple[str, ...]
    output: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "state_version": self.state_version,
            "time_cost": self.time_cost,
            "resource_cost": dict(self.resource_cost),
            "event_ids": list(self.event_ids),
            "output": dict(self.output),
        }


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema in OpenAI ``strict`` form: inlined refs, every field required,
    optional fields as ``[type, "null"]``, no extra properties, no titles or defaults."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].split("/")[-1]])
            out = {k: walk(v) for k, v in node.items() if k not in ("title", "default")}
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(raw)  # type: ignore[no-any-return]


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_validation_error(err: ValidationError) -> str:
    """One line per problem, naming the field, never echoing huge inputs."""
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(p) for p in e["loc"]) or "(arguments)"
        if e["type"] == "extra_forbidden":
            parts.append(f"unknown field '{loc}'")
        elif e["type"] == "missing":
            parts.append(f"missing required field '{loc}'")
        else:
            parts.append(f"field '{loc}': {e['msg']} (got {_short(e.get('input'))})")
    return "; ".join(parts)


CALL_KEYS = frozenset({"tool", "name", "args", "arguments", "id", "type"})  # what a call object may hold


class ToolBox(Generic[C]):
    """The tools of one environment, in a fixed order (the order is part of the schema snapshot)."""

    def __init__(self, specs: Sequence[ToolSpec[Any, C]]) -> None:
        self.specs: dict[str, ToolSpec[Any, C]] = {s.name: s for s in specs}

    def names(self) -> list[str]:
        return list(self.specs)

    def openai(self) -> list[dict[str, Any]]:
        return [s.openai() for s in self.specs.values()]

    def mcp(self) -> list[dict[str, Any]]:
        return [s.mcp() for s in self.specs.values()]

    def parse(self, action: Any) -> tuple[ToolSpec[Any, C], BaseModel]:
        """Turn an action (a dict or its JSON text) into a spec and validated arguments."""
        if isinstance(action, (str, bytes)):
            if len(action) > MAX_CALL_CHARS:
                raise ToolError(f"call is {len(action)} characters; the limit is {MAX_CALL_CHARS}")
            try:
                action = json.loads(action)
            except (ValueError, UnicodeDecodeError) as exc:
                raise ToolError(f"call is not valid JSON: {exc}") from None
        if type(action) is not dict and not isinstance(action, Mapping):  # the exact-type test is the cheap one
            raise ToolError('a call must be an object like {"tool": NAME, "args": {...}}')
        if not action.keys() <= CALL_KEYS:
            extra = set(action) - CALL_KEYS
            raise ToolError(f"unknown keys in call: {sorted(map(str, extra))}; use 'tool' and 'args'")
        name = action["tool"] if "tool" in action else action.get("name")
        args = action["args"] if "args" in action else action.get("arguments", {})
        if not isinstance(name, str):
            raise ToolError("missing tool name: give 'tool' as a string")
        spec = self.specs.get(name)
        if spec is None:
            raise ToolError(f"unknown tool {_short(name, 40)}; available: {', '.join(self.specs)}")
        if isinstance(args, str):
            if len(args) > MAX_CALL_CHARS:
                raise ToolError(f"arguments are {len(args)} characters; the limit is {MAX_CALL_CHARS}")
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                raise ToolError(f"arguments are not valid JSON: {exc}") from None
        if args is None:
            args = {}
        if type(args) is not dict and not isinstance(args, Mapping):
            raise ToolError(f"'args' must be an object for {name}")
        try:
            return spec, spec.args.__pydantic_validator__.validate_python(args)  # model_validate, minus a layer
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for {name}: {describe_validation_error(exc)}") from None
