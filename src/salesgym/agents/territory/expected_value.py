"""`expected-value`: work the deals with the most expected value per hour of seller capacity.

The strongest heuristic seller. It runs the full playbook (research before outreach, messages and agendas
that reference researched or discovered keywords, multi-threaded discovery until the economic buyer
confirms budget and sponsors, SE bookings with lead time, the approvals discovery said the account needs,
a modest opening discount, escalation when the buyer needs more than our authority, an action plan inside
the target quarter, procurement on the final terms, the contract on verified Commit), drops deals when the
buyer gives a disqualification reason, and opens a new deal when the seller hours left in the episode can
carry it, or when nothing else is to be done with this week's hours.

Priority of a deal = value midpoint x P(win | what we know) / seller hours still needed. Deeper deals need
fewer hours, so the seller finishes what it started before spreading thin.
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.territory.memory import Deal
from salesgym.agents.territory.playbook import Move, Style
from salesgym.agents.territory.seller import ScriptedSeller
from salesgym.envs.territory.contract import HOURS_PER_WEEK

STAGE_P = (0.35, 0.45, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0)  # P(win) by verified milestone, before evidence of trouble
HOURS_TO_GO = (16.0, 12.0, 8.0, 6.0, 5.0, 4.0, 1.0, 0.0)  # seller hours still needed from each milestone
OPEN_COST = 14.0  # hours reserved when a new deal is opened
RATIONED = ("se", "legal")  # the internal teams whose hours are kept for the deals that come first


class ExpectedValue(ScriptedSeller):
    name = "expected-value"
    weekly_reserve_h = 0.5  # half an hour a week for the rest of the job (the paired probes game in it)
    # generous SE and review hours where the week has them (the odds rise with every hour), less when it does not
    style = Style(se_hours=10.0, se_hours_least=4.0, review_hours=6.0, review_hours_least=2.0)

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self._priorities: dict[str, float] = {}

    def win_probability(self, deal: Deal) -> float:
        p = STAGE_P[deal.stage]
        p *= 0.7 ** deal.tech_failures * 0.9 ** min(deal.competitor_moves, 3)
        if deal.dq_reason_seen:
            return 0.0
        if self.book.capped(deal):
            p *= 0.3
        if deal.frozen:
            p *= 0.6
        if deal.discoveries >= 3 and deal.stage < 2:
            p *= 0.6
        return p

    def hours_to_go(self, deal: Deal) -> float:
        return 2.0 if self.book.capped(deal) else HOURS_TO_GO[deal.stage]

    def priority(self, deal: Deal) -> float:
        known = self._priorities.get(deal.id)  # asked of every deal several times a step: kept for the step
        if known is None:
            known = self._priorities[deal.id] = \
                deal.value_mid * self.win_probability(deal) / max(1.0, self.hours_to_go(deal))
        return known

    @staticmethod
    def started(deal: Deal) -> bool:
        return deal.found or bool(deal.account_id)

    def booking_rank(self, deal: Deal) -> float:
        """Who gets scarce internal hours first: the deal with the most expected value per hour (lower ranks
        first). A different allocation rule is a different override of this one method."""
        return -self.priority(deal)

    def choose(self) -> Move | None:
        """The first deal, by priority, with a move allowed now (a booking of scarce hours only if it fits); a new
        deal only if the hours left can carry it, unless nothing else is to be done (hours left idle earn nothing)."""
        self._priorities = {}  # memory does not change while a step is chosen
        deals = sorted(self.mem.open_deals(), key=lambda d: (-self.priority(d), d.id))
        committed = sum(self.hours_to_go(d) for d in deals if self.started(d))
        budget = self.hours_left()
        waiting: list[Deal] = []  # deals not opened yet for want of hours
        for deal in deals:
            if not self.started(deal) and committed + OPEN_COST > budget:
                waiting.append(deal)
                continue
            move = self.book.next_move(deal)
            if not self.allowed(move):
                continue
            assert move is not None
            resource = booked_resource(move)
            if resource is None or self.fits(deal, resource, float(move.action["args"]["hours"])):
                return move
        for deal in waiting:
            move = self.book.next_move(deal)
            if self.allowed(move):
                return move
        return None

    # -- scarce internal hours ---------------------------------------------------------------------------------
    def fits(self, deal: Deal, resource: str, hours: float) -> bool:
        """Book only if the hours left of ``resource`` in the episode also cover what the deals ranked before
        this one (``booking_rank``) will still need: scarce hours are kept for the deals that come first."""
        if resource not in RATIONED:
            return True
        mine = self.booking_rank(deal)
        ahead = sum(self.still_needs(o, resource) for o in self.mem.open_deals()
                    if o.id != deal.id and (self.booking_rank(o), o.id) < (mine, deal.id))
        return ahead + hours <= self.hours_to_come(resource) + 1e-9

    def still_needs(self, deal: Deal, resource: str) -> float:
        """Hours of ``resource`` a deal that has started will still want (and has not booked yet)."""
        if self.mem.future_booking(deal, resource) is not None or self.mem.usable_booking(deal, resource) is not None:
            return 0.0
        if resource == "se" and not deal.tech_success and deal.stage >= 1 and "tech_eval" not in deal.pending:
            return self.book.se_hours(deal)
        approvals = deal.required_approvals or []
        if resource == "legal" and "legal" in approvals and deal.approvals.get("legal") != "approved":
            return self.book.review_hours(deal, "legal")
        return 0.0

    def hours_to_come(self, resource: str) -> float:
        """Hours of ``resource`` the rest of the episode still has: this week's rest and every later week."""
        weekly = self.mem.full_capacity.get(resource, 0.0)
        weeks = range(self.mem.week, int(self.mem.horizon // HOURS_PER_WEEK) + 1)
        return sum(max(0.0, weekly - self.mem.booked_hours(resource, w)) for w in weeks)


def booked_resource(move: Move) -> str | None:
    """The internal team a move books (None for any other call, and for cancellations)."""
    args = move.action["args"]
    return str(args["resource"]) if move.action["tool"] == "book_resource" and args.get("resource") else None
