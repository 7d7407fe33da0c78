"""The stall family's policies: two floors, a greedy seller, a probe and the operator-side oracle."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, PolicySuite, call


class Idle(Policy):
    name = "idle"

    def act(self, observation: dict[str, Any]) -> Action:
        return call("wait", hours=2)


class RandomPrices(Policy):
    name = "random"

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        left = [b for b in data["buyers"] if b not in data["sold"]]
        return call("offer", buyer_id=self.rng.choice(left), price=round(self.rng.uniform(1, 60), 2))


class Descending(Policy):
    """Offers every buyer 50, then lowers the price by 10 each round."""

    name = "descending"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        self.asked: dict[str, float] = {}

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        left = [b for b in data["buyers"] if b not in data["sold"]]
        buyer = min(left, key=lambda b: (-self.asked.get(b, 60.0), b))
        self.asked[buyer] = max(5.0, self.asked.get(buyer, 60.0) - 10)
        return call("offer", buyer_id=buyer, price=self.asked[buyer])


class Unknown(Policy):
    """A probe: offers to a buyer that does not exist (every call refused)."""

    name = "unknown-buyer"

    def act(self, observation: dict[str, Any]) -> Action:
        return call("offer", buyer_id="nobody", price=1.0)


class Oracle(Policy):
    """Reads the hidden budgets and asks each buyer exactly its budget."""

    name = "oracle"

    def act(self, observation: dict[str, Any]) -> Action:
        assert self.hidden_truth is not None
        budgets = self.hidden_truth["budgets"]
        left = [b for b in observation["data"]["buyers"] if b not in observation["data"]["sold"]]
        return call("offer", buyer_id=left[0], price=budgets[left[0]])


SUITE = PolicySuite(
    policies={p.name: p for p in (Idle, RandomPrices, Descending, Unknown, Oracle)},
    baselines=("idle", "random", "descending"),
    exploits=("unknown-buyer",),
    reference=("oracle",),
    anchor="descending",
    floors=("idle", "random"),
)
