"""`idle`: declares the task done at once. The floor: every workflow needs at least one change, so it fails
every task (a test pins that)."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, call


class Idle(Policy):
    name = "idle"

    def act(self, observation: dict[str, Any]) -> Action:
        return call("finish_task", summary="nothing to do")
