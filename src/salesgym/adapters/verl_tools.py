"""Tool schemas in the shape verl keeps, and the way back from the arguments a model writes against them.

verl's tool schema model (``verl.tools.schemas.OpenAIFunctionPropertySchema``, 0.9.1) keeps only ``type``,
``description`` and ``enum`` of a parameter; pydantic drops everything else without a word (``items``,
nested ``properties``, ``anyOf``, bounds), and a parameter without ``type`` (a nullable one, written as
``anyOf``) does not validate at all. :class:`FlatTools` rewrites salesgym's schemas so that nothing the
model needs is lost in that model:

- a nullable scalar (``anyOf: [{type: T}, {type: null}]``) becomes ``type: [T, "null"]``;
- an object with fixed properties becomes one parameter per property, named with dots
  (``invitee.email``, ``invitee.name``), recursively;
- any other structure (arrays of objects, free-form objects, nullable objects) becomes a string parameter
  whose value is that argument as JSON text;
- whatever verl would drop (bounds, ``items`` of a scalar array, the structure of a JSON-text parameter) is
  written into the description as JSON Schema text, so the model still reads it.

:meth:`FlatTools.unflatten` turns the arguments of a call made against the flat schemas back into the
environment's own arguments, and :meth:`FlatTools.flatten_args` is its inverse (scripted calls, SFT data).
Nothing here imports verl.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_SCALARS = {"string", "integer", "number", "boolean"}
_KEPT = {"type", "description", "enum"}  # what verl's OpenAIFunctionPropertySchema keeps


def _non_null(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The schema without its ``null`` option (``anyOf`` of one type and null) and whether it had one."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        rest = [o for o in options if o.get("type") != "null"]
        if len(rest) == 1 and len(rest) < len(options):
            merged = {**rest[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
            return merged, True
    types = schema.get("type")
    if isinstance(types, list) and "null" in types:
        rest_types = [t for t in types if t != "null"]
        if len(rest_types) == 1:
            return {**schema, "type": rest_types[0]}, True
    return schema, False


def _describe(description: str, extra: Mapping[str, Any], lead: str = "JSON Schema") -> str:
    if not extra:
        return description
    text = json.dumps(dict(extra), sort_keys=True, separators=(",", ":"))
    return f"{description} ({lead}: {text})" if description else f"{lead}: {text}"


def _with_description(prop: dict[str, Any], description: str) -> dict[str, Any]:
    return {**prop, "description": description} if description else prop


@dataclass
class _Plan:
    """How one tool's flat arguments map back: dotted names to their path, JSON-text names."""

    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)  # flat name -> path in the real args
    json_text: set[str] = field(default_factory=set)  # flat names whose value is JSON text
    objects: set[tuple[str, ...]] = field(default_factory=set)  # paths of objects spread into dotted names


def _path_of(key: str, plan: _Plan) -> tuple[str, ...]:
    """The path of a name the plan does not list: dotted under a spread object, else the name itself."""
    parts = tuple(key.split("."))
    return parts if any(parts[:i] in plan.objects for i in range(1, len(parts))) else (key,)


class FlatTools:
    """``schemas`` (OpenAI function tools, as ``env.tool_schemas()`` gives them) in verl's shape: ``.schemas``."""

    def __init__(self, schemas: Sequence[Mapping[str, Any]]) -> None:
        self.schemas: list[dict[str, Any]] = []
        self._plans: dict[str, _Plan] = {}
        for spec in schemas:
            fn = spec["function"]
            params = fn.get("parameters") or {}
            plan = _Plan()
            props: dict[str, Any] = {}
            required: list[str] = []
            top_required = set(params.get("required", []))
            for name, prop in (params.get("properties") or {}).items():
                self._add(plan, (name,), prop, name in top_required, props, required)
            flat_fn: dict[str, Any] = {
                "name": fn["name"],
                "description": str(fn.get("description", fn["name"])),
                "parameters": {"type": "object", "properties": props, "required": required},
            }
            self.schemas.append({"type": "function", "function": flat_fn})
            self._plans[fn["name"]] = plan

    def _add(
        self,
        plan: _Plan,
        path: tuple[str, ...],
        schema: Mapping[str, Any],
        required: bool,
        props: dict[str, Any],
        required_out: list[str],
    ) -> None:
        name = ".".join(path)
        if name in props:
            raise ValueError(f"flattened parameter name {name!r} is used twice")
        base, nullable = _non_null(schema)
        description = str(base.get("description", ""))
        kind = base.get("type")
        if kind in _SCALARS or (kind is None and "enum" in base) or (kind is None and "const" in base):
            extra = {k: v for k, v in base.items() if k not in _KEPT | {"const"}}
            out: dict[str, Any] = {"type": [kind or "string", "null"] if nullable else (kind or "string")}
            enum = base.get("enum", [base["const"]] if "const" in base else None)
            if enum is not None:
                out["enum"] = list(enum)
            props[name] = _with_description(out, _describe(description, extra))
        elif kind == "array" and _non_null(base.get("items", {}))[0].get("type") in _SCALARS and not nullable:
            extra = {k: v for k, v in base.items() if k not in _KEPT}
            props[name] = _with_description({"type": "array"}, _describe(description, extra))
        elif kind == "object" and base.get("properties") and not nullable:
            plan.objects.add(path)
            inner = set(base.get("required", []))
            lead = f"part of {name}" + (f" ({description})" if description else "")
            for sub, sub_schema in base["properties"].items():
                tagged = {**sub_schema, "description": f"{lead}: {sub_schema.get('description', sub)}"}
                self._add(plan, (*path, sub), tagged, required and sub in inner, props, required_out)
            return
        else:  # arrays of objects, free-form or nullable objects: the argument as one JSON text
            structure = {k: v for k, v in schema.items() if k != "description"}
            props[name] = {"type": "string", "description": _describe(description, structure, "a JSON text of")}
            plan.json_text.add(name)
        plan.paths[name] = path
        if required:
            required_out.append(name)

    def unflatten(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The environment's arguments for a call of ``tool`` made against the flat schemas. A JSON-text
        value that does not parse is passed on as it is (the environment refuses it with its own message);
        names the tool does not have are passed on too (refused the same way)."""
        plan = self._plans.get(tool)
        if plan is None:
            return dict(args)
        out: dict[str, Any] = {}
        for key, value in args.items():
            path = plan.paths.get(key) or _path_of(key, plan)
            if key in plan.json_text and isinstance(value, str):
                with contextlib.suppress(ValueError):
                    value = json.loads(value)
            elif tuple(key.split(".")) in plan.objects and isinstance(value, str):
                with contextlib.suppress(ValueError):  # a whole object given as JSON text
                    value = json.loads(value)
                path = tuple(key.split("."))
            node = out
            for part in path[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    break
                node = child
            else:
                node[path[-1]] = value
        return out

    def flatten_args(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The flat arguments of a call of ``tool`` (the inverse of :meth:`unflatten`)."""
        plan = self._plans.get(tool)
        if plan is None:
            return dict(args)
        out: dict[str, Any] = {}

        def walk(prefix: tuple[str, ...], value: Any) -> None:
            name = ".".join(prefix)
            if prefix in plan.objects:
                if isinstance(value, dict) and value:
                    for sub, sub_value in value.items():
                        walk((*prefix, sub), sub_value)
                else:  # an empty or wrong-typed object has no dotted names: sent whole, as JSON text
                    out[name] = json.dumps(value)
            elif name in plan.json_text:
                out[name] = json.dumps(value)
            else:
                out[name] = copy.deepcopy(value)

        for key, value in args.items():
            walk((key,), value)
        return out
