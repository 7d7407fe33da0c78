"""Generate a desk: ``generate(seed, n_leads, shift_days, variant, lead_mix)`` -> :class:`DeskWorld`.

Each lead is drawn from its own keyed stream (``stream(seed, "lead", index)``), so lead ``k`` of a seed is the
same whatever the pipeline size, and a lead's record carries its provenance. Segments follow the published
SalesBench generator (ages, incomes, households, need, trust, price sensitivity, call limits, risk classes);
temperature shifts trust, need and the call limit; the lead mix sets how warm the list is.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

from salesgym.core.rng import Dice, stream
from salesgym.envs.desk.archetypes import ARCHETYPES, VARIANTS
from salesgym.envs.desk.contract import GOALS, MINUTES_PER_DAY, RISK_CLASSES, TEMPERATURES
from salesgym.envs.desk.world import GENERATOR_VERSION, DeskWorld, Lead


class Segment(NamedTuple):
    age: tuple[int, int]
    income: tuple[int, int]
    household: tuple[int, int]
    need: tuple[float, float]
    trust: tuple[float, float]
    price_sensitivity: tuple[float, float]
    calls: tuple[int, int]
    risk: tuple[float, float, float]  # preferred / standard / substandard


SEGMENTS = (
    Segment((26, 38), (50_000, 130_000), (2, 5), (0.55, 0.95), (0.35, 0.75), (0.45, 0.90), (2, 4), (0.5, 0.4, 0.1)),
    Segment((35, 52), (80_000, 220_000), (2, 4), (0.45, 0.85), (0.40, 0.70), (0.30, 0.65), (2, 5), (0.4, 0.45, 0.15)),
    Segment((44, 66), (120_000, 350_000), (1, 3), (0.35, 0.75), (0.45, 0.80), (0.20, 0.55), (1, 3), (0.25, 0.5, 0.25)),
)  # fmt: skip
# temperature: (trust shift, need shift, call-limit shift)
TEMPERATURE_SHIFT = {"cold": (-0.10, -0.05, -1), "lukewarm": (0.0, 0.0, 0), "warm": (0.05, 0.05, 0),
                     "hot": (0.10, 0.10, 1)}  # fmt: skip


class LeadMix(NamedTuple):
    """A kind of lead list (the split's ``template``): how its temperatures are weighted."""

    name: str
    description: str
    temperature_weights: tuple[float, float, float, float]
    mechanisms: tuple[str, ...] = ()  # what the split generator's contamination note lists


LEAD_MIXES = MappingProxyType(
    {
        m.name: m
        for m in (
            LeadMix("standard", "an even mix of cold, lukewarm, warm and hot leads", (0.25, 0.25, 0.25, 0.25),
                    ("even_temperatures",)),
            LeadMix("cold_list", "a bought list: mostly cold and lukewarm", (0.45, 0.30, 0.15, 0.10),
                    ("cold_heavy",)),
            LeadMix("referrals", "referrals and inbound: mostly warm and hot", (0.10, 0.20, 0.35, 0.35),
                    ("warm_heavy",)),
        )
    }
)  # fmt: skip
FIRST = ("Ava", "Ben", "Chloe", "Dev", "Ella", "Finn", "Grace", "Hugo", "Isla", "Jon", "Kira", "Leo", "Maya", "Nico",
         "Olive", "Priya", "Quinn", "Ravi", "Sara", "Theo", "Uma", "Vic", "Wren", "Yara", "Zane")  # fmt: skip
LAST = ("Abbott", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jones", "Khan", "Lopez",
        "Moreau", "Novak", "Okafor", "Patel", "Reyes", "Silva", "Tanaka", "Usman", "Varga", "Walsh", "Young")
SIZE_RANGE = (1, 500)
SHIFT_DAYS_RANGE = (1, 20)


def check_options(n_leads: int, shift_days: int, variant: str, lead_mix: str) -> None:
    """Raise ``ValueError`` saying what is allowed if a desk cannot be built like this."""
    if not isinstance(n_leads, int) or not SIZE_RANGE[0] <= n_leads <= SIZE_RANGE[1]:
        raise ValueError(f"n_leads must be an int in {SIZE_RANGE[0]}-{SIZE_RANGE[1]}, got {n_leads!r}")
    if not isinstance(shift_days, int) or not SHIFT_DAYS_RANGE[0] <= shift_days <= SHIFT_DAYS_RANGE[1]:
        low, high = SHIFT_DAYS_RANGE
        raise ValueError(f"shift_days must be an int in {low}-{high}, got {shift_days!r}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown buyer variant {variant!r}; choose from {', '.join(VARIANTS)}")
    if lead_mix not in LEAD_MIXES:
        raise ValueError(f"unknown lead mix {lead_mix!r}; choose from {', '.join(LEAD_MIXES)}")


def _weighted(rng: Dice, items: tuple[str, ...], weights: tuple[float, ...]) -> str:
    x, acc = rng.random() * sum(weights), 0.0
    for item, w in zip(items, weights, strict=True):
        acc += w
        if x < acc:
            return item
    return items[-1]


def _lead(seed: int, index: int, mix: LeadMix) -> Lead:
    rng = stream(seed, "lead", index)
    seg_no = rng.randint(1, 3)
    seg = SEGMENTS[seg_no - 1]
    temperature = _weighted(rng, TEMPERATURES, mix.temperature_weights)
    d_trust, d_need, d_calls = TEMPERATURE_SHIFT[temperature]
    archetype = ARCHETYPES[rng.randint(0, len(ARCHETYPES) - 1)]
    age = rng.randint(*seg.age)
    income = rng.randint(seg.income[0] // 1000, seg.income[1] // 1000) * 1000
    household = rng.randint(*seg.household)
    smoker = rng.random() < 0.25
    goal = GOALS[rng.randint(0, len(GOALS) - 2)] if rng.random() < 0.5 else "none"
    lead_id = f"L{index:03d}"
    return Lead(
        id=lead_id,
        name=f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        segment=seg_no,
        age=age,
        income=income,
        household=household,
        smoker=smoker,
        risk_class=_weighted(rng, RISK_CLASSES, seg.risk),
        temperature=temperature,
        budget=round(max(25.0, income / 12 * rng.uniform(0.008, 0.040)), 2),
        need=round(min(1.0, max(0.0, rng.uniform(*seg.need) + d_need)), 3),
        trust=round(min(1.0, max(0.0, rng.uniform(*seg.trust) + d_trust)), 3),
        price_sensitivity=round(rng.uniform(*seg.price_sensitivity), 3),
        patience=round(min(1.0, max(0.2, rng.uniform(0.45, 0.95) + archetype.patience)), 3),
        call_limit=max(1, rng.randint(*seg.calls) + d_calls),
        dependents=rng.randint(0, household - 1),
        goal=goal,
        archetype=archetype.name,
        persona=f"{archetype.name.replace('_', ' ')} buyer who {archetype.persona}",
        provenance=f"{GENERATOR_VERSION}:{seed}:{mix.name}:{index}",
    )


def generate(seed: int, n_leads: int, shift_days: int, variant: str, lead_mix: str) -> DeskWorld:
    check_options(n_leads, shift_days, variant, lead_mix)
    mix = LEAD_MIXES[lead_mix]
    leads = {lead.id: lead for lead in (_lead(seed, i, mix) for i in range(n_leads))}
    return DeskWorld(seed, variant, lead_mix, n_leads, shift_days, shift_days * MINUTES_PER_DAY,
                     MappingProxyType(leads))


class VariantScenarios(NamedTuple):
    """A buyer variant as a scenario family: its lead mixes are its templates."""

    description: str
    templates: MappingProxyType[str, LeadMix]


def catalogue() -> dict[str, VariantScenarios]:
    return {name: VariantScenarios(v.description, LEAD_MIXES) for name, v in VARIANTS.items()}
