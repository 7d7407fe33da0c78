"""Reference episodes for the stack adapters' tests: a registered policy plays a world in process, and
the test replays its calls through a stack and compares the return, the event-log hash and the score."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from salesgym.agents import make_policy
from salesgym.agents.base import Episode

# one non-trivial policy per family, so every family's full episode runs through each stack
POLICIES = {"territory": "expected-value", "desk": "greedy-by-need", "workflows": "first-plausible"}


@dataclass(frozen=True)
class Reference:
    actions: list[dict[str, Any]]
    rewards: list[float]
    episode_return: float
    event_log_hash: str
    score: dict[str, Any]
    end: str


def reference(make_env: Callable[[], Any], family: str, seed: int, policy_seed: int = 1) -> Reference:
    """Play ``POLICIES[family]`` at ``seed`` to the episode's end in a fresh environment."""
    env = make_env()
    episode = Episode(env, make_policy(POLICIES[family], policy_seed, family=family), seed)
    steps = list(episode)
    assert steps and episode.end == "terminated", episode.end
    actions = [s.action for s in steps]
    assert all(isinstance(a, dict) and set(a) <= {"tool", "args"} for a in actions)
    rewards = [float(s.reward) for s in steps]
    return Reference(actions, rewards, float(sum(rewards)), env.event_log_hash(), env.score(), str(episode.end))


def hermes(action: dict[str, Any]) -> str:
    """A model reply that makes ``action`` in the Hermes / Qwen tool-call format, with some prose around it."""
    call = json.dumps({"name": action["tool"], "arguments": action.get("args") or {}})
    return f"Next I act.\n<tool_call>\n{call}\n</tool_call>"
