"""Every way a turn goes wrong is recorded and counted by kind, and none becomes an action silently."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_helpers import Baseline, llm, play_baseline, run, scripted_server

from salesgym.agents.base import Episode
from salesgym.agents.llm import FAILURE_KINDS, sampling_seed
from salesgym.agents.llm.policy import NUDGE
from salesgym.agents.trajectory import Recorder
from salesgym.testing.scripted_openai import (
    ScriptedOpenAI,
    drop,
    http_error,
    malformed,
    moves_from_actions,
    text_reply,
    tool_call,
    tool_calls,
    unknown_tool,
)

server = scripted_server  # the module's scripted server (a fixture)

SEED = 31
WAIT = {"hours": None, "until": "next_event"}


@pytest.fixture(scope="module")
def ev() -> Baseline:
    return play_baseline("territory-debug-v0", SEED)


def invalid_events(env: object) -> list[dict[str, object]]:
    return [e for e in env.event_log() if e["kind"] == "invalid_action"]  # type: ignore[attr-defined]


def failures(policy: object) -> dict[str, int]:
    counts: dict[str, int] = policy.episode_record()["failures"]  # type: ignore[attr-defined]
    return {k: v for k, v in counts.items() if v}


def test_replies_without_a_tool_call_and_endpoint_hiccups_are_never_actions(
    ev: Baseline, server: ScriptedOpenAI
) -> None:
    # text replies, 500s, 429s and dropped connections woven into the baseline's moves change nothing
    moves = moves_from_actions(ev.actions)
    noisy = []
    for i, move in enumerate(moves):
        if i % 7 == 3:
            noisy.append(text_reply("Let me think about the territory first."))
        if i % 11 == 5:
            noisy += [http_error(500), http_error(429), drop()][: 1 + i % 3]
        noisy.append(move)
    env = ev.env()
    policy = llm(server, SEED, noisy)
    episode = run(env, policy, SEED)
    assert episode.end == ev.end
    assert env.score() == ev.score and env.event_log_hash() == ev.log_hash
    n_text = sum("text" in m for m in noisy)
    n_errors = sum("status" in m or "drop" in m for m in noisy)
    record = policy.episode_record()
    assert failures(policy) == {"no_tool_call": n_text}
    assert record["retries"] == n_errors and record["requests"] == len(noisy)
    assert record["replies"] == len(moves) + n_text and record["turns"] == len(ev.actions)


@pytest.mark.parametrize("context", ["summary", "state"])
def test_a_reply_without_a_tool_call_is_answered_and_asked_again(
    ev: Baseline, server: ScriptedOpenAI, context: str
) -> None:
    env = ev.env()
    moves = [text_reply("I will research first."), text_reply("Still thinking."), *moves_from_actions(ev.actions[:2])]
    policy = llm(server, SEED, moves, context=context)  # ``state``: the tables go before the reminder, not after
    recorder = Recorder(Episode(env, policy, SEED, max_steps=2))
    steps = list(recorder)
    assert [s.action for s in steps] == ev.actions[:2]
    turn = recorder.trajectory["turns"][0]["model"]
    assert turn["requests"] == 3 and [f["kind"] for f in turn["failures"]] == ["no_tool_call"] * 2
    # the turn's record is its part of the conversation: each reply, and the request for a call after it
    assert [m["role"] for m in turn["messages"]] == ["assistant", "user", "assistant", "user", "assistant"]
    assert [m["content"] for m in turn["messages"][:4]] == ["I will research first.", NUDGE, "Still thinking.", NUDGE]
    assert turn["messages"][4]["tool_calls"][0]["id"] == turn["tool_call_id"]
    assert "I will research first." in turn["failures"][0]["detail"]
    third = server.requests_for(sampling_seed(SEED))[2]["body"]["messages"]
    tables = ["user"] if context == "state" else []
    assert [m["role"] for m in third[2:]] == ["assistant", "user", "assistant", *tables, "user"]
    assert third[-1]["content"] == NUDGE  # the reminder is the last thing the model reads
    assert len([e for e in env.event_log() if e["kind"] == "tool_completed"]) == 2
    assert not invalid_events(env)  # nothing reached the environment for the text replies


def test_consecutive_replies_without_a_tool_call_end_the_episode(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    moves = [*moves_from_actions(ev.actions[:2]), *[text_reply(f"thought {i}") for i in range(5)]]
    policy = llm(server, SEED, moves, max_no_tool_call=3)
    episode = run(env, policy, SEED)
    assert episode.end == "stopped: no_tool_call"
    record = policy.episode_record()
    assert failures(policy) == {"no_tool_call": 3} and record["turns"] == 2
    assert record["stopped"]["reason"] == "no_tool_call"
    assert [f["kind"] for f in record["stopped"]["turn"]["failures"]] == ["no_tool_call"] * 3
    assert server.moves_left(sampling_seed(SEED)) == 2
    assert len([e for e in env.event_log() if e["kind"] == "tool_completed"]) == 2


@pytest.mark.parametrize(
    ("move", "sent_args", "detail"),
    [
        (malformed("view_opportunity", '{"opportunity_id": "o0'), '{"opportunity_id": "o0', "not valid JSON"),
        (malformed("view_opportunity", '["o001"]'), ["o001"], "not a JSON object"),
        (unknown_tool("teleport", {"to": "o001"}), {"to": "o001"}, "unknown tool"),
    ],
)
def test_a_malformed_call_goes_to_the_environment_as_written_and_counts_once(
    ev: Baseline, server: ScriptedOpenAI, move: dict[str, object], sent_args: object, detail: str
) -> None:

    env = ev.env()
    policy = llm(server, SEED, [move, *moves_from_actions(ev.actions[:1])], context="summary")  # no tables last
    recorder = Recorder(Episode(env, policy, SEED, max_steps=2))
    steps = list(recorder)
    assert steps[0].action["args"] == sent_args
    assert steps[0].info["tool_result"]["status"] == "error"
    assert len(invalid_events(env)) == 1 and env.score()["invalid_actions"] == 1
    assert steps[1].info["tool_result"]["status"] == "ok"
    assert failures(policy) == {"malformed_call": 1}  # the environment's refusal is not counted again
    turn = recorder.trajectory["turns"][0]["model"]
    assert turn["failures"][0]["kind"] == "malformed_call" and detail in turn["failures"][0]["detail"]
    # the model reads the refusal as the call's tool result
    answer = server.requests_for(sampling_seed(SEED))[1]["body"]["messages"][-1]
    assert answer["role"] == "tool" and "error" in answer["content"]


def test_a_call_the_environment_refuses_is_a_refused_call(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    moves = [tool_call("view_opportunity", {"opportunity_id": "o999"}), tool_call("wait", WAIT)]
    policy = llm(server, SEED, moves)
    recorder = Recorder(Episode(env, policy, SEED, max_steps=2))
    list(recorder)
    assert failures(policy) == {"refused_call": 1}
    first = recorder.trajectory["turns"][0]
    assert first["tool_result"]["status"] == "error"
    assert first["model"]["failures"][0]["kind"] == "refused_call"
    assert "o999" in first["model"]["failures"][0]["detail"]
    assert recorder.trajectory["turns"][1]["model"]["failures"] == []


def test_a_reply_with_more_calls_than_allowed_carries_out_the_first_ones(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    waits: list[dict[str, Any]] = [{"hours": h, "until": None} for h in (1.0, 2.0, 3.0)]
    a, b = ({"tool": "wait", "args": w} for w in waits[:2])
    move = tool_calls(*(("wait", w) for w in waits))
    policy = llm(server, SEED, [move, tool_call("wait", WAIT)], max_calls_per_reply=2)
    steps = list(Episode(env, policy, SEED, max_steps=3))
    assert [s.action for s in steps[:2]] == [a, b]
    assert failures(policy) == {"extra_tool_calls": 1}
    second = server.requests_for(sampling_seed(SEED))[1]["body"]["messages"]
    call_ids = [c["id"] for c in second[2]["tool_calls"]]
    answers = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == call_ids  # every call answered, in order
    assert answers[2]["content"].startswith("Not carried out")


def test_an_endpoint_that_refuses_ends_the_episode_at_once(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    policy = llm(server, SEED, [*moves_from_actions(ev.actions[:3]), http_error(401, "bad key")])
    episode = run(env, policy, SEED)
    assert episode.end is not None and episode.end.startswith("stopped: endpoint_error: HTTP 401")
    assert failures(policy) == {"endpoint_error": 1}
    record = policy.episode_record()
    assert record["turns"] == 3 and record["requests"] == 4 and record["retries"] == 0
    assert record["stopped"]["turn"]["failures"][0]["kind"] == "endpoint_error"
    assert not invalid_events(env)  # an endpoint error is never read as the agent's (or a buyer's) move


def test_an_exhausted_script_is_an_endpoint_error_not_an_action(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    policy = llm(server, SEED, moves_from_actions(ev.actions[:2]))
    episode = run(env, policy, SEED)
    assert episode.end is not None and "no move left" in episode.end
    assert policy.episode_record()["turns"] == 2


def test_every_kind_is_listed_even_when_nothing_failed(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions[:1]))
    run(ev.env(), policy, SEED, max_steps=1)
    assert policy.episode_record()["failures"] == dict.fromkeys(FAILURE_KINDS, 0)


def _written(name: str, args: object) -> str:
    return f'I will look first.\n<tool_call>\n{json.dumps({"name": name, "arguments": args})}\n</tool_call>'


def test_calls_written_in_the_text_are_taken_when_the_server_parses_none(ev: Baseline,
                                                                         server: ScriptedOpenAI) -> None:
    """A server without a tool parser (transformers serve for SmolLM2) returns the model's <tool_call> blocks as
    text: they are its calls, the same actions as structured calls; a block cut off mid-JSON is one malformed
    call the environment refuses, not a reply without a call."""
    env = ev.env()
    first, second = ev.actions[0], ev.actions[1]
    moves = [text_reply(_written(first["tool"], first["args"])), text_reply('<tool_call>\n{"name": "wait", "argu'),
             text_reply(_written(second["tool"], second["args"]))]  # fmt: skip
    policy = llm(server, SEED, moves, context="summary")
    recorder = Recorder(Episode(env, policy, SEED, max_steps=3))
    steps = list(recorder)
    assert steps[0].action == first and steps[0].info["tool_result"]["status"] == "ok"
    assert steps[1].action == {"tool": "", "args": '{"name": "wait", "argu'}  # what the model wrote, refused
    assert steps[1].info["tool_result"]["status"] == "error" and steps[2].action == second
    assert failures(policy) == {"malformed_call": 1}
    message = recorder.trajectory["turns"][0]["model"]["messages"][0]
    assert message["content"] == "I will look first." and message["tool_calls"][0]["function"]["name"] == first["tool"]
    sent = server.requests_for(sampling_seed(SEED))[1]["body"]["messages"]
    assert sent[-2]["tool_calls"][0]["id"] == sent[-1]["tool_call_id"]  # answered as the call it was
    cut = server.requests_for(sampling_seed(SEED))[2]["body"]["messages"][-2]["tool_calls"][0]["function"]
    assert json.loads(cut["arguments"]) == '{"name": "wait", "argu'  # sent back as JSON: servers parse it


def test_calls_in_the_text_can_be_switched_off(ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    first = ev.actions[0]
    policy = llm(server, SEED, [text_reply(_written(first["tool"], first["args"]))] * 3, text_tool_calls=False)
    assert run(env, policy, SEED).end == "stopped: no_tool_call"
    assert failures(policy) == {"no_tool_call": 3}
