"""Helpers of the LLM policy's tests: baselines played in process, the scripted server (a module-scoped fixture
each test module binds as ``server``), a policy on it. The tests run against that real loopback server; nothing
is mocked. (No ``conftest.py`` here: the suite keeps one, see tests/conftest.py.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.agents.llm import LLMPolicy, sampling_seed
from salesgym.testing.scripted_openai import Move, ScriptedOpenAI

KEY_ENV = "SALESGYM_TEST_LLM_KEY"
KEY = "sk-test-4f1c9e-not-a-real-key"
os.environ[KEY_ENV] = KEY  # a variable only these tests read


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as s:
        yield s


@dataclass
class Baseline:
    """A registered policy's episode, played in process: what the scripted model must reproduce."""

    env_id: str
    env_kwargs: dict[str, Any]
    seed: int
    actions: list[Any]
    score: dict[str, Any]
    log_hash: str
    end: str | None

    def env(self) -> Any:
        return salesgym.make(self.env_id, **self.env_kwargs)


def play_baseline(env_id: str, seed: int, policy: str = "expected-value", **env_kwargs: Any) -> Baseline:
    env = salesgym.make(env_id, **env_kwargs)
    episode = Episode(env, make_policy(policy, seed), seed)
    actions = [step.action for step in episode]
    return Baseline(env_id, env_kwargs, seed, actions, env.score(), env.event_log_hash(), episode.end)


def llm(server: ScriptedOpenAI, seed: int, moves: list[Move] | None = None, **overrides: Any) -> LLMPolicy:
    """A policy on ``server`` with world seed ``seed``; ``moves`` (when given) become its script."""
    if moves is not None:
        server.script(sampling_seed(seed), moves)
    settings: dict[str, Any] = {"model": "scripted", "base_url": server.base_url, "api_key_env": KEY_ENV,
                                "backoff_s": 0.0, **overrides}  # fmt: skip
    return LLMPolicy(seed, **settings)


def run(env: Any, policy: LLMPolicy, seed: int, max_steps: int = 50_000) -> Episode:
    episode = Episode(env, policy, seed, max_steps)
    for _ in episode:
        pass
    return episode
