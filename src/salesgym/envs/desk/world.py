"""The generated desk: immutable lead records and the shift's public facts, shared by every clone.

Each lead's fields are split into what the CRM shows (``public``: underwriting facts, bands, temperature)
and the hidden truth only the buyer, the verifier and the operator read (exact budget and need, trust, price
sensitivity, patience, call limit, dependents, stated goal, archetype).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from salesgym.core.clock import Scheduled
from salesgym.envs.desk.contract import MINUTES_PER_DAY, budget_band, need_band

GENERATOR_VERSION = "desk-gen/1"


class Lead(NamedTuple):
    id: str
    name: str
    segment: int  # 1-3: young families, established, pre-retirement
    age: int
    income: int  # yearly, dollars
    household: int
    smoker: bool
    risk_class: str
    temperature: str
    # hidden truth
    budget: float  # the most it wants to pay per month, dollars
    need: float  # how much it needs cover, in [0, 1]
    trust: float  # in [0, 1]
    price_sensitivity: float  # in [0, 1]
    patience: float  # starting patience, in (0, 1]
    call_limit: int  # calls it will take
    dependents: int
    goal: str  # the stated goal (contract.GOALS)
    archetype: str
    persona: str  # what a voice would speak with; read by no decision (shared by the leads of one archetype)

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "segment": self.segment,
            "age": self.age,
            "income": self.income,
            "household": self.household,
            "smoker": self.smoker,
            "risk_class": self.risk_class,
            "temperature": self.temperature,
            "budget_band": budget_band(self.budget),
            "need_band": need_band(self.need),
        }


@dataclass(frozen=True, slots=True)
class DeskWorld:
    seed: int
    variant: str  # the buyer variant (hidden in the sense that no observation names it)
    lead_mix: str
    n_leads: int
    shift_days: int
    horizon: float  # minutes
    leads: Mapping[str, Lead]
    tape: tuple[Scheduled, ...] = ()

    @property
    def provenance(self) -> dict[str, Any]:
        return {"generator": GENERATOR_VERSION, "seed": self.seed, "lead_mix": self.lead_mix}

    @property
    def facts(self) -> dict[str, Any]:
        """What the seller knows from the start (``data["desk"]`` of every observation)."""
        return {
            "n_leads": self.n_leads,
            "shift_days": self.shift_days,
            "budget_minutes": self.horizon,
            "minutes_per_day": MINUTES_PER_DAY,
        }

    def public(self) -> dict[str, Any]:
        return {**self.provenance, **self.facts}

    def lead_provenance(self, lead_id: str) -> str:
        """Where a lead came from: generator version, seed, lead mix and its index in the list."""
        return f"{GENERATOR_VERSION}:{self.seed}:{self.lead_mix}:{int(lead_id[1:])}"

    def hidden(self) -> dict[str, Any]:
        return {
            **self.public(),
            "variant": self.variant,
            "leads": {k: {**v._asdict(), "provenance": self.lead_provenance(k), "public": v.public()}
                      for k, v in self.leads.items()},
        }
