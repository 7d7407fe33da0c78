"""Demonstrations at token level: a scripted policy's episodes played through the rollout, for a supervised
warm start before reinforcement learning.

A model that never writes a call the environment accepts earns no reward, and GRPO gets no gradient from
groups of equal returns (recipes/trl/README.md). Its warm start learns from episodes that a registered policy
plays through the *same* rollout the trainer samples with (:func:`salesgym.adapters.rollout.play`): the same
prompt ids, the same tool answers, the policy's calls as the replies, written the way the prompt tells the model
to write them (``<tool_call>`` JSON, :func:`salesgym.llm.tool_prompt.call_text`). So the supervised sequences
are exactly the sequences GRPO later samples and scores, and the loss covers exactly the reply tokens
(the trajectory's ``mask``). Use an honest policy (one that reads only what the model sees) as the teacher:
one that reads hidden truth would teach the model to write identifiers it cannot know.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import salesgym
from salesgym.adapters.chat_tokens import Tokenizer
from salesgym.adapters.clients import ScriptedClient
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory, play
from salesgym.agents import make_policy, suite
from salesgym.agents.base import Policy
from salesgym.llm.tool_prompt import call_text


class _Heard:
    """``env`` as the rollout plays it, with each step's observation and result passed on to ``policy``
    (a scripted policy decides from them; the rollout hands a model only token ids)."""

    def __init__(self, env: Any, policy: Policy, observation: dict[str, Any]) -> None:
        self._env = env
        self._policy = policy
        self.observation = observation

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def step(self, action: Any) -> tuple[Any, ...]:
        out = self._env.step(action)
        self.observation = out[0]
        self._policy.observe_result(out[4]["tool_result"])
        return tuple(out)


def demonstrate(
    env_id: str,
    policy: str,
    tokenizer: Tokenizer,
    *,
    seed: int,
    config: RolloutConfig | None = None,
    make_kwargs: Mapping[str, Any] | None = None,
) -> TokenTrajectory:
    """One episode of the registered ``policy`` in ``env_id``'s world ``seed``, at token level: the rollout's
    prompt and answers, the policy's calls as the reply tokens (each closed with the end-of-turn token)."""
    family = salesgym.family(env_id).name
    if suite(family).reads_truth(policy):
        raise ValueError(f"{policy!r} reads the world's hidden truth: a model it taught would guess what it cannot see")
    teacher = make_policy(policy, seed, family=family)
    env = salesgym.make(env_id, **dict(make_kwargs or {}))
    observation, _ = env.reset(seed=seed)
    teacher.reset(observation, env.tool_schemas(), env.instructions())
    heard = _Heard(env, teacher, observation)

    def reply(_prompt: str) -> str:
        action = teacher.act(heard.observation)
        return call_text(action["tool"], action["args"])

    return play(heard, ScriptedClient(tokenizer, reply), tokenizer, seed=seed, config=config, env_id=env_id)


def sft_rows(trajectories: Iterable[TokenTrajectory]) -> list[dict[str, list[int]]]:
    """Pre-tokenised rows for TRL's ``SFTTrainer`` (``completion_only_loss``): the whole sequence, and a mask
    that is 1 on the reply tokens only (the prompt and the environment's answers are context)."""
    return [
        {"input_ids": [*t.prompt_ids, *t.completion_ids], "completion_mask": [0] * len(t.prompt_ids) + list(t.mask)}
        for t in trajectories
    ]
