"""Exact replay with a model buyer: every reply is on the event tape with its request's hash, so an episode
recorded against the scripted server replays byte-identically with the server stopped, and a clone never asks
the model a request already answered."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from llm_buyer_helpers import SEED, act, lead_seed, llm_desk, offer, reply

pytest.importorskip("openai")

from salesgym.agents import make_policy
from salesgym.agents.base import Replay, rollout
from salesgym.core.events import sha256_of
from salesgym.testing.scripted_openai import ScriptedOpenAI, http_error, text_reply

# each lead's buyer: a mix of every kind of answer, failures included
MIX = [reply("ask", "What does it cost over ten years?"), reply("reject", "Too dear.", "over_budget"),
       text_reply("not json at all"), http_error(500), reply("accept", "Alright, sign me up."),
       reply("hang_up", "Enough.")]  # fmt: skip


def _scripts(n: int) -> dict[int | None, list[dict[str, Any]]]:
    return {lead_seed(f"L{i:03d}"): MIX[i % len(MIX):] + MIX[: i % len(MIX)] + MIX * 3 for i in range(n)}


def _record(n: int = 8) -> tuple[list[Any], list[dict[str, Any]], str, str, int]:
    """A quote-then-fit shift against the scripted buyers: its calls, its event log, its hash, the stopped
    server's address and how many requests it answered."""
    with ScriptedOpenAI(_scripts(n)) as server:
        env = llm_desk(server.base_url, n_leads=n)
        steps = list(rollout(env, make_policy("quote-then-fit", 0, family="desk"), SEED))
        url, asked = server.base_url, len(server.requests)
    return [s.action for s in steps], env.event_log(), env.event_log_hash(), url, asked


def test_an_episode_replays_byte_identically_with_the_server_stopped() -> None:
    actions, log, digest, url, asked = _record()
    replies = [e for e in log if e["kind"] == "buyer_replied"]
    assert asked == len(replies) > 5
    assert {r["payload"]["error"] is None for r in replies} == {True, False}  # failures are on the tape too
    assert any(e["kind"] == "buyer_error_recorded" for e in log) and any(
        e["kind"] == "evidence_recorded" for e in log)

    env = llm_desk(url, n_leads=8)  # the same endpoint, now stopped
    assert env.load_buyer_tape(log) == len(replies)
    list(rollout(env, Replay(actions), SEED))
    assert env.event_log_hash() == digest and env.family.buyer.sent == 0
    assert json.dumps(env.event_log(), sort_keys=True) == json.dumps(log, sort_keys=True)
    assert env.replay().leads == env._state.leads  # and the fold of the log rebuilds the same state

    strict = llm_desk(url, n_leads=8, offline=True)  # offline: the tape or a buyer error, never a request
    strict.load_buyer_tape(log)
    list(rollout(strict, Replay(actions), SEED))
    assert strict.event_log_hash() == digest and strict.family.buyer.sent == 0
    diverged = llm_desk(url, n_leads=8, offline=True)
    diverged.load_buyer_tape(log)
    act(diverged, "calling_start_call", lead_id="L001")
    out = offer(diverged, "L001", pitch="a pitch never recorded")["output"]
    assert out["decision"] == "no_answer" and "not on the buyer tape" in out["buyer_error"]
    assert diverged.family.buyer.sent == 0

    bare = llm_desk(url, n_leads=8)  # without the tape the stopped server is asked, and fails: not the same
    list(rollout(bare, Replay(actions), SEED))
    assert bare.event_log_hash() != digest and bare.family.buyer.sent > 0


def test_each_reply_is_taped_with_the_hash_of_the_request_it_answered() -> None:
    with ScriptedOpenAI({lead_seed("L000"): [reply("reject", "No.", "not_convinced")]}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        offer(env, "L000", pitch="hello")
        [request] = server.requests
    [taped] = [e["payload"] for e in env.event_log() if e["kind"] == "buyer_replied"]
    assert taped["request_sha256"] == sha256_of(request["body"]) and taped["say"] == "No."
    assert json.loads(taped["content"])["decision"] == "reject" and taped["model"] == "scripted-buyer"


def test_a_clone_reads_the_tape_and_never_asks_the_model_again() -> None:
    with ScriptedOpenAI({lead_seed("L000"): [reply("accept", "Yes.")]}) as server:
        env = llm_desk(server.base_url)
        act(env, "calling_start_call", lead_id="L000")
        act(env, "products_quote_plan", lead_id="L000", plan_type="TERM", coverage_amount=500_000, term_years=20)
        twin = env.clone()
        first = offer(env, "L000", quote=False, premium=env._state.quotes["q0000"].premium)
        second = offer(twin, "L000", quote=False, premium=twin._state.quotes["q0000"].premium)
        asked = len(server.requests)
        pickled = pickle.loads(pickle.dumps(env.family.buyer))  # the buyer travels with its tape, not its client
    assert asked == 1 and first["output"] == second["output"]
    assert env.event_log_hash() == twin.event_log_hash()
    assert env.family.buyer._client is not None and pickled._client is None and pickled.tape == env.family.buyer.tape
