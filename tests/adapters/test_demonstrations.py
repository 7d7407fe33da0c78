"""Demonstrations at token level (the supervised warm start's data): a scripted policy played through the
rollout makes exactly the calls it makes when it plays the environment directly, and the SFT rows train on
exactly its reply tokens."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("transformers")

from token_fakes import make_tokenizer

import salesgym
from salesgym.adapters.demonstrations import demonstrate, sft_rows
from salesgym.adapters.rollout import RolloutConfig
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.llm.tool_prompt import call_text

WORKFLOWS = {"template": "crm-lifecycle-reset", "ablation": "partial_reward"}
CASES = [  # (env id, make arguments, honest policy, seed)
    ("workflows-v0", WORKFLOWS, "first-plausible", 11),
    ("workflows-v0", {"template": "sched-earliest-demo", "ablation": "partial_reward"}, "first-plausible", 5),
    ("territory-debug-v0", {}, "expected-value", 3),
]


def _direct(env_id: str, make_kwargs: dict[str, object], policy: str, seed: int, turns: int) -> list[tuple[Any, float]]:
    env = salesgym.make(env_id, **make_kwargs)
    family = salesgym.family(env_id).name
    steps = rollout(env, make_policy(policy, seed, family=family), seed, max_steps=turns)
    return [(step.action, step.reward) for step in steps]


@pytest.mark.parametrize(("env_id", "make_kwargs", "policy", "seed"), CASES)
def test_a_demonstration_is_the_policys_own_episode(env_id: str, make_kwargs: dict[str, object], policy: str,
                                                   seed: int) -> None:  # fmt: skip
    tok = make_tokenizer()
    traj = demonstrate(env_id, policy, tok, seed=seed, config=RolloutConfig(max_turns=6, max_new_tokens=4096),
                       make_kwargs=make_kwargs)  # fmt: skip
    direct = _direct(env_id, make_kwargs, policy, seed, len(traj.turns))
    # every reply was the policy's call, written as the prompt asks, and read back as the same action
    assert [(t.action, t.reward) for t in traj.turns] == direct
    for turn, (action, _) in zip(traj.turns, direct, strict=True):
        assert isinstance(action, dict)
        assert turn.text == call_text(action["tool"], action["args"]) + "<|im_end|>"
        assert turn.finish == "stop"
    assert traj.episode_return == pytest.approx(sum(r for _, r in direct))


def test_the_teacher_earns_partial_credit_that_the_rows_keep() -> None:
    tok = make_tokenizer()
    traj = demonstrate("workflows-v0", "first-plausible", tok, seed=11, config=RolloutConfig(max_turns=3,
                       max_new_tokens=4096), make_kwargs=WORKFLOWS)  # fmt: skip
    assert traj.episode_return > 0  # a looked-up contact's stage reset: the partial credit GRPO trains on
    [row] = sft_rows([traj])
    assert row["input_ids"] == traj.prompt_ids + traj.completion_ids
    assert len(row["completion_mask"]) == len(row["input_ids"])
    start = len(traj.prompt_ids)
    trained = {i for i, m in enumerate(row["completion_mask"]) if m}
    replies = {start + i for t in traj.turns for i in range(t.start, t.end)}
    assert trained == replies  # the loss covers the replies only: never the prompt or the apps' answers
    for t in traj.turns:
        ids = row["input_ids"][start + t.start : start + t.end]
        assert tok.decode(ids, skip_special_tokens=False) == t.text


def test_a_policy_that_reads_hidden_truth_cannot_teach() -> None:
    with pytest.raises(ValueError, match="hidden truth"):
        demonstrate("workflows-v0", "reference", make_tokenizer(), seed=1, make_kwargs=WORKFLOWS)
