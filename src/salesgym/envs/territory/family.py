"""The territory as a registered family (``salesgym/__init__.py`` names :data:`SPEC` beside its ids): its split
entries, splits, policies, report words and hooks, as the benchmark, the service and the reports see them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salesgym.core.family import FamilySpec, SplitColumns
from salesgym.envs.territory import splits
from salesgym.envs.territory.generator import WORLD_ABLATIONS, check_options
from salesgym.envs.territory.report_words import REPORT_WORDS
from salesgym.envs.territory.reward import TRAINING_ABLATIONS
from salesgym.envs.territory.structure import structure


@dataclass(frozen=True, slots=True)
class TerritoryScenario:
    """One split territory: a scenario family's template, its number of opportunities and its horizon."""

    family: str
    template: str
    n_opportunities: int
    horizon_days: int

    @classmethod
    def read(cls, columns: SplitColumns) -> TerritoryScenario:
        return cls(*columns)

    def columns(self) -> SplitColumns:
        return SplitColumns(self.family, self.template, self.n_opportunities, self.horizon_days)

    def make_kwargs(self) -> dict[str, Any]:
        return self.columns().as_dict()

    def check(self, pack: str | None) -> None:
        if pack is not None:
            raise ValueError("the territory has no template packs")
        check_options(self.family, self.template, self.n_opportunities, self.horizon_days, ())


def _private_plan(name: str, pack: str | None, held_out_family: str | None) -> dict[str, Any]:
    if pack is not None:
        raise ValueError("--templates-dir: the territory has no template packs")
    return splits.private_plan(name, held_out_family)


SPEC = FamilySpec(
    name="territory",
    scenario=TerritoryScenario.read,
    catalogue=splits.catalogue,
    split_plan=splits.plan,
    split_rules=splits.rules,
    default_split="eval-quick",  # every horizon tier in about a minute; the scored split is --split eval
    split_prefix="",
    policies="salesgym.agents.territory:SUITE",
    report_words=REPORT_WORDS,
    scenario_words={},  # the stored columns are the territory's own words
    world_ablations=WORLD_ABLATIONS,
    training_ablations=TRAINING_ABLATIONS,
    trajectory_data=("time", "capacity_left", "milestone_counts", "inbox", "alerts", "episode"),
    private_plan=_private_plan,
    conformance="salesgym.envs.territory.conformance",
    structure=structure,
    unnamed_manifests=True,
)
