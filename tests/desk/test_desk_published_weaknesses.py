"""The published benchmark's weaknesses (docs/desk.md, "What it answers in the published benchmark"), each
pinned: an offer's premium is a stored quote's; no buyer sees another lead's conversation; same seed and calls
give the same log by hash; a buyer-side failure is a recorded error, never a silent refusal; quoting and
proposing without converting scores no more than doing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from desk_helpers import desk, expected_premium, quote_and_offer, step

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.envs.desk.buyers import CannedVoice

BAD_OFFER = {"plan_type": "TERM", "coverage_amount": 500_000, "term_years": 20, "discount_pct": 0,
             "next_step": "close_today"}  # fmt: skip


def _without_counters(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snapshot.items() if k not in ("seq", "public_seq", "invalid_actions")}


def test_an_offer_needs_a_stored_quote_at_exactly_its_premium() -> None:
    env = desk()
    step(env, "calling_start_call", lead_id="L001")
    before = _without_counters(env._state.snapshot())
    unquoted = step(env, "calling_propose_offer", **BAD_OFFER, monthly_premium=10.0)
    assert unquoted["status"] == "error" and "no quote" in unquoted["output"]["error"]
    q = step(env, "products_quote_plan", lead_id="L001", plan_type="TERM", coverage_amount=500_000, term_years=20)
    quoted = q["output"]["monthly_premium"]
    assert quoted == expected_premium(env, "L001", "TERM", 500_000, 20)  # the catalogue's formula
    before = _without_counters(env._state.snapshot())
    for wrong in (round(quoted / 2, 2), round(quoted + 0.01, 2), 0.0):  # re-pricing, by a cent, for nothing
        r = step(env, "calling_propose_offer", **BAD_OFFER, monthly_premium=wrong)
        assert r["status"] == "error" and "not the quoted premium" in r["output"]["error"] and r["reward"] == 0.0
    assert _without_counters(env._state.snapshot()) == before  # nothing moved but the invalid-action count
    other = step(env, "products_quote_plan", lead_id="L002", plan_type="TERM", coverage_amount=600_000, term_years=20)
    r = step(env, "calling_propose_offer", **{**BAD_OFFER, "coverage_amount": 600_000},
             monthly_premium=other["output"]["monthly_premium"])
    assert r["status"] == "error", "another lead's quote is not this lead's"
    assert env.score()["converted_mrr"] == 0.0


def test_the_verifier_credits_only_quoted_premiums() -> None:
    env = desk(seed=5)
    for lead_id in env._world.leads:
        if step(env, "calling_start_call", lead_id=lead_id)["output"].get("connected"):
            _, offer = quote_and_offer(env, lead_id, "TERM", 500_000, 20, discount=10)
            if offer["output"]["decision"] == "accept":
                break
            step(env, "calling_end_call", disposition="other")
    assert offer["output"]["decision"] == "accept"
    score = env.score()
    assert score["converted_mrr"] == offer["output"]["monthly_premium"] == round(
        expected_premium(env, lead_id, "TERM", 500_000, 20) * 0.9, 2)  # after the discount
    log = env.event_log()
    forged = [dict(e) for e in log]
    for e in forged:  # the accepted premium edited in the ledger: its proof no longer holds
        if e["kind"] == "evidence_recorded" and e["payload"]["evidence"]["type"] == "offer_accepted":
            e["payload"] = {"evidence": {**e["payload"]["evidence"], "claim": {**e["payload"]["evidence"]["claim"],
                                                                                 "premium": 9999.0}}}  # fmt: skip
    from salesgym.core.events import Event, EventLog
    from salesgym.envs.desk.verifier import score as verify

    edited = EventLog()
    for e in forged:
        edited.append(Event(e["seq"], e["time"], e["kind"], e["actor"], e["payload"], e["provenance"]))
    assert verify(env._world, edited, env._verifier)["converted_mrr"] == 0.0


def _decisions(env: Any, lead_id: str) -> list[tuple[str, Any, Any]]:
    return [(e["kind"], e["payload"].get("decision"), e["payload"].get("reason")) for e in env.event_log()
            if e["payload"].get("lead_id") == lead_id and e["kind"] in ("buyer_decided", "call_refused")]  # fmt: skip


def _work(env: Any, lead_id: str, offers: int) -> None:
    if not step(env, "calling_start_call", lead_id=lead_id)["output"].get("connected"):
        return
    step(env, "calling_ask_discovery", topic="budget")
    for k in range(offers):
        _, o = quote_and_offer(env, lead_id, "WHOLE", 1_000_000 - 100_000 * k, None)
        if o["output"].get("decision") != "reject":
            break
    if env._state.call is not None:
        step(env, "calling_end_call", disposition="other")


@pytest.mark.parametrize("variant", ["default", "skeptical", "impulsive", "analytical"])
def test_a_buyer_sees_only_its_own_history(variant: str) -> None:
    """Lead L004's answers are the same whether or not other leads were worked first (their offers, refusals
    and hang-ups), and whatever order they were worked in."""
    alone = desk(variant=variant)
    _work(alone, "L004", offers=3)
    crowded = desk(variant=variant)
    for other in ("L000", "L001", "L002", "L003"):
        _work(crowded, other, offers=3)
    _work(crowded, "L004", offers=3)
    assert _decisions(alone, "L004") == _decisions(crowded, "L004") != []


def test_same_seed_same_calls_same_log_by_hash() -> None:
    runs = []
    for _ in range(2):
        env = salesgym.make("desk-v0", n_leads=20, shift_days=1)
        policy = make_policy("quote-then-fit", 4, family="desk")
        rewards = [s.reward for s in rollout(env, policy, 4)]
        runs.append((env.event_log_hash(), rewards, env.score()))
    assert runs[0] == runs[1]
    other = salesgym.make("desk-v0", n_leads=20, shift_days=1)
    rollout_b = list(rollout(other, make_policy("quote-then-fit", 4, family="desk"), 5))
    assert rollout_b and other.event_log_hash() != runs[0][0]


class BrokenVoice:
    """A language-model voice whose endpoint is down (the published benchmark's silent 401)."""

    def speak(self, decision: str, reason: str | None, persona: str) -> str:
        raise ConnectionError("401 Unauthorized")


class EchoVoice(CannedVoice):
    calls = 0

    def speak(self, decision: str, reason: str | None, persona: str) -> str:
        EchoVoice.calls += 1
        return f"[{decision}] " + super().speak(decision, reason, persona)


def _offers(env: Any) -> list[dict[str, Any]]:
    out = []
    for lead_id in env._world.leads:
        if step(env, "calling_start_call", lead_id=lead_id)["output"].get("connected"):
            out.append(quote_and_offer(env, lead_id, "TERM", 500_000, 20)[1])
            if env._state.call is not None:
                step(env, "calling_end_call", disposition="other")
    return out


def test_a_failing_voice_is_a_recorded_error_and_the_decision_stands() -> None:
    canned, broken = desk(seed=9), desk(seed=9, voice=BrokenVoice())
    plain, failed = _offers(canned), _offers(broken)
    assert [o["output"]["decision"] for o in plain] == [o["output"]["decision"] for o in failed]
    assert any(o["output"]["decision"] == "accept" for o in failed), "no silent refusal"
    assert all("401 Unauthorized" in o["output"]["buyer_error"] for o in failed)
    errors = [e for e in broken.event_log() if e["kind"] == "buyer_error_recorded"]
    assert len(errors) == len(failed) == broken.score()["buyer_errors"] and canned.score()["buyer_errors"] == 0
    assert canned.score()["converted_mrr"] == broken.score()["converted_mrr"]


def test_a_voice_writes_words_only_and_is_cached_by_hash() -> None:
    EchoVoice.calls = 0
    canned, voiced = desk(seed=9), desk(seed=9, voice=EchoVoice())
    a, b = _offers(canned), _offers(voiced)
    assert all(o["output"]["buyer_says"].startswith("[") for o in b)
    assert [{**o["output"], "buyer_says": None} for o in a] == [{**o["output"], "buyer_says": None} for o in b]
    leads = voiced._world.leads
    keys = {(o["output"]["decision"], o["output"]["reason"], leads[o["output"]["lead_id"]].persona) for o in b}
    assert EchoVoice.calls == len(keys) < len(b)  # one voice call per distinct (decision, reason, persona)
    voiced.reset(seed=9)
    assert [o["output"] for o in _offers(voiced)] == [o["output"] for o in b] and EchoVoice.calls == len(keys)
    assert canned.replay().digest() == canned._state.digest() and voiced.score()["buyer_errors"] == 0


def _play(name: str, seed: int) -> tuple[dict[str, Any], float]:
    env = salesgym.make("desk-v0", n_leads=20, shift_days=1)
    steps = list(rollout(env, make_policy(name, seed, family="desk"), seed))
    return env.score(), sum(s.reward for s in steps)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quoting_and_proposing_without_converting_scores_no_more_than_doing_nothing(seed: int) -> None:
    probe, probe_return = _play("quote-and-fail", seed)
    idle, idle_return = _play("idle", seed)
    assert probe["proposals"] >= 15 and probe["quotes"] >= 15 and probe["conversions"] == 0
    assert probe["primary"] <= idle["primary"] == 0.0
    assert probe_return <= idle_return == 0.0
