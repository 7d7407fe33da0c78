"""The sales motion shared by the scripted sellers: for one opportunity, what is the next sensible call?

:class:`Playbook.next_move` walks a deal through research -> stakeholders -> relevant outreach ->
discovery meetings (repeated with the economic buyer until budget and sponsorship are confirmed) ->
technical evaluation on booked SE hours -> required approvals -> proposal and negotiation within
authority (escalating when the buyer needs more) -> mutual action plan -> procurement on the final terms
-> contract once the verified milestone is Commit. It returns ``None`` while the deal waits on buyers.

What the seller *believes* (who the economic buyer is, which approvals the account needs, whether the
budget is open, the real deadline, the discount the buyer needs) sits in small overridable methods, so
the ``oracle`` is this same motion with beliefs read from the hidden truth. Which deal to work first is
the policies' business, not this module's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from salesgym.agents.base import Action, call
from salesgym.agents.territory.memory import Booking, Deal, Person, SellerMemory
from salesgym.envs.territory.contract import (
    APPROVAL_RESOURCE,
    HOURS_PER_DAY,
    MILESTONES,
    MIN_BOOKING_HOURS,
    TOOL_HOURS,
    quarter_end_day,
)

SENIOR = ("chief", "cfo", "coo", "cio", "ciso", "secretary", "city manager", "agency director", "vp ")
MIDDLE = ("director", "head", "vp", "principal", "officer", "counsel")


@dataclass(frozen=True)
class Move:
    deal: str
    action: Action
    why: str

    @property
    def hours(self) -> float:
        return TOOL_HOURS.get(self.action["tool"], 0.0)


@dataclass(frozen=True)
class Style:
    """Switches that make a weaker or stronger seller out of the same motion."""

    disqualify: bool = True  # drop deals when the buyer gives a disqualification reason
    warm_economic_buyer: bool = True  # executive-sponsor call / business case when the EB will not sponsor
    # a low anchor: a buyer who needs more counters with what it needs (met within authority, or escalated), so a
    # lower opening costs a round of negotiation and saves the difference on every deal that closes
    opening_discount: float = 0.04
    se_hours: float = 6.0
    review_hours: float = 2.0  # hours booked for a buyer's security, legal or procurement review
    # with these set, book as many of the wanted hours as a week has free, down to this many (0: exactly)
    se_hours_least: float = 0.0
    review_hours_least: float = 0.0
    requalify_days: int = 3  # business days between discovery meetings until qualified
    early_evaluation: bool = True  # book the SE as soon as someone engaged (SE hours are not seller hours)
    follow_up: bool = True  # a second, warmer message to the economic buyer once the champion engaged


@lru_cache(maxsize=1024)  # titles repeat: asked of every committee member on every look at a deal
def seniority(title: str) -> int:
    t = title.lower() + " "
    if any(w in t for w in SENIOR):
        return 3
    return 2 if any(w in t for w in MIDDLE) else 1


class Playbook:
    def __init__(self, memory: SellerMemory, style: Style | None = None) -> None:
        self.mem = memory
        self.style = style or Style()

    # -- beliefs (the oracle overrides these) ------------------------------------------------------------
    def is_viable(self, deal: Deal) -> bool | None:
        return False if deal.dq_reason_seen else None

    def economic_buyer(self, deal: Deal) -> str | None:
        people = deal.active_people()
        for p in people:
            if p.role == "economic_buyer":
                return p.id
        if deal.eb_hint and deal.eb_hint in deal.people and not deal.people[deal.eb_hint].left:
            return deal.eb_hint
        unknown = [p for p in people if p.role is None]
        return max(unknown, key=lambda p: seniority(p.title)).id if unknown else None

    def champion(self, deal: Deal) -> str | None:
        return next((p.id for p in deal.active_people() if p.role == "champion"), None)

    def required_approvals(self, deal: Deal) -> list[str] | None:
        return deal.required_approvals

    def keywords_for(self, deal: Deal, sid: str | None) -> list[str]:
        return self.mem.known_keywords(deal)

    def budget_open(self, deal: Deal) -> bool:
        return True

    def deadline_day(self, deal: Deal) -> int:
        return quarter_end_day(deal.target) or 10**6

    def discount_to_offer(self, deal: Deal) -> float:
        return self.style.opening_discount

    def se_hours(self, deal: Deal) -> float:
        return self.style.se_hours + 2.0 * deal.tech_failures

    def review_hours(self, deal: Deal, kind: str) -> float:
        return self.style.review_hours

    def meeting_day_offset(self, deal: Deal) -> int:
        return 1 if self.mem.now % HOURS_PER_DAY < 4 else 2

    # -- facts derived from memory ---------------------------------------------------------------------
    def qualified_sources(self, deal: Deal) -> tuple[bool, bool]:
        """Whether budget / sponsorship evidence came from someone who looks like a real authority."""
        def authority(sid: str) -> bool:
            p = deal.people.get(sid)
            return p is not None and (p.role == "economic_buyer" or sid == self.economic_buyer(deal))
        if deal.stage >= 2:
            return True, True
        return (any(authority(s) for s in deal.sources("budget_confirmation")),
                any(authority(s) for s in deal.sources("authorised_sponsor")))

    def capped(self, deal: Deal) -> bool:
        """The deal can no longer close in time (plan dates refused, contract slipped, or past the deadline)."""
        return "dates" in deal.plan_declines or any("decision window" in h for h in deal.contract_holds) or \
            self.mem.day + 3 > self.deadline_day(deal)

    def text(self, deal: Deal, sid: str | None, opener: str) -> str:
        kws = self.keywords_for(deal, sid)
        return f"{opener} {', '.join(kws)}." if kws else f"{opener} your priorities this quarter."

    # -- the motion --------------------------------------------------------------------------------------
    def next_move(self, deal: Deal) -> Move | None:
        """The next useful call on ``deal`` now, or None while it waits on buyers, bookings or the clock."""
        if not deal.open:
            return None
        for step in (self._refresh, self._drop, self._research, self._find, self._discover, self._contract,
                     self._outreach, self._meet, self._warm, self._evaluate, self._approvals, self._price,
                     self._plan, self._final_terms):
            move = step(deal)
            if move is not None:
                return move
        return None

    def _refresh(self, deal: Deal) -> Move | None:
        if deal.stale and (deal.discoveries > 0 or deal.stage > 0) and deal.found:
            return Move(deal.id, call("view_opportunity", opportunity_id=deal.id), "read new evidence")
        return None

    def _drop(self, deal: Deal) -> Move | None:
        if not self.style.disqualify:
            return None
        budget_gone = any("budget has not been released" in h for h in deal.contract_holds) and not deal.frozen
        if self.is_viable(deal) is False or budget_gone:
            return Move(deal.id, call("disqualify", opportunity_id=deal.id,
                                      reason="the buyer told us this cannot close"), "buyer gave a reason to drop")
        return None

    def _research(self, deal: Deal) -> Move | None:
        if not deal.account_id:
            return Move(deal.id, call("view_opportunity", opportunity_id=deal.id), "look up the account")
        if deal.account_id not in self.mem.keywords:
            return Move(deal.id, call("research_account", account_id=deal.account_id), "research before outreach")
        return None

    def _find(self, deal: Deal) -> Move | None:
        if not deal.found:
            return Move(deal.id, call("find_stakeholders", opportunity_id=deal.id), "map the committee")
        return None

    def _outreach(self, deal: Deal) -> Move | None:
        eb = self.economic_buyer(deal)
        champion_engaged = any(p.engaged and p.role == "champion" for p in deal.active_people()) or \
            any(p.engaged for p in deal.active_people())
        for p in sorted(deal.active_people(), key=lambda p: -seniority(p.title)):
            if p.engaged:
                continue
            first = not p.messages
            follow = (self.style.follow_up and p.id == eb and champion_engaged and len(p.messages) == 1
                      and self.mem.now - p.messages[-1] > HOURS_PER_DAY)
            if first or follow:
                return Move(deal.id, self._message(deal, p, "Ideas for"), "relevant outreach")
        return None

    def _message(self, deal: Deal, p: Person, opener: str) -> Action:
        kws = self.keywords_for(deal, p.id)
        subject = f"{kws[0]} at {deal.account}" if kws else f"Quick question for {deal.account}"
        return call("send_message", stakeholder_id=p.id, subject=subject, body=self.text(deal, p.id, opener))

    def _live_meeting(self, deal: Deal) -> bool:
        """A meeting whose discovery is still ahead (not yet held, not wholly declined, not passed)."""
        return any(not m.discovery_done and len(m.declined) < len(m.invitees) and self.mem.now < m.start + HOURS_PER_DAY
                   for m in deal.meetings.values())

    def _discover(self, deal: Deal) -> Move | None:
        now = self.mem.now
        for m in deal.meetings.values():
            if m.discovery_done or not m.accepted or not (m.start + 0.01 <= now < m.start + HOURS_PER_DAY - 0.5):
                continue
            if m.answered() or now >= m.start + 4:
                return Move(deal.id, call("run_discovery", meeting_id=m.id), "discovery in the accepted meeting")
        return None

    def _meet(self, deal: Deal) -> Move | None:
        if self._live_meeting(deal):
            return None
        budget_ok, sponsor_ok = self.qualified_sources(deal)
        if deal.discoveries and budget_ok and sponsor_ok:
            return None
        people = deal.active_people()
        if not people:
            return None
        last = max((m.start for m in deal.meetings.values()), default=None)
        if last is None:  # the first meeting: once someone answered, or a day after outreach
            waited = self.mem.now - max((t for p in people for t in p.messages), default=self.mem.now)
            if not any(p.engaged for p in people) and waited < HOURS_PER_DAY:
                return None
            invitees = sorted(people, key=lambda p: (not p.engaged, -seniority(p.title)))[:6]
        else:
            if self.mem.now - last < self.style.requalify_days * HOURS_PER_DAY or not self.budget_open(deal):
                return None
            eb, champion = self.economic_buyer(deal), self.champion(deal)
            wanted = [s for s in (eb, champion) if s is not None]
            wanted += [p.id for p in people if p.engaged and p.role is None and p.id not in wanted]
            invitees = [deal.people[s] for s in wanted[:4]] or people[:3]
        ids = [p.id for p in invitees]
        return Move(deal.id, call("schedule_meeting", opportunity_id=deal.id, stakeholder_ids=ids,
                                  agenda=self.text(deal, None, "Discovery: priorities, budget and process around"),
                                  in_days=self.meeting_day_offset(deal)), "discovery meeting")

    def _warm(self, deal: Deal) -> Move | None:
        """The economic buyer did not sponsor: an executive-sponsor call, then a business case."""
        if not self.style.warm_economic_buyer or not deal.discoveries:
            return None
        _, sponsor_ok = self.qualified_sources(deal)
        weak = not sponsor_ok or any("priority" in h for h in deal.contract_holds) or "not ready" in deal.plan_declines
        if not weak or self.capped(deal):
            return None
        if (not deal.exec_sponsor and "escalation" not in deal.pending and deal.agreed is not None) or \
                (not deal.exec_sponsor and deal.offered is None and "escalation" not in deal.pending):
            need = MIN_BOOKING_HOURS["executive_sponsor"]
            move = self._with_booking(deal, "management", need, min_hours=need, use=lambda b: call(
                "escalate", opportunity_id=deal.id, purpose="executive_sponsor", discount_pct=None, booking_id=b.id))
            if move is not None:
                return move
        if not deal.business_case and deal.discoveries >= 2 and self.keywords_for(deal, None):
            return Move(deal.id, call("build_business_case", opportunity_id=deal.id,
                                      summary=self.text(deal, None, "Business case: measurable gains on")),
                        "business case for the economic buyer")
        return None

    def ready_to_evaluate(self, deal: Deal) -> bool:
        return deal.discoveries > 0 or (self.style.early_evaluation and any(p.engaged for p in deal.people.values()))

    def _evaluate(self, deal: Deal) -> Move | None:
        if deal.tech_success or "tech_eval" in deal.pending or not self.ready_to_evaluate(deal):
            return None
        if deal.tech_failures >= 3:
            return None
        return self._with_booking(deal, "se", self.se_hours(deal), lambda b: call(
            "run_technical_evaluation", opportunity_id=deal.id, booking_id=b.id),
            min_hours=MIN_BOOKING_HOURS["tech_eval"], least=self.style.se_hours_least or None)

    def _approvals(self, deal: Deal) -> Move | None:
        if self.capped(deal):
            return None
        for kind in self.required_approvals(deal) or []:
            if kind == "procurement" or deal.approvals.get(kind) == "approved" or f"approval:{kind}" in deal.pending:
                continue
            def review(b: Booking, k: str = kind) -> Action:
                return call("request_approval", opportunity_id=deal.id, kind=k, booking_id=b.id)
            move = self._with_booking(deal, APPROVAL_RESOURCE[kind], self.review_hours(deal, kind), review,
                                      min_hours=MIN_BOOKING_HOURS["review"],
                                      least=self.style.review_hours_least or None)
            if move is not None:
                return move
        return None

    def ready_to_price(self, deal: Deal) -> bool:
        return deal.stage >= 2  # a proposal once the buyer is qualified: earlier it only costs seller hours

    def plan_sponsor(self, deal: Deal) -> str | None:
        """Who should own the action plan: a confirmed authorised sponsor, preferably the economic buyer."""
        _, sponsor_ok = self.qualified_sources(deal)
        if not sponsor_ok:
            return None
        sponsors = [s for s in deal.sources("authorised_sponsor") if s in deal.people and not deal.people[s].left]
        eb = self.economic_buyer(deal)
        return eb if eb in sponsors or not sponsors else sponsors[0]

    def _price(self, deal: Deal) -> Move | None:
        if not self.ready_to_price(deal) or "terms" in deal.pending or deal.agreed is not None or self.capped(deal):
            return None
        if deal.offered is None:
            pct = round(100 * min(self.discount_to_offer(deal), self.mem.authority), 1)
            return Move(deal.id, call("send_proposal", opportunity_id=deal.id, discount_pct=pct), "proposal")
        if deal.asked is None:
            return None
        limit = max(self.mem.authority, deal.mgmt_approved)
        if deal.asked <= limit + 1e-9:
            pct = round(100 * self.counter_offer(deal, limit), 1)
            return Move(deal.id, call("negotiate", opportunity_id=deal.id, discount_pct=pct),
                        "meet the buyer's counter within authority")
        ask = self.approval_to_ask(deal)
        if ask < deal.mgmt_refused - 1e-9 and "escalation" not in deal.pending:
            need = MIN_BOOKING_HOURS["discount_approval"]
            return self._with_booking(deal, "management", need, min_hours=need, use=lambda b: call(
                "escalate", opportunity_id=deal.id, purpose="discount", discount_pct=round(100 * ask, 1),
                booking_id=b.id))
        return None

    def counter_offer(self, deal: Deal, limit: float) -> float:
        """The discount to offer when the buyer's counter is within what we may give: exactly what it asked."""
        return deal.asked if deal.asked is not None else limit

    def approval_to_ask(self, deal: Deal) -> float:
        """The discount to ask management for when the buyer wants more than our authority: what it asked."""
        return deal.asked if deal.asked is not None else self.mem.authority

    def _plan(self, deal: Deal) -> Move | None:
        if deal.plan_agreed or "action_plan" in deal.pending or self.capped(deal):
            return None
        sponsor = self.plan_sponsor(deal)
        if sponsor is None or len(deal.plan_declines) >= 3:
            return None
        days = max(5, min(10, self.deadline_day(deal) - self.mem.day - 1))
        return Move(deal.id, call("propose_action_plan", opportunity_id=deal.id, sponsor_id=sponsor,
                                  close_in_days=days), "mutual action plan inside the quarter")

    def _final_terms(self, deal: Deal) -> Move | None:
        if deal.agreed is None or deal.final_terms_approved or "approval:procurement" in deal.pending:
            return None
        return self._with_booking(deal, "procurement", self.review_hours(deal, "procurement"),
                                  least=self.style.review_hours_least or None, use=lambda b: call(
            "request_approval", opportunity_id=deal.id, kind="procurement", booking_id=b.id))

    def _contract(self, deal: Deal) -> Move | None:
        if deal.milestone != MILESTONES[6] or "contract" in deal.pending:
            return None
        if any("priority" in h for h in deal.contract_holds[-1:]) and len(deal.contract_holds) > 2:
            return None
        return Move(deal.id, call("send_contract", opportunity_id=deal.id), "contract on verified Commit")

    # -- bookings ----------------------------------------------------------------------------------------
    def _with_booking(
        self,
        deal: Deal,
        resource: str,
        hours: float,
        use: Callable[[Booking], Action],
        min_hours: float = 0.5,
        least: float | None = None,
    ) -> Move | None:
        """Use a started booking of ``resource`` (``use(booking)``), or book one with the lead time: ``hours``
        if a week has them free, else as much as the first week with at least ``least`` free (default: exactly
        ``hours``)."""
        b = self.mem.usable_booking(deal, resource, min_hours)
        if b is not None:
            return Move(deal.id, use(b), f"use the {resource} booking")
        if self.mem.future_booking(deal, resource) is not None:
            return None
        slot = self.free_slot(resource, hours, hours if least is None else least)
        if slot is None:
            return None
        start, amount = slot
        return Move(deal.id, call("book_resource", opportunity_id=deal.id, resource=resource, hours=amount,
                                  start_in_days=start, cancel_booking_id=None), f"book {resource} with lead time")

    def free_slot(self, resource: str, hours: float, least: float) -> tuple[int, float] | None:
        """The first business-day offset, respecting lead time, whose week still has ``least`` hours of
        ``resource`` free, and how many of the wanted ``hours`` to book there."""
        lead = self.mem.lead_days.get(resource, 3)
        weekly = self.mem.full_capacity.get(resource, 0.0)
        hours, least = min(hours, weekly), min(least, weekly)  # no booking can be larger than a week's hours
        for offset in range(lead, lead + 11):
            day = self.mem.day + offset
            if day * HOURS_PER_DAY >= self.mem.horizon:
                return None
            free = weekly - self.mem.booked_hours(resource, day // 5)
            if free + 1e-9 >= least:
                return offset, float(min(hours, max(least, math.floor(free * 2 + 1e-9) / 2)))  # half hours
        return None

