"""Defaults that work against the common OpenAI-compatible servers: ``tool_choice: "auto"`` goes with the tools
(some servers leave the tools out of the prompt without it), the context length comes from the endpoint's
``/v1/models`` where it publishes one, and an endpoint that under-counts cannot talk the token estimate down."""

from __future__ import annotations

import pytest
from llm_helpers import Baseline, llm, play_baseline, run, scripted_server

from salesgym.agents.llm.tokens import CHARS_PER_TOKEN, TokenEstimator
from salesgym.llm.client import published_context
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions

server = scripted_server  # the module's scripted server (a fixture)


@pytest.fixture(scope="module")
def ev() -> Baseline:
    return play_baseline("territory-debug-v0", 5)


def _bodies(server: ScriptedOpenAI, policy: object) -> list[dict[str, object]]:
    from salesgym.agents.llm import sampling_seed

    return [r["body"] for r in server.requests_for(sampling_seed(policy.seed))]  # type: ignore[attr-defined]


def test_tool_choice_auto_goes_with_every_request_by_default(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, ev.seed, moves_from_actions(ev.actions[:5]))
    run(ev.env(), policy, ev.seed, max_steps=5)
    bodies = _bodies(server, policy)
    assert len(bodies) == 5 and all(b["tool_choice"] == "auto" and b["tools"] for b in bodies)
    assert policy.episode_record()["sampling"]["tool_choice"] == "auto"


@pytest.mark.parametrize(("choice", "sent"), [(None, None), ("required", "required"),
                                              ({"type": "function", "function": {"name": "wait"}},
                                               {"type": "function", "function": {"name": "wait"}})])
def test_tool_choice_can_be_changed_or_left_out(ev: Baseline, server: ScriptedOpenAI, choice: object,
                                                sent: object) -> None:
    policy = llm(server, ev.seed, moves_from_actions(ev.actions[:2]), tool_choice=choice)
    run(ev.env(), policy, ev.seed, max_steps=2)
    bodies = _bodies(server, policy)
    assert [b.get("tool_choice", None) for b in bodies] == [sent, sent]
    assert all(("tool_choice" in b) == (sent is not None) for b in bodies)


def test_the_context_length_the_endpoint_publishes_is_used(ev: Baseline) -> None:
    with ScriptedOpenAI(context_length=6_000) as small:
        policy = llm(small, ev.seed, moves_from_actions(ev.actions), max_tokens=500)
        run(ev.env(), policy, ev.seed)
        record = policy.episode_record()
    assert record["context"]["context_tokens"] == 6_000 and record["context"]["context_tokens_from"] == "endpoint"
    # every prompt was fitted to the published 6,000 tokens, not the 32,000 default
    assert 0 < record["max_prompt_tokens_estimated"] <= 6_000 - 500


def test_the_configured_context_wins_and_the_default_applies_when_nothing_is_published(
    ev: Baseline, server: ScriptedOpenAI
) -> None:
    with ScriptedOpenAI(context_length=6_000) as small:
        policy = llm(small, ev.seed, moves_from_actions(ev.actions[:2]), context_tokens=9_000)
        run(ev.env(), policy, ev.seed, max_steps=2)
        assert policy.episode_record()["context"] | {"strategy": None} == {
            "strategy": None, "context_tokens": 9_000, "context_tokens_from": "configuration", "window_turns": 6,
            "digest_turns": 120, "full_drop_to": 0.75}  # fmt: skip
    policy = llm(server, ev.seed, moves_from_actions(ev.actions[:2]))  # the module's server publishes none
    run(ev.env(), policy, ev.seed, max_steps=2)
    context = policy.episode_record()["context"]
    assert (context["context_tokens"], context["context_tokens_from"]) == (32_000, "default")


def test_a_published_context_too_small_for_max_tokens_stops_with_the_reason(ev: Baseline) -> None:
    with ScriptedOpenAI(context_length=1_000) as tiny:
        policy = llm(tiny, ev.seed, moves_from_actions(ev.actions[:2]), max_tokens=1_024)
        episode = run(ev.env(), policy, ev.seed)
        assert tiny.requests == []  # nothing was sent that could not fit
    assert episode.end is not None and episode.end.startswith("stopped: context_overflow: max_tokens 1,024")


@pytest.mark.parametrize(("listing", "model", "want"), [
    ({"data": [{"id": "m", "max_model_len": 8192}]}, "m", 8192),  # vLLM, SGLang
    ({"data": [{"id": "a", "context_length": 4096}, {"id": "m", "context_length": 2048}]}, "m", 2048),  # OpenRouter
    ({"data": [{"id": "only", "max_context_length": 16384}]}, "other-name", 16384),  # LM Studio; the only model
    ({"data": [{"id": "a", "max_model_len": 1}, {"id": "b", "max_model_len": 2}]}, "m", None),  # not listed
    ({"data": [{"id": "m", "meta": {"n_ctx_train": 8192}}]}, "m", None),  # llama.cpp: its training context only
    ({"data": [{"id": "m", "object": "model"}]}, "m", None),  # Ollama, transformers serve
    ({"data": [{"id": "m", "max_model_len": True}]}, "m", None),
    ({"error": "nope"}, "m", None),
    ("not json", "m", None),
])  # fmt: skip
def test_published_context_reads_what_each_server_publishes(listing: object, model: str, want: int | None) -> None:
    assert published_context(listing, model) == want


def test_an_endpoint_that_under_counts_cannot_lower_the_estimate() -> None:
    """A server that leaves the tools out of the prompt reports a fraction of what was sent: the estimate
    keeps at least its starting four characters a token (the issue saw 0.08 tokens a character)."""
    est = TokenEstimator()
    est.calibrate(chars=20_000, messages=2, reported_tokens=1_600)  # 0.08 tokens a character
    assert est.ratio == pytest.approx(1 / CHARS_PER_TOKEN)
    assert est.tokens(40_000) >= 10_000
    est.calibrate(chars=10_000, messages=2, reported_tokens=3_508)  # a real 0.35 raises it
    assert est.ratio == pytest.approx(0.35)
    est.calibrate(chars=10_000, messages=2, reported_tokens=1_000)  # and it never falls back
    assert est.ratio == pytest.approx(0.35)
