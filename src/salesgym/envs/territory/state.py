"""Live territory state and the fold that builds it from events.

Containers are dicts of frozen records; ``apply`` replaces records, never mutates them, so a clone that
copies the dicts shares every record safely. ``APPLY`` maps an event kind to its fold step; events the
fold does not know (reads, notices) change nothing here.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from salesgym.core.events import Event
from salesgym.core.evidence import Evidence
from salesgym.core.state import Folds, ForkMap, State, replaced
from salesgym.envs.territory.calendar import HOURS_PER_DAY, week_of
from salesgym.envs.territory.contract import BOOKING_USABLE_DAYS, DISQUALIFIED, MILESTONES
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.milestones import earliest, qualifying_keys
from salesgym.envs.territory.world import TerritoryWorld

RECENT_WINDOW_H = 40.0  # messages within a business week count towards fatigue


class Person(NamedTuple):
    """What changes about a stakeholder during the episode."""

    disposition: float
    known: bool = False  # surfaced by find_stakeholders
    engaged: bool = False  # has replied or accepted a meeting
    role: str | None = None  # true role, once discovery revealed it
    left: bool = False
    recent: tuple[float, ...] = ()  # send times of recent messages (fatigue)
    unanswered: int = 0  # messages since this person last replied (being ignored and bumping again annoys)
    value_seen: float = 0.0  # best relevance of what the seller showed this person
    last_contact: float = -1e9
    replied_at: float = -1e9  # when this person last replied (prompt follow-up keeps momentum)


class People(ForkMap[str, Person]):
    """Stakeholder state by id, holding only people whose state changed; the rest read as their start."""

    __slots__ = ("_start", "committee")

    def __init__(self, committee: Mapping[str, Any]) -> None:
        super().__init__()
        self.committee = committee
        # each unchanged person's start record, built once (a step reads a dozen people): forks share it, since
        # a start record depends only on the world
        self._start: dict[str, Person] = {}

    def __getitem__(self, sid: str) -> Person:
        person = self._buckets[hash(sid) & 31].get(sid)
        if person is None:
            person = self._start.get(sid)
            if person is None:
                person = self._start[sid] = Person(self.committee[sid].disposition)
        return person

    def _copy_extra(self, twin: People) -> None:
        twin.committee = self.committee
        twin._start = self._start


class Deal(NamedTuple):
    milestone: int = 0
    status: str = "open"  # open | closed | disqualified
    evidence: tuple[Evidence, ...] = ()
    # qualifying key (milestones.qualifying_keys) -> its earliest time in the evidence: the verified milestone's
    # input, kept as evidence arrives rather than re-derived from the whole ledger (never mutated: replaced)
    first: Mapping[str, float] = {}
    pains_known: frozenset[str] = frozenset()
    approvals_known: tuple[str, ...] | None = None
    budget_known: tuple[float, float] | None = None
    eb_hint: str | None = None
    budget_timing: str | None = None
    offered_discount: float | None = None
    asked_discount: float | None = None
    agreed_discount: float | None = None
    mgmt_discount: float = 0.0
    exec_sponsor: bool = False
    business_case: float = 0.0
    contract_out: bool = False
    frozen_until: float = -1.0
    pressure: float = 0.0  # competitor pressure on price
    pending: frozenset[str] = frozenset()  # outstanding buyer processes ("tech_eval", "approval:legal", ...)
    last_activity: float = 0.0
    closed_at: float | None = None
    price: float = 1.0  # 1 - the discount of the final terms the verified milestone rests on (Commit, Closed)
    meetings: tuple[str, ...] = ()  # ids, so a deal's view does not scan the whole calendar
    bookings: tuple[str, ...] = ()


class Crm(NamedTuple):
    """The seller's own notes. The verifier never reads them."""

    stage: str = "Prospecting"
    fields: tuple[tuple[str, str], ...] = ()
    next_step: str = ""


class Booking(NamedTuple):
    id: str
    opportunity_id: str
    resource: str
    hours: float
    start: float
    status: str = "booked"  # booked | used | cancelled


class Meeting(NamedTuple):
    id: str
    opportunity_id: str
    invitees: tuple[str, ...]
    start: float
    relevance: float
    accepted: tuple[str, ...] = ()
    declined: tuple[str, ...] = ()
    discovery_done: bool = False


