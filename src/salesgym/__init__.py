"""salesgym: enterprise selling as verifiable, reproducible RL environments for tool-using agents.

>>> import salesgym
>>> env = salesgym.make("territory-debug-v0")
>>> obs, info = env.reset(seed=3)
>>> sorted(obs)
['data', 'text']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from salesgym.core.family import FamilySpec

__version__ = "0.1.0"
__all__ = ["__version__", "env_class", "families", "family", "family_ids", "family_named", "make", "register",
           "registration", "registry"]

# id -> (entry point "module:Class", its family's spec "module:ATTR", default keyword arguments). A variant is a
# new line; a breaking change of dynamics bumps the version suffix.
_REGISTRY: dict[str, tuple[str, str, dict[str, Any]]] = {}


def register(env_id: str, entry_point: str, *, spec: str, **defaults: Any) -> None:
    """Register ``env_id``: the class at ``entry_point`` ("module:Class") made with ``defaults``, of the family
    whose :class:`~salesgym.core.family.FamilySpec` is at ``spec`` ("module:ATTR", imported when first needed)."""
    if env_id in _REGISTRY:
        raise ValueError(f"environment {env_id!r} is already registered")
    if entry_point.count(":") != 1 or spec.count(":") != 1:
        raise ValueError(f"{env_id}: entry_point and spec are 'module:ATTR', got {entry_point!r} and {spec!r}")
    _REGISTRY[env_id] = (entry_point, spec, defaults)


def registry() -> dict[str, dict[str, Any]]:
    return {k: {"entry_point": ep, **d} for k, (ep, _, d) in _REGISTRY.items()}


def registration(env_id: str) -> tuple[str, str, dict[str, Any]]:
    """What ``register`` was given for ``env_id``: (entry point, spec, defaults); registering them again in another
    interpreter makes the same environment there."""
    entry_point, spec, defaults = _entry(env_id)
    return entry_point, spec, dict(defaults)


def _entry(env_id: str) -> tuple[str, str, dict[str, Any]]:
    if env_id not in _REGISTRY:
        raise ValueError(f"unknown environment {env_id!r}; registered: {sorted(_REGISTRY)}")
    return _REGISTRY[env_id]


def _load(where: str) -> Any:
    module, attr = where.split(":")
    return getattr(importlib.import_module(module), attr)


def env_class(env_id: str) -> Any:
    """The class a registered id makes."""
    return _load(_entry(env_id)[0])


def family(env_id: str) -> FamilySpec:
    """The family a registered id belongs to: everything the benchmark, the service and the reports may know."""
    found: FamilySpec = _load(_entry(env_id)[1])
    return found


def families() -> dict[str, FamilySpec]:
    """Every registered family by name, in registration order (the first is the benchmark's default)."""
    out: dict[str, FamilySpec] = {}
    for env_id in dict.fromkeys(_REGISTRY):
        spec = family(env_id)
        out.setdefault(spec.name, spec)
    return out


def family_named(name: str) -> FamilySpec:
    """A registered family by its name (``ValueError`` naming the known ones)."""
    known = families()
    if name not in known:
        raise ValueError(f"unknown family {name!r}; known: {', '.join(known)}")
    return known[name]


def family_ids(name: str) -> list[str]:
    """The registered ids of family ``name``, in registration order."""
    return [env_id for env_id, (_, spec, _) in _REGISTRY.items() if _load(spec).name == name]


def make(env_id: str, **kwargs: Any) -> Any:
    """Create a registered environment; keyword arguments override the registered defaults."""
    cls = env_class(env_id)
    return cls(**{**_entry(env_id)[2], **kwargs})


# Each family: its spec (envs/<family>/family.py) and its ids.
_TERRITORY = "salesgym.envs.territory.family:SPEC"
register("territory-v0", "salesgym.envs.territory.env:TerritoryEnv", spec=_TERRITORY)
register("territory-debug-v0", "salesgym.envs.territory.env:TerritoryEnv", spec=_TERRITORY, n_opportunities=4,
         horizon_days=30)
register("territory-100-v0", "salesgym.envs.territory.env:TerritoryEnv", spec=_TERRITORY, n_opportunities=100,
         horizon_days=90)
_DESK = "salesgym.envs.desk.family:SPEC"
register("desk-v0", "salesgym.envs.desk.env:DeskEnv", spec=_DESK)
register("desk-debug-v0", "salesgym.envs.desk.env:DeskEnv", spec=_DESK, n_leads=8, shift_days=1)
_WORKFLOWS = "salesgym.envs.workflows.family:SPEC"
register("workflows-v0", "salesgym.envs.workflows.env:WorkflowsEnv", spec=_WORKFLOWS)
register("workflows-debug-v0", "salesgym.envs.workflows.env:WorkflowsEnv", spec=_WORKFLOWS, tier=1, max_calls=30)
# computer use: the same tasks through the apps' web pages in a real Chromium (extra ``ui``; docs/computer-use.md)
_UI = "salesgym.envs.workflows_ui.family:SPEC"
register("workflows-ui-v0", "salesgym.envs.workflows_ui.env:WorkflowsUIEnv", spec=_UI)
register("workflows-ui-debug-v0", "salesgym.envs.workflows_ui.env:WorkflowsUIEnv", spec=_UI, tier=1, max_calls=30,
         max_actions=40)
