"""`random`: a random clicker. Each turn it picks an interactive element of the page (or the browser's back
button) and clicks it, types a string it has seen into a field, or picks an option of a select; it never
finishes on purpose. A floor: it passes no task (the verifier fails any change the request did not ask for)."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, call

WORDS = ("test", "2026-07-27T10:00:00Z", "hello@example.com", "Europe/London", "yes", "1")


class UIRandom(Policy):
    name = "random"

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        elements = [e for e in data["elements"] if e["visible"] and not e["disabled"] and e["tag"] != "option"]
        roll = self.rng.random()
        if not elements or roll < 0.05:
            return call("go_back")
        e = self.rng.choice(elements)
        if e["tag"] in ("input", "textarea") and e["type"] not in ("checkbox", "radio"):
            seen = [x["label"] for x in data["elements"] if x["label"]] + list(WORDS)
            return call("fill", bid=e["bid"], value=self.rng.choice(seen)[:60])
        if e["tag"] == "select":
            return call("select_option", bid=e["bid"], options=self.rng.choice(["", *WORDS[:1]]))
        return call("click", bid=e["bid"])
