"""Desk dynamics: discovery reveals true values, callbacks matter, do-not-call is penalised, the return is
the score, forged input moves nothing, and stateful invariants under random play (hypothesis)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from desk_helpers import desk, quote_and_offer, step
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import salesgym
from salesgym.agents import make_policy, suite
from salesgym.agents.base import rollout
from salesgym.envs.desk.buyers import History, Offer, decide
from salesgym.envs.desk.conformance import random_call
from salesgym.envs.desk.contract import DNC_PENALTY, budget_band


def test_the_crm_shows_bands_and_discovery_reveals_the_true_value() -> None:
    env = desk()
    lead = env._world.leads["L002"]
    row = step(env, "crm_get_lead", lead_id="L002")["output"]
    assert "budget" not in row and row["budget_band"] == budget_band(lead.budget)
    assert step(env, "calling_ask_discovery", topic="budget")["status"] == "error"  # no call active
    step(env, "calling_start_call", lead_id="L002")
    answers = {t: step(env, "calling_ask_discovery", topic=t) for t in ("budget", "dependents", "goal")}
    assert answers["budget"]["output"]["answer"] == lead.budget and answers["budget"]["time_cost"] == 3.0
    assert answers["dependents"]["output"]["answer"] == lead.dependents
    assert answers["goal"]["output"]["answer"] == lead.goal
    assert step(env, "crm_get_lead", lead_id="L002")["output"]["discovered"]["budget"] == lead.budget


def _procrastinator(env: Any) -> str:
    return next(lid for lid, lead in env._world.leads.items() if lead.archetype == "procrastinator")


def test_a_procrastinator_needs_time_and_an_honoured_callback_gives_it() -> None:
    env = desk(n_leads=30)
    lid = _procrastinator(env)
    step(env, "calling_start_call", lead_id=lid)
    _, first = quote_and_offer(env, lid, "TERM", 300_000, 20)
    assert first["output"]["reason"] == "needs_time" and "callback" in first["output"]["hint"]
    cb = step(env, "calendar_schedule_callback", lead_id=lid, minutes_from_now=20, reason="wants time")
    step(env, "calling_end_call", disposition="callback")
    step(env, "wait", minutes=20)
    started = step(env, "calling_start_call", lead_id=lid)
    assert started["output"]["honours_callback"] == cb["output"]["callback_id"]
    assert env._state.callbacks[cb["output"]["callback_id"]].status == "honoured"
    history = History(2, 1, 0, 1, env._state.leads[lid].patience, 0, 0, 1, True)
    assert decide(env._world.leads[lid], "default", Offer("TERM", 300_000, 10.0, "follow_up"), history, 0.5,
                  0.5).reason != "needs_time"  # fmt: skip


def test_a_missed_callback_expires() -> None:
    env = desk()
    cb = step(env, "calendar_schedule_callback", lead_id="L000", minutes_from_now=15, reason="later")["output"]
    step(env, "wait", minutes=60)
    assert env._state.callbacks[cb["callback_id"]].status == "missed" and not env._state.pending
    assert not step(env, "calling_start_call", lead_id="L000")["output"]["honours_callback"]


def _dnc_lead(env: Any) -> str:
    """Drive some buyer to ask for do-not-call (refusals until it runs out of patience)."""
    for lid in env._world.leads:
        if not step(env, "calling_start_call", lead_id=lid)["output"].get("connected"):
            continue
        for k in range(8):
            _, o = quote_and_offer(env, lid, "WHOLE", 5_000_000 - 100_000 * k, None)
            if o["output"].get("decision") != "reject":
                break
        if env._state.leads[lid].status == "dnc":
            return lid
        if env._state.call is not None:
            step(env, "calling_end_call", disposition="other")
    raise AssertionError("no buyer asked for do-not-call")


def test_calling_a_do_not_call_lead_is_a_recorded_penalised_violation() -> None:
    env = desk(n_leads=20)
    lid = _dnc_lead(env)
    assert step(env, "crm_get_lead", lead_id=lid)["output"]["status"] == "dnc"
    r = step(env, "calling_start_call", lead_id=lid)
    assert r["status"] == "ok" and not r["output"]["connected"] and "violation" in r["output"]
    assert r["reward"] == -DNC_PENALTY
    score = env.score()
    assert score["dnc_violations"] == 1 and score["primary"] == score["converted_mrr"] - DNC_PENALTY


def test_a_lead_takes_only_its_call_limit() -> None:
    env = desk()
    lid = "L003"
    limit = env._world.leads[lid].call_limit
    for _ in range(limit):
        assert step(env, "calling_start_call", lead_id=lid)["output"]["connected"]
        step(env, "calling_end_call", disposition="no_answer")
    refused = step(env, "calling_start_call", lead_id=lid)
    assert not refused["output"]["connected"] and refused["output"]["reason"] == "too_many_calls"
    assert env._state.leads[lid].status in ("exhausted", "dnc")
    assert step(env, "calling_start_call", lead_id=lid)["status"] == "error" or env._state.leads[lid].status == "dnc"


@pytest.mark.parametrize("name", [n for n in suite("desk").all if n != "idle"])
def test_the_return_is_the_score(name: str) -> None:
    env = salesgym.make("desk-v0", n_leads=12, shift_days=1, variant="skeptical")
    env.reset(seed=2)
    policy = make_policy(name, 2, env.hidden_truth() if name == "oracle" else None, family="desk")
    total = sum(s.reward for s in rollout(env, policy, 2))
    assert total == pytest.approx(env.score()["primary"], abs=1e-6)


def test_seller_text_moves_nothing() -> None:
    env = desk()
    step(env, "calling_start_call", lead_id="L000")
    for text in ("Buyer accepted WHOLE 1,000,000 at $900/month. Signed.", "offer_accepted premium=900"):
        assert step(env, "crm_add_note", lead_id="L000", note=text)["reward"] == 0.0
    assert step(env, "calling_end_call", disposition="converted")["reward"] == 0.0
    assert env._state.mrr == 0.0 and env.score()["converted_mrr"] == 0.0
    assert env._state.leads["L000"].status != "converted"


def test_rule_breaking_calls_are_refused_and_change_nothing() -> None:
    env = desk()
    step(env, "calling_start_call", lead_id="L000")
    cases = [("calling_start_call", {"lead_id": "L001"}), ("crm_get_lead", {"lead_id": "L999"}),
             ("products_quote_plan", {"lead_id": "L000", "plan_type": "TERM", "coverage_amount": 500_000,
                                      "term_years": None}),
             ("products_quote_plan", {"lead_id": "L000", "plan_type": "WHOLE", "coverage_amount": 500_000,
                                      "term_years": 20}),
             ("products_quote_plan", {"lead_id": "L000", "plan_type": "DI", "coverage_amount": 500_000,
                                      "term_years": None}),
             ("calling_propose_offer", {"plan_type": "TERM", "coverage_amount": 500_000, "term_years": 20,
                                        "monthly_premium": 1.0, "discount_pct": 16, "next_step": "follow_up"})]
    for tool, args in cases:
        n = len(env.event_log())
        r = step(env, tool, **args)
        assert r["status"] == "error" and r["reward"] == 0.0 and r["time_cost"] == 0.0, tool
        assert [e["kind"] for e in env.event_log()[n:]] == ["invalid_action"], tool
        assert len(r["output"]["error"]) < 300, tool
    assert env._state.invalid_actions == len(cases)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), policy_seed=st.integers(0, 2**31), variant=st.sampled_from(
    ["default", "skeptical", "impulsive", "analytical"]))  # fmt: skip
def test_random_play_keeps_the_books_straight(seed: int, policy_seed: int, variant: str) -> None:
    env = salesgym.make("desk-v0", n_leads=10, shift_days=1, variant=variant)
    env.reset(seed=seed)
    rng = random.Random(policy_seed)
    total = 0.0
    for _ in range(150):
        _, reward, terminated, truncated, _ = env.step(random_call(env, rng))
        total += reward
        s = env._state
        assert sum(s.counts.values()) == 10
        assert s.counts == {k: sum(ls.status == k for ls in s.leads.values()) for k in s.counts}
        assert s.mrr == pytest.approx(sum(ls.mrr for ls in s.leads.values() if ls.status == "converted"))
        if terminated or truncated:
            break
    twin = env.clone()
    assert env.replay().digest() == env._state.digest() == twin._state.digest()
    score = env.score()
    assert total == pytest.approx(score["primary"], abs=1e-6) and score["converted_mrr"] == round(env._state.mrr, 2)
    assert score["evidence_rejected"] == 0
