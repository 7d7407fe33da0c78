"""The optional language-model voice against a real OpenAI-compatible server on loopback (scripted replies):
it writes words only, is asked once per (decision, reason, persona), and a failing endpoint is a recorded
buyer-side error while the decision stands."""

from __future__ import annotations

import os
from typing import Any

import pytest
from desk_helpers import desk, quote_and_offer, step

pytest.importorskip("openai")

from salesgym.envs.desk.voice import OpenAIVoice
from salesgym.testing.scripted_openai import ScriptedOpenAI, http_error, text_reply

KEY_ENV = "SALESGYM_TEST_VOICE_KEY"
os.environ[KEY_ENV] = "sk-voice-not-a-real-key"


def _offers(env: Any) -> list[dict[str, Any]]:
    out = []
    for lead_id in env._world.leads:
        if step(env, "calling_start_call", lead_id=lead_id)["output"].get("connected"):
            out.append(quote_and_offer(env, lead_id, "TERM", 500_000, 20)[1]["output"])
            if env._state.call is not None:
                step(env, "calling_end_call", disposition="other")
    return out


def test_the_voice_writes_words_only_and_asks_once_per_combination() -> None:
    with ScriptedOpenAI() as server:
        server.script(0, [text_reply(f"line {i}") for i in range(200)])
        canned = _offers(desk(seed=9))
        voiced_env = desk(seed=9, voice=OpenAIVoice("scripted", server.base_url, KEY_ENV, max_retries=0))
        voiced = _offers(voiced_env)
        asked = server.requests_for(0)
    assert [{**o, "buyer_says": None} for o in canned] == [{**o, "buyer_says": None} for o in voiced]
    assert all(o["buyer_says"].startswith("line ") for o in voiced)
    leads = voiced_env._world.leads
    combos = {(o["decision"], o["reason"], leads[o["lead_id"]].persona) for o in voiced}
    assert len(asked) == len(combos) < len(voiced)  # cached by hash: one request per combination
    prompt = asked[0]["body"]["messages"][0]["content"]
    assert leads[voiced[0]["lead_id"]].persona in prompt and "Do not change the decision" in prompt


def test_a_failing_endpoint_is_a_recorded_error_and_the_decision_stands() -> None:
    with ScriptedOpenAI() as server:
        server.script(0, [http_error(500)] * 200)
        canned_env = desk(seed=9)
        canned = _offers(canned_env)
        broken_env = desk(seed=9, voice=OpenAIVoice("scripted", server.base_url, KEY_ENV, max_retries=0))
        broken = _offers(broken_env)
    assert [o["decision"] for o in canned] == [o["decision"] for o in broken]
    assert any(o["decision"] == "accept" for o in broken), "no silent refusal"
    assert all("the decision above stands" in o["buyer_error"] for o in broken)
    assert broken_env.score()["buyer_errors"] == len(broken) and canned_env.score()["buyer_errors"] == 0
    assert broken_env.score()["converted_mrr"] == canned_env.score()["converted_mrr"]
