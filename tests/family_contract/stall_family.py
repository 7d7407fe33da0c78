"""The stall family's registration: one :class:`~salesgym.core.family.FamilySpec`, nothing else outside its folder.

Registering an id of it (``salesgym.register(ID, "stall_env:StallEnv", spec="stall_family:SPEC")``) is all the
benchmark, the conformance kit, the adapters and the service need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stall_env import check

from salesgym.core.family import FamilySpec, SplitColumns, no_held_out_choice

REPORT_WORDS = {
    "unit": ["stall", "stalls"],
    "primary": "revenue of accepted offers ($)",
    "primary_axis": "primary: revenue ($)",
    "closed": {"title": "revenue ($)", "short": "revenue", "means": "mean revenue ($)"},
    "columns": [{"key": "sales", "title": "jars sold", "short": "jars"}],
    "secondary": [{"key": "sales", "title": "jars sold"}, {"key": "invalid_actions", "title": "invalid actions"}],
    "funnel": None,
}


@dataclass(frozen=True, slots=True)
class Market:
    description: str
    templates: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StallScenario:
    """One split stall: a market, its goods, its number of buyers and the hours it is open."""

    market: str
    goods: str
    n_buyers: int
    hours: int

    @classmethod
    def read(cls, columns: SplitColumns) -> StallScenario:
        return cls(*columns)

    def columns(self) -> SplitColumns:
        return SplitColumns(self.market, self.goods, self.n_buyers, self.hours)

    def make_kwargs(self) -> dict[str, Any]:
        return {"n_buyers": self.n_buyers, "hours": self.hours}

    def check(self, pack: str | None) -> None:
        if pack is not None:
            raise ValueError("the stall has no template packs")
        if (self.market, self.goods) != ("village", "honey"):
            raise ValueError(f"the stall sells honey at the village market, not {self.goods!r} at {self.market!r}")
        check(self.n_buyers, self.hours)


def catalogue() -> dict[str, Market]:
    return {"village": Market("the village market", {"honey": "jars of honey"})}


def plan(held_out: str | None) -> dict[str, dict[str, Any]]:
    no_held_out_choice("stall", held_out)
    out = {}
    for name, (base, sizes) in {"stall-train": (500_000, (3, 4, 4)), "stall-eval": (510_000, (6, 8, 10))}.items():
        entries = [{"id": f"{name}-{i:03d}", "family": "village", "template": "honey", "seed": base + i,
                    "n_opportunities": n, "horizon_days": 8} for i, n in enumerate(sizes)]
        out[name] = {"description": f"{len(entries)} stalls of {sizes} buyers.", "territories": entries,
                     "contamination": {"reference": "stall-train", "summary": "same market, other seeds"}}
    return out


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """Eval stalls are larger than train stalls."""
    train, ev = manifests.get("stall-train"), manifests.get("stall-eval")
    if train is None or ev is None:
        return []
    small = max(t.n_opportunities for t in train.layout)
    return [f"stall-eval has a stall of {t.n_opportunities} buyers, no more than train's {small}"
            for t in ev.layout if t.n_opportunities <= small]


SPEC = FamilySpec(
    name="stall",
    scenario=StallScenario.read,
    catalogue=catalogue,
    split_plan=plan,
    split_rules=rules,
    default_split="stall-eval",
    split_prefix="stall-",
    policies="stall_policies:SUITE",
    report_words=REPORT_WORDS,
    scenario_words={"family": "market", "template": "goods", "n_opportunities": "buyers", "horizon_days": "hours"},
    trajectory_data=("hours", "sold"),
    splits_folder="stall",
)
