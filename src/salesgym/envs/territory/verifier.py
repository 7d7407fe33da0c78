"""The private verifier's authoritative score, computed from the event log's evidence ledger alone.

It re-checks every evidence proof and that the source is a member of that deal's buying committee, then
applies the milestone rules (``milestones``). CRM records, messages and tool arguments are never read, so
nothing the seller writes can change the score. The verdict is kept as events arrive (:class:`Tally`, fed by
the engine as it appends each event), so scoring costs the same at any length of the log; :func:`score` reads
a whole log from the start through the same tally.

Primary metric (docs/reward.md): per 100 *constrained* seller hours (the hours the territory made available,
so working fewer hours is not a way to win),

    Σ_o w(top_o) · value_o · price_o  +  dq_credit · Σ_{backed drops} value_o · (1 − t_drop / horizon)
    − Σ penalties

- ``value_o`` is the deal's true value. A deal that cannot close never gets past Engaged (no buyer confirms a
  budget or sponsors a purchase that cannot happen), so working a dead deal earns at most Engaged's 5%.
- ``price_o`` is 1 − the discount on the final terms for Commit and Closed (the procurement approval of the
  final terms, the signature), 1 below them: a deeper discount lowers the score for the same progress.
- A drop earns the credit only when the buyer's own disqualification reason was on record before it, scaled by
  the share of the horizon it freed; dropping without the buyer's reason earns nothing and costs only what the
  deal could still have earned (no penalty reads hidden viability).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from salesgym.core.events import Event
from salesgym.core.evidence import Verifier
from salesgym.core.state import replaced
from salesgym.envs.territory.calendar import HOURS_PER_DAY, HOURS_PER_WEEK, day_of
from salesgym.envs.territory.contract import MILESTONES
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.milestones import COMMIT, earliest, qualifying_keys, times_from_first
from salesgym.envs.territory.world import Opportunity, TerritoryWorld

# The benchmark's metric (fixed: a training run may reshape its reward, never the score).
MILESTONE_WEIGHTS = (0.0, 0.05, 0.15, 0.30, 0.45, 0.60, 0.80, 1.0)
DQ_CREDIT = 0.10  # share of a deal's value credited for dropping it on the buyer's reason, at the start
PENALTY = {"unauthorised_discount": 0.05}  # share of the deal's value each violation costs

READ = frozenset(
    (
        "evidence_recorded",
        "tool_completed",
        "opportunity_disqualified",
        "violation_recorded",
        "invalid_action",
        "episode_ended",
    )
)  # the only events the verifier reads: never CRM edits, messages or other seller text


def constrained_hours(world: TerritoryWorld) -> float:
    """The seller hours the territory allows over the horizon: the primary metric's denominator."""
    return world.capacity["seller"] * world.horizon / HOURS_PER_WEEK


def primary_ceiling(world: TerritoryWorld) -> float:
    """The most any seller could score here: every viable deal closed at list price, every other one dropped on
    the buyer's reason at the start, no penalty. Where a good heuristic comes close to it, no policy has
    headroom."""
    closable = sum(o.true_value for o in world.opportunities.values() if o.viable)
    droppable = sum(o.true_value for o in world.opportunities.values() if not o.viable)
    return 100.0 * (MILESTONE_WEIGHTS[-1] * closable + DQ_CREDIT * droppable) / constrained_hours(world)


def closable_at(world: TerritoryWorld, opp: Opportunity, t: float) -> bool:
    """Whether the deal could still have closed in this episode from time ``t``: it is viable and neither its
    decision deadline nor the horizon has passed (reported, never penalised)."""
    return opp.viable and day_of(t) <= opp.deadline_day and t < world.horizon


class Deal(NamedTuple):
    """What the verifier has counted of one opportunity so far (replaced, never changed: clones share them)."""

    first: Mapping[str, float] = {}  # qualifying key (milestones.qualifying_keys) -> its earliest time
    signature: tuple[float, float] | None = None  # (time, discount) of the first contract signature
    final_terms: tuple[float, float] | None = None  # (time, discount) of the first procurement approval on final terms
    reason_at: float | None = None  # when the buyer first gave a disqualification reason
    drop: float | None = None  # when the seller dropped the deal: nothing later counts
    times: tuple[float, ...] = (0.0,)  # when each milestone was reached (milestones.times_from_first)
    discount: float = 0.0  # on the final terms the top milestone rests on (Commit and Closed)