@dataclass
class TerritoryState(State):
    FORKED = (
        "people",
        "deals",
        "crm",
        "researched",
        "bookings",
        "usage",
        "meetings",
        "violations",
        "rows",
        "shown_value",
        "row_counts",
        "open_meetings",
        "open_bookings",
        "expiries",
    )
    DERIVED = frozenset({"rows_view", "phi"})

    # containers that grow with the episode are ForkMaps (a fork shares them); those the size of the territory
    # (deals, CRM records, portfolio rows) are plain dicts, copied by a fork
    people: ForkMap[str, Person] = field(default_factory=ForkMap)  # a People map once built by new_state
    deals: dict[str, Deal] = field(default_factory=dict)
    crm: dict[str, Crm] = field(default_factory=dict)
    researched: ForkMap[str, frozenset[str]] = field(default_factory=ForkMap)  # account -> keywords learnt
    bookings: ForkMap[str, Booking] = field(default_factory=ForkMap)
    usage: ForkMap[tuple[str, int], float] = field(default_factory=ForkMap)  # (resource, week) -> hours booked
    meetings: ForkMap[str, Meeting] = field(default_factory=ForkMap)
    violations: dict[str, int] = field(default_factory=dict)
    rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # public portfolio rows, kept current
    # the rows as one tuple until one changes: derived, so not part of equality or the snapshot
    rows_view: tuple[tuple[Any, ...], ...] | None = field(default=None, compare=False, repr=False)
    row_counts: dict[str, int] = field(default_factory=dict)  # opportunities per shown milestone/status
    # the meetings not yet discussed and the bookings not yet used or cancelled, by id, each the current record
    # (as in meetings and bookings): the alerts and live_* read them without a lookup per item
    open_meetings: dict[str, Meeting] = field(default_factory=dict)
    open_bookings: dict[str, Booking] = field(default_factory=dict)
    # (when an open item stops mattering, which index, id): a heap, so the indexes drop expired items as
    # the clock passes them and a step never scans the episode's whole calendar
    expiries: list[tuple[float, str, str]] = field(default_factory=list)
    # public value (value-band midpoint x price) of the deals at each verified milestone: what Φ weighs
    shown_value: dict[int, float] = field(default_factory=dict)
    dq_shown: float = 0.0  # public value x horizon share freed of the deals dropped on the buyer's reason
    # (reward config, world, Φ) as reward.potential last computed it, until a fold moves shown_value or dq_shown
    phi: tuple[object, object, float] | None = field(default=None, compare=False, repr=False)
    hours_used: float = 0.0

    def __post_init__(self) -> None:
        State.__init__(self)


MEETING_LIVE_HOURS = HOURS_PER_DAY  # a meeting can be discussed until a day after its start
BOOKING_LIVE_HOURS = BOOKING_USABLE_DAYS * HOURS_PER_DAY


def live_meetings(s: TerritoryState, now: float) -> list[Meeting]:
    """Meetings that can still matter: not yet discussed, someone may still come, starting from yesterday on.
    Read from the open-meeting index, which drops expired meetings, so the cost does not grow with the episode."""
    return [m for m in s.open_meetings.values() if m.start + MEETING_LIVE_HOURS > now]


def live_bookings(s: TerritoryState, now: float) -> list[Booking]:
    """Bookings not used, cancelled or lapsed, from the open-booking index."""
    return [b for b in s.open_bookings.values() if b.start + BOOKING_LIVE_HOURS > now]


def new_state(world: TerritoryWorld) -> TerritoryState:
    s = TerritoryState()
    s.people = People(world.stakeholders)
    s.deals = {oid: Deal() for oid in world.opportunities}
    s.crm = {oid: Crm() for oid in world.opportunities}
    s.shown_value = {0: sum(o.shown_value for o in world.opportunities.values())}
    for oid in world.opportunities:
        _refresh_row(s, world, oid)
    return s


def _refresh_row(s: TerritoryState, world: TerritoryWorld, oid: str) -> None:
    opp, deal, crm = world.opportunities[oid], s.deals[oid], s.crm[oid]
    shown = DISQUALIFIED if deal.status == "disqualified" else MILESTONES[deal.milestone]
    old = s.rows.get(oid)
    if old is not None:
        s.row_counts[old[2]] -= 1
    s.row_counts[shown] = s.row_counts.get(shown, 0) + 1
    s.rows_view = None
    s.rows[oid] = (
        oid,
        world.accounts[opp.account_id].name,
        shown,
        crm.stage,
        opp.value_band[0],
        opp.value_band[1],
        opp.target_quarter,
        round(deal.last_activity / 8.0, 1),
    )


ROW_FIELDS = frozenset({"milestone", "status", "last_activity"})  # what a deal's portfolio row shows


