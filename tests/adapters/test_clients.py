"""The model clients: a tiny random transformers model on CPU, and a vLLM-style server (the scripted one)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from token_fakes import PREFIX, call_text, make_tokenizer, tiny_model  # noqa: E402

import salesgym  # noqa: E402
from salesgym.adapters.clients import OpenAITokenClient, TransformersClient, parse_completion, turn_seed  # noqa: E402
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory, group_rollout, play  # noqa: E402
from salesgym.testing.scripted_openai import ScriptedOpenAI, token_reply  # noqa: E402


def _model_logprobs(model: object, traj: TokenTrajectory) -> torch.Tensor:
    """log p(token | everything before it) for every completion token, from one forward pass."""
    ids = torch.tensor([traj.prompt_ids + traj.completion_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(traj.prompt_ids) - 1 : -1]  # type: ignore[operator]
    return torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(traj.completion_ids)[:, None])[:, 0]


def test_a_random_tiny_model_plays_with_exact_ids_and_logprobs() -> None:
    tok = make_tokenizer(PREFIX)
    model = tiny_model(tok).train()
    client = TransformersClient(model, tok, temperature=1.0)
    config = RolloutConfig(max_turns=3, max_new_tokens=12)
    group = group_rollout("territory-debug-v0", client, tok, seed=2, n=2, config=config)
    for traj in group:
        assert [t.tool_result["status"] for t in traj.turns] == ["error"] * 3  # random text: refused, counted
        assert traj.score["invalid_actions"] == 3
        assert traj.logprobs is not None and len(traj.logprobs) == len(traj.completion_ids) == len(traj.mask)
        model_lp = _model_logprobs(model, traj)
        sampled = torch.tensor(traj.logprobs)
        on = torch.tensor(traj.mask).bool()
        # the logprobs the client reported are the model's for exactly these ids at exactly these positions
        assert torch.allclose(sampled[on], model_lp[on], atol=1e-4)
        assert (sampled[~on] == 0).all() and on.sum() == sum(t.end - t.start for t in traj.turns)
        for t in traj.turns:
            assert tok.decode(traj.completion_ids[t.start : t.end], skip_special_tokens=False) == t.text
    assert group[0].completion_ids != group[1].completion_ids  # the copies sample with their own seeds
    again = group_rollout("territory-debug-v0", client, tok, seed=2, n=2, config=config)
    assert [t.completion_ids for t in again] == [t.completion_ids for t in group]  # and reproducibly
    assert model.training  # the client restores the mode it found


def test_a_forced_valid_call_through_a_logits_processor_reaches_the_environment() -> None:
    from transformers import LogitsProcessor, LogitsProcessorList

    tok = make_tokenizer(PREFIX)
    target = tok.encode(call_text("wait", {"hours": 2.0, "until": None}), add_special_tokens=False)
    target.append(tok.eos_token_id)

    class Force(LogitsProcessor):
        def __init__(self) -> None:
            self.start = -1

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            if self.start < 0:
                self.start = input_ids.shape[1]
            i = min(input_ids.shape[1] - self.start, len(target) - 1)
            out = torch.full_like(scores, float("-inf"))
            out[:, target[i]] = 0.0
            if input_ids.shape[1] - self.start == len(target) - 1:
                self.start = -1  # the next reply starts over
            return out

    model = tiny_model(tok)
    client = TransformersClient(model, tok, logits_processor=LogitsProcessorList([Force()]))
    env = salesgym.make("territory-debug-v0")
    env.reset(seed=4)
    traj = play(env, client, tok, seed=4, config=RolloutConfig(max_turns=2, max_new_tokens=64))
    assert [t.tool_result["status"] for t in traj.turns] == ["ok", "ok"]
    assert [t.finish for t in traj.turns] == ["stop", "stop"]
    assert traj.completion_ids[traj.turns[1].start : traj.turns[1].end] == target


def test_the_openai_token_client_reads_vllm_style_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = make_tokenizer(PREFIX)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    replies = [call_text("view_opportunity", {"opportunity_id": None, "page": 0}), "not a call"]
    moves = []
    for i, text in enumerate(replies):
        ids = [*tok.encode(text, add_special_tokens=False), tok.eos_token_id]
        moves.append(token_reply(ids, [-0.5 - i] * len(ids)))
    env = salesgym.make("territory-debug-v0")
    env.reset(seed=8)
    with ScriptedOpenAI() as server:
        client = OpenAITokenClient(server.base_url, "scripted")
        server.script(turn_seed(8, 0, 0), moves[:1])
        server.script(turn_seed(8, 0, 1), moves[1:])
        traj = play(env, client, tok, seed=8, config=RolloutConfig(max_turns=2))
        sent = [r["body"]["prompt"] for r in server.requests]
    assert sent[0] == traj.prompt_ids
    assert sent[1] == traj.prompt_ids + traj.completion_ids[: traj.turns[1].start]
    assert [t.tool_result["status"] for t in traj.turns] == ["ok", "error"]
    assert traj.logprobs is not None
    on = [lp for lp, m in zip(traj.logprobs, traj.mask, strict=True) if m]
    assert on == [-0.5] * (traj.turns[0].end - traj.turns[0].start) + [-1.5] * (traj.turns[1].end - traj.turns[1].start)
    assert 8 not in {r["seed"] for r in server.requests}  # the world seed never leaves the process


def test_parse_completion_takes_ids_from_either_vllm_field() -> None:
    by_field = {"choices": [{"token_ids": [5, 6], "logprobs": None, "finish_reason": "length"}]}
    assert parse_completion(by_field).ids == [5, 6] and parse_completion(by_field).finish == "length"
    by_tokens = {"choices": [{"logprobs": {"tokens": ["token_id:7", "token_id:8"], "token_logprobs": [-1.0, -2.0]}}]}
    g = parse_completion(by_tokens)
    assert (g.ids, g.logprobs, g.finish) == ([7, 8], [-1.0, -2.0], "stop")
    with pytest.raises(ValueError, match="no token ids"):
        parse_completion({"choices": [{"text": "hi", "logprobs": {"tokens": ["hi"], "token_logprobs": [-1.0]}}]})
