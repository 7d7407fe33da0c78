"""Generate a desk: ``generate(seed, n_leads, shift_days, variant, lead_mix)`` -> :class:`DeskWorld`.

Each lead is drawn from its own keyed stream (``stream(seed, "lead", index)``), so lead ``k`` of a seed is the
same whatever the pipeline size, and the hidden truth gives each lead's provenance. Segments follow the published
SalesBench generator (ages, incomes, households, need, trust, price sensitivity, call limits, risk classes);
temperature shifts trust, need and the call limit; the lead mix sets how warm the list is.
"""

from __future__ import annotations

import _random
import hashlib
import math
import random
from types import MappingProxyType
from typing import NamedTuple

from salesgym.core.numbers import rounded
from salesgym.envs.desk.archetypes import ARCHETYPES, VARIANTS
from salesgym.envs.desk.contract import GOALS, MINUTES_PER_DAY, RISK_CLASSES, TEMPERATURES
from salesgym.envs.desk.world import DeskWorld, Lead


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


# What every lead shares, built once: the names, ids and personas a lead picks from (the same strings as
# formatting them per lead, without the cost or the copies).
NAMES = tuple(tuple(f"{first} {last}" for last in LAST) for first in FIRST)
LEAD_IDS = tuple(f"L{i:03d}" for i in range(SIZE_RANGE[1]))
INDEX_KEYS = tuple(str(i).encode() for i in range(SIZE_RANGE[1]))  # the stream key's last part
PERSONAS = {a.name: f"{a.name.replace('_', ' ')} buyer who {a.persona}" for a in ARCHETYPES}


def _running(weights: tuple[float, ...]) -> tuple[tuple[float, ...], float]:
    """The running sums of ``weights`` (added in order, as the draw compares them) and their ``sum``."""
    out, acc = [], 0.0
    for w in weights:
        acc += w
        out.append(acc)
    return tuple(out), sum(weights)