EMPTY = Deal()


class Tally:
    """The verifier's verdict kept as events arrive: :meth:`add` each event of the log in order, :meth:`verdict`
    whenever a score is wanted. What it keeps is bounded by the territory (a record per opportunity touched,
    counters), so a verdict costs the same after ten or ten thousand events and a fork (for a clone) shares
    every record. ``score`` is a fresh tally over a whole log, so the two can never disagree."""

    __slots__ = ("_deals", "_own", "ended", "hours_used", "invalid", "penalties", "rejected", "verifier",
                 "violations", "world")
    reads = READ  # what the engine feeds it

    def __init__(self, world: TerritoryWorld, verifier: Verifier) -> None:
        self.world = world
        self.verifier = verifier
        self._deals: dict[str, Deal] = {}  # only the opportunities something counted for
        self._own = True  # False while the dict is shared with a fork: copied before the next write
        self.rejected = 0
        self.invalid = 0
        self.hours_used = 0.0
        self.penalties = 0.0
        self.violations: dict[str, int] = {}
        self.ended: dict[str, Any] = {"terminated": False, "truncated": False, "why": None}

    def fork(self) -> Tally:
        twin = Tally.__new__(Tally)
        for name in self.__slots__:
            setattr(twin, name, getattr(self, name))
        twin.violations = dict(self.violations)
        self._own = twin._own = False
        return twin

    def add(self, e: Event) -> None:
        """Count one event (events the verifier does not read change nothing)."""
        kind = e.kind
        if kind not in READ:
            return
        if kind == "tool_completed":
            self.hours_used += float(e.payload["resource_cost"].get("seller", 0.0))
        elif kind == "evidence_recorded":
            self._evidence(e.payload["evidence"])
        elif kind == "opportunity_disqualified" and e.actor == "agent":
            oid = e.payload["opportunity_id"]
            deal = self._deals.get(oid, EMPTY)
            if deal.drop is None:
                self._put(oid, deal._replace(drop=e.time))
        elif kind == "violation_recorded":
            what = e.payload["kind"]
            self.violations[what] = self.violations.get(what, 0) + 1
            self.penalties += PENALTY[what] * self.world.opportunities[e.payload["opportunity_id"]].true_value
        elif kind == "invalid_action":
            self.invalid += 1
        elif kind == "episode_ended":
            self.ended = {k: e.payload[k] for k in ("terminated", "truncated", "why")}

    def _evidence(self, record: Mapping[str, Any]) -> None:
        ev = self.verifier.verified(record)
        opp = self.world.opportunities.get(ev.subject) if ev is not None else None
        if ev is None or opp is None or ev.source_actor not in opp.stakeholder_ids:
            self.rejected += 1
            return
        deal = self._deals.get(opp.id, EMPTY)
        t = ev.timestamp
        if deal.drop is not None and t > deal.drop:  # nothing after the seller dropped the deal counts
            return
        changes: dict[str, Any] = {}
        keys = qualifying_keys(self.world, opp, ev)
        first = earliest(deal.first, keys, t)
        if first is not deal.first:
            changes["first"] = first
        if ev.type == EvidenceType.CONTRACT_SIGNATURE and (deal.signature is None or t < deal.signature[0]):
            changes["signature"] = (t, float(ev.claim.get("discount", 0.0)))
        if "procurement_final" in keys and (deal.final_terms is None or t < deal.final_terms[0]):
            changes["final_terms"] = (t, float(ev.claim.get("discount", 0.0)))
        if ev.type == EvidenceType.DISQUALIFICATION_REASON and (deal.reason_at is None or t < deal.reason_at):
            changes["reason_at"] = t
        if changes:
            deal = replaced(deal, changes)
            times = tuple(times_from_first(opp, deal.first))
            top = len(times) - 1
            terms = None if top < COMMIT else deal.signature if top > COMMIT else deal.final_terms
            self._put(opp.id, replaced(deal, {"times": times, "discount": terms[1] if terms is not None else 0.0}))

    def _put(self, oid: str, deal: Deal) -> None:
        if not self._own:
            self._deals, self._own = dict(self._deals), True
        self._deals[oid] = deal

    def verdict(self) -> dict[str, Any]:
        """The authoritative report (docs/reward.md): the same as :func:`score` over the log so far."""
        world = self.world
        deals = self._deals
        advances = [0] * len(MILESTONES)
        advance_value = credit = closed_value = 0.0
        milestones: dict[str, str] = {}
        closed_days: list[float] = []
        discounts: list[float] = []
        dropped = backed = forfeited = right_calls = 0
        closed_top = len(MILESTONES) - 1
        for oid, opp in world.opportunities.items():
            deal = deals.get(oid, EMPTY)
            top = len(deal.times) - 1
            advances[top] += 1
            drop = deal.drop
            if top:
                advance_value += MILESTONE_WEIGHTS[top] * opp.true_value * (1.0 - deal.discount)
            milestones[oid] = "Disqualified" if drop is not None else MILESTONES[top]
            if top == closed_top:
                discounts.append(deal.discount)
                closed_value += opp.true_value * (1.0 - deal.discount)
                closed_days.append(deal.times[-1] / HOURS_PER_DAY)
            if drop is None:
                right_calls += opp.viable
                continue
            dropped += 1
            right_calls += not opp.viable
            if deal.reason_at is not None:  # counted only at or before the drop
                backed += 1
                credit += DQ_CREDIT * opp.true_value * max(0.0, 1.0 - drop / world.horizon)
            forfeited += closable_at(world, opp, drop)
        reach = [sum(advances[k:]) for k in range(len(MILESTONES))]  # deals that reached each milestone
        nonviable = sum(1 for o in world.opportunities.values() if not o.viable)
        missed = nonviable - sum(1 for oid, d in deals.items() if d.drop is not None
                                 and not world.opportunities[oid].viable)
        constrained = constrained_hours(world)
        n = len(world.opportunities)
        return {
            "primary": round(100.0 * (advance_value + credit - self.penalties) / constrained, 6),
            "primary_ceiling": round(primary_ceiling(world), 6),
            "value_weighted_advances": round(advance_value, 4),
            "disqualification_credit": round(credit, 4),
            "penalties": round(self.penalties, 4),
            "closed_value": round(closed_value, 4),
            "closed_count": len(closed_days),
            "win_rate": round(len(closed_days) / n, 6),
            "advances": {m: reach[k] for k, m in enumerate(MILESTONES) if k},
            "milestones": milestones,
            "disqualified": {
                "backed": backed,  # dropped on the buyer's own reason (credited)
                "unbacked": dropped - backed,
                "still_closable": forfeited,  # viable and inside its deadline when dropped: value forfeited
                "missed": missed,  # dead deals never dropped
            },
            "disqualification_accuracy": round(right_calls / n, 6),
            "cycle_time_days": round(sum(closed_days) / len(closed_days), 4) if closed_days else None,
            "mean_discount": round(sum(discounts) / len(discounts), 6) if discounts else None,
            "violations": dict(sorted(self.violations.items())),
            "evidence_rejected": self.rejected,
            "invalid_actions": self.invalid,
            "hours_used": round(self.hours_used, 4),
            "constrained_hours": round(constrained, 4),
            "utilisation": round(self.hours_used / constrained, 6),
            "n_opportunities": n,
            "viable_opportunities": n - nonviable,
            **self.ended,
        }


def score(world: TerritoryWorld, log: Iterable[Event], verifier: Verifier) -> dict[str, Any]:
    """The verdict on a whole log read from the start (a stored run, a tampered copy): a fresh :class:`Tally`."""
    tally = Tally(world, verifier)
    for e in log:
        tally.add(e)
    return tally.verdict()
