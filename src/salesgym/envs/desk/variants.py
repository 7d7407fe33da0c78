"""Twin desks for the conformance kit: the same public world, different hidden truth.

``hidden_variant(world, k)`` keeps everything the CRM shows (ids, names, underwriting facts, temperatures, the
budget and need bands) and redraws each buyer's hidden facts inside them: exact budget and need (within their
bands), trust, price sensitivity, patience, call limit, dependents, stated goal, archetype; every other twin
also has another buyer variant. Played with the same calls, the twin must look the same to the agent until a
buyer's answer makes them differ. ``neutral_variant`` changes only what no decision reads (the personas).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from salesgym.core.rng import stream
from salesgym.envs.desk.archetypes import ARCHETYPES, VARIANTS
from salesgym.envs.desk.contract import BUDGET_BANDS, GOALS, NEED_BANDS, need_band
from salesgym.envs.desk.world import DeskWorld, Lead


def _budget_in_band(budget: float, u: float) -> float:
    for low, high in BUDGET_BANDS:
        if high is None or budget < high:
            top = high if high is not None else max(budget * 1.5, low + 100)
            return round(min(top - 0.01, low + (top - low) * u), 2)
    raise AssertionError("unreachable")


def _need_in_band(need: float, u: float) -> float:
    band = need_band(need)
    _, low, high = next(b for b in NEED_BANDS if b[0] == band)
    return round(min(min(high, 1.0) - 0.001, low + (min(high, 1.0) - low) * u), 3)


def _lead(lead: Lead, seed: int) -> Lead:
    rng = stream(seed, "variant", lead.id)
    arch = ARCHETYPES[rng.randint(0, len(ARCHETYPES) - 1)]
    return lead._replace(
        budget=_budget_in_band(lead.budget, rng.random()),
        need=_need_in_band(lead.need, rng.random()),
        trust=round(rng.uniform(0.2, 0.9), 3),
        price_sensitivity=round(rng.uniform(0.2, 0.9), 3),
        patience=round(rng.uniform(0.3, 1.0), 3),
        call_limit=rng.randint(1, 5),
        dependents=rng.randint(0, lead.household - 1),
        goal=rng.choice(GOALS),
        archetype=arch.name,
        persona=f"{arch.name.replace('_', ' ')} buyer who {arch.persona}",
    )


def hidden_variant(world: DeskWorld, k: int) -> DeskWorld:
    """The ``k``-th twin of ``world``: the same public desk, hidden truth redrawn from its own streams."""
    seed = world.seed * 1000 + k + 1
    leads = MappingProxyType({lid: _lead(lead, seed) for lid, lead in world.leads.items()})
    names = list(VARIANTS)
    variant = names[(names.index(world.variant) + k) % len(names)]
    return dataclasses.replace(world, leads=leads, variant=variant)


def neutral_variant(world: DeskWorld) -> DeskWorld:
    """A twin differing only in the buyers' personas, which only the optional voice reads: it must pay the
    same rewards for the same calls."""
    twin = {lid: lead._replace(persona=lead.persona + " (twin)") for lid, lead in world.leads.items()}
    leads = MappingProxyType(twin)
    return dataclasses.replace(world, leads=leads)
