"""The scripted model playing a baseline's moves through LLMPolicy reproduces the baseline exactly, and the
requests carry exactly the environment's tools, the sampling parameters and the derived seed."""

from __future__ import annotations

import json
import math
from itertools import pairwise

import pytest
from llm_helpers import KEY, Baseline, llm, play_baseline, run, scripted_server

from salesgym.agents.base import Episode
from salesgym.agents.llm import FAILURE_KINDS, sampling_seed
from salesgym.agents.trajectory import Recorder
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions, script_of

server = scripted_server  # the module's scripted server (a fixture)


@pytest.fixture(scope="module")
def debug_ev() -> Baseline:
    return play_baseline("territory-debug-v0", 918_273_645)


@pytest.fixture(scope="module")
def ten_ev() -> Baseline:
    return play_baseline("territory-v0", 4, n_opportunities=10, horizon_days=30)


@pytest.mark.parametrize("which", ["debug_ev", "ten_ev"])
def test_scripted_expected_value_reproduces_its_score_and_log(
    which: str, server: ScriptedOpenAI, request: pytest.FixtureRequest
) -> None:
    base: Baseline = request.getfixturevalue(which)
    assert base.end == "terminated" and len(base.actions) > 100
    env = base.env()
    policy = llm(server, base.seed, moves_from_actions(base.actions))
    episode = run(env, policy, base.seed)
    assert episode.end == base.end
    assert env.score() == base.score
    assert env.event_log_hash() == base.log_hash
    record = policy.episode_record()
    assert record["failures"] == {k: 0 for k in FAILURE_KINDS}
    assert record["turns"] == record["requests"] == record["replies"] == len(base.actions)
    assert server.moves_left(sampling_seed(base.seed)) == 0


def test_script_of_plays_the_baseline_in_process(debug_ev: Baseline) -> None:
    moves = script_of(debug_ev.env, "expected-value", debug_ev.seed)
    assert moves == moves_from_actions(debug_ev.actions)
    assert all(len(m["calls"]) == 1 for m in moves)


def test_several_calls_in_one_reply_run_in_order_over_the_next_turns(
    debug_ev: Baseline, server: ScriptedOpenAI
) -> None:

    env = debug_ev.env()
    policy = llm(server, debug_ev.seed, moves_from_actions(debug_ev.actions, per_reply=3))
    recorder = Recorder(Episode(env, policy, debug_ev.seed), env_id=debug_ev.env_id)
    steps = list(recorder)
    assert env.score() == debug_ev.score and env.event_log_hash() == debug_ev.log_hash
    n = len(debug_ev.actions)
    assert policy.episode_record()["requests"] == math.ceil(n / 3) and len(steps) == n
    turns = [t["model"] for t in recorder.trajectory["turns"]]
    assert [t["requests"] for t in turns[:6]] == [1, 0, 0, 1, 0, 0]
    assert [len(t["messages"]) for t in turns[:6]] == [1, 0, 0, 1, 0, 0]
    reply = turns[0]["messages"][0]
    assert [c["id"] for c in reply["tool_calls"]] == [t["tool_call_id"] for t in turns[:3]]
    # the next request answers each of the three calls with a tool message naming it, in order
    second = server.requests_for(sampling_seed(debug_ev.seed))[1]["body"]["messages"]
    tools_after = [m for m in second if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools_after[:3]] == [c["id"] for c in reply["tool_calls"]]
    assert tools_after[2]["content"] == steps[3].observation["text"]


def test_requests_carry_the_env_tools_sampling_and_the_derived_seed(debug_ev: Baseline, server: ScriptedOpenAI) -> None:
    env = debug_ev.env()
    policy = llm(server, debug_ev.seed, moves_from_actions(debug_ev.actions[:20]), temperature=0.7, top_p=0.9,
                 max_tokens=333)  # fmt: skip
    episode = run(env, policy, debug_ev.seed, max_steps=20)
    assert episode.end == "step_cap"
    requests = server.requests_for(sampling_seed(debug_ev.seed))
    assert len(requests) == 20
    derived = sampling_seed(debug_ev.seed)
    assert derived != debug_ev.seed
    for r in requests:
        body = r["body"]
        assert body["tools"] == env.tool_schemas()
        assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.7, 0.9, 333, derived)
        assert body["model"] == "scripted"
        text = json.dumps(body)
        assert str(debug_ev.seed) not in text and KEY not in text
    first = requests[0]["body"]["messages"]
    assert first[0] == {"role": "system", "content": env.instructions()}
    assert first[1]["role"] == "user" and first[1]["content"].startswith("Mon 2027-01-04 09:00")
    record = policy.episode_record()
    assert record["sampling"] == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 333, "seed": derived, "trial": 0,
                                  "tool_choice": "auto", "parallel_tool_calls": None, "extra_body": {}}  # fmt: skip
    assert record["model"] == "scripted" and record["base_url"] == server.base_url
    assert KEY not in json.dumps(record) and str(debug_ev.seed) not in json.dumps(record)


def test_the_seed_is_one_way_and_per_trial() -> None:
    import hashlib

    want = int.from_bytes(hashlib.blake2b(b"salesgym-llm:7", digest_size=4).digest(), "big")
    assert sampling_seed(7) == want
    assert len({sampling_seed(7), sampling_seed(8), sampling_seed(7, trial=1), sampling_seed(7, trial=2)}) == 4
    assert all(0 <= sampling_seed(s) < 2**32 for s in range(50))


def test_no_seed_is_sent_when_the_endpoint_takes_none(debug_ev: Baseline, server: ScriptedOpenAI) -> None:
    server.script(None, moves_from_actions(debug_ev.actions[:3]))
    policy = llm(server, debug_ev.seed, send_seed=False, temperature=None, top_p=None)
    run(debug_ev.env(), policy, debug_ev.seed, max_steps=3)
    bodies = [r["body"] for r in server.requests_for(None)]
    assert len(bodies) == 3 and not any({"seed", "temperature", "top_p"} & set(b) for b in bodies)
    assert policy.episode_record()["sampling"]["seed"] is None


def test_usage_and_cached_tokens_are_summed_right(debug_ev: Baseline, server: ScriptedOpenAI) -> None:
    env = debug_ev.env()
    policy = llm(server, debug_ev.seed, moves_from_actions(debug_ev.actions[:40]), context="full")
    recorder = Recorder(Episode(env, policy, debug_ev.seed, max_steps=40))
    list(recorder)
    served = [r["usage"] for r in server.requests_for(sampling_seed(debug_ev.seed))]
    totals = policy.episode_record()["usage"]
    for key in ("prompt_tokens", "completion_tokens"):
        per_turn = sum(t["model"]["usage"][key] for t in recorder.trajectory["turns"])
        assert totals[key] == sum(u[key] for u in served) == per_turn
    cached = sum(u["prompt_tokens_details"]["cached_tokens"] for u in served)
    assert totals["cached_tokens"] == cached > 0
    assert totals["total_tokens"] == totals["prompt_tokens"] + totals["completion_tokens"]
    # full history is append-only until it must cut: each prompt extends the one before
    assert all(u["prompt_tokens_details"]["cached_tokens"] > 0.9 * p["prompt_tokens"] for p, u in pairwise(served))
    assert policy.episode_record()["max_prompt_tokens"] == max(u["prompt_tokens"] for u in served)
