"""The catalogue of scenario families (markets) and their templates (mechanism mixes).

Each module in this package defines one ``FAMILY``; adding a family is a new module plus one line below.
See ``docs/families.md`` for what each family and template is about.
"""

from __future__ import annotations

from salesgym.envs.territory.catalog import FamilySpec, TemplateSpec
from salesgym.envs.territory.families import enterprise_security, healthcare, midmarket_saas, public_sector

__all__ = ["FAMILIES", "get_family", "template_of"]

FAMILIES: dict[str, FamilySpec] = {
    module.FAMILY.name: module.FAMILY for module in (midmarket_saas, enterprise_security, healthcare, public_sector)
}


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
