"""Twin territories for the conformance kit: the same public world, different hidden truth.

``hidden_variant(world, k)`` keeps everything a seller can see (accounts, ids, names, titles, value bands,
target quarters, the exogenous tape) and redraws hidden values: each deal's true value, viability, walk-away
discount, deadline (inside its public quarter), budget timing and fit, and each person's authority, starting
disposition and reply latency. Played with the same calls, the twin must look the same to the agent until a
public event (a reply that comes or not, a buyer's answer) makes them differ: nothing may leak through ids,
counts, timing, lengths or rewards before that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

from salesgym.core.rng import stream
from salesgym.envs.territory.contract import HOURS_PER_DAY, QUARTER_DAYS
from salesgym.envs.territory.world import Opportunity, Stakeholder, TerritoryWorld


class _Varied(Mapping[str, Stakeholder]):
    """A committee map whose people have redrawn hidden traits (drawn on first use, like the original)."""

    def __init__(self, base: Mapping[str, Stakeholder], seed: int) -> None:
        self._base, self._seed, self._memo = base, seed, dict[str, Stakeholder]()

    def __getitem__(self, sid: str) -> Stakeholder:
        person = self._memo.get(sid)
        if person is None:
            base = self._base[sid]
            rng = stream(self._seed, "variant", sid)
            person = self._memo[sid] = base._replace(
                authority=round(min(1.0, max(0.0, base.authority + rng.uniform(-0.2, 0.2))), 3),
                disposition=round(min(1.0, max(-1.0, base.disposition + rng.uniform(-0.4, 0.4))), 3),
                responsiveness_h=round(base.responsiveness_h * rng.uniform(0.5, 2.0), 2),
            )
        return person

    def __iter__(self) -> Iterator[str]:
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)


def _opportunity(opp: Opportunity, seed: int, days: int) -> Opportunity:
    rng = stream(seed, "variant", opp.id)
    quarter = opp.deadline_day // QUARTER_DAYS
    deadline = rng.randint(quarter * QUARTER_DAYS, (quarter + 1) * QUARTER_DAYS - 1)  # same public quarter
    viable = rng.random() < 0.7
    return opp._replace(
        true_value=round(opp.true_value * rng.uniform(0.8, 1.25), 1),
        viable=viable,
        nonviable_reason=None if viable else "no budget this fiscal year",
        required_discount=round(rng.uniform(0.0, 0.2), 3),
        deadline_day=deadline,
        budget_day=int(days * rng.uniform(0.0, 0.5)),
        fit=round(rng.uniform(0.3, 0.95), 3),
    )


def hidden_variant(world: TerritoryWorld, k: int) -> TerritoryWorld:
    """The ``k``-th twin of ``world``: same public territory, hidden truth redrawn from its own streams."""
    seed = world.seed * 1000 + k + 1
    days = int(world.horizon // HOURS_PER_DAY)
    opportunities = {oid: _opportunity(o, seed, days) for oid, o in world.opportunities.items()}
    return dataclasses.replace(world, opportunities=opportunities, stakeholders=_Varied(world.stakeholders, seed))
