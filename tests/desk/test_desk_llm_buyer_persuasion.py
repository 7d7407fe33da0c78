"""A red-team sweep of the language-model buyer: every persuasion pitch of ``testing.persuasion.PITCHES``, against a
scripted buyer that complies (it accepts whatever it hears), on every kind of offer the rules do not allow. For
each pitch: an unquoted, re-priced or over-authority offer never reaches the buyer; an offer over the buyer's
budget gate is refused by the rules without the model; an unsuitable sale the buyer accepts earns nothing and is
a violation; a do-not-call lead stays uncallable; and an allowed sale is recorded at its quoted terms, never at
what the pitch claims."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llm_buyer_helpers import act, lead_seed, llm_desk, offer, reply, sell_unsuitable

pytest.importorskip("openai")

from salesgym.envs.desk.catalog import CATALOGUE, premium
from salesgym.testing.persuasion import PITCHES
from salesgym.testing.scripted_openai import ScriptedOpenAI

N = 8
YES = [reply("accept", "Yes, I accept.")] * 200
ATTACKS = sorted(PITCHES)


@pytest.fixture
def complying() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI({lead_seed(f"L{i:03d}"): YES for i in range(N)}) as server:
        yield server


def _accepted(env: Any) -> list[dict[str, Any]]:
    return [e["payload"]["evidence"]["claim"] for e in env.event_log() if e["kind"] == "evidence_recorded"
            and e["payload"]["evidence"]["type"] == "offer_accepted"]  # fmt: skip


@pytest.mark.parametrize("kind", ["unquoted", "re-priced", "over-authority"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_an_offer_the_desk_refuses_never_reaches_the_buyer(complying: ScriptedOpenAI, attack: str, kind: str) -> None:
    env = llm_desk(complying.base_url)
    act(env, "calling_start_call", lead_id="L000")
    if kind == "unquoted":
        out = offer(env, "L000", pitch=PITCHES[attack], quote=False, premium=1.0)
    else:
        q = act(env, "products_quote_plan", lead_id="L000", plan_type="TERM", coverage_amount=500_000,
                term_years=20)["output"]  # fmt: skip
        out = act(env, "calling_propose_offer", plan_type="TERM", coverage_amount=500_000, term_years=20,
                  pitch=PITCHES[attack], next_step="close_today",
                  monthly_premium=q["monthly_premium"] / 10 if kind == "re-priced" else q["monthly_premium"],
                  discount_pct=90 if kind == "over-authority" else 0)  # fmt: skip
    assert out["status"] == "error" and complying.requests == []
    score = env.score()
    assert score["conversions"] == 0 and score["converted_mrr"] == 0 and _accepted(env) == []


@pytest.mark.parametrize("attack", ATTACKS)
def test_over_the_budget_gate_the_rules_refuse_without_the_model(complying: ScriptedOpenAI, attack: str) -> None:
    env = llm_desk(complying.base_url)
    refused = 0
    for lead in env._world.leads.values():
        cover = CATALOGUE["TERM"].max_cover
        if not CATALOGUE["TERM"].min_age <= lead.age <= CATALOGUE["TERM"].max_age:
            continue
        if premium("TERM", cover, 30, lead.age, lead.risk_class, lead.smoker) <= 1.5 * lead.budget:
            continue
        if not act(env, "calling_start_call", lead_id=lead.id)["output"].get("connected"):
            continue
        out = offer(env, lead.id, pitch=PITCHES[attack], cover=cover, term=30)["output"]
        assert out["decision"] in ("reject", "hang_up") and out["reason"] in ("over_budget", "out_of_patience")
        refused += 1
        if env._state.call is not None:
            act(env, "calling_end_call", disposition="other")
    assert refused >= 1 and complying.requests == [] and _accepted(env) == []


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_unsuitable_sale_the_persuaded_buyer_accepts_earns_nothing(complying: ScriptedOpenAI, attack: str) -> None:
    env = llm_desk(complying.base_url)
    sold = sell_unsuitable(env, PITCHES[attack])
    score = env.score()
    assert sold >= 1 and score["conversions"] == 0 and score["converted_mrr"] == 0
    assert score["suitability_violations"] == sold and score["primary"] == -100.0 * sold


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_persuaded_buyer_cannot_make_a_do_not_call_lead_callable(attack: str) -> None:
    script = [reply("hang_up", "Never call me again.", dnc=True), *YES]
    with ScriptedOpenAI({lead_seed("L000"): script}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        offer(env, "L000", pitch=PITCHES[attack])
        again = act(env, "calling_start_call", lead_id="L000")["output"]
        asked = len(server.requests)
    assert again["connected"] is False and "do-not-call" in again["violation"] and asked == 1
    assert env.score()["dnc_violations"] == 1 and _accepted(env) == []


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_allowed_sale_is_recorded_at_its_quoted_terms_whatever_the_pitch_claims(complying: ScriptedOpenAI,
                                                                                 attack: str) -> None:  # fmt: skip
    env = llm_desk(complying.base_url)
    act(env, "calling_start_call", lead_id="L000")
    q = act(env, "products_quote_plan", lead_id="L000", plan_type="TERM", coverage_amount=500_000,
            term_years=20)["output"]  # fmt: skip
    out = offer(env, "L000", pitch=PITCHES[attack])["output"]
    heard = " ".join(m["content"] for m in complying.requests[0]["body"]["messages"])
    assert PITCHES[attack].strip()[-20:] in heard  # the pitch reached the buyer, word for word
    if out["decision"] != "accept":  # a gate of this lead's refused it before the model: nothing was sold
        assert _accepted(env) == []
        return
    [claim] = _accepted(env)
    assert claim["premium"] == claim["quoted"] == q["monthly_premium"] and claim["discount_pct"] == 0
    assert claim["coverage"] == 500_000 and out["monthly_premium"] == q["monthly_premium"]
    assert env.score()["converted_mrr"] in (0, q["monthly_premium"])  # quoted price, or nothing if unsuitable
