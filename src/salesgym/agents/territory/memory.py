"""What a seller can know, folded from observations and its own tool results (never from hidden state).

:class:`SellerMemory` is the shared notebook of every scripted policy. Feed it each observation
(:meth:`SellerMemory.observe`) and each of your calls with its result (:meth:`SellerMemory.record`); it
keeps, per opportunity, the public facts, the committee as far as it is known (titles, revealed roles,
who engaged, who left), researched and discovered keywords, meetings, bookings, terms, evidence seen in
``view_opportunity``, running buyer processes, and the verified milestone from the portfolio rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from salesgym.envs.territory.contract import (
    APPROVAL_RESOURCE,
    BOOKING_USABLE_DAYS,
    DISQUALIFIED,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    MILESTONES,
    day_of,
    hours_of,
    quarter_end_day,
)

__all__ = ["APPROVAL_RESOURCE", "MILESTONES", "Booking", "Deal", "Meeting", "Person", "SellerMemory",
           "hours_of", "quarter_end_day"]

USABLE_HOURS = BOOKING_USABLE_DAYS * HOURS_PER_DAY
STAGE = {m: k for k, m in enumerate(MILESTONES)}  # milestone -> its index


@dataclass
class Person:
    id: str
    name: str
    title: str
    role: str | None = None  # revealed by discovery
    engaged: bool = False
    left: bool = False
    messages: list[float] = field(default_factory=list)  # when we wrote to them
    replied: int = 0


@dataclass
class Meeting:
    id: str
    start: float
    invitees: list[str]
    accepted: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    discovery_done: bool = False

    def answered(self) -> bool:
        return len(self.accepted) + len(self.declined) >= len(self.invitees)


@dataclass
class Booking:
    id: str
    resource: str
    hours: float
    start: float
    status: str = "booked"  # booked | used | cancelled


@dataclass
class Deal:
    """Everything the seller knows about one opportunity."""

    id: str
    account: str = ""
    account_id: str = ""
    value_low: float = 0.0
    value_high: float = 0.0
    target: str = ""
    milestone: str = "Identified"  # verified, from the portfolio row
    crm_stage: str = "Prospecting"
    status: str = "open"  # open | closed | disqualified
    people: dict[str, Person] = field(default_factory=dict)
    found: bool = False  # find_stakeholders done
    pains: dict[str, list[str]] = field(default_factory=dict)  # discovered pain label -> keywords
    required_approvals: list[str] | None = None
    budget_band: tuple[float, float] | None = None
    eb_hint: str | None = None
    meetings: dict[str, Meeting] = field(default_factory=dict)
    bookings: dict[str, Booking] = field(default_factory=dict)
    evidence: list[tuple[str, str]] = field(default_factory=list)  # (type, from) as view_opportunity shows
    pending: set[str] = field(default_factory=set)  # tech_eval, approval:KIND, action_plan, escalation, terms, contract
    offered: float | None = None  # fractions, not percent
    asked: float | None = None
    agreed: float | None = None
    mgmt_approved: float = 0.0
    mgmt_refused: float = 1.0  # the smallest discount management refused
    exec_sponsor: bool = False
    business_case: bool = False
    tech_failures: int = 0
    tech_success: bool = False
    plan_agreed: bool = False
    plan_declines: list[str] = field(default_factory=list)
    approvals: dict[str, str] = field(default_factory=dict)  # kind -> approved | changes
    final_terms_approved: bool = False
    contract_holds: list[str] = field(default_factory=list)
    competitor_moves: int = 0
    frozen: bool = False
    dq_reason_seen: bool = False
    discoveries: int = 0
    stale: bool = True  # a view_opportunity would show something new (evidence)
    last_touch: float = 0.0

    @property
    def value_mid(self) -> float:
        return (self.value_low + self.value_high) / 2

    @property
    def stage(self) -> int:
        return STAGE.get(self.milestone, 0)

    @property
    def open(self) -> bool:
        return self.status == "open"

    def active_people(self) -> list[Person]:
        return [p for p in self.people.values() if not p.left]

    def has_evidence(self, kind: str, source: str | None = None) -> bool:
        return any(t == kind and (source is None or s == source) for t, s in self.evidence)

    def sources(self, kind: str) -> list[str]:
        return [s for t, s in self.evidence if t == kind]


class SellerMemory:
    """The seller's notebook. Update with :meth:`observe` (every observation) and :meth:`record` (every call)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.days_left = 0
        self.horizon = 0.0
        self.capacity: dict[str, float] = {}  # hours left this week per resource
        self.full_capacity: dict[str, float] = {}  # weekly hours per resource (the territory's facts)
        self.deals: dict[str, Deal] = {}
        self.keywords: dict[str, list[str]] = {}  # account id -> researched keywords
        self.lead_days: dict[str, int] = {}
        self.authority = 0.0
        self.invalid = 0
        self.last_error = ""
        self.inbox_log: list[dict[str, Any]] = []
        self.milestone_log: list[tuple[float, str, str]] = []
        self._booked: dict[tuple[str, int], float] | None = None  # (resource, week) -> hours: see booked_hours
        self._rows: dict[str, Any] = {}  # the portfolio rows last folded, by opportunity (an unchanged row is skipped)
        self.day = 0  # business day of ``now``

    # -- time ------------------------------------------------------------------------------------------
    @property
    def week(self) -> int:
        return int(self.now // HOURS_PER_WEEK)

    def seller_left(self) -> float:
        return self.capacity.get("seller", 0.0)

    @property
    def hours_exhausted(self) -> bool:
        return self.seller_left() <= 0

    # -- observations ----------------------------------------------------------------------------------
    def observe(self, observation: dict[str, Any]) -> list[dict[str, Any]]:
        """Fold one observation; returns its new inbox items."""
        data = observation.get("data", {})
        t = data.get("time", {})
        self.now = float(t.get("now_hours", self.now))
        self.day = day_of(self.now)
        self.days_left = int(t.get("days_left", self.days_left))
        self.horizon = (self.day + self.days_left) * HOURS_PER_DAY
        self.capacity = dict(data.get("capacity_left", self.capacity))
        facts = data.get("territory")
        if facts and not self.full_capacity:  # the territory's fixed facts, read once
            self.full_capacity = dict(facts["capacity_per_week"])
            self.lead_days = dict(facts["lead_days"])
            self.authority = float(facts["discount_authority"])
        seen = self._rows
        for row in data.get("portfolio", {}).get("rows", []):
            if seen.get(row[0]) != row:  # most steps change no row, or one
                self._row(row)
                seen[row[0]] = row
        inbox = list(data.get("inbox", []))
        for item in inbox:
            self._inbox(item)
        return inbox

    def _row(self, row: list[Any]) -> None:
        oid, account, milestone, crm, low, high, target = row[:7]
        deal = self.deals.get(oid)
        if deal is None:
            deal = self.deals[oid] = Deal(oid, account, "", float(low), float(high), str(target))
        deal.crm_stage = str(crm)
        if milestone == DISQUALIFIED:
            deal.status = "disqualified"
        elif milestone in MILESTONES:
            if milestone != deal.milestone:
                self.milestone_log.append((self.now, oid, milestone))
                deal.stale = True
            deal.milestone = milestone
            if milestone == "Closed":
                deal.status = "closed"

    def _inbox(self, item: dict[str, Any]) -> None:
        """Fold one inbox item from its typed fields (``contract.INBOX_FIELDS``); the text is for people."""
        self.inbox_log.append(item)
        deal = self.deals.get(item.get("opportunity_id", ""))
        if deal is None:
            return
        kind, sender, decision = item.get("kind"), item.get("from", ""), item.get("decision")
        evidence = item.get("evidence")
        if evidence:
            deal.evidence.append((evidence, sender))
        who = deal.people.get(sender)
        if kind == "reply" and who is not None:
            who.engaged, who.replied = True, who.replied + 1
        elif kind == "meeting_answer":
            meeting = deal.meetings.get(item.get("meeting_id") or "")
            if meeting is not None:
                (meeting.accepted if decision == "accepted" else meeting.declined).append(sender)
            if decision == "accepted" and who is not None:
                who.engaged = True
        elif kind == "tech_eval":
            deal.pending.discard("tech_eval")
            if decision == "passed":
                deal.tech_success = True
            else:
                deal.tech_failures += 1
        elif kind == "action_plan":
            deal.pending.discard("action_plan")
            if decision == "agreed":
                deal.plan_agreed = True
            else:
                deal.plan_declines.append(str(item.get("reason")))
        elif kind == "approval":
            approval = str(item.get("approval"))
            deal.pending.discard(f"approval:{approval}")
            if deal.approvals.get(approval) != "approved":
                deal.approvals[approval] = "approved" if decision == "approved" else "changes"
            if decision == "approved" and approval == "procurement" and item.get("discount_pct") is not None:
                deal.final_terms_approved = True
        elif kind == "terms":
            deal.pending.discard("terms")
            pct = item.get("discount_pct")
            frac = None if pct is None else float(pct) / 100
            if decision == "agreed":
                deal.agreed, deal.asked = (frac if frac is not None else deal.offered), None
                if evidence:  # agreeing was the procurement sign-off on the final terms
                    deal.final_terms_approved = True
            elif frac is not None:
                deal.asked = frac
        elif kind == "contract":
            deal.pending.discard("contract")
            if decision == "signed":
                deal.status = "closed"
            else:
                deal.contract_holds.append(str(item.get("reason")))
        elif kind == "escalation":
            deal.pending.discard("escalation")
            if decision == "approved" and item.get("discount_pct") is not None:
                deal.mgmt_approved = max(deal.mgmt_approved, float(item["discount_pct"]) / 100)
            elif decision == "refused" and item.get("discount_pct") is not None:
                deal.mgmt_refused = min(deal.mgmt_refused, float(item["discount_pct"]) / 100)
            elif decision == "met":
                deal.exec_sponsor = True
        elif kind == "competitor":
            deal.competitor_moves += 1
        elif kind == "news":
            if decision == "freeze":
                deal.frozen = True
            elif decision == "left":
                person = deal.people.get(item.get("stakeholder_id") or "")
                if person is not None:
                    person.left = True
        elif kind == "milestone":
            deal.stale = True

    # -- our own calls ---------------------------------------------------------------------------------
    def record(self, action: dict[str, Any] | None, result: dict[str, Any]) -> None:
        """Fold the result of our own call ``action`` (as sent) into memory."""
        if not action:
            return
        tool, args = action.get("tool", ""), action.get("args", {}) or {}
        out = result.get("output", {}) or {}
        if result.get("status") != "ok":
            self._error(tool, args, str(out.get("error", "")))
            return
        oid = args.get("opportunity_id")
        deal = self.deals.get(oid) if isinstance(oid, str) else None
        if deal is not None:
            deal.last_touch = self.now
        handler = getattr(self, f"_after_{tool}", None)
        if handler is not None:
            handler(deal, args, out)

    def _error(self, tool: str, args: dict[str, Any], error: str) -> None:
        """A refused call: counted and remembered (the seller does not repeat it soon). Nothing is read from the
        reason's wording: what the seller needs to know arrives as typed data."""
        self.invalid += 1
        self.last_error = error

    def _after_research_account(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        self.keywords[args["account_id"]] = list(out.get("keywords", []))

    def _after_find_stakeholders(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is None:
            return
        deal.found = True
        for p in out.get("stakeholders", []):
            person = deal.people.setdefault(p["id"], Person(p["id"], p.get("name", ""), p.get("title", "")))
            person.left = bool(p.get("left", False)) or person.left

    def _after_send_message(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        sid = args["stakeholder_id"]
        for d in self.deals.values():
            if sid in d.people:
                d.people[sid].messages.append(self.now)
                d.last_touch = self.now

    def _after_schedule_meeting(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            invitees = list(dict.fromkeys(args["stakeholder_ids"]))
            deal.meetings[out["meeting_id"]] = Meeting(out["meeting_id"], hours_of(out["start"]), invitees)

    def _after_book_resource(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is None:
            return
        cancel = args.get("cancel_booking_id")
        self._booked = None
        if cancel:
            if cancel in deal.bookings:
                deal.bookings[cancel].status = "cancelled"
            return
        deal.bookings[out["booking_id"]] = Booking(out["booking_id"], out["resource"], float(out["hours"]),
                                                   hours_of(out["start"]))

    def _after_run_discovery(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        for d in self.deals.values():
            meeting = d.meetings.get(args["meeting_id"])
            if meeting is None:
                continue
            meeting.discovery_done = True
            d.discoveries += 1
            d.stale = True
            for pain in out.get("pains", []):
                d.pains[pain["label"]] = list(pain["keywords"])
            for sid, role in (out.get("roles") or {}).items():
                if sid in d.people:
                    d.people[sid].role = role
            if isinstance(out.get("required_approvals"), list):
                d.required_approvals = list(out["required_approvals"])
            if isinstance(out.get("budget_band"), list):
                d.budget_band = (float(out["budget_band"][0]), float(out["budget_band"][1]))
            if isinstance(out.get("economic_buyer"), str) and out["economic_buyer"].startswith(d.id):
                d.eb_hint = out["economic_buyer"]
                if d.eb_hint in d.people and d.people[d.eb_hint].role is None:
                    d.people[d.eb_hint].role = "economic_buyer"

    @staticmethod
    def _start_process(deal: Deal | None, process: str, booking_id: str) -> None:
        """A buyer process started on a booking: it is pending, and the booking is spent."""
        if deal is not None:
            deal.pending.add(process)
            deal.bookings[booking_id].status = "used"

    def _after_run_technical_evaluation(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        self._start_process(deal, "tech_eval", args["booking_id"])

    def _after_request_approval(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        self._start_process(deal, f"approval:{args['kind']}", args["booking_id"])

    def _after_escalate(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        self._start_process(deal, "escalation", args["booking_id"])

    def _after_build_business_case(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            deal.business_case = True

    def _after_propose_action_plan(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            deal.pending.add("action_plan")

    def _after_send_proposal(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            deal.pending.add("terms")
            deal.offered, deal.asked = args["discount_pct"] / 100, None
        if "authority_pct" in out:
            self.authority = float(out["authority_pct"]) / 100

    _after_negotiate = _after_send_proposal

    def _after_send_contract(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            deal.pending.add("contract")

    def _after_disqualify(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is not None:
            deal.status = "disqualified"

    def _after_view_opportunity(self, deal: Deal | None, args: dict[str, Any], out: dict[str, Any]) -> None:
        if deal is None or "opportunity" not in out:
            return
        o, learned = out["opportunity"], out.get("learned", {})
        deal.account_id = o.get("account_id", deal.account_id)
        deal.status = o.get("status", deal.status)
        deal.stale = False
        for p in out.get("stakeholders", []):
            person = deal.people.setdefault(p["id"], Person(p["id"], p.get("name", ""), p.get("title", "")))
            person.role = p.get("role") or person.role
            person.engaged, person.left = bool(p.get("engaged")), bool(p.get("left"))
        if deal.people:
            deal.found = True
        if isinstance(learned.get("required_approvals"), list):
            deal.required_approvals = list(learned["required_approvals"])
        if isinstance(learned.get("economic_buyer"), str) and learned["economic_buyer"] != "unknown":
            deal.eb_hint = learned["economic_buyer"]
        # the view lists evidence one line per type, with everyone it came from
        deal.evidence = [(e["type"], who) for e in out.get("evidence", []) for who in e["from"]]
        for m in out.get("meetings", []):
            meeting = deal.meetings.setdefault(m["id"], Meeting(m["id"], hours_of(m["start"]), list(m["invited"])))
            meeting.accepted, meeting.declined = list(m["accepted"]), list(m["declined"])
            meeting.discovery_done = bool(m["discovery_done"])
        if out.get("bookings"):
            self._booked = None
        for b in out.get("bookings", []):
            booking = deal.bookings.setdefault(b["id"], Booking(b["id"], b["resource"], float(b["hours"]),
                                                                hours_of(b["start"])))
            if booking.status != "lapsed":
                booking.status = b["status"]
        terms = out.get("terms", {})

        def frac(key: str) -> float | None:
            v = terms.get(key)
            return None if v is None else float(v) / 100

        deal.offered, deal.asked, deal.agreed = frac("offered_pct"), frac("buyer_asks_pct"), frac("agreed_pct")
        deal.mgmt_approved = frac("management_approved_pct") or 0.0
        deal.pending = set(out.get("in_progress", [])) | ({"contract"} if terms.get("contract_out") else set())
        deal.dq_reason_seen = deal.has_evidence("disqualification_reason")
        deal.tech_success = deal.has_evidence("technical_success")
        deal.plan_agreed = deal.has_evidence("mutual_action_plan")

    # -- derived knowledge -----------------------------------------------------------------------------
    def known_keywords(self, deal: Deal) -> list[str]:
        """Keywords to reference: discovered pains' keywords, else everything research surfaced."""
        discovered = sorted({kw for kws in deal.pains.values() for kw in kws})
        researched = self.keywords.get(deal.account_id, [])
        if discovered and self._all_pains_known(deal):
            return discovered
        return sorted(set(discovered) | set(researched))

    def _all_pains_known(self, deal: Deal) -> bool:
        """After discovery with the champion or the economic buyer, the account's real pains are all known."""
        return any(p.role in ("champion", "economic_buyer") for p in deal.people.values()
                   if any(p.id in m.accepted and m.discovery_done for m in deal.meetings.values()))

    def usable_booking(self, deal: Deal, resource: str, min_hours: float = 0.5) -> Booking | None:
        for b in deal.bookings.values():
            if b.resource == resource and b.status == "booked" and b.hours >= min_hours and \
                    b.start + 0.01 <= self.now <= b.start + USABLE_HOURS - 0.25:
                return b
        return None

    def future_booking(self, deal: Deal, resource: str) -> Booking | None:
        for b in deal.bookings.values():
            if b.resource == resource and b.status == "booked" and b.start > self.now:
                return b
        return None

    def booked_hours(self, resource: str, week: int) -> float:
        """Hours of ``resource`` our own bookings hold in ``week`` (what its weekly capacity is charged)."""
        booked = self._booked
        if booked is None:  # rebuilt after a booking was made, cancelled or read again, not on every question
            booked = self._booked = {}
            for d in self.deals.values():
                for b in d.bookings.values():
                    if b.status != "cancelled":
                        key = (b.resource, int(b.start // HOURS_PER_WEEK))
                        booked[key] = booked.get(key, 0) + b.hours
        return booked.get((resource, week), 0.0)

    def next_interest(self) -> float | None:
        """The next time something we planned becomes actionable (a meeting or a booking starts)."""
        times = [m.start for d in self.deals.values() if d.open for m in d.meetings.values()
                 if not m.discovery_done and m.start > self.now and len(m.declined) < len(m.invitees)]
        times += [b.start for d in self.deals.values() if d.open for b in d.bookings.values()
                  if b.status == "booked" and b.start > self.now]
        return min(times) if times else None

    def open_deals(self) -> list[Deal]:
        return [d for d in self.deals.values() if d.open]
