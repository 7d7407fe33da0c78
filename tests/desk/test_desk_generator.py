"""The desk generator is pinned to its reference: every lead of many seeds, lead mixes and indexes equals the
record the plain, draw-by-draw definition below gives (the generator itself is written for speed: one
re-seeded generator, draws inlined, records built by position), so a faster generator can never change a
world, a split or a score."""

from __future__ import annotations

import pytest

from salesgym.core.rng import Dice, stream
from salesgym.envs.desk.archetypes import ARCHETYPES
from salesgym.envs.desk.contract import GOALS, RISK_CLASSES, TEMPERATURES
from salesgym.envs.desk.generator import (
    FIRST,
    LAST,
    LEAD_MIXES,
    SEGMENTS,
    TEMPERATURE_SHIFT,
    LeadMix,
    generate,
)
from salesgym.envs.desk.world import GENERATOR_VERSION


def _weighted(rng: Dice, items: tuple[str, ...], weights: tuple[float, ...]) -> str:
    x, acc = rng.random() * sum(weights), 0.0
    for item, w in zip(items, weights, strict=True):
        acc += w
        if x < acc:
            return item
    return items[-1]


def reference_lead(seed: int, index: int, mix: LeadMix) -> dict[str, object]:
    """desk-gen/1, draw by draw, as it was first written: the definition the generator must match."""
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
    return dict(
        id=f"L{index:03d}",
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


@pytest.mark.parametrize("mix", list(LEAD_MIXES))
def test_every_lead_is_the_reference_record(mix: str) -> None:
    seeds = [*range(0, 400, 3), 2**31 - 1, 2**62 + 12345, 120_005, 140_023]
    for seed in seeds:
        world = generate(seed, 40, 1, "default", mix)
        truth = world.hidden()["leads"]
        for index in range(40):
            lead = truth[f"L{index:03d}"]
            assert {k: v for k, v in lead.items() if k != "public"} == reference_lead(seed, index, LEAD_MIXES[mix])
            assert lead["public"] == world.leads[f"L{index:03d}"].public()
    wide = generate(77, 500, 1, "default", mix).hidden()["leads"]  # the largest desk: ids and streams to L499
    for index in (0, 99, 100, 250, 499):
        assert {k: v for k, v in wide[f"L{index:03d}"].items() if k != "public"} == reference_lead(
            77, index, LEAD_MIXES[mix])  # fmt: skip


def test_a_lead_does_not_depend_on_the_pipeline_size() -> None:
    small, large = generate(9, 5, 1, "default", "standard"), generate(9, 300, 1, "default", "standard")
    assert all(small.leads[k] == large.leads[k] for k in small.leads)