def _deal(s: TerritoryState, world: TerritoryWorld, oid: str, **changes: Any) -> None:
    s.deals[oid] = replaced(s.deals[oid], changes)
    if not ROW_FIELDS.isdisjoint(changes):
        _refresh_row(s, world, oid)


def _person(s: TerritoryState, sid: str, **changes: Any) -> None:
    s.people[sid] = replaced(s.people[sid], changes)


def _touch(s: TerritoryState, world: TerritoryWorld, oid: str, t: float) -> None:
    _deal(s, world, oid, last_activity=t)


folds: Folds[TerritoryState, TerritoryWorld] = Folds()
APPLY = folds.by_kind  # event kind -> its fold step
apply = folds.apply


@folds("tool_completed")
def _tool(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    expiries = s.expiries
    while expiries and expiries[0][0] <= e.time:  # the clock passed these: they leave the live indexes
        _, index, item_id = heapq.heappop(expiries)
        (s.open_meetings if index == "meeting" else s.open_bookings).pop(item_id, None)
    hours = float(p["resource_cost"].get("seller", 0.0))
    if hours:
        key = ("seller", week_of(p["started"]))  # charged to the week the call started
        s.usage.add(key, hours, 0.0)
        s.hours_used += hours


@folds("account_researched")
def _researched(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.researched[p["account_id"]] = frozenset(p["keywords"])


@folds("stakeholders_found")
def _found(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    for sid in p["stakeholder_ids"]:
        _person(s, sid, known=True)
    _touch(s, world, p["opportunity_id"], e.time)


@folds("message_sent")
def _message(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    sid = p["stakeholder_id"]
    person = s.people[sid]
    recent = (*(t for t in person.recent if e.time - t < RECENT_WINDOW_H), e.time)
    _person(s, sid, recent=recent, last_contact=e.time, value_seen=max(person.value_seen, p["relevance"]),
            unanswered=person.unanswered + 1)
    _touch(s, world, p["opportunity_id"], e.time)


@folds("disposition_changed")
def _disposition(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    sid = p["stakeholder_id"]
    _person(s, sid, disposition=max(-1.0, min(1.0, s.people[sid].disposition + p["delta"])))


@folds("buyer_replied")
def _replied(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _person(s, p["stakeholder_id"], engaged=True, replied_at=e.time, unanswered=0)
    _touch(s, world, p["opportunity_id"], e.time)


@folds("evidence_recorded")
def _evidence(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    ev = Evidence.from_dict(p["evidence"])
    deal = s.deals[ev.subject]
    first = earliest(deal.first, qualifying_keys(world, world.opportunities[ev.subject], ev), ev.timestamp)
    _deal(s, world, ev.subject, evidence=(*deal.evidence, ev), first=first)


@folds("milestone_advanced")
def _advanced(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    deal, shown = s.deals[oid], world.opportunities[oid].shown_value
    price = 1.0 - p.get("discount", 0.0)
    s.shown_value[deal.milestone] -= shown * deal.price
    s.shown_value[p["to"]] = s.shown_value.get(p["to"], 0.0) + shown * price
    s.phi = None
    _deal(s, world, oid, milestone=p["to"], price=price)


@folds("meeting_requested")
def _meeting(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.meetings[p["meeting_id"]] = s.open_meetings[p["meeting_id"]] = Meeting(
        p["meeting_id"], p["opportunity_id"], tuple(p["invitees"]), p["start"], p["relevance"]
    )
    heapq.heappush(s.expiries, (p["start"] + MEETING_LIVE_HOURS, "meeting", p["meeting_id"]))
    for sid in p["invitees"]:
        _person(s, sid, last_contact=e.time)
    oid = p["opportunity_id"]
    _deal(s, world, oid, last_activity=e.time, meetings=(*s.deals[oid].meetings, p["meeting_id"]))


@folds("meeting_answered")
def _answered(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    m = s.meetings[p["meeting_id"]]
    sid = p["stakeholder_id"]
    if p["accepted"]:
        m = replaced(m, {"accepted": (*m.accepted, sid)})
        _person(s, sid, engaged=True)
    else:
        m = replaced(m, {"declined": (*m.declined, sid)})
    s.meetings[m.id] = m
    if m.id in s.open_meetings:  # the open index holds the current record, until nobody is coming
        if p["accepted"] or len(m.declined) < len(m.invitees):
            s.open_meetings[m.id] = m
        else:
            del s.open_meetings[m.id]


@folds("discovery_held")
def _discovery(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    m = s.meetings[p["meeting_id"]]
    s.meetings[m.id] = replaced(m, {"discovery_done": True})
    s.open_meetings.pop(m.id, None)
    oid = m.opportunity_id
    deal = s.deals[oid]
    changes: dict[str, Any] = {"pains_known": deal.pains_known | frozenset(p["pains"]), "last_activity": e.time}
    if p.get("approvals") is not None:
        changes["approvals_known"] = tuple(p["approvals"])
    if p.get("budget_band") is not None:
        changes["budget_known"] = tuple(p["budget_band"])
    if p.get("budget_band") is not None:
        changes["budget_timing"] = p.get("budget_timing") or "available now"
    if p.get("eb_hint"):
        changes["eb_hint"] = p["eb_hint"]
    _deal(s, world, oid, **changes)
    for sid, role in p["roles"].items():
        _person(s, sid, role=role)


@folds("resource_booked")
def _booked(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    b = Booking(p["booking_id"], p["opportunity_id"], p["resource"], p["hours"], p["start"])
    s.bookings[b.id] = s.open_bookings[b.id] = b
    heapq.heappush(s.expiries, (b.start + BOOKING_LIVE_HOURS, "booking", b.id))
    deal = s.deals[b.opportunity_id]
    s.deals[b.opportunity_id] = replaced(deal, {"bookings": (*deal.bookings, b.id)})
    key = (b.resource, week_of(b.start))
    s.usage.add(key, b.hours, 0.0)


@folds("booking_cancelled")
def _cancelled(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    b = s.bookings[p["booking_id"]]
    s.bookings[b.id] = replaced(b, {"status": "cancelled"})
    s.open_bookings.pop(b.id, None)
    if p["refunded"]:
        key = (b.resource, week_of(b.start))
        s.usage[key] = s.usage[key] - b.hours


@folds("booking_used")
def _used(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    b = s.bookings[p["booking_id"]]
    s.bookings[b.id] = replaced(b, {"status": "used"})
    s.open_bookings.pop(b.id, None)


@folds("process_started")
def _process_started(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    _deal(s, world, oid, pending=s.deals[oid].pending | {p["process"]}, last_activity=e.time)


@folds("process_finished")
def _process_finished(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    _deal(s, world, oid, pending=s.deals[oid].pending - {p["process"]})


@folds("business_case_built")
def _case(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    _deal(s, world, oid, business_case=max(s.deals[oid].business_case, p["relevance"]), last_activity=e.time)
    for sid in p["reached"]:
        _person(s, sid, value_seen=max(s.people[sid].value_seen, p["relevance"]))


@folds("offer_made")
def _offer(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], offered_discount=p["discount"], last_activity=e.time)


@folds("terms_countered")
def _countered(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], asked_discount=p["asked_discount"])


@folds("terms_agreed")
def _agreed(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], agreed_discount=p["discount"], asked_discount=None)


@folds("escalation_granted")
def _escalated(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    if p["purpose"] == "discount":
        _deal(s, world, oid, mgmt_discount=max(s.deals[oid].mgmt_discount, p["discount"]))
    else:
        _deal(s, world, oid, exec_sponsor=True)


@folds("contract_sent")
def _contract(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], contract_out=True, last_activity=e.time)


@folds("contract_stalled")
def _stalled(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], contract_out=False)


@folds("deal_closed")
def _closed(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    _deal(s, world, oid, status="closed", closed_at=e.time, contract_out=False)


@folds("crm_updated")
def _crm(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    crm = s.crm[oid]
    fields = dict(crm.fields)
    fields.update(p.get("fields") or {})
    s.crm[oid] = Crm(p.get("stage") or crm.stage, tuple(sorted(fields.items())), p.get("next_step") or crm.next_step)
    _refresh_row(s, world, oid)


@folds("opportunity_disqualified")
def _disqualified(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    if any(ev.type == EvidenceType.DISQUALIFICATION_REASON for ev in s.deals[oid].evidence):  # the buyer's reason
        s.dq_shown += world.opportunities[oid].shown_value * max(0.0, 1.0 - e.time / world.horizon)
        s.phi = None
    _deal(s, world, oid, status="disqualified", last_activity=e.time)


@folds("violation_recorded")
def _violation(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.violations[p["kind"]] = s.violations.get(p["kind"], 0) + 1


@folds("budget_frozen")
def _frozen(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _deal(s, world, p["opportunity_id"], frozen_until=p["until"])


@folds("competitor_moved")
def _competitor(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    oid = p["opportunity_id"]
    _deal(s, world, oid, pressure=s.deals[oid].pressure + p["pressure"])


@folds("stakeholder_left")
def _left(s: TerritoryState, world: TerritoryWorld, e: Event, p: Mapping[str, Any]) -> None:
    _person(s, p["stakeholder_id"], left=True)
