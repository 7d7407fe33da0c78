"""The private verifier's authoritative score, computed from the event log's evidence ledger alone.

It re-checks every evidence proof and that the source is a member of that deal's buying committee, then
applies the milestone rules (``milestones.reached``). CRM records, messages and tool arguments are never
read, so nothing the seller writes can change the score. Primary metric: verified value-weighted
milestone advances (plus credit for correctly dropped deals, minus anti-gaming penalties) per 100
*constrained* seller hours, i.e. the seller hours the territory made available over the horizon, so working
fewer hours is not a way to win. An advance is weighted by the deal's *attainable* value: a deal that
cannot close is worth nothing however far its paperwork gets, so working it instead of dropping it loses.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from salesgym.core.clock import HOURS_PER_DAY, HOURS_PER_WEEK
from salesgym.core.events import EventLog
from salesgym.core.evidence import Evidence, EvidenceType, Verifier
from salesgym.envs.territory.milestones import MILESTONES, reached
from salesgym.envs.territory.reward import RewardConfig
from salesgym.envs.territory.world import TerritoryWorld

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


def primary_ceiling(world: TerritoryWorld, cfg: RewardConfig) -> float:
    """The most any seller could score here: every viable deal closed, every other one dropped, no penalty.
    Where a good heuristic comes close to it (small territories over long horizons), no policy has headroom."""
    closable = sum(o.true_value for o in world.opportunities.values() if o.viable)
    droppable = sum(o.true_value for o in world.opportunities.values() if not o.viable)
    best = (cfg.weights[-1] - cfg.weights[0]) * closable + cfg.dq_credit * droppable
    return 100.0 * best / constrained_hours(world)


def score(world: TerritoryWorld, log: EventLog, verifier: Verifier, cfg: RewardConfig) -> dict[str, Any]:
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
            violations[e.payload["kind"]] += 1
            penalties += float(e.payload["penalty"])
        elif kind == "invalid_action":
            invalid += 1
        elif kind == "episode_ended":
            ended = {k: e.payload[k] for k in ("terminated", "truncated", "why")}

    advances: Counter[str] = Counter()
    advance_value = 0.0
    milestones: dict[str, str] = {}
    closed_value = 0.0
    closed_days: list[float] = []
    discounts: list[float] = []
    for oid, opp in world.opportunities.items():
        times = reached(world, opp, ledger[oid])
        if oid in dropped:  # nothing after the seller dropped the deal counts
            times = [t for t in times if t <= dropped[oid]]
        top = len(times) - 1
        for k in range(1, top + 1):
            advances[MILESTONES[k]] += 1
        advance_value += (cfg.weights[top] - cfg.weights[0]) * opp.attainable_value
        milestones[oid] = "Disqualified" if oid in dropped else MILESTONES[top]
        if top == len(MILESTONES) - 1:
            signed = min(
                (e for e in ledger[oid] if e.type is EvidenceType.CONTRACT_SIGNATURE), key=lambda e: e.timestamp
            )
            discount = float(signed.claim.get("discount", 0.0))
            discounts.append(discount)
            closed_value += opp.true_value * (1.0 - discount)
            closed_days.append(times[-1] / HOURS_PER_DAY)

    nonviable = {oid for oid, o in world.opportunities.items() if not o.viable}
    correct = sorted(set(dropped) & nonviable)
    premature = sorted(set(dropped) - nonviable)
    dq_value = sum(world.opportunities[o].true_value for o in correct)
    constrained = constrained_hours(world)
    n = len(world.opportunities)
    right_calls = len(correct) + sum(1 for o in world.opportunities if o not in nonviable and o not in dropped)
    return {
        "primary": round(100.0 * (advance_value + cfg.dq_credit * dq_value - penalties) / constrained, 6),
        "primary_ceiling": round(primary_ceiling(world, cfg), 6),
        "value_weighted_advances": round(advance_value, 4),
        "disqualification_credit": round(cfg.dq_credit * dq_value, 4),
        "penalties": round(penalties, 4),
        "closed_value": round(closed_value, 4),
        "closed_count": len(closed_days),
        "win_rate": round(len(closed_days) / n, 6),
        "advances": {m: advances.get(m, 0) for m in MILESTONES[1:]},
        "milestones": milestones,
        "disqualified": {"correct": len(correct), "premature": len(premature), "missed": len(nonviable - set(dropped))},
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
