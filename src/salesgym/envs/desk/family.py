"""The desk as a registered family (``salesgym/__init__.py`` names :data:`SPEC` beside its ids): its split entries,
splits, policies, report words and hooks, as the benchmark, the service and the reports see them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from salesgym.core.family import FamilySpec, SplitColumns, no_held_out_choice
from salesgym.envs.desk import splits
from salesgym.envs.desk.generator import catalogue, check_options
from salesgym.envs.desk.report_words import REPORT_WORDS


@dataclass(frozen=True, slots=True)
class DeskScenario:
    """One split desk: a buyer variant, a lead mix, a number of leads and a shift of some days (stored in the split
    file's family, template, n_opportunities and horizon_days columns)."""

    variant: str
    lead_mix: str
    n_leads: int
    shift_days: int

    @classmethod
    def read(cls, columns: SplitColumns) -> DeskScenario:
        return cls(*columns)

    def columns(self) -> SplitColumns:
        return SplitColumns(self.variant, self.lead_mix, self.n_leads, self.shift_days)

    def make_kwargs(self) -> dict[str, Any]:
        return {"variant": self.variant, "lead_mix": self.lead_mix, "n_leads": self.n_leads,
                "shift_days": self.shift_days}

    def check(self, pack: str | None) -> None:
        if pack is not None:
            raise ValueError("desk has no template packs")
        check_options(self.n_leads, self.shift_days, self.variant, self.lead_mix)


def _plan(held_out: str | None) -> dict[str, dict[str, Any]]:
    no_held_out_choice("desk", held_out)
    return splits.plan()


def _private_plan(name: str, pack: str | None, held_out: str | None) -> dict[str, Any]:
    no_held_out_choice("desk", held_out)
    return splits.private_plan(name, pack)


SPEC = FamilySpec(
    name="desk",
    scenario=DeskScenario.read,
    catalogue=catalogue,  # buyer variants, each with the lead mixes as its templates
    split_plan=_plan,
    split_rules=splits.rules,
    default_split="desk-eval",
    split_prefix="desk-",
    policies="salesgym.agents.desk:SUITE",
    report_words=REPORT_WORDS,
    scenario_words={"family": "buyer variant", "template": "lead mix", "n_opportunities": "leads",
                    "horizon_days": "shift days"},
    trajectory_data=("time", "pipeline", "converted_mrr", "call", "callbacks_due", "episode"),
    private_plan=_private_plan,
    conformance="salesgym.envs.desk.conformance",
    splits_folder="desk",
)
