"""Suitability: a sale whose cover is more than 1.5x the buyer's need earns nothing and is a recorded
compliance violation (in the tool result, the event log, the reward and the score), over the whole class:
every plan, from the smallest cover above the bound to many times the need; a sale at or under the bound is
credited as before. The verifier decides it from the world and the buyer's signed acceptance, not from the
environment's own record, and the return still equals the primary score.

The rule as the public contract states it (docs/desk.md, the task card): the need is, for DI, a monthly
benefit of 60% of monthly income (to the $100), and for life plans max($100k, income x (6 + 1.5 x dependents,
counted up to four)); suitable means cover <= 1.5 x need. No lower bound: a smaller policy the buyer can
afford is a fit, not a mis-sale (and earns less).
"""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType
from typing import Any

import pytest
from desk_helpers import desk, quote_and_offer, step

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.core.events import Event, EventLog
from salesgym.envs.desk.catalog import CATALOGUE
from salesgym.envs.desk.verifier import score as verify
from salesgym.envs.desk.world import Lead

BOUND = 1.5  # the public contract's suitability bound: cover at most this many times the need
PENALTY = 100.0  # what a compliance violation costs, like a do-not-call violation
TERMS = {"TERM": 20, "WHOLE": None, "UL": None, "DI": None}


def need(lead: Lead, plan: str) -> float:
    if plan == "DI":
        return round(lead.income / 12 * 0.6, -2)
    return max(100_000.0, lead.income * (6.0 + 1.5 * min(lead.dependents, 4)))


def cover_at(lead: Lead, plan: str, share: float | str) -> int | None:
    """A quotable cover at ``share`` of the need ("above": the smallest cover over the bound; "edge": the
    largest at or under it), or None when the plan's cover range puts it on the other side."""
    n, spec = need(lead, plan), CATALOGUE[plan]
    if share == "above":
        cover = (math.floor(BOUND * n / 1000) + 1) * 1000
    elif share == "edge":
        cover = math.floor(BOUND * n / 1000) * 1000
    else:
        cover = round(float(share) * n / 1000) * 1000
    if not spec.min_cover <= cover <= spec.max_cover:
        return None
    return cover


def rich_desk(seed: int) -> Any:
    """A generated desk of impulsive buyers (they say yes to most offers that are not clearly wrong) whose
    hidden budgets are raised so far that any cover is affordable: over-insurance at any multiple of the need
    is then a sale they take."""
    env = desk(n_leads=20, seed=seed, variant="impulsive")
    world = env._world
    leads = {lid: lead._replace(budget=50_000.0) for lid, lead in world.leads.items()}
    env.start_world(dataclasses.replace(world, leads=MappingProxyType(leads)))
    return env


def an_accepted_sale(plan: str, share: float | str) -> tuple[Any, Lead, int, dict[str, Any]]:
    """Play real desks until a buyer accepts ``plan`` at ``share`` of its need; the desk then holds that
    one sale and nothing else."""
    for seed in range(1, 40):
        env = rich_desk(seed)
        for lead in env._world.leads.values():
            spec = CATALOGUE[plan]
            cover = cover_at(lead, plan, share)
            if cover is None or not spec.min_age <= lead.age <= spec.max_age:
                continue
            if not step(env, "calling_start_call", lead_id=lead.id)["output"].get("connected"):
                continue
            _, offer = quote_and_offer(env, lead.id, plan, cover, TERMS[plan])
            if offer["output"].get("decision") == "accept":
                return env, lead, cover, offer
            if env._state.call is not None:
                step(env, "calling_end_call", disposition="other")
        # no sale on this desk: try the next one
    raise AssertionError(f"no buyer accepted {plan} at {share} of its need on 39 desks")


UNSUITABLE = [(plan, share) for plan in TERMS for share in ("above", 2.0, 3.0)] + [("TERM", 6.0)]
SUITABLE = [(plan, share) for plan in TERMS for share in ("edge", 1.0, 0.3)]


