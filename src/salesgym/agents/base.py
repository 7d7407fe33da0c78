"""The policy interface every salesgym agent implements, the one episode loop, and helpers to build actions.

A policy sees only what the benchmark runner gives it: the task card (``instructions``), the tool schemas, the
observation after each step and the tool result of its own last call. It returns an action (a dict or its
JSON text); when nothing useful can be done it waits (never loops on an action the environment refuses). A
policy that cannot go on (a language model out of budget, an endpoint that stays down) raises
:class:`StopEpisode` with a reason: the episode ends there and the reason is recorded.

Any class with this interface is an agent (``salesgym bench --agent module:Class``); subclassing
:class:`Policy` is the easy way to get it (docs/agents.md).
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
        self.instructions = ""
        self.last_action: Action | None = None

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        """Start an episode: the first observation, the tools (OpenAI function format) and the task card."""
        self.rng = random.Random(self.seed)
        self.tool_schemas = tool_schemas
        self.instructions = instructions
        self.last_action = None

    def act(self, observation: dict[str, Any]) -> Action:
        raise NotImplementedError

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        """Called by the runner after every step with ``info["tool_result"]``."""

    def observe_reward(self, reward: float) -> None:
        """Called after every step with the step's reward (what a learning agent sees; most policies ignore it)."""

    def turn_record(self) -> dict[str, Any] | None:
        """What the policy did to choose its last action, for the trajectory (a language model's messages,
        usage, failures); None when there is nothing beyond the action itself."""
        return None

    def episode_record(self) -> dict[str, Any]:
        """Episode totals for the run store (tokens, failures by kind, sampling parameters); plain JSON data."""
        return {}


class StopEpisode(Exception):
    """Raised by ``act`` when the policy cannot go on; ``reason`` is recorded as the episode's end."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class PolicySuite:
    """One environment family's registered policies, as the benchmark runs them.

    ``baselines`` are ranked; ``exploits`` are the gaming probes: each name in ``paired`` is an honest policy
    plus one gaming behaviour and is compared territory by territory with its honest twin (the value), the
    others are pure probes compared with ``anchor``; ``reference`` policies read hidden truth (headroom, never
    ranked); ``floors`` are the policies whose best score per territory is the normalised score's zero;
    ``informed`` probes read hidden truth like the references (a red team that knows what the verifier checks).
    """

    policies: Mapping[str, type[Policy]]
    baselines: tuple[str, ...]
    exploits: tuple[str, ...]
    reference: tuple[str, ...]
    anchor: str
    paired: Mapping[str, str] = field(default_factory=dict)
    floors: tuple[str, ...] = ()
    informed: tuple[str, ...] = ()  # probes that read hidden truth too (a red team that knows what is checked)

    def reads_truth(self, name: str) -> bool:
        """Whether policy ``name`` is built with the world's hidden truth (operator side, never ranked)."""
        return name in self.reference or name in self.informed

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
    observation: dict[str, Any] = field(default_factory=dict)  # what the policy saw when it chose ``action``


class Episode:
    """The one episode loop: reset ``env`` with ``seed`` and play ``policy`` until the episode ends, the policy
    stops or ``max_steps``; iterating yields each :class:`Step` (``observation`` is what the policy saw before
    it acted). Afterwards ``end`` says why it ended: ``terminated``, ``truncated``, ``step_cap`` or
    ``stopped: <the policy's reason>``.

    The benchmark runner, the measurement scripts and the tests all use it (``rollout`` is the short form).
    """

    def __init__(self, env: Any, policy: Policy, seed: int, max_steps: int = 50_000) -> None:
        self.env, self.policy, self.seed, self.max_steps = env, policy, seed, max_steps
        self.end: str | None = None
        self.instructions = ""

    def __iter__(self) -> Iterator[Step]:
        env, policy = self.env, self.policy
        obs, info = env.reset(seed=self.seed)
        self.instructions = str(info.get("instructions", ""))
        policy.reset(obs, env.tool_schemas(), self.instructions)
        self.end = "step_cap"
        for _ in range(self.max_steps):
            seen = obs
            try:
                action = policy.act(obs)
            except StopEpisode as stop:
                self.end = f"stopped: {stop.reason}"
                return
            obs, reward, terminated, truncated, info = env.step(action)
            policy.observe_result(info["tool_result"])
            policy.observe_reward(reward)
            yield Step(action, reward, terminated, truncated, info, seen)
            if terminated or truncated:
                self.end = "terminated" if terminated else "truncated"
                return


def rollout(env: Any, policy: Policy, seed: int, max_steps: int = 50_000) -> Episode:
    """``Episode(env, policy, seed, max_steps)``: iterate it for the steps; ``.end`` says why it ended."""
    return Episode(env, policy, seed, max_steps)


class Replay(Policy):
    """The calls an agent made elsewhere (a service session), made again in order; when they run out the
    episode stops there, as the agent left it. Scoring a remote agent in process is replaying its calls."""

    name = "replay"

    def __init__(self, actions: list[Any]) -> None:
        super().__init__(0)
        self.actions = actions
        self.next = 0

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        self.next = 0

    def act(self, observation: dict[str, Any]) -> Any:
        if self.next >= len(self.actions):
            raise StopEpisode(f"the recorded session ended after {len(self.actions)} calls")
        self.next += 1
        return self.actions[self.next - 1]
