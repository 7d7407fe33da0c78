"""The catalogue of scenario families (markets) and their templates (mechanism mixes): one JSON file per market
in this folder (its industries, regions, pains with their keywords and headlines, titles per role, deal sizes,
review rates, capacities, and its templates), read and checked once at import.

Adding a market is a new ``<name>.json`` here with the fields of ``catalog.FamilySpec``, its templates a list of
``catalog.TemplateSpec`` fields. See ``docs/families.md`` for what each family and template is about.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from typing import Any

from pydantic import TypeAdapter, ValidationError

from salesgym.envs.territory.catalog import FamilySpec, TemplateSpec

__all__ = ["FAMILIES", "MarketFileError", "get_family", "load_market", "template_of"]

ORDER = ("midmarket_saas", "enterprise_security", "healthcare", "public_sector")  # the generator's catalogue order
FIELDS = frozenset(f.name for f in dataclasses.fields(FamilySpec) if f.init)


class MarketFileError(ValueError):
    """A market file that does not describe a market: the message names the file and the field."""


def load_market(text: str, source: str = "market file") -> FamilySpec:
    """A market from its JSON text (lists become tuples, templates are keyed by name)."""
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as err:
        raise MarketFileError(f"{source}: not JSON ({err})") from None
    if not isinstance(raw, dict):
        raise MarketFileError(f"{source}: a JSON object is expected")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise MarketFileError(f"{source}: unknown field(s) {', '.join(unknown)}; fields: {', '.join(sorted(FIELDS))}")
    templates = raw.get("templates", [])
    if not isinstance(templates, list) or not all(isinstance(t, dict) and "name" in t for t in templates):
        raise MarketFileError(f"{source}: templates must be a list of objects, each with a name")
    try:
        return _ADAPTER.validate_python({**raw, "templates": {t["name"]: t for t in templates}})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MarketFileError(f"{source}: {where}: {first['msg']}") from None


def _shipped(name: str) -> FamilySpec:
    path = resources.files(__package__).joinpath(f"{name}.json")
    return load_market(path.read_text(encoding="utf-8"), f"{__package__}/{name}.json")


_ADAPTER = TypeAdapter(FamilySpec)
FAMILIES: dict[str, FamilySpec] = {name: _shipped(name) for name in ORDER}


def get_family(name: str) -> FamilySpec:
    """The family called ``name``; a ``KeyError`` naming the valid families if there is none."""
    try:
        return FAMILIES[name]
    except KeyError:
        valid = ", ".join(sorted(FAMILIES))
        raise KeyError(f"unknown scenario family {name!r}; valid families: {valid}") from None


def template_of(family: FamilySpec, name: str) -> TemplateSpec:
    """The template called ``name`` in ``family``; a ``KeyError`` naming that family's templates if none."""
    try:
        return family.templates[name]
    except KeyError:
        valid = ", ".join(sorted(family.templates))
        raise KeyError(f"unknown template {name!r} for family {family.name!r}; valid templates: {valid}") from None
