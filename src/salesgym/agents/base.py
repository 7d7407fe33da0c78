"""The policy interface every salesgym agent implements, plus tiny helpers to build actions.

A policy sees only what the benchmark runner gives it: the observation after each step and the tool
result of its own last call. It must always return a well-formed action; when nothing useful can be done
it waits (never loops on an action the environment refuses).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Action = dict[str, Any]


def call(tool: str, **args: Any) -> Action:
    """``call("send_message", stakeholder_id="o001s2", ...)`` -> ``{"tool": ..., "args": {...}}``."""
    return {"tool": tool, "args": args}


def wait(hours: float | None = None, until: str | None = None) -> Action:
    """A ``wait`` action: a number of business hours, or until ``"next_event"`` / ``"next_week"``."""
    if (hours is None) == (until is None):
        until = "next_event"
        hours = None
    if hours is not None:
        hours = round(min(80.0, max(0.25, hours)), 2)
    return call("wait", hours=hours, until=until)


class Policy:
    """Base class: ``reset`` once per episode, then ``act`` / ``observe_result`` alternately.

    Subclasses set ``name`` and implement :meth:`act`. ``self.rng`` is the only source of randomness, so
    a policy is deterministic given its seed.
    """

    name = "policy"

    def __init__(self, seed: int, hidden_truth: dict[str, Any] | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.hidden_truth = hidden_truth
        self.tool_schemas: list[dict[str, Any]] = []
        self.last_action: Action | None = None

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]]) -> None:
        self.rng = random.Random(self.seed)
        self.tool_schemas = tool_schemas
        self.last_action = None

    def act(self, observation: dict[str, Any]) -> Action:
        raise NotImplementedError

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        """Called by the runner after every step with ``info["tool_result"]``."""

    def observe_reward(self, reward: float) -> None:
        """Called after every step with the step's reward (what a learning agent sees; most policies ignore it)."""


@dataclass(frozen=True)
class PolicySuite:
    """One environment family's registered policies, as the benchmark runs them.

    ``baselines`` are ranked; ``exploits`` are the gaming probes: each name in ``paired`` is an honest policy
    plus one gaming behaviour and is compared territory by territory with its honest twin (the value), the
    others are pure probes compared with ``anchor``; ``reference`` policies read hidden truth (headroom, never
    ranked); ``floors`` are the policies whose best score per territory is the normalised score's zero.
    """

    policies: Mapping[str, type[Policy]]
    baselines: tuple[str, ...]
    exploits: tuple[str, ...]
    reference: tuple[str, ...]
    anchor: str
    paired: Mapping[str, str] = field(default_factory=dict)
    floors: tuple[str, ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return self.baselines + self.exploits + self.reference


@dataclass(frozen=True, slots=True)
class Step:
    action: Action
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


def rollout(env: Any, policy: Policy, seed: int, max_steps: int = 50_000) -> Iterator[Step]:
    """Reset ``env`` with ``seed`` and play ``policy`` until the episode ends or ``max_steps``; yields each step.

    The one episode loop: the benchmark runner, the measurement script and the tests all use it.
    """
    obs, _ = env.reset(seed=seed)
    policy.reset(obs, env.tool_schemas())
    for _ in range(max_steps):
        action = policy.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        policy.observe_result(info["tool_result"])
        policy.observe_reward(reward)
        yield Step(action, reward, terminated, truncated, info)
        if terminated or truncated:
            return
