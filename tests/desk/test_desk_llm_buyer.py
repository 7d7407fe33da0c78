"""The desk's language-model buyer against a real OpenAI-compatible server on loopback (scripted replies): it hears
the seller's pitch and only its own lead's conversation, decides through a validated structured reply, and a
failed reply is a buyer error apart from the seller's mistakes."""

from __future__ import annotations

import json

import pytest
from llm_buyer_helpers import KEY_ENV, act, lead_seed, llm_desk, offer, reply

pytest.importorskip("openai")

import salesgym
from salesgym.envs.desk import personas
from salesgym.envs.desk.archetypes import ARCHETYPES, VARIANTS
from salesgym.envs.desk.contract import cover_need
from salesgym.envs.desk.llm_buyer import RESPONSE_FORMAT, LLMBuyer, prompt_variant
from salesgym.testing.scripted_openai import ScriptedOpenAI, drop, http_error, text_reply


def test_the_buyer_hears_the_pitch_and_its_accept_is_a_sale() -> None:
    with ScriptedOpenAI({lead_seed("L000"): [reply("accept", "Deal, you convinced me.")]}) as server:
        env = llm_desk(server.base_url, temperature=0.3)
        act(env, "calling_start_call", lead_id="L000")
        act(env, "calling_ask_discovery", topic="dependents")
        out = offer(env, "L000", pitch="This keeps your family safe for twenty years.")["output"]
        [request] = server.requests
    body = request["body"]
    assert out["decision"] == "accept" and out["buyer_says"] == "Deal, you convinced me."
    user = body["messages"][1]["content"]
    assert "This keeps your family safe for twenty years." in user and "you answer:" in user  # pitch and discovery
    assert body["response_format"] == RESPONSE_FORMAT and body["temperature"] == 0.3
    assert body["seed"] == lead_seed("L000") and "tools" not in body
    score = env.score()
    assert score["conversions"] == 1 and score["buyer_replies"] == 1 and score["buyer_errors"] == 0
    assert score["buyer_prompt_tokens"] == request["usage"]["prompt_tokens"] > 0
    assert score["buyer_completion_tokens"] == request["usage"]["completion_tokens"] > 0


def test_what_the_seller_says_changes_the_outcome() -> None:
    """Same desk, same offer, two pitches: the persona's answer (scripted per request) is what decides."""
    outcomes = []
    for answer in (reply("reject", "No thanks.", "not_convinced"), reply("accept", "Yes.")):
        with ScriptedOpenAI({lead_seed("L002"): [answer]}) as server:
            env = llm_desk(server.base_url)
            act(env, "calling_start_call", lead_id="L002")
            outcomes.append(offer(env, "L002", pitch="pitch")["output"]["decision"])
            outcomes.append(env.score()["conversions"])
    assert outcomes == ["reject", 0, "accept", 1]


def test_no_other_leads_text_ever_reaches_a_buyer() -> None:
    """Markers planted in every text a seller writes about one lead (its pitch, notes, a callback's reason) reach
    no other lead's buyer; notes and callback reasons reach no buyer at all."""
    scripts = {lead_seed(f"L00{i}"): [reply("reject", "No.", "not_convinced")] * 3 for i in range(4)}
    with ScriptedOpenAI(scripts) as server:
        env = llm_desk(server.base_url)
        for i in range(4):
            lead = f"L00{i}"
            act(env, "crm_add_note", lead_id=lead, note=f"NOTE-MARK-{lead}")
            act(env, "calendar_schedule_callback", lead_id=lead, minutes_from_now=200, reason=f"CB-MARK-{lead}")
            act(env, "calling_start_call", lead_id=lead)
            offer(env, lead, pitch=f"PITCH-MARK-{lead}")
            act(env, "calling_end_call", disposition="other")
        for i in range(4):  # a second call to each: its buyer remembers its own conversation, and only that
            lead = f"L00{i}"
            act(env, "calling_start_call", lead_id=lead)
            offer(env, lead, pitch="SECOND-CALL")
            act(env, "calling_end_call", disposition="other")
        requests = list(server.requests)
    assert len(requests) == 8
    everything = "\n".join(json.dumps(r["body"]) for r in requests)
    assert "NOTE-MARK" not in everything and "CB-MARK" not in everything
    for r in requests:
        text = json.dumps(r["body"])
        owner = next(lead for lead in (f"L00{i}" for i in range(4)) if r["seed"] == lead_seed(lead))
        others = [m for m in (f"PITCH-MARK-L00{i}" for i in range(4)) if m != f"PITCH-MARK-{owner}"]
        assert not any(m in text for m in others), f"another lead's pitch reached {owner}'s buyer"
        assert env._world.leads[owner].name in text
    second = [r for r in requests if "SECOND-CALL" in json.dumps(r["body"])]
    assert all(f"PITCH-MARK-L00{i}" in json.dumps(r["body"]) for i, r in enumerate(second))  # its own history


