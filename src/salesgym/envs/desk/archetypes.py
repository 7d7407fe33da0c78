"""The ten buyer archetypes and the four buyer variants: parameter tables over one decision function.

An archetype shifts the weights of the buyer's score (need, trust, cover fit, plan fit), its price
sensitivity, its threshold, how much discovery builds its trust, how it takes pressure, and a few switches
(a procrastinator wants time before the first offer; a status seeker likes lifelong plans...). A variant is a
set of hard gates applied before the score (``buyers.decide``), the basis of the transfer test. Both are
hidden from the seller; it learns them only from how buyers behave.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple


class Archetype(NamedTuple):
    name: str
    persona: str  # the personality a voice would speak with (hidden)
    need_w: float = 0.0  # added to the base weights of the score
    trust_w: float = 0.0
    cover_w: float = 0.0
    plan_w: float = 0.0
    price_m: float = 1.0  # how hard a premium above half the budget hurts
    theta: float = 0.0  # added to the acceptance threshold
    discovery: float = 0.03  # trust gained per distinct discovery topic asked (up to three)
    pressure: float = 0.0  # added to the score when the offer asks to close today
    patience: float = 0.0  # added to the starting patience
    lifelong_bonus: float = 0.0  # plan fit of WHOLE and UL
    needs_time: bool = False  # the first offer gets "needs time" unless a callback was honoured
    per_question: float = 0.0  # threshold rise per discovery question in this call (momentum fades)
    dependents_bonus: float = 0.0  # cover weight when the buyer has dependents


ARCHETYPES: tuple[Archetype, ...] = (
    Archetype("analytical", "wants the numbers and checks them", trust_w=-0.04, cover_w=0.06, discovery=0.02,
              pressure=-0.04),
    Archetype("relationship", "buys from people who take time to understand them", need_w=-0.04, trust_w=0.10,
              cover_w=-0.04, price_m=0.9, discovery=0.08, pressure=-0.03),
    Archetype("skeptic", "expects a catch in every offer", trust_w=0.06, plan_w=-0.04, price_m=1.1, theta=0.03,
              pressure=-0.06, patience=-0.1),
    Archetype("budget_hawk", "looks at the price first", need_w=-0.04, trust_w=-0.02, plan_w=-0.02, price_m=1.4,
              lifelong_bonus=-0.15),
    Archetype("delegator", "wants a clear recommendation", trust_w=0.04, plan_w=0.06, price_m=0.9, pressure=0.02),
    Archetype("procrastinator", "needs time before deciding", trust_w=0.02, cover_w=-0.02, pressure=-0.06,
              needs_time=True, patience=0.1),
    Archetype("status_seeker", "likes premium products", cover_w=0.02, plan_w=0.08, price_m=0.7,
              lifelong_bonus=0.15),
    Archetype("protector", "thinks of the family first", need_w=0.08, cover_w=0.02, plan_w=-0.04, price_m=0.9,
              dependents_bonus=0.06),
    Archetype("comparison_shopper", "benchmarks every option", trust_w=-0.02, cover_w=0.04, price_m=1.1),
    Archetype("impulse_decider", "decides on momentum", need_w=0.04, cover_w=-0.04, price_m=0.85, theta=-0.06,
              pressure=0.04, per_question=0.02, patience=-0.1),
)  # fmt: skip
BY_NAME = MappingProxyType({a.name: a for a in ARCHETYPES})


class Variant(NamedTuple):
    """A buyer variant: hard gates checked before the score, in this order. ``None`` means no gate."""

    name: str
    description: str
    max_ratio: float  # premium / budget above this: over budget
    min_cover_x_income: float | None = None  # life plans: cover at least this many times income ...
    max_cover_x_income: float | None = None  # ... and at most this many
    min_cover_x_income_with_dependents: float | None = None
    cover_fit_band: tuple[float, float] | None = None  # cover / the buyer's target cover within this band
    max_income_share: float | None = None  # premium at most this share of monthly income
    min_plan_fit: float | None = None
    needs_discovery: bool = False  # the seller must have asked at least one discovery question
    refusal: float = 0.0  # after the gates: the share of offers refused anyway (keyed noise)
    snap_accept: float = 0.0  # after the gates: the share of a call's first offers accepted at once (keyed noise)
    then_within_budget: bool = False  # after the gates: premium at most the budget


VARIANTS: MappingProxyType[str, Variant] = MappingProxyType(
    {
        v.name: v
        for v in (
            Variant("default", "behaves realistically: far over budget is a no, the score decides the rest", 1.5),
            Variant("skeptical", "accepts only cheap, well-sized, well-fitted offers from a seller who asked first; "
                    "even then refuses about 30%", 0.75, min_cover_x_income=5.0, max_cover_x_income=10.0,
                    min_plan_fit=0.55, needs_discovery=True, refusal=0.3),
            Variant("impulsive", "says yes to most offers that are not clearly wrong", 1.5,
                    min_cover_x_income_with_dependents=3.0, min_plan_fit=0.4, snap_accept=0.75),
            Variant("analytical", "applies hard rules: premium at most 6% of monthly income, cover within half to "
                    "one and a half of its target, a fitting plan, then within budget", 1.5,
                    cover_fit_band=(0.5, 1.5), max_income_share=0.06, min_plan_fit=0.5, then_within_budget=True),
        )
    }
)  # fmt: skip
