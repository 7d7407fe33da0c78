"""salesgym: enterprise selling as verifiable, reproducible RL environments for tool-using agents.

>>> import salesgym
>>> env = salesgym.make("territory-debug-v0")
>>> obs, info = env.reset(seed=3)
>>> sorted(obs)
['data', 'text']
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "env_class", "make", "register", "registry"]

# id -> (entry point "module:Class", default keyword arguments). A variant is a new line; a breaking
# change of dynamics bumps the version suffix.
_REGISTRY: dict[str, tuple[str, dict[str, Any]]] = {}


def register(env_id: str, entry_point: str, **defaults: Any) -> None:
    if env_id in _REGISTRY:
        raise ValueError(f"environment {env_id!r} is already registered")
    _REGISTRY[env_id] = (entry_point, defaults)


def registry() -> dict[str, dict[str, Any]]:
    return {k: {"entry_point": ep, **d} for k, (ep, d) in _REGISTRY.items()}


def env_class(env_id: str) -> Any:
    """The class a registered id makes (its class attributes describe the family: ablations, options)."""
    if env_id not in _REGISTRY:
        raise ValueError(f"unknown environment {env_id!r}; registered: {sorted(_REGISTRY)}")
    module, cls = _REGISTRY[env_id][0].split(":")
    return getattr(importlib.import_module(module), cls)


def make(env_id: str, **kwargs: Any) -> Any:
    """Create a registered environment; keyword arguments override the registered defaults."""
    cls = env_class(env_id)
    return cls(**{**_REGISTRY[env_id][1], **kwargs})


register("territory-v0", "salesgym.envs.territory.env:TerritoryEnv")
register("territory-debug-v0", "salesgym.envs.territory.env:TerritoryEnv", n_opportunities=4, horizon_days=30)
register("territory-100-v0", "salesgym.envs.territory.env:TerritoryEnv", n_opportunities=100, horizon_days=90)
register("desk-v0", "salesgym.envs.desk.env:DeskEnv")
register("desk-debug-v0", "salesgym.envs.desk.env:DeskEnv", n_leads=8, shift_days=1)
register("workflows-v0", "salesgym.envs.workflows.env:WorkflowsEnv")
register("workflows-debug-v0", "salesgym.envs.workflows.env:WorkflowsEnv", tier=1, max_calls=30)
# computer use: the same tasks through the apps' web pages in a real Chromium (extra ``ui``; docs/computer-use.md)
register("workflows-ui-v0", "salesgym.envs.workflows_ui.env:WorkflowsUIEnv")
register("workflows-ui-debug-v0", "salesgym.envs.workflows_ui.env:WorkflowsUIEnv", tier=1, max_calls=30, max_actions=40)