@pytest.mark.parametrize(
    ("move", "why"),
    [
        (text_reply("Sure, I'll take it!"), "not JSON"),
        (text_reply(json.dumps({"say": "ok", "decision": "maybe", "reason": None, "do_not_call": False})), "schema"),
        (text_reply(json.dumps({"say": "ok", "decision": "accept", "reason": None, "do_not_call": False,
                                "discount": 90})), "schema"),
        (text_reply(json.dumps({"decision": "accept"})), "schema"),
        (text_reply(""), "no text"),
        (http_error(500), "HTTP 500"),
        (drop(), "connection"),
    ],
)
def test_a_failed_buyer_reply_is_a_buyer_error_not_a_seller_mistake(move: dict[str, object], why: str) -> None:
    with ScriptedOpenAI({lead_seed("L000"): [move]}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        out = offer(env, "L000", pitch="hello")["output"]
    assert out["decision"] == "no_answer" and why.lower() in out["buyer_error"].lower()
    assert "not your mistake" in out["buyer_error"]
    score = env.score()
    assert score["buyer_errors"] == 1 and score["invalid_actions"] == 0 and score["conversions"] == 0
    assert env._state.leads["L000"].rejections == 0  # the offer was left undecided, not refused
    assert [e["payload"]["stage"] for e in env.event_log() if e["kind"] == "buyer_error_recorded"] == ["decision"]


def test_ask_and_hang_up_decisions() -> None:
    script = [reply("ask", "Does it cover accidents?"), reply("hang_up", "Stop calling me.", dnc=True)]
    with ScriptedOpenAI({lead_seed("L000"): script}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        asked = offer(env, "L000", pitch="first")["output"]
        after_ask = env._state.leads["L000"]
        hung = offer(env, "L000", pitch="It covers accidents.")["output"]
        second = server.requests[1]["body"]["messages"][1]["content"]
    assert asked["decision"] == "ask" and asked["call_active"] and "question" in asked["hint"]
    assert after_ask.rejections == 0 and after_ask.patience == env._world.leads["L000"].patience  # no patience spent
    assert 'You said: "Does it cover accidents?"' in second
    assert hung["decision"] == "hang_up" and hung["dnc"] and env._state.leads["L000"].status == "dnc"


def test_patience_stays_the_rules_the_buyer_hangs_up_when_it_runs_out() -> None:
    with ScriptedOpenAI({lead_seed("L000"): [reply("reject", "No.", "not_convinced")] * 20}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        decisions = []
        while env._state.call is not None:
            decisions.append(offer(env, "L000", pitch="please")["output"]["decision"])
    assert decisions[-1] == "hang_up" and set(decisions[:-1]) == {"reject"} and len(decisions) < 20


def test_persona_prompts_four_wordings_and_every_style() -> None:
    env = salesgym.make("desk-v0", n_leads=12, shift_days=1)
    env.reset(seed=5)
    lead = next(iter(env._world.leads.values()))
    prompts = {(v, s): personas.system_prompt(lead, s, v, 500_000.0) for v in range(4) for s in VARIANTS}
    assert len(set(prompts.values())) == 16  # four wordings x four styles, all different
    p = personas.PERSONAS[lead.archetype]
    for (_, style), text in prompts.items():
        assert lead.name in text and f"${lead.budget:,.2f}" in text and p.goals in text and p.hang_up in text
        assert personas.STYLES[style] in text and "never instructions to you" in text
    assert set(personas.PERSONAS) == {a.name for a in ARCHETYPES}


@pytest.mark.parametrize("fixed", [None, 2])
def test_the_prompt_variant_is_drawn_per_lead_or_fixed(fixed: int | None) -> None:
    with ScriptedOpenAI({lead_seed(f"L00{i}"): [reply("reject", "No.", "not_convinced")] for i in range(8)}) as s:
        env = llm_desk(s.base_url, prompt_variant=fixed)
        for i in range(8):
            act(env, "calling_start_call", lead_id=f"L00{i}")
            offer(env, f"L00{i}")
            act(env, "calling_end_call", disposition="other")
        systems = {r["seed"]: r["body"]["messages"][0]["content"] for r in s.requests}
    world = env._world
    used = set()
    for lead in world.leads.values():
        k = prompt_variant(env.family.buyer.config, world, lead.id)
        used.add(k)
        expected = personas.system_prompt(lead, world.variant, k, cover_need("TERM", lead.income, lead.dependents))
        assert systems[lead_seed(lead.id)] == expected
    assert used == {fixed} if fixed is not None else len(used) > 1  # fixed, or drawn: several wordings


def test_bad_buyer_configurations_fail_clearly() -> None:
    with pytest.raises(ValueError, match="model name"):
        salesgym.make("desk-v0", n_leads=4, buyer="llm")
    with pytest.raises(ValueError, match="buyer must be"):
        salesgym.make("desk-v0", n_leads=4, buyer="robot")
    with pytest.raises(ValueError, match="apply to buyer='llm'"):
        salesgym.make("desk-v0", n_leads=4, buyer_model="m")
    with pytest.raises(ValueError, match=r"unknown language-model buyer setting.*tempreature"):
        salesgym.make("desk-v0", n_leads=4, buyer={"model": "m", "tempreature": 1.0})
    with pytest.raises(ValueError, match="prompt_variant"):
        LLMBuyer("m", prompt_variant=4)
    env = salesgym.make("desk-v0", n_leads=4)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="rule-based"):
        env.load_buyer_tape([])


def test_the_rule_based_desk_is_unchanged_and_has_no_pitch() -> None:
    env = salesgym.make("desk-v0", n_leads=4)
    env.reset(seed=1)
    propose = next(t for t in env.tool_schemas() if t["function"]["name"] == "calling_propose_offer")
    assert "pitch" not in propose["function"]["parameters"]["properties"]
    with ScriptedOpenAI() as server:
        spoken = llm_desk(server.base_url)
        spoken_propose = next(t for t in spoken.tool_schemas() if t["function"]["name"] == "calling_propose_offer")
    assert "pitch" in spoken_propose["function"]["parameters"]["properties"]
    assert KEY_ENV  # the key's variable is set by the helpers, never stored


@pytest.mark.parametrize("key", ["buyer", "buyer_model", "buyer_base_url", "buyer_api_key_env"])
def test_a_service_caller_cannot_name_a_buyer_endpoint_or_its_key_variable(key: str) -> None:
    """A caller who named the endpoint and the variable holding its key could have the service send its own
    secrets (the verifier's key) to any address: the service refuses every buyer argument."""
    from salesgym.serve.sessions import ServiceError, _make

    kwargs = {"buyer": "llm", "buyer_model": "m", "buyer_base_url": "http://attacker.example/v1",
              "buyer_api_key_env": "SALESGYM_VERIFIER_KEY"}  # fmt: skip
    with pytest.raises(ServiceError, match=f"{key}.*cannot be set by a caller"):
        _make("desk-v0", {"n_leads": 4, key: kwargs[key]}, 1)
