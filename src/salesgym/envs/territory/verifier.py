"""The private verifier's authoritative score, computed from the event log's evidence ledger alone.

It re-checks every evidence proof and that the source is a member of that deal's buying committee, then
applies the milestone rules (``milestones.reached``). CRM records, messages and tool arguments are never
read, so nothing the seller writes can change the score.

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

from collections import Counter
from typing import Any

from salesgym.core.events import EventLog
from salesgym.core.evidence import Evidence, Verifier
from salesgym.envs.territory.calendar import HOURS_PER_DAY, HOURS_PER_WEEK, day_of
from salesgym.envs.territory.contract import MILESTONES
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.milestones import final_discount, reached
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


def score(world: TerritoryWorld, log: EventLog, verifier: Verifier) -> dict[str, Any]:
    ledger: dict[str, list[Evidence]] = {oid: [] for oid in world.opportunities}
    rejected = 0
    dropped: dict[str, float] = {}
    violations: Counter[str] = Counter()
    penalties = 0.0
    hours_used = 0.0
    invalid = 0
    ended: dict[str, Any] = {"terminated": False, "truncated": False, "why": None}
    for e in log:
        kind = e.kind
        if kind not in READ:
            continue
        if kind == "evidence_recorded":
            ev = verifier.verified(e.payload["evidence"])
            opp = world.opportunities.get(ev.subject) if ev is not None else None
            if ev is None or opp is None or ev.source_actor not in opp.stakeholder_ids:
                rejected += 1
            else:
                ledger[ev.subject].append(ev)
        elif kind == "tool_completed":
            hours_used += float(e.payload["resource_cost"].get("seller", 0.0))
        elif kind == "opportunity_disqualified" and e.actor == "agent":
            dropped.setdefault(e.payload["opportunity_id"], e.time)
        elif kind == "violation_recorded":
            what = e.payload["kind"]
            violations[what] += 1
            penalties += PENALTY[what] * world.opportunities[e.payload["opportunity_id"]].true_value
        elif kind == "invalid_action":
            invalid += 1
        elif kind == "episode_ended":
            ended = {k: e.payload[k] for k in ("terminated", "truncated", "why")}

    advances: Counter[str] = Counter()
    advance_value = 0.0
    credit = 0.0
    milestones: dict[str, str] = {}
    closed_value = 0.0
    closed_days: list[float] = []
    discounts: list[float] = []
    backed = forfeited = 0
    for oid, opp in world.opportunities.items():
        evidence = ledger[oid]
        drop = dropped.get(oid)
        if drop is not None:  # nothing after the seller dropped the deal counts
            evidence = [e for e in evidence if e.timestamp <= drop]
        times = reached(world, opp, evidence)
        top = len(times) - 1
        for k in range(1, top + 1):
            advances[MILESTONES[k]] += 1
        discount = final_discount(opp, evidence, top)
        advance_value += MILESTONE_WEIGHTS[top] * opp.true_value * (1.0 - discount)
        milestones[oid] = "Disqualified" if drop is not None else MILESTONES[top]
        if top == len(MILESTONES) - 1:
            discounts.append(discount)
            closed_value += opp.true_value * (1.0 - discount)
            closed_days.append(times[-1] / HOURS_PER_DAY)
        if drop is not None:
            if any(e.type == EvidenceType.DISQUALIFICATION_REASON for e in evidence):
                backed += 1
                credit += DQ_CREDIT * opp.true_value * max(0.0, 1.0 - drop / world.horizon)
            forfeited += closable_at(world, opp, drop)

    nonviable = {oid for oid, o in world.opportunities.items() if not o.viable}
    constrained = constrained_hours(world)
    n = len(world.opportunities)
    kept_viable = sum(1 for o in world.opportunities if o not in nonviable | set(dropped))
    right_calls = len(set(dropped) & nonviable) + kept_viable
    return {
        "primary": round(100.0 * (advance_value + credit - penalties) / constrained, 6),
        "primary_ceiling": round(primary_ceiling(world), 6),
        "value_weighted_advances": round(advance_value, 4),
        "disqualification_credit": round(credit, 4),
        "penalties": round(penalties, 4),
        "closed_value": round(closed_value, 4),
        "closed_count": len(closed_days),
        "win_rate": round(len(closed_days) / n, 6),
        "advances": {m: advances.get(m, 0) for m in MILESTONES[1:]},
        "milestones": milestones,
        "disqualified": {
            "backed": backed,  # dropped on the buyer's own reason (credited)
            "unbacked": len(dropped) - backed,
            "still_closable": forfeited,  # viable and inside its deadline when dropped: value forfeited
            "missed": len(nonviable - set(dropped)),  # dead deals never dropped
        },
        "disqualification_accuracy": round(right_calls / n, 6),
        "cycle_time_days": round(sum(closed_days) / len(closed_days), 4) if closed_days else None,
        "mean_discount": round(sum(discounts) / len(discounts), 6) if discounts else None,
        "violations": dict(sorted(violations.items())),
        "evidence_rejected": rejected,
        "invalid_actions": invalid,
        "hours_used": round(hours_used, 4),
        "constrained_hours": round(constrained, 4),
        "utilisation": round(hours_used / constrained, 6),
        "n_opportunities": n,
        **ended,
    }
