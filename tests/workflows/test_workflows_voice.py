"""The optional language-model voice of the simulated people, against a real OpenAI-compatible server on loopback
(scripted replies): it answers from the person's hidden facts; a fact revealed unasked is flagged (and refused);
every reply is on the event tape with its request hash, so a replay with the server stopped, or a clone, never
calls the model and gives the identical log. Rule-based stays the default: no voice, no voice event."""

from __future__ import annotations

import os
from typing import Any

import pytest
from tests.workflows.wf_helpers import params, play_reference, step, workflow

pytest.importorskip("openai")

from salesgym.envs.workflows.llm import TapeVoice, request_hash
from salesgym.testing.scripted_openai import ScriptedOpenAI, text_reply

KEY_ENV = "SALESGYM_TEST_WORKFLOWS_VOICE_KEY"
os.environ[KEY_ENV] = "sk-workflows-not-a-real-key"
TEMPLATE, SEED = "crm-budget-colleague", 6


def _llm(server: ScriptedOpenAI) -> dict[str, Any]:
    return {"model": "scripted", "base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 0}


def _record(server: ScriptedOpenAI) -> Any:
    env = workflow(TEMPLATE, SEED, voice="llm", llm=_llm(server))
    p = params(env)
    server.script(0, [text_reply(f"They gave me {p['budget']} as their budget."),
                      text_reply(f"They decide by {p['decision_date']}.")])
    play_reference(env)
    step(env, "finish_task", summary="done")
    return env


def test_a_fact_revealed_unasked_is_flagged_and_refused() -> None:
    with ScriptedOpenAI() as server:
        env = workflow(TEMPLATE, SEED, voice="llm", llm=_llm(server))
        p = params(env)
        server.script(0, [text_reply(f"Budget is {p['budget']}, and between us they decide by {p['decision_date']}."),
                          text_reply(f"It's {p['budget']}.")])
        leaked = step(env, "ask_requester", question="What budget did they give you?")["output"]
        clean = step(env, "ask_requester", question="Could you repeat the budget?")["output"]
        prompt = server.requests_for(0)[0]["body"]["messages"][0]["content"]
    assert p["budget"] in prompt and p["decision_date"] in prompt  # the voice answers from the hidden facts
    assert leaked == {"from": env._world.task.requester, "answer": p["budget"],
                      "voice_error": "the voice revealed something not asked for; these are the rule's words"}
    assert clean == {"from": env._world.task.requester, "answer": f"It's {p['budget']}."}
    assert p["decision_date"] not in str(env.observe()) and "decision_date" not in env._state.revealed
    spoken = [e for e in env.event_log() if e["kind"] == "voice_spoke"]
    assert [e["payload"]["unasked"] for e in spoken] == [["decision_date"], []]
    step(env, "finish_task", summary="done")
    voice = env.score()["voice"]
    assert voice["replies"] == 2 and voice["refused"] == 1
    assert [f["facts"] for f in voice["revealed_unasked"]] == [["decision_date"]]


def test_replay_reads_the_tape_with_the_server_stopped_and_the_log_hash_is_identical() -> None:
    with ScriptedOpenAI() as server:
        recorded = _record(server)
        assert len(server.requests_for(0)) == 2
        twin = recorded.clone()
    log, digest = recorded.event_log(), recorded.event_log_hash()
    spoken = [e["payload"] for e in log if e["kind"] == "voice_spoke"]
    assert len(spoken) == 2 and all(len(s["request"]) == 64 and not s["refused"] for s in spoken)
    # the server is stopped: a replay from the tape asks no model and gives the very same log
    replay = workflow(TEMPLATE, SEED, voice=TapeVoice.from_log(log))
    play_reference(replay)
    step(replay, "finish_task", summary="done")
    assert replay.event_log_hash() == digest and replay.event_log() == log
    assert replay.score()["passed"] == recorded.score()["passed"]
    # the live voice, its server gone, cannot reproduce the episode: the tape is what makes the replay exact
    live = workflow(TEMPLATE, SEED, voice="llm", llm={"model": "scripted", "base_url": "http://127.0.0.1:9/v1",
                                                       "api_key_env": KEY_ENV, "max_retries": 0, "timeout_s": 2})
    play_reference(live)
    step(live, "finish_task", summary="done")
    assert live.event_log_hash() != digest
    assert twin.event_log_hash() == digest  # a clone of the finished episode holds the same tape


def test_the_request_hash_is_of_the_request_alone() -> None:
    request = {"who": "Dana", "persona": "brisk", "question": "budget?", "rules": "48213", "knows": {"budget": "48213"}}
    assert request_hash(request) == request_hash(dict(reversed(list(request.items()))))
    assert request_hash(request) != request_hash({**request, "question": "Budget?"})


def test_a_clone_mid_episode_replays_the_voice_from_its_tape() -> None:
    with ScriptedOpenAI() as server:
        env = workflow(TEMPLATE, SEED, voice="llm", llm=_llm(server))
        p = params(env)
        server.script(0, [text_reply(f"They gave me {p['budget']}.")])
        told = step(env, "ask_requester", question="What budget did they give you?")["output"]
        twin = env.clone()
    again = step(twin, "ask_requester", question="What budget did they give you?")["output"]
    assert again == told and twin._state.spoken == env._state.spoken


def test_the_rules_stay_the_default_and_write_no_voice_event() -> None:
    env = workflow(TEMPLATE, SEED)
    play_reference(env)
    step(env, "finish_task", summary="done")
    assert not any(e["kind"] == "voice_spoke" for e in env.event_log()) and "voice" not in env.score()


def test_the_tape_voice_refuses_a_request_it_does_not_hold() -> None:
    env = workflow(TEMPLATE, SEED, voice=TapeVoice({}))
    out = step(env, "ask_requester", question="What budget did they give you?")["output"]
    assert out["answer"] == params(env)["budget"] and "the voice failed (KeyError)" in out["voice_error"]
