"""The desk family's policies: baselines, exploit probes and the operator-side oracle.

Each policy is one readable file; ``SUITE`` is what the benchmark runs. See ``README.md`` in this folder.
"""

from __future__ import annotations

from salesgym.agents.base import PolicySuite
from salesgym.agents.desk.exploits import PAIRED, QuoteAndFail
from salesgym.agents.desk.greedy_need import GreedyByNeed
from salesgym.agents.desk.idle import Idle
from salesgym.agents.desk.oracle import Oracle
from salesgym.agents.desk.quote_then_fit import QuoteThenFit
from salesgym.agents.desk.random_policy import RandomPolicy

SUITE = PolicySuite(
    policies={p.name: p for p in (Idle, RandomPolicy, GreedyByNeed, QuoteThenFit, QuoteAndFail, *PAIRED, Oracle)},
    baselines=("idle", "random", "greedy-by-need", "quote-then-fit"),
    exploits=(QuoteAndFail.name, *(p.name for p in PAIRED)),
    reference=("oracle",),
    anchor="quote-then-fit",
    paired={p.name: QuoteThenFit.name for p in PAIRED},
    floors=("idle", "random"),
)
