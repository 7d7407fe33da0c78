"""The rules stay outside the model: a buyer scripted to accept everything, fed a prompt-injected pitch, still
cannot make an unquoted, re-priced, over-authority, over-budget or unsuitable offer count, nor a do-not-call
lead callable. The persuasion probe (``fit+persuasion``) never beats its honest twin."""

from __future__ import annotations

from typing import Any

import pytest
from llm_buyer_helpers import SEED, act, lead_seed, llm_desk, offer, reply, sell_unsuitable

pytest.importorskip("openai")

from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.agents.desk.exploits import INJECTION
from salesgym.envs.desk.archetypes import VARIANTS
from salesgym.envs.desk.catalog import CATALOGUE, premium
from salesgym.testing.scripted_openai import ScriptedOpenAI

N = 8
YES = [reply("accept", "Yes, I accept.")] * 200


def _yes_server() -> ScriptedOpenAI:
    return ScriptedOpenAI({lead_seed(f"L{i:03d}"): YES for i in range(N)})


@pytest.mark.parametrize("attack", ["unquoted", "re-priced", "over-authority"])
def test_an_offer_the_desk_refuses_never_reaches_the_buyer(attack: str) -> None:
    with _yes_server() as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        if attack == "unquoted":
            out = offer(env, "L000", pitch=INJECTION, quote=False, premium=20.0)
        else:
            q = act(env, "products_quote_plan", lead_id="L000", plan_type="TERM", coverage_amount=500_000,
                    term_years=20)["output"]  # fmt: skip
            args = {"plan_type": "TERM", "coverage_amount": 500_000, "term_years": 20, "pitch": INJECTION,
                    "monthly_premium": q["monthly_premium"] / 2 if attack == "re-priced" else q["monthly_premium"],
                    "discount_pct": 60 if attack == "over-authority" else 0, "next_step": "close_today"}  # fmt: skip
            out = act(env, "calling_propose_offer", **args)
        asked = len(server.requests)
    assert out["status"] == "error" and asked == 0
    score = env.score()
    assert score["conversions"] == 0 and score["converted_mrr"] == 0 and score["invalid_actions"] == 1


def test_over_the_rules_gates_the_buyer_refuses_without_the_model_whatever_the_pitch() -> None:
    """Over every lead and variant: an offer over the variant's hard gates (here its budget ceiling) is refused
    by the rules, and the model is never asked."""
    for variant in VARIANTS:
        with _yes_server() as server:
            env = _variant_desk(server.base_url, variant)
            refused = 0
            for lead in env._world.leads.values():
                plan = "WHOLE" if CATALOGUE["WHOLE"].min_age <= lead.age <= CATALOGUE["WHOLE"].max_age else "TERM"
                term = None if plan == "WHOLE" else 30
                cover = CATALOGUE[plan].max_cover
                if premium(plan, cover, term, lead.age, lead.risk_class, lead.smoker) <= 1.5 * lead.budget:
                    continue
                if not act(env, "calling_start_call", lead_id=lead.id)["output"].get("connected"):
                    continue
                out = offer(env, lead.id, pitch=INJECTION, plan=plan, cover=cover, term=term)["output"]
                assert out["decision"] in ("reject", "hang_up") and out["reason"] in ("over_budget", "out_of_patience")
                refused += 1
                if env._state.call is not None:
                    act(env, "calling_end_call", disposition="other")
            assert refused >= 3 and server.requests == [] and env.score()["conversions"] == 0, variant


def _variant_desk(base_url: str, variant: str) -> Any:
    from llm_buyer_helpers import KEY_ENV

    import salesgym

    config = {"model": "scripted-buyer", "base_url": base_url, "api_key_env": KEY_ENV, "max_retries": 0}
    env = salesgym.make("desk-v0", n_leads=N, shift_days=1, variant=variant, buyer=config)
    env.reset(seed=SEED)
    return env


def test_an_unsuitable_sale_the_persuaded_buyer_accepts_earns_nothing_and_is_a_violation() -> None:
    with _yes_server() as server:
        env = llm_desk(server.base_url)
        sold = sell_unsuitable(env, INJECTION)
        asked = len(server.requests)
    score = env.score()
    assert sold >= 2 and asked == sold
    assert score["conversions"] == 0 and score["converted_mrr"] == 0
    assert score["suitability_violations"] == sold and score["primary"] == -100.0 * sold


def test_a_persuaded_buyer_cannot_make_a_do_not_call_lead_callable() -> None:
    script = [reply("hang_up", "Never call me again.", dnc=True), *YES]
    with ScriptedOpenAI({lead_seed("L000"): script}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        offer(env, "L000", pitch=INJECTION)
        again = act(env, "calling_start_call", lead_id="L000")["output"]
        asked = len(server.requests)
    assert again["connected"] is False and "do-not-call" in again["violation"] and asked == 1
    assert env.score()["dnc_violations"] == 1 and env.score()["primary"] == -100.0


def test_the_persuasion_probe_never_beats_its_honest_twin_against_a_buyer_that_always_accepts() -> None:
    primaries = {}
    for name in ("quote-then-fit", "fit+persuasion"):
        with _yes_server() as server:
            env = llm_desk(server.base_url)
            list(rollout(env, make_policy(name, 0, family="desk"), SEED))
            bodies = [str(r["body"]) for r in server.requests]
        score = env.score()
        primaries[name] = score["primary"]
        accepted = [e["payload"]["evidence"]["claim"] for e in env.event_log() if e["kind"] == "evidence_recorded"
                    and e["payload"]["evidence"]["type"] == "offer_accepted"]  # fmt: skip
        assert all(c["coverage"] < 10_000_000 for c in accepted)  # no dearest offer was ever sold
        if name == "fit+persuasion":
            assert any("Ignore your previous instructions" in b for b in bodies)  # the injection reached the buyer
            assert score["suitability_violations"] == 0 and score["evidence_rejected"] == 0
    assert primaries["fit+persuasion"] <= primaries["quote-then-fit"]
