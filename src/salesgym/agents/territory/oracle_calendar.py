"""The weeks of internal hours, as the oracle plans them: what a deal still has to book, whether that fits the
weeks to come early enough for the buyer's answer to land inside the episode, booking it with the lead time, and
freeing an earlier week from a lower-ranked deal while its booking can still be cancelled for a refund."""

from __future__ import annotations

import math
from collections.abc import Callable

from salesgym.agents.base import Action, call
from salesgym.agents.territory.memory import Booking, Deal
from salesgym.agents.territory.oracle_beliefs import OracleBeliefs
from salesgym.agents.territory.oracle_rules import TEAMS, TECH_DAYS, USABLE_H
from salesgym.agents.territory.playbook import Move
from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    APPROVAL_RESOURCE,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    MIN_BOOKING_HOURS,
)


class OracleCalendar(OracleBeliefs):
    """The oracle's bookings of internal hours (SE, legal, procurement, management) on top of its beliefs."""

    def to_book(self, deal: Deal) -> list[tuple[str, str, float]]:
        """(purpose, resource, hours) the deal still has to book to close, in the order it wants them."""
        out: list[tuple[str, str, float]] = []
        if not deal.tech_success and self.booking(deal, "tech_eval") is None and "tech_eval" not in deal.pending:
            out.append(("tech_eval", "se", self.se_hours(deal)))
        for kind in self.required_approvals(deal) or []:
            if self.approved(deal, kind) or self.booking(deal, kind) is not None or f"approval:{kind}" in deal.pending:
                continue
            out.append((kind, APPROVAL_RESOURCE[kind], self.review_hours(deal, kind)))
        want = self.need_discount(deal)
        if deal.agreed is None and want > self.mem.authority + 1e-9 and deal.mgmt_approved < want - 1e-9 and \
                self.booking(deal, "discount") is None:
            out.append(("discount", "management", MIN_BOOKING_HOURS["discount_approval"]))
        return out

    def still_needs(self, deal: Deal) -> dict[str, float]:
        """Internal hours the deal still needs to close, per team (what is booked already is not counted)."""
        need = dict.fromkeys(TEAMS, 0.0)
        for _, resource, hours in self.to_book(deal):
            need[resource] += hours
        return need

    # -- the weeks of internal hours ------------------------------------------------------------------------
    def process_days(self, purpose: str) -> float:
        """Business days from using a booking for ``purpose`` to the buyer's answer."""
        if purpose in APPROVAL_DAYS:
            return APPROVAL_DAYS[purpose] * self.slow_reviews
        return TECH_DAYS if purpose == "tech_eval" else 1.0

    def free_weeks(self) -> dict[tuple[str, int], float]:
        """Hours of each internal team not booked yet, per week of the episode."""
        last = int(self.mem.horizon // HOURS_PER_WEEK)
        return {(r, w): self.mem.full_capacity.get(r, 0.0) - self.mem.booked_hours(r, w)
                for r in TEAMS for w in range(self.mem.week, last + 1)}

    def place(self, deal: Deal, free: dict[tuple[str, int], float], only: tuple[str, ...] = ()) -> bool:
        """Fit the deal's remaining bookings (or those for ``only``) into ``free`` (hours left per team and week),
        each in the first week that has them and early enough for the buyer's answer to come before the episode
        ends; ``free`` is charged only if everything fits."""
        horizon_day = int(self.mem.horizon // HOURS_PER_DAY)
        taken: list[tuple[str, int, float]] = []
        for purpose, resource, hours in self.to_book(deal):
            if only and purpose not in only:
                continue
            soonest = self.mem.day + self.mem.lead_days.get(resource, 3)
            latest = horizon_day - 1 - math.ceil(self.process_days(purpose))
            week = next((w for w in range(soonest // 5, latest // 5 + 1)
                         if max(5 * w, soonest) <= latest and free.get((resource, w), 0.0) + 1e-9 >= hours), None)
            if week is None:
                for resource_, week_, hours_ in taken:
                    free[(resource_, week_)] += hours_
                return False
            free[(resource, week)] -= hours
            taken.append((resource, week, hours))
        return True

    def booking(self, deal: Deal, purpose: str) -> Booking | None:
        """A live booking (future, or started and still usable) made for ``purpose``."""
        for bid, b in deal.bookings.items():
            if self.purpose.get(bid) == purpose and b.status == "booked" and self.mem.now <= b.start + USABLE_H - 0.25:
                return b
        return None

    def slot(self, resource: str, hours: float) -> int | None:
        """The first business-day offset (lead time respected) whose week still has ``hours`` free."""
        lead = self.mem.lead_days.get(resource, 3)
        weekly = self.mem.full_capacity.get(resource, 0.0)
        if hours > weekly + 1e-9:
            return None
        for offset in range(lead, lead + 15):
            day = self.mem.day + offset
            if day * HOURS_PER_DAY >= self.mem.horizon:
                return None
            if weekly - self.mem.booked_hours(resource, day // 5) + 1e-9 >= hours:
                return offset
        return None

    def book_or_use(self, deal: Deal, purpose: str, resource: str, hours: float,
                    use: Callable[[Booking], Action]) -> Move | None:
        """Use the started booking made for ``purpose``; else book ``hours`` of ``resource`` with the lead time
        (first freeing an earlier week from a lower-ranked deal if one can be freed)."""
        b = self.booking(deal, purpose)
        if b is not None:
            return Move(deal.id, use(b), f"use the {purpose} booking") if b.start + 0.01 <= self.mem.now else None
        offset = self.slot(resource, hours)
        bump = self.bump(deal, resource, hours, offset)
        if bump is not None:
            return bump
        if offset is None:
            return None
        self.intent[(deal.id, resource, float(hours), offset)] = purpose
        return Move(deal.id, call("book_resource", opportunity_id=deal.id, resource=resource, hours=float(hours),
                                  start_in_days=offset, cancel_booking_id=None), f"book {resource} for {purpose}")

    def bump(self, deal: Deal, resource: str, hours: float, offset: int | None) -> Move | None:
        """Cancel a lower-ranked deal's booking of ``resource`` (while it is still refunded, outside the lead
        time) when that lets this deal book a week earlier than it otherwise could."""
        lead = self.mem.lead_days.get(resource, 3)
        weekly = self.mem.full_capacity.get(resource, 0.0)
        soonest = self.mem.day + lead
        mine = self.rank.get(deal.id, 10**6)
        until = (self.mem.day + offset) // 5 if offset is not None else int(self.mem.horizon // HOURS_PER_WEEK) + 1
        weeks = range(soonest // 5, until)
        if not weeks:
            return None
        # bookings of lower-ranked deals that can still be cancelled for a refund, by week
        movable: dict[int, list[tuple[int, str, str, Booking]]] = {}
        for o in self.mem.open_deals():
            rank = self.rank.get(o.id, 10**6)
            if o.id == deal.id or rank <= mine:
                continue
            for bid, b in o.bookings.items():
                if b.resource == resource and b.status == "booked" and \
                        b.start - lead * HOURS_PER_DAY > self.mem.now + 0.5:
                    movable.setdefault(int(b.start // HOURS_PER_WEEK), []).append((rank, bid, o.id, b))
        for week in weeks:
            if max(5 * week, soonest) * HOURS_PER_DAY >= self.mem.horizon:
                break
            victims = sorted(movable.get(week, ()), key=lambda v: (-v[0], v[1]))
            free = weekly - self.mem.booked_hours(resource, week)
            if victims and free + sum(v[3].hours for v in victims) + 1e-9 >= hours:
                _, bid, oid, _ = victims[0]
                return Move(oid, call("book_resource", opportunity_id=oid, resource=None, hours=None,
                                      start_in_days=None, cancel_booking_id=bid), f"free {resource} for {deal.id}")
        return None
