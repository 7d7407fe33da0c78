"""The workflows family as registered (``salesgym/__init__.py`` names :data:`SPEC` beside its ids): its split
entries, splits, policies, report words and hooks, as the benchmark, the service and the reports see them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from salesgym.core.family import FamilySpec, SplitColumns, no_held_out_choice
from salesgym.envs.workflows import packs, splits
from salesgym.envs.workflows.env import TIERS, TRAINING_ABLATIONS
from salesgym.envs.workflows.report_words import REPORT_WORDS


@dataclass(frozen=True, slots=True)
class Tier:
    """A tier of the catalogue: its templates use ``n`` apps."""

    description: str
    templates: Mapping[str, Any]


def catalogue(pack: str | None = None) -> dict[str, Tier]:
    """Tiers by name (``tier1``..``tier4``), each with its templates (the package's, or a pack's)."""
    templates = packs.catalogue(pack)
    return {f"tier{n}": Tier(f"workflows over {n} app(s)", {k: t for k, t in templates.items() if t.tier == n})
            for n in TIERS}


@dataclass(frozen=True, slots=True)
class WorkflowsScenario:
    """One split task: a workflow template of a tier over that many apps (stored in the family, template and
    n_opportunities columns; the horizon column is unused and kept as stored)."""

    tier: str
    template: str
    apps: int
    unused: int

    @classmethod
    def read(cls, columns: SplitColumns) -> WorkflowsScenario:
        return cls(*columns)

    def columns(self) -> SplitColumns:
        return SplitColumns(self.tier, self.template, self.apps, self.unused)

    def make_kwargs(self) -> dict[str, Any]:
        shipped = packs.shipped_with(self.template)  # a shipped pack's template names its pack (the package's: none)
        return {"template": self.template, **({} if shipped is None else {"pack": shipped})}

    def check(self, pack: str | None) -> None:
        templates = packs.catalogue(pack if pack is not None else packs.shipped_with(self.template))
        if self.template not in templates:
            raise ValueError(f"unknown template {self.template!r}")
        tier = templates[self.template].tier
        if self.tier != f"tier{tier}" or self.apps != tier:
            raise ValueError(f"template {self.template!r} is tier{tier} with {tier} app(s)")


def _plan(held_out: str | None) -> dict[str, dict[str, Any]]:
    no_held_out_choice("workflows", held_out)
    return splits.plan()


def _private_plan(name: str, pack: str | None, held_out: str | None) -> dict[str, Any]:
    no_held_out_choice("workflows", held_out)
    return splits.private_plan(name, pack)


def _load_pack(path: str | Path) -> packs.Pack:
    return packs.load(path)


SPEC = FamilySpec(
    name="workflows",
    scenario=WorkflowsScenario.read,
    catalogue=catalogue,
    split_plan=_plan,
    split_rules=splits.rules,
    default_split="workflows-eval",
    split_prefix="workflows-",
    policies="salesgym.agents.workflows:SUITE",
    report_words=REPORT_WORDS,
    scenario_words={"family": "tier", "template": "workflow template", "n_opportunities": "apps",
                    "horizon_days": "-"},
    scenario_tags={"apps": "app"},  # a per-app breakdown
    training_ablations=TRAINING_ABLATIONS,
    trajectory_data=("clock", "told", "episode"),
    private_plan=_private_plan,
    load_pack=_load_pack,
    shipped_packs=packs.shipped,
    conformance="salesgym.envs.workflows.conformance",
    verifier_api="salesgym.envs.workflows.remote",  # the HTTP verifier API's family side (serve/runs.py)
    splits_folder="workflows",
)
