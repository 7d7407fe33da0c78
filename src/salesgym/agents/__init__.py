"""Policies that play salesgym through observations and tools only (docs/architecture.md, layers).

Policies live per environment family (``agents/territory/``, later ``agents/desk/`` ...); each family's
package defines a :class:`~salesgym.agents.base.PolicySuite` named ``SUITE``: the ranked baselines, the
exploit probes, the operator-side references (which read hidden truth) and the anchor the probes are compared
with. ``make_policy(name, seed, hidden_truth=None, family="territory")`` builds one by name.
"""

from __future__ import annotations

import importlib
from typing import Any

from salesgym.agents.base import Policy, PolicySuite

__all__ = ["FAMILIES", "Policy", "PolicySuite", "make_policy", "suite"]

# environment family -> package holding its SUITE
FAMILIES = {"territory": "salesgym.agents.territory", "desk": "salesgym.agents.desk",
            "workflows": "salesgym.agents.workflows", "workflows-ui": "salesgym.agents.workflows_ui"}


def suite(family: str = "territory") -> PolicySuite:
    """The registered policies of one environment family."""
    module = FAMILIES.get(family)
    if module is None:
        raise ValueError(f"no policies registered for family {family!r}; known: {', '.join(FAMILIES)}")
    found: PolicySuite = importlib.import_module(module).SUITE
    return found


def make_policy(name: str, seed: int, hidden_truth: dict[str, Any] | None = None, family: str = "territory") -> Policy:
    """A fresh policy by registered name; only reference policies (the oracle) receive ``hidden_truth``."""
    s = suite(family)
    cls = s.policies.get(name)
    if cls is None:
        raise ValueError(f"unknown policy {name!r}; valid names: {', '.join(s.policies)}")
    if s.reads_truth(name):
        return cls(seed, hidden_truth)
    return cls(seed)
