"""`idle`: does nothing but wait out the shift. The floor a policy must beat to be doing anything at all:
it earns exactly nothing (no buyer converts without a call)."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy
from salesgym.agents.desk.seller import wait_out


class Idle(Policy):
    name = "idle"

    def act(self, observation: dict[str, Any]) -> Action:
        return wait_out(observation["data"]["time"]["minutes_left"])
