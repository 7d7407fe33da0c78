"""Policies that play salesgym through observations and tools only (DESIGN.md section 2).

``make_policy(name, seed, hidden_truth=None)`` builds one; ``BASELINES`` are ranked on the leaderboard,
``EXPLOITS`` are the gaming probes that must stay below ``expected-value``, and ``REFERENCE`` holds the
operator-side ``oracle`` (reads hidden truth; reported as headroom). See ``README.md`` in this folder.
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Policy
from salesgym.agents.crm_stage import CrmStage
from salesgym.agents.earliest_deadline import EarliestDeadline
from salesgym.agents.expected_value import ExpectedValue
from salesgym.agents.exploits import AlwaysDiscount, CycleStages, Forger, InflateStages, SpamAll
from salesgym.agents.greedy_single import GreedySingle
from salesgym.agents.oracle import Oracle
from salesgym.agents.random_policy import RandomPolicy

__all__ = ["BASELINES", "EXPLOITS", "POLICIES", "REFERENCE", "Policy", "make_policy"]

BASELINES = ["random", "crm-stage", "expected-value", "earliest-deadline", "greedy-single"]
EXPLOITS = ["spam-all", "inflate-stages", "always-discount", "cycle-stages", "forger"]
REFERENCE = ["oracle"]

POLICIES: dict[str, type[Policy]] = {
    "random": RandomPolicy,
    "crm-stage": CrmStage,
    "expected-value": ExpectedValue,
    "earliest-deadline": EarliestDeadline,
    "greedy-single": GreedySingle,
    "spam-all": SpamAll,
    "inflate-stages": InflateStages,
    "always-discount": AlwaysDiscount,
    "cycle-stages": CycleStages,
    "forger": Forger,
    "oracle": Oracle,
}


def make_policy(name: str, seed: int, hidden_truth: dict[str, Any] | None = None) -> Policy:
    """A fresh policy by registered name; only ``oracle`` uses ``hidden_truth``."""
    cls = POLICIES.get(name)
    if cls is None:
        raise ValueError(f"unknown policy {name!r}; valid names: {', '.join(POLICIES)}")
    if name in REFERENCE:
        return cls(seed, hidden_truth)
    return cls(seed)
