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
from salesgym.agents.territory.idle import Idle
from salesgym.agents.territory.oracle import Oracle
from salesgym.agents.territory.paired import PAIRED
from salesgym.agents.territory.random_policy import RandomPolicy

PURE_PROBES = (SpamAll, InflateStages, AlwaysDiscount, CycleStages, Forger)
SUITE = PolicySuite(
    policies={
        p.name: p
        for p in (Idle, RandomPolicy, CrmStage, ExpectedValue, EarliestDeadline, GreedySingle, *PURE_PROBES,
                  *PAIRED, Oracle)
    },
    baselines=("idle", "random", "crm-stage", "expected-value", "earliest-deadline", "greedy-single"),
    exploits=tuple(p.name for p in (*PURE_PROBES, *PAIRED)),
    reference=("oracle",),
    anchor="expected-value",
    paired={p.name: ExpectedValue.name for p in PAIRED},
    floors=("idle", "random"),
)
