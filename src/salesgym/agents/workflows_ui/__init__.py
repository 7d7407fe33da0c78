"""The computer-use family's policies: floors (idle, a random clicker) and the operator-side reference that
plays each template's UI blueprint through the browser. ``SUITE`` is what the benchmark runs."""

from __future__ import annotations

from salesgym.agents.base import PolicySuite
from salesgym.agents.workflows_ui.idle import UIIdle
from salesgym.agents.workflows_ui.random_clicker import UIRandom
from salesgym.agents.workflows_ui.reference import UIReference

SUITE = PolicySuite(
    policies={p.name: p for p in (UIIdle, UIRandom, UIReference)},
    baselines=("idle", "random"),
    exploits=(),
    reference=("ui-reference",),
    anchor="idle",
    floors=("idle", "random"),
)
