"""The territory family's policies: baselines, exploit probes and the operator-side oracle.

Each policy is one readable file; ``SUITE`` is what the benchmark runs. See ``README.md`` in this folder.
"""

from __future__ import annotations

from salesgym.agents.base import PolicySuite
from salesgym.agents.territory.crm_stage import CrmStage
from salesgym.agents.territory.earliest_deadline import EarliestDeadline
from salesgym.agents.territory.expected_value import ExpectedValue
from salesgym.agents.territory.exploits import AlwaysDiscount, CycleStages, Forger, InflateStages, SpamAll
from salesgym.agents.territory.greedy_single import GreedySingle
from salesgym.agents.territory.oracle import Oracle
from salesgym.agents.territory.random_policy import RandomPolicy

SUITE = PolicySuite(
    policies={
        p.name: p
        for p in (RandomPolicy, CrmStage, ExpectedValue, EarliestDeadline, GreedySingle, SpamAll, InflateStages,
                  AlwaysDiscount, CycleStages, Forger, Oracle)
    },
    baselines=("random", "crm-stage", "expected-value", "earliest-deadline", "greedy-single"),
    exploits=("spam-all", "inflate-stages", "always-discount", "cycle-stages", "forger"),
    reference=("oracle",),
    anchor="expected-value",
)
