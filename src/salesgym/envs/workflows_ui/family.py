"""The computer-use family as registered (``salesgym/__init__.py`` names :data:`SPEC` beside its ids): the
workflows family's tasks through the apps' pages, each in one of the apps' looks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salesgym.core.family import FamilySpec, SplitColumns, no_held_out_choice
from salesgym.envs.workflows.family import Tier, WorkflowsScenario
from salesgym.envs.workflows.family import catalogue as workflows_catalogue
from salesgym.envs.workflows_ui import splits
from salesgym.envs.workflows_ui.report_words import REPORT_WORDS
from salesgym.webapps.variants import VARIANTS


def split_look(template: str) -> tuple[str, str]:
    """A UI split entry's template column, ``<template>.<look>`` (template ids have no dot), as (template, look)."""
    name, _, look = template.partition(".")
    look = look or "default"
    if look not in VARIANTS:
        raise ValueError(f"unknown look {look!r} in {template!r}; looks: {', '.join(VARIANTS)}")
    return name, look


def catalogue() -> dict[str, Tier]:
    """Tiers by name, each with its templates in every look (``<template>.<look>``: what split entries name)."""
    return {name: Tier(f"{tier.description}, through the apps' pages", {
        f"{key}.{look}": t for key, t in tier.templates.items() for look in VARIANTS})
        for name, tier in workflows_catalogue().items()}


@dataclass(frozen=True, slots=True)
class UIScenario:
    """One split task through the pages: a workflows task (tier, template, apps) in one look of the apps (stored
    as ``<template>.<look>`` in the template column)."""

    task: WorkflowsScenario
    look: str

    @classmethod
    def read(cls, columns: SplitColumns) -> UIScenario:
        template, look = split_look(columns.template)
        return cls(WorkflowsScenario(columns.family, template, columns.n_opportunities, columns.horizon_days), look)

    def columns(self) -> SplitColumns:
        stored = self.task.columns()
        return stored._replace(template=f"{stored.template}.{self.look}")

    def make_kwargs(self) -> dict[str, Any]:
        return {**self.task.make_kwargs(), "variant": self.look}

    def check(self, pack: str | None) -> None:
        if pack is not None:
            raise ValueError("workflows-ui has no template packs")
        self.task.check(None)


def _plan(held_out: str | None) -> dict[str, dict[str, Any]]:
    no_held_out_choice("workflows-ui", held_out)
    return splits.plan()


SPEC = FamilySpec(
    name="workflows-ui",
    scenario=UIScenario.read,
    catalogue=catalogue,
    split_plan=_plan,
    split_rules=splits.rules,
    default_split="workflows-ui-eval",
    split_prefix="workflows-ui-",
    policies="salesgym.agents.workflows_ui:SUITE",
    report_words=REPORT_WORDS,
    scenario_words={"family": "tier", "template": "workflow template . look", "n_opportunities": "apps",
                    "horizon_days": "-"},
    scenario_tags={"apps": "app", "looks": "look"},
    trajectory_data=("clock", "told", "episode", "url"),
    conformance="salesgym.envs.workflows_ui.conformance",
    kit_ids=("workflows-ui-debug-v0",),  # the conformance kit runs the debug id (browser episodes are costly)...
    kit_campaign=True,  # ... in the campaign run (pytest -m campaign), not in the default suite
    splits_folder="workflows-ui",
)
