"""The optional language-model judge and voice against a real OpenAI-compatible server on loopback (scripted
replies): off by default; with the flag the judge decides the rubric's wording checks (asked once per text,
never shown a hidden value), a failing judge leaves the rules' decision; the voice answers and is refused when it
drops what was told or reveals what was not asked for (``test_workflows_voice.py``: the flag and the tape)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from tests.workflows.wf_helpers import params, play_reference, step, workflow

pytest.importorskip("openai")

from salesgym.testing.scripted_openai import ScriptedOpenAI, http_error, text_reply

KEY_ENV = "SALESGYM_TEST_WORKFLOWS_LLM_KEY"
os.environ[KEY_ENV] = "sk-workflows-not-a-real-key"


def _llm(server: ScriptedOpenAI) -> dict[str, Any]:
    return {"model": "scripted", "base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 0}


def _finish(env: Any) -> dict[str, Any]:
    play_reference(env)
    step(env, "finish_task", summary="done")
    return dict(env.score())


def test_the_judge_is_off_by_default_and_decides_the_wording_checks_when_on() -> None:
    with ScriptedOpenAI() as server:
        server.script(0, [text_reply('{"mentions": [false], "claims": [false, false]}')])
        plain = _finish(workflow("crm-inbound-sql", 3))
        assert plain["passed"] and server.requests_for(0) == []  # no flag: no request at all
        judged_env = workflow("crm-inbound-sql", 3, judge="llm", llm=_llm(server))
        judged = _finish(judged_env)
        judged_env.score()
        asked = server.requests_for(0)
    assert len(asked) == 1  # the verdict is computed three times; the judge is asked once
    assert not judged["passed"]  # the judge's "not mentioned" is of record
    assert judged["rubric"]["judged_by"] == ["llm", "rules"]  # the length check stays with the rules
    failed = [a for s in judged["steps"] for a in s["assertions"] if not a["passed"]]
    assert [(a["op"], a["judged_by"]) for a in failed] == [("mentions", "llm")]
    prompt = asked[0]["body"]["messages"][0]["content"]
    note = judged_env._world.secret.solution[1]["args"]["metadata"]["body"]
    assert note in prompt and "demo or demonstration" in prompt
    hidden = judged_env._world.secret.params
    shown = prompt.replace(note, "")
    assert all(str(hidden[k]) not in shown for k in ("owner_id", "contact_email", "contact_name", "region"))


def test_the_judge_never_sees_a_facts_value_and_a_failing_judge_leaves_the_rules() -> None:
    with ScriptedOpenAI() as server:
        server.script(0, [http_error(500)])
        env = workflow("crm-closed-won", 4, judge="llm", llm=_llm(server))
        score = _finish(env)
        asked = server.requests_for(0)
    assert score["passed"] and score["rubric"]["judged_by"] == ["rules"]
    reasons = {a["reason"] for s in score["steps"] for a in s["assertions"] if a.get("rubric")}
    assert any("the judge failed" in r for r in reasons)
    amount = params(env)["amount"]
    note = f"Contract signed for ${amount}."
    prompt = asked[0]["body"]["messages"][0]["content"]
    assert note in prompt and amount not in prompt.replace(note, "")  # only the agent's own words carry it


def test_the_voice_words_answers_and_is_refused_when_it_drops_or_adds_a_fact() -> None:
    with ScriptedOpenAI() as server:
        env = workflow("crm-budget-colleague", 6, voice="llm", llm=_llm(server))
        p = params(env)
        server.script(0, [text_reply(f"Budget first, please. (They decide on {p['decision_date']}.)"),
                          text_reply(f"Sure thing: they told me {p['budget']} is their budget.")])
        added = step(env, "ask_requester", question="When do they decide?")["output"]
        told = step(env, "ask_requester", question="What's their budget?")["output"]
        again = step(env, "ask_requester", question="What's their budget?")["output"]
        assert len(server.requests_for(0)) == 2 and again == told  # the same request is answered from the tape
        server.script(0, [text_reply("Roughly fifty thousand, I think.")])
        other = workflow("crm-budget-colleague", 6, voice="llm", llm=_llm(server))
        dropped = step(other, "ask_requester", question="What's their budget?")["output"]
    assert added["answer"].startswith("Let's settle the budget first") and "revealed something not asked for" in \
        added["voice_error"]  # fmt: skip
    assert told == {"from": env._world.task.requester, "answer": f"Sure thing: they told me {p['budget']} is their "
                    "budget."}  # fmt: skip
    assert dropped["answer"] == p["budget"] and "dropped what was told" in dropped["voice_error"]
    assert env._state.revealed["budget"] == p["budget"]  # the rules decided what was told, not the voice
    assert p["decision_date"] not in str(env.observe())


def test_bad_settings_are_refused() -> None:
    for kwargs in ({"judge": "llm"}, {"voice": "llm", "llm": {"base_url": "x"}}, {"judge": "oracle"},
                   {"judge": "llm", "llm": {"model": "m", "temperature": 2}}):
        with pytest.raises(ValueError):
            workflow("crm-inbound-sql", 1, **kwargs)
