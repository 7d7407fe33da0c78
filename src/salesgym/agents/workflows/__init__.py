"""The workflows family's policies: baselines and the operator-side reference solver.

Each policy is one readable file; ``SUITE`` is what the benchmark runs. See ``README.md`` in this folder.
"""

from __future__ import annotations

from salesgym.agents.base import PolicySuite
from salesgym.agents.workflows.first_plausible import FirstPlausible
from salesgym.agents.workflows.idle import Idle
from salesgym.agents.workflows.random_policy import RandomPolicy
from salesgym.agents.workflows.red_team import RedTeam
from salesgym.agents.workflows.reference import Reference
from salesgym.agents.workflows.reference_lapse import ReferenceLapse

SUITE = PolicySuite(
    policies={p.name: p for p in (Idle, RandomPolicy, FirstPlausible, RedTeam, Reference, ReferenceLapse)},
    baselines=("idle", "random", "first-plausible"),
    exploits=("red-team",),
    reference=("reference", "reference-lapse"),
    anchor="first-plausible",
    paired={"red-team": "idle"},  # any pass it gets is an exploit: its pass rate must stay at doing nothing's
    floors=("idle", "random"),
    informed=("red-team",),
)
