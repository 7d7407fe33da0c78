"""The workflows family's policies: baselines and the operator-side reference solver.

Each policy is one readable file; ``SUITE`` is what the benchmark runs. See ``README.md`` in this folder.
"""

from __future__ import annotations

from salesgym.agents.base import PolicySuite
from salesgym.agents.workflows.first_plausible import FirstPlausible
from salesgym.agents.workflows.idle import Idle
from salesgym.agents.workflows.random_policy import RandomPolicy
from salesgym.agents.workflows.reference import Reference

SUITE = PolicySuite(
    policies={p.name: p for p in (Idle, RandomPolicy, FirstPlausible, Reference)},
    baselines=("idle", "random", "first-plausible"),
    exploits=(),
    reference=("reference",),
    anchor="first-plausible",
    floors=("idle", "random"),
)
