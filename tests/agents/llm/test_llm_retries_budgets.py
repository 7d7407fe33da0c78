"""Retries with backoff actually retry; budgets end the episode with their reason."""

from __future__ import annotations

import pytest
from llm_helpers import Baseline, llm, play_baseline, run, scripted_server

from salesgym.agents.base import Episode
from salesgym.agents.llm import sampling_seed
from salesgym.agents.trajectory import Recorder
from salesgym.testing.scripted_openai import ScriptedOpenAI, delayed, drop, http_error, moves_from_actions

server = scripted_server  # the module's scripted server (a fixture)


SEED = 57
BACKOFF = 0.05


@pytest.fixture(scope="module")
def ev() -> Baseline:
    return play_baseline("territory-debug-v0", SEED)


def test_two_failures_then_an_answer_is_one_turn_with_two_counted_retries(ev: Baseline, server: ScriptedOpenAI) -> None:
    moves = moves_from_actions(ev.actions[:3])
    policy = llm(server, SEED, [moves[0], http_error(503), drop(), *moves[1:]], backoff_s=BACKOFF, max_retries=2)
    recorder = Recorder(Episode(ev.env(), policy, SEED, max_steps=3))
    steps = list(recorder)
    assert [s.action for s in steps] == ev.actions[:3]
    turn = recorder.trajectory["turns"][1]["model"]
    assert turn["requests"] == 3 and len(turn["retries"]) == 2 and turn["failures"] == []
    assert turn["retries"][0].startswith("HTTP 503") and turn["retries"][1].startswith("connection error")
    record = policy.episode_record()
    assert record["requests"] == 5 and record["retries"] == 2 and record["replies"] == 3
    # exponential backoff: the retries waited at least backoff_s, then twice that
    t = [r["t"] for r in server.requests_for(sampling_seed(SEED))]
    assert t[2] - t[1] >= BACKOFF and t[3] - t[2] >= 2 * BACKOFF
    # the same request was sent again
    bodies = [r["body"] for r in server.requests_for(sampling_seed(SEED))]
    assert bodies[1] == bodies[2] == bodies[3]


def test_retries_run_out_into_an_endpoint_error(ev: Baseline, server: ScriptedOpenAI) -> None:
    moves = [*moves_from_actions(ev.actions[:1]), *[http_error(500)] * 4, *moves_from_actions(ev.actions[1:3])]
    policy = llm(server, SEED, moves, max_retries=2)
    episode = run(ev.env(), policy, SEED)
    assert episode.end == "stopped: endpoint_error: HTTP 500: scripted failure (after 3 attempts)"
    record = policy.episode_record()
    assert record["failures"]["endpoint_error"] == 1 and record["requests"] == 4 and record["retries"] == 2
    assert record["stopped"]["turn"]["requests"] == 3
    assert server.moves_left(sampling_seed(SEED)) == 3


def test_a_timeout_is_retried(ev: Baseline, server: ScriptedOpenAI) -> None:
    moves = moves_from_actions(ev.actions[:2])
    policy = llm(server, SEED, [delayed(moves[0], 1.0), *moves], timeout_s=0.2)
    steps = list(Episode(ev.env(), policy, SEED, max_steps=2))
    assert [s.action for s in steps] == ev.actions[:2]
    assert policy.episode_record()["retries"] == 1


def test_the_token_budget_ends_the_episode(ev: Baseline, server: ScriptedOpenAI) -> None:
    budget = 60_000
    policy = llm(server, SEED, moves_from_actions(ev.actions), token_budget=budget)
    episode = run(ev.env(), policy, SEED)
    assert episode.end == "stopped: token_budget"
    record = policy.episode_record()
    assert 0 < record["turns"] < len(ev.actions)
    used = record["usage"]["total_tokens"]
    last = server.requests_for(sampling_seed(SEED))[-1]["usage"]
    assert used <= budget and budget - used < 1.2 * last["prompt_tokens"]  # stopped when the next would not fit
    assert record["stopped"] == {"reason": "token_budget", "turn": record["stopped"]["turn"]}
    assert record["stopped"]["turn"]["requests"] == 0


def test_the_wall_budget_ends_the_episode_even_mid_request(ev: Baseline, server: ScriptedOpenAI) -> None:
    moves = moves_from_actions(ev.actions[:3])
    policy = llm(server, SEED, [moves[0], delayed(moves[1], 5.0), moves[2]], wall_budget_s=1.0)
    episode = run(ev.env(), policy, SEED)
    assert episode.end == "stopped: wall_budget"
    record = policy.episode_record()
    assert record["turns"] == 1 and record["wall_s"] < 4.0  # the slow request was cut at the budget