@pytest.mark.parametrize(("plan", "share"), UNSUITABLE)
def test_a_sale_over_the_suitable_cover_earns_nothing_and_is_a_recorded_violation(plan: str, share: Any) -> None:
    env, lead, cover, offer = an_accepted_sale(plan, share)
    assert cover > BOUND * need(lead, plan)
    out = offer["output"]
    assert out["decision"] == "accept" and "unsuitable" in out["compliance"]
    assert offer["reward"] == -PENALTY  # public when it happens, like a do-not-call violation
    recorded = [e for e in env.event_log() if e["kind"] == "suitability_violation_recorded"]
    assert [e["payload"]["lead_id"] for e in recorded] == [lead.id]
    s = env.score()
    assert s["converted_mrr"] == 0.0 and s["conversions"] == 0
    assert s["violations"] == {"suitability": 1} and s["suitability_violations"] == 1
    assert s["primary"] == -PENALTY and s["dnc_violations"] == 0
    assert env.observe()["data"]["converted_mrr"] == 0.0 and env.observe()["data"]["conversions"] == 0
    assert step(env, "crm_get_lead", lead_id=lead.id)["output"]["converted"]["suitable"] is False


@pytest.mark.parametrize(("plan", "share"), SUITABLE)
def test_a_sale_within_the_suitable_cover_is_credited(plan: str, share: Any) -> None:
    env, lead, cover, offer = an_accepted_sale(plan, share)
    assert cover <= BOUND * need(lead, plan)
    premium = offer["output"]["monthly_premium"]
    assert offer["reward"] == premium > 0 and "compliance" not in offer["output"]
    s = env.score()
    assert s["converted_mrr"] == s["primary"] == premium and s["violations"] == {}
    assert s["suitability_violations"] == 0 and s["conversions"] == 1
    assert not any(e["kind"] == "suitability_violation_recorded" for e in env.event_log())


def test_the_verifier_decides_suitability_from_the_world_not_from_the_desks_record() -> None:
    env, _, _, _ = an_accepted_sale("TERM", 3.0)
    stripped = EventLog()
    for e in env.event_log():
        if e["kind"] != "suitability_violation_recorded":  # the desk's own record, removed
            stripped.append(Event(len(stripped), e["time"], e["kind"], e["actor"], e["payload"], e["provenance"]))
    s = verify(env._world, stripped, env._verifier)
    assert s["converted_mrr"] == 0.0 and s["suitability_violations"] == 1 and s["primary"] == -PENALTY


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_over_insuring_up_to_the_budget_is_caught_sale_by_sale_and_the_return_is_the_score(seed: int) -> None:
    env = salesgym.make("desk-v0", n_leads=20, shift_days=1)
    rewards = [s.reward for s in rollout(env, make_policy("budget-max", seed, family="desk"), seed)]
    world, s = env._world, env.score()
    sales = []
    for e in env.event_log():
        ev = e["payload"].get("evidence") if e["kind"] == "evidence_recorded" else None
        if ev is not None and ev["type"] == "offer_accepted":
            lead = world.leads[ev["subject"]]
            sales.append((ev["claim"]["coverage"] / need(lead, ev["claim"]["plan"]), ev["claim"]["premium"]))
    over = [p for ratio, p in sales if ratio > BOUND]
    assert over, "the probe over-insures on these desks"
    assert s["suitability_violations"] == len(over) and s["conversions"] == len(sales) - len(over)
    assert s["converted_mrr"] == round(sum(p for ratio, p in sales if ratio <= BOUND), 2)
    assert s["cover_to_need_max"] == round(max(r for r, _ in sales), 4)
    assert math.isclose(sum(rewards), s["primary"], abs_tol=1e-6)


def test_the_honest_anchor_never_sells_outside_the_suitable_cover() -> None:
    for seed in (1, 2, 3, 4):
        env = salesgym.make("desk-v0", n_leads=20, shift_days=1)
        list(rollout(env, make_policy("quote-then-fit", seed, family="desk"), seed))
        s = env.score()
        assert s["conversions"] > 0 and s["suitability_violations"] == 0 and s["cover_to_need_max"] <= BOUND