_RISKS = tuple(_running(seg.risk) for seg in SEGMENTS)
_SEGMENT_DRAWS = tuple(  # per segment, the (low, span) of each draw, as Dice.randint and Dice.uniform use them
    (
        (seg.age[0], seg.age[1] - seg.age[0] + 1),
        (seg.income[0] // 1000, seg.income[1] // 1000 - seg.income[0] // 1000 + 1),
        (seg.household[0], seg.household[1] - seg.household[0] + 1),
        (seg.need[0], seg.need[1] - seg.need[0]),
        (seg.trust[0], seg.trust[1] - seg.trust[0]),
        (seg.price_sensitivity[0], seg.price_sensitivity[1] - seg.price_sensitivity[0]),
        (seg.calls[0], seg.calls[1] - seg.calls[0] + 1),
    )
    for seg in SEGMENTS
)


def _leads(seed: int, n_leads: int, mix: LeadMix) -> dict[str, Lead]:
    """Lead ``k`` from its own stream ``stream(seed, "lead", k)``, draw by draw as ``core.rng.Dice`` draws
    (``randint(a, b)`` is ``a + int(u * (b - a + 1))``, ``uniform(a, b)`` is ``a + (b - a) * u``, ``choice`` is
    ``seq[int(u * len(seq))]``). ``tests/desk/test_desk_generator.py`` holds the plain definition and pins
    every field to it. Written for speed, since a reset is mostly this loop: one generator re-seeded per lead
    (the outputs of a fresh ``random.Random``, without building one), the stream's key hashed from a prefix,
    records built by position (``tuple.__new__``: no Python-level ``_make``), ``math.floor`` for ``int`` (the
    same for the non-negative draws, at a cheaper call) and ``core.numbers.rounded`` for ``round``."""
    rng = random.Random()
    reseed, r = _random.Random.seed, rng.random
    # core.rng.stream_seed's hash of (seed, "lead", index), less the index
    keyed = hashlib.blake2b(f"{seed}\x1flead\x1f".encode(), digest_size=8)
    from_bytes, new, floor, rnd = int.from_bytes, tuple.__new__, math.floor, rounded
    (t0, t1, t2, _), temperature_total = _running(mix.temperature_weights)
    cold, lukewarm, warm, hot = TEMPERATURES
    preferred, standard, substandard = RISK_CLASSES
    n_arch, n_goals, n_first, n_last = len(ARCHETYPES), len(GOALS) - 1, len(FIRST), len(LAST)
    leads: dict[str, Lead] = {}
    for index in range(n_leads):
        h = keyed.copy()
        h.update(INDEX_KEYS[index])
        reseed(rng, from_bytes(h.digest(), "big"))
        seg_no = 1 + floor(r() * 3)
        age, income, household, need, trust, price, calls = _SEGMENT_DRAWS[seg_no - 1]
        x = r() * temperature_total  # a weighted pick: the first whose running sum exceeds the scaled draw
        temperature = cold if x < t0 else lukewarm if x < t1 else warm if x < t2 else hot
        d_trust, d_need, d_calls = TEMPERATURE_SHIFT[temperature]
        archetype = ARCHETYPES[floor(r() * n_arch)]
        age_ = age[0] + floor(r() * age[1])
        income_ = (income[0] + floor(r() * income[1])) * 1000
        household_ = household[0] + floor(r() * household[1])
        smoker = r() < 0.25
        goal = GOALS[floor(r() * n_goals)] if r() < 0.5 else "none"
        name = NAMES[floor(r() * n_first)][floor(r() * n_last)]
        (r0, r1, _), risk_total = _RISKS[seg_no - 1]
        x = r() * risk_total
        risk = preferred if x < r0 else standard if x < r1 else substandard
        budget = income_ / 12 * (0.008 + (0.040 - 0.008) * r())
        need_ = need[0] + need[1] * r() + d_need
        trust_ = trust[0] + trust[1] * r() + d_trust
        price_ = price[0] + price[1] * r()
        patience = 0.45 + (0.95 - 0.45) * r() + archetype.patience
        call_limit = calls[0] + floor(r() * calls[1]) + d_calls
        lead_id = LEAD_IDS[index]
        leads[lead_id] = new(Lead, (
            lead_id,
            name,
            seg_no,
            age_,
            income_,
            household_,
            smoker,
            risk,
            temperature,
            rnd(budget if budget > 25.0 else 25.0, 2),  # max(25.0, budget), min(1.0, max(0.0, need)) ...
            rnd(0.0 if need_ <= 0.0 else 1.0 if need_ >= 1.0 else need_, 3),
            rnd(0.0 if trust_ <= 0.0 else 1.0 if trust_ >= 1.0 else trust_, 3),
            rnd(price_, 3),
            rnd(0.2 if patience <= 0.2 else 1.0 if patience >= 1.0 else patience, 3),
            call_limit if call_limit > 1 else 1,
            floor(r() * household_),  # randint(0, household - 1)
            goal,
            archetype.name,
            PERSONAS[archetype.name],
        ))  # fmt: skip
    return leads


def generate(seed: int, n_leads: int, shift_days: int, variant: str, lead_mix: str) -> DeskWorld:
    check_options(n_leads, shift_days, variant, lead_mix)
    leads = _leads(seed, n_leads, LEAD_MIXES[lead_mix])
    return DeskWorld(seed, variant, lead_mix, n_leads, shift_days, shift_days * MINUTES_PER_DAY,
                     MappingProxyType(leads))


class VariantScenarios(NamedTuple):
    """A buyer variant as a scenario family: its lead mixes are its templates."""

    description: str
    templates: MappingProxyType[str, LeadMix]


def catalogue() -> dict[str, VariantScenarios]:
    return {name: VariantScenarios(v.description, LEAD_MIXES) for name, v in VARIANTS.items()}
