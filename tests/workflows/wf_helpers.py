"""Small helpers for the workflows tests: an environment on one template, a call, the reference solution."""

from __future__ import annotations

from typing import Any

import salesgym
from salesgym.envs.workflows.tasks.model import resolve


def workflow(template: str, seed: int = 3, **kwargs: Any) -> Any:
    env = salesgym.make("workflows-v0", template=template, **kwargs)
    env.reset(seed=seed)
    return env


def step(env: Any, tool: str, **args: Any) -> dict[str, Any]:
    _, reward, terminated, _, info = env.step({"tool": tool, "args": args})
    return {**info["tool_result"], "reward": reward, "terminated": terminated}


def play_reference(env: Any, stop: int | None = None) -> list[dict[str, Any]]:
    """Play the instance's reference solution (all of it, or its first ``stop`` calls); the tool results."""
    secret = env._world.secret
    outputs: list[dict[str, Any]] = []
    results = []
    for action in secret.solution[:stop]:
        _, _, _, _, info = env.step(resolve(action, secret.params, outputs))
        outputs.append(info["tool_result"]["output"])
        results.append(info["tool_result"])
    return results


def params(env: Any) -> dict[str, Any]:
    return dict(env._world.secret.params)
