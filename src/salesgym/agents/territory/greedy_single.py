"""`greedy-single`: push one opportunity at a time to the end, biggest first.

It picks the open deal with the highest public value, works only that deal with the standard playbook
(waiting while the buyer is busy), and moves on when the deal closes, is dropped, can no longer close in
time, or has made no verified progress for ``PATIENCE_DAYS`` business days. Single-threaded focus wastes the
waiting time that parallel deals would fill: a baseline for "capacity must be allocated".
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.territory.memory import Deal
from salesgym.agents.territory.playbook import Move, Style
from salesgym.agents.territory.seller import ScriptedSeller

PATIENCE_DAYS = 6


class GreedySingle(ScriptedSeller):
    name = "greedy-single"
    style = Style(warm_economic_buyer=True, follow_up=True)

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.focus: str | None = None
        self.given_up: set[str] = set()
        self.progress: tuple[int, float] = (0, 0.0)  # (milestone, day it was reached)

    def pick(self) -> Deal | None:
        deal = self.mem.deals.get(self.focus) if self.focus else None
        if deal is not None and deal.open and deal.id not in self.given_up:
            if deal.stage > self.progress[0]:
                self.progress = (deal.stage, self.mem.day)
            stuck = self.mem.day - self.progress[1] > PATIENCE_DAYS
            if not (stuck or self.book.capped(deal)):
                return deal
            self.given_up.add(deal.id)
        rest = [d for d in self.mem.open_deals() if d.id not in self.given_up]
        if not rest:
            return None
        deal = max(rest, key=lambda d: (d.value_mid, d.id))
        self.focus, self.progress = deal.id, (deal.stage, self.mem.day)
        return deal

    def choose(self) -> Move | None:
        deal = self.pick()
        if deal is None:
            return None
        move = self.book.next_move(deal)
        return move if self.allowed(move) else None
