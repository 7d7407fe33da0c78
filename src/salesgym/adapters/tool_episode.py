"""One episode of any registered environment driven by named tool calls: what the OpenEnv, verifiers and
SkyRL adapters share (each is a thin layer over this, with no code per family).

A stack hands over a tool name and its arguments; the environment judges the call as it always does (a
malformed or unknown call is one counted invalid action, never an exception), and the adapter gets the
observation text, the step's reward and whether the episode is over. The return is the plain sum of the
step rewards (docs/reward.md); the verifier's score and the event-log hash are operator side, for the
stack's metadata, never shown to the model.

>>> episode = ToolEpisode.start("territory-debug-v0", seed=3)
>>> step = episode.call("view_opportunity", {})
>>> step.tool_result["status"], step.done
('ok', False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import salesgym
from salesgym.core.observation_text import observation_text

OVER = "The episode is over."


@dataclass(frozen=True)
class SplitTask:
    """One world of a frozen split (``splits/``): the registered environment, the territory's fields (which
    make its arguments, as ``salesgym bench`` makes them) and its seed."""

    split: str
    env_id: str
    territory: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.territory["id"])

    @property
    def seed(self) -> int:
        return int(self.territory["seed"])

    def start(self) -> ToolEpisode:
        """This world's episode, made and reset exactly as the benchmark runner does."""
        from salesgym.bench.runner import make_env
        from salesgym.bench.splits import Territory

        env = make_env(Territory(**self.territory), None, self.env_id)
        return ToolEpisode.start(self.env_id, self.seed, env=env)


def split_tasks(split: str, splits_dir: Path | str | None = None, limit: int | None = None) -> list[SplitTask]:
    """The worlds of a split manifest, in order (``limit``: the first ones). A private split without its key
    and an unknown or tampered manifest are refused with :class:`salesgym.bench.splits.SplitError`."""
    from salesgym.bench.splits import load

    manifest = load(split, splits_dir)
    return [SplitTask(manifest.name, manifest.env_id, t.to_dict()) for t in manifest.limited(limit)]


@dataclass(frozen=True)
class ToolStep:
    """What one call did: the observation text, the step's reward and how the episode stands."""

    text: str
    reward: float
    terminated: bool
    truncated: bool
    tool_result: dict[str, Any]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class ToolEpisode:
    """An environment after ``reset``: ``call`` steps it, ``rewards`` and ``episode_return`` add up."""

    env: Any
    env_id: str
    seed: int
    instructions: str
    first_text: str
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False

    @classmethod
    def start(
        cls,
        env_id: str,
        seed: int,
        *,
        make_kwargs: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        env: Any = None,
    ) -> ToolEpisode:
        """Make ``env_id`` (or take ``env``, already made) and reset it at ``seed``."""
        if env is None:
            env = salesgym.make(env_id, **dict(make_kwargs or {}))
        obs, info = env.reset(seed=seed, options=options)
        return cls(env, env_id, seed, str(info["instructions"]), observation_text(obs))

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @property
    def episode_return(self) -> float:
        """The undiscounted sum of the step rewards: the return every adapter trains on."""
        return float(sum(self.rewards))

    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.env.mcp_tools()]

    def call(self, tool: Any, args: Any) -> ToolStep:
        """Step the call ``{"tool": tool, "args": args}``. After the end nothing moves: the answer says so."""
        if self.done:
            return ToolStep(OVER, 0.0, self.terminated, self.truncated, {"status": "error", "output": {"error": OVER}})
        obs, reward, terminated, truncated, info = self.env.step({"tool": tool, "args": args})
        return self._record(obs, reward, terminated, truncated, info)

    def act(self, action: Any) -> ToolStep:
        """Step any action as it is (a text the environment refuses counts as one invalid action)."""
        if self.done:
            return self.call("", {})
        return self._record(*self.env.step(action))

    def _record(self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]) -> ToolStep:
        self.rewards.append(float(reward))
        self.terminated, self.truncated = bool(terminated), bool(truncated)
        return ToolStep(observation_text(obs), float(reward), self.terminated, self.truncated, info["tool_result"])

    def report(self) -> dict[str, Any]:
        """Operator-side facts for a stack's metadata: the return, the steps, the event-log hash, and the
        verifier's score once the episode is over."""
        out: dict[str, Any] = {
            "env_id": self.env_id,
            "seed": self.seed,
            "episode_return": self.episode_return,
            "steps": len(self.rewards),
            "terminated": self.terminated,
            "truncated": self.truncated,
            "event_log_hash": self.env.event_log_hash(),
        }
        if self.done:
            out["score"] = self.env.score()
        return out
