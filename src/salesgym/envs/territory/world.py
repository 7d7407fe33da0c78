"""The generated territory: immutable records of accounts, opportunities, stakeholders and the tape.

Everything here is fixed at reset and shared by every clone. Fields are split into what a seller can
see (``public``) and the hidden truth only the simulator, verifier and operator read (``hidden``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from salesgym.core.clock import Scheduled
from salesgym.core.state import to_plain
from salesgym.envs.territory.calendar import HOURS_PER_DAY
from salesgym.envs.territory.catalog import FamilySpec

GENERATOR_VERSION = "territory-gen/2"


class NewsItem(NamedTuple):
    headline: str
    pain_id: str
    keyword: str


class Account(NamedTuple):
    id: str
    name: str
    industry: str
    employees: int
    region: str
    stack: tuple[str, ...]
    news: tuple[NewsItem, ...]  # surfaced by research_account
    pains: tuple[str, ...]  # hidden: the account's real pains (pain ids)
    severity: tuple[float, ...]  # hidden: how much each of those pains hurts, in (0, 1]
    provenance: str = ""

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "industry": self.industry,
            "employees": self.employees,
            "region": self.region,
        }


class Stakeholder(NamedTuple):
    id: str
    opportunity_id: str
    name: str
    title: str  # public; usually, not always, reflects authority
    role: str  # hidden true role
    authority: float  # hidden, in [0, 1]
    disposition: float  # hidden starting disposition, in [-1, 1]
    responsiveness_h: float  # hidden mean reply latency, business hours
    persona: str  # hidden
    pains: tuple[str, ...]  # hidden: the pains this person cares about (their motives)
    provenance: str = ""

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "title": self.title}


class Opportunity(NamedTuple):
    id: str
    account_id: str
    product_line: str
    value_band: tuple[float, float]  # public estimate, $k
    target_quarter: str  # public
    stakeholder_ids: tuple[str, ...]
    # hidden truth
    true_value: float  # $k at list price
    required_discount: float  # the buyer's walk-away: price must be at least this far below list
    deadline_day: int  # business day after which the deal slips out of this episode
    required_approvals: tuple[str, ...]
    viable: bool
    nonviable_reason: str | None
    budget_day: int  # business day from which the budget can be confirmed
    competitor: str | None
    competitor_aggression: float
    fit: float  # product fit, drives technical evaluation
    provenance: str = ""

    @property
    def shown_value(self) -> float:
        """The public value estimate: the midpoint of the value band (what the reward weighs a deal by)."""
        return (self.value_band[0] + self.value_band[1]) / 2

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "account_id": self.account_id,
            "product_line": self.product_line,
            "value_band": list(self.value_band),
            "target_quarter": self.target_quarter,
        }


class Committees(Mapping[str, Stakeholder]):
    """Stakeholders by id, each committee drawn from its own keyed stream on first use.

    Drawing is deterministic, so the memo never changes what anyone sees: it only spares a reset the cost
    of drawing committees an episode may never touch (most of a large territory's generation time).
    """

    def __init__(self, opportunities: Mapping[str, Opportunity], draw: Callable[[Opportunity], list[Stakeholder]]):
        self._opportunities = opportunities
        self._draw = draw
        self._people: dict[str, Stakeholder] = {}
        self._size = sum(len(o.stakeholder_ids) for o in opportunities.values())

    def __getitem__(self, sid: str) -> Stakeholder:
        person = self._people.get(sid)
        if person is None:
            opp = self._opportunities.get(sid[: sid.rfind("s")]) if isinstance(sid, str) else None
            if opp is None or sid not in opp.stakeholder_ids:
                raise KeyError(sid)
            self._people.update((p.id, p) for p in self._draw(opp))
            person = self._people[sid]
        return person

    def __iter__(self) -> Iterator[str]:
        for opp in self._opportunities.values():
            yield from opp.stakeholder_ids

    def __len__(self) -> int:
        return self._size


@dataclass(frozen=True, slots=True)
class TerritoryWorld:
    seed: int
    family: str
    template: str
    mechanisms: tuple[str, ...]
    n_opportunities: int
    horizon_days: int
    horizon: float  # business hours
    capacity: Mapping[str, float]  # weekly hours per resource
    lead_days: Mapping[str, int]
    discount_authority: float
    accounts: Mapping[str, Account]
    opportunities: Mapping[str, Opportunity]
    stakeholders: Mapping[str, Stakeholder]
    tape: tuple[Scheduled, ...]
    spec: FamilySpec
    ablations: tuple[str, ...] = ()
    pipeline_value: float = 1.0  # public: sum of value-band midpoints, the reward's scale

    @property
    def provenance(self) -> dict[str, Any]:
        return {"generator": GENERATOR_VERSION, "seed": self.seed, "family": self.family, "template": self.template}

    def public(self) -> dict[str, Any]:
        return {**self.provenance, **self.facts}

    @property
    def facts(self) -> dict[str, Any]:
        """What the seller knows about the territory from the start (``data["territory"]`` of every
        observation): its size, horizon, weekly hours of each team, booking lead times, discount authority."""
        return {
            "n_opportunities": self.n_opportunities,
            "horizon_days": self.horizon_days,
            "business_days": int(self.horizon // HOURS_PER_DAY),
            "capacity_per_week": dict(self.capacity),
            "lead_days": dict(self.lead_days),
            "discount_authority": self.discount_authority,
        }

    def hidden(self) -> dict[str, Any]:
        return {
            **self.public(),
            "mechanisms": list(self.mechanisms),
            "ablations": list(self.ablations),
            "accounts": {k: to_plain(v) for k, v in self.accounts.items()},
            "opportunities": {k: to_plain(v) for k, v in self.opportunities.items()},
            "stakeholders": {k: to_plain(v) for k, v in self.stakeholders.items()},
            "tape": [{"due": t.due, "kind": t.kind, "data": dict(t.data)} for t in self.tape],
        }

    def pain_label(self, pain_id: str) -> str:
        return self.spec.pain(pain_id).label
