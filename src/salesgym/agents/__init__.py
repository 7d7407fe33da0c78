"""Policies that play salesgym through observations and tools only (docs/architecture.md, layers).

Policies live per environment family (``agents/territory/``, ``agents/desk/`` ...); each family's package
defines a :class:`~salesgym.agents.base.PolicySuite` named ``SUITE``: the ranked baselines, the exploit probes,
the operator-side references (which read hidden truth) and the anchor the probes are compared with. A family's
registered spec names its suite (``FamilySpec.policies``). ``make_policy(name, seed, hidden_truth=None,
family=None)`` builds one by name (without a family: the first registered one, the territory, as it always was).
"""

from __future__ import annotations

import importlib
from typing import Any

import salesgym
from salesgym.agents.base import Policy, PolicySuite

__all__ = ["Policy", "PolicySuite", "make_policy", "suite"]


def suite(family: str | None = None) -> PolicySuite:
    """The registered policies of one environment family (what its spec's ``policies`` names); without a family,
    the first registered one's."""
    try:
        spec = salesgym.family_named(family) if family is not None else next(iter(salesgym.families().values()))
        where = spec.policies
    except ValueError as err:
        raise ValueError(f"no policies registered for family {family!r}: {err}") from None
    module, attr = where.split(":")
    found = getattr(importlib.import_module(module), attr)
    if not isinstance(found, PolicySuite):
        raise ValueError(f"family {family!r}: {where} is a {type(found).__name__}, not a PolicySuite")
    return found


def make_policy(name: str, seed: int, hidden_truth: dict[str, Any] | None = None, family: str | None = None) -> Policy:
    """A fresh policy by registered name; only reference policies (the oracle) receive ``hidden_truth``."""
    s = suite(family)
    cls = s.policies.get(name)
    if cls is None:
        raise ValueError(f"unknown policy {name!r}; valid names: {', '.join(s.policies)}")
    if s.reads_truth(name):
        return cls(seed, hidden_truth)
    return cls(seed)
