"""`idle`: marks the task done at once (on the task desk), having changed nothing. A floor: it passes no task."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, StopEpisode, call


class UIIdle(Policy):
    name = "idle"

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        button = next((e for e in data["elements"] if e["id"] == "btn-finish_task"), None)
        if button is None:
            if data["url"].startswith("http://task."):
                raise StopEpisode("no finish button on the task desk")
            return call("goto", url="http://task.salesgym.test/")
        return call("click", bid=button["bid"])
