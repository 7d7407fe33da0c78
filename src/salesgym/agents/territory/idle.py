"""`idle`: does nothing but wait, week after week. The floor a policy must beat to be doing anything at all.

It earns exactly nothing (no milestone moves without the seller), so a normalised score puts every policy
that scores below it, or below ``random``, at or under zero.
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, wait


class Idle(Policy):
    name = "idle"

    def act(self, observation: dict[str, Any]) -> Action:
        return wait(until="next_week")
