"""A scripted seller: memory + playbook + "which deal next", with safe waiting built in.

Subclasses choose the order in which deals are worked (:meth:`ScriptedSeller.order`) or override
:meth:`ScriptedSeller.choose` entirely. The loop here guarantees the contract every policy keeps: a
well-formed action every step, ``wait until next_week`` once the week's seller hours are gone, short
waits until the next meeting or booking starts when nothing is useful, and no repeating of a call the
environment just refused (so the invalid-action ceiling is never reached).
"""

from __future__ import annotations

import json
from typing import Any

from salesgym.agents.base import Action, Policy, wait
from salesgym.agents.territory.memory import Deal, SellerMemory
from salesgym.agents.territory.playbook import Move, Playbook, Style
from salesgym.envs.territory.calendar import HOURS_PER_WEEK

RETRY_AFTER_H = 8.0  # a refused call may be tried again after this many business hours
MAX_INVALID = 30  # past this many refusals, only wait (the environment's ceiling is higher)
IDLE_STEP_H = 2.0  # when idle, look again at least this often


class ScriptedSeller(Policy):
    name = "scripted"
    style = Style()
    weekly_reserve_h = 0.0  # seller hours a week it leaves unplanned (kept for other work)

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.mem = SellerMemory()
        self.book = self.make_playbook()
        self.refused: dict[str, float] = {}

    def make_playbook(self) -> Playbook:
        return Playbook(self.mem, self.style)

    # -- the loop ---------------------------------------------------------------------------------------
    def act(self, observation: dict[str, Any]) -> Action:
        self.mem.observe(observation)
        if self.out_of_hours():
            return self._send(self.until_monday())
        move = self.choose() if self.mem.invalid < MAX_INVALID else None
        return self._send(move.action if move is not None else self.idle())

    def out_of_hours(self) -> bool:
        """This week's seller hours are gone (or down to the reserve): only waiting until Monday remains."""
        return self.mem.seller_left() <= self.weekly_reserve_h

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.mem.record(self.last_action, tool_result)
        if tool_result.get("status") != "ok" and self.last_action is not None:
            self.refused[self._key(self.last_action)] = self.mem.now

    def _send(self, action: Action) -> Action:
        self.last_action = action
        return action

    @staticmethod
    def _key(action: Action) -> str:
        return json.dumps(action, sort_keys=True)

    def allowed(self, move: Move | None) -> bool:
        if move is None:
            return False
        when = self.refused.get(self._key(move.action))
        return when is None or self.mem.now - when >= RETRY_AFTER_H

    # -- what to do -------------------------------------------------------------------------------------
    def order(self, deals: list[Deal]) -> list[Deal]:
        """Deals in the order this seller works them (default: the portfolio's order)."""
        return deals

    def choose(self) -> Move | None:
        for deal in self.order(self.mem.open_deals()):
            move = self.book.next_move(deal)
            if self.allowed(move):
                return move
        return None

    def idle(self) -> Action:
        """Nothing useful now: wait until the next meeting/booking starts, looking again every few hours."""
        nxt = self.mem.next_interest()
        if nxt is None:
            return wait(until="next_event") if self.pending_buyers() else wait(hours=IDLE_STEP_H * 2)
        return wait(hours=min(IDLE_STEP_H, max(0.25, nxt - self.mem.now)))

    def until_monday(self) -> Action:
        """``wait until next_week``, except right at a week boundary where the environment's float clock can
        make that a zero-hour wait: step 0.25 h instead."""
        into_week = self.mem.now % HOURS_PER_WEEK
        if into_week < 0.05 or HOURS_PER_WEEK - into_week < 0.3:
            return wait(hours=0.25)
        return wait(until="next_week")

    def pending_buyers(self) -> bool:
        return any(d.pending for d in self.mem.open_deals())

    # -- shared estimates -------------------------------------------------------------------------------
    def hours_left(self) -> float:
        """Seller hours still available in the episode: this week's rest plus full weeks after it."""
        weekly = self.mem.full_capacity.get("seller", 30.0)
        days_this_week = 5 - self.mem.day % 5
        later_days = max(0, self.mem.days_left - days_this_week)
        return max(0.0, self.mem.seller_left()) + weekly * later_days / 5
