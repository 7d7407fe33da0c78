"""Live desk state and the fold that builds it from events.

Containers are dicts of immutable records (replaced, never mutated), listed in ``FORKED`` so a clone copies
only the dicts; every lead starts as the one shared ``FRESH`` record. ``APPLY`` maps an event kind to its fold
step; events it does not know change nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from salesgym.core.events import Event
from salesgym.core.numbers import rounded
from salesgym.core.state import Folds, State, replaced
from salesgym.envs.desk.contract import STATUSES
from salesgym.envs.desk.world import DeskWorld

ACCEPTED = "offer_accepted"  # the evidence kinds a buyer may put on the record
DNC_REQUEST = "dnc_request"
EVIDENCE_KINDS = frozenset({ACCEPTED, DNC_REQUEST})


class LeadState(NamedTuple):
    """What changes about a lead during the shift. Every lead starts as the one shared ``FRESH`` record."""

    patience: float | None = None  # None until the buyer's first decision: its starting patience (the world's)
    status: str = "new"  # contract.STATUSES
    calls: int = 0
    offers: int = 0
    rejections: int = 0
    topics: tuple[tuple[str, Any], ...] = ()  # discovery answers, in the order asked
    quotes: int = 0
    last_reason: str | None = None
    mrr: float = 0.0
    plan: str | None = None
    notes: tuple[str, ...] = ()
    pending_callbacks: int = 0
    suitable: bool = True  # False once a sale outside the buyer's suitable cover was recorded (it earns nothing)


class Quote(NamedTuple):
    id: str
    lead_id: str
    plan: str
    coverage: int
    term_years: int | None
    premium: float
    at: float


class Callback(NamedTuple):
    id: str
    lead_id: str
    due: float
    reason: str
    status: str = "pending"  # pending | honoured | missed


class Call(NamedTuple):
    lead_id: str
    number: int  # the lead's call number
    started: float
    offers: int = 0
    questions: int = 0
    callback_id: str | None = None  # the callback this call honours


@dataclass
class DeskState(State):
    FORKED = ("leads", "quotes", "quote_of", "callbacks", "pending", "counts")

    leads: dict[str, LeadState] = field(default_factory=dict)
    quotes: dict[str, Quote] = field(default_factory=dict)
    quote_of: dict[tuple[str, str, int, int | None], str] = field(default_factory=dict)  # (lead, plan, cover, term)
    callbacks: dict[str, Callback] = field(default_factory=dict)
    pending: dict[str, None] = field(default_factory=dict)  # ids of pending callbacks (the list is kept short)
    counts: dict[str, int] = field(default_factory=dict)  # leads per status
    call: Call | None = None
    mrr: float = 0.0  # converted monthly recurring revenue, as the buyers accepted it
    conversions: int = 0
    dnc_violations: int = 0
    suitability_violations: int = 0
    buyer_errors: int = 0

    def __post_init__(self) -> None:
        State.__init__(self)


FRESH = LeadState()  # an untouched lead: records are replaced, never mutated, so every lead can share it


def new_state(world: DeskWorld) -> DeskState:
    s = DeskState()
    s.leads = dict.fromkeys(world.leads, FRESH)
    s.counts = {status: 0 for status in STATUSES}
    s.counts["new"] = world.n_leads
    return s


def _lead(s: DeskState, lead_id: str, **changes: Any) -> None:
    """Replace lead ``lead_id``'s record with ``changes`` made (a lead's record is replaced on most steps)."""
    old = s.leads[lead_id]
    new = s.leads[lead_id] = replaced(old, changes)
    if new.status != old.status:
        s.counts[old.status] -= 1
        s.counts[new.status] += 1


folds: Folds[DeskState, DeskWorld] = Folds()
APPLY = folds.by_kind  # event kind -> its fold step
apply = folds.apply


@folds("note_added")
def _note(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    _lead(s, p["lead_id"], notes=(*s.leads[p["lead_id"]].notes, p["note"]))


@folds("callback_scheduled")
def _callback(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.callbacks[p["callback_id"]] = Callback(p["callback_id"], p["lead_id"], p["due"], p["reason"])
    s.pending[p["callback_id"]] = None
    _lead(s, p["lead_id"], pending_callbacks=s.leads[p["lead_id"]].pending_callbacks + 1)


def _close_callback(s: DeskState, cb_id: str, status: str) -> None:
    cb = s.callbacks[cb_id]
    s.callbacks[cb_id] = replaced(cb, {"status": status})
    s.pending.pop(cb_id, None)
    _lead(s, cb.lead_id, pending_callbacks=s.leads[cb.lead_id].pending_callbacks - 1)


@folds("callback_missed")
def _missed(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    _close_callback(s, p["callback_id"], "missed")


@folds("call_started")
def _call(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    lid = p["lead_id"]
    lead = s.leads[lid]
    _lead(s, lid, calls=lead.calls + 1, status="contacted" if lead.status == "new" else lead.status)
    cb = p.get("callback_id")
    if cb is not None:
        _close_callback(s, cb, "honoured")
    s.call = tuple.__new__(Call, (lid, lead.calls + 1, e.time, 0, 0, cb))  # Call(...), minus its __new__ frame


@folds("call_refused")
def _refused(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    lid = p["lead_id"]
    lead = s.leads[lid]
    _lead(s, lid, calls=lead.calls + 1, status="exhausted" if lead.status != "dnc" else "dnc")


@folds("dnc_violation_recorded")
def _violation(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.dnc_violations += 1


@folds("suitability_violation_recorded")
def _unsuitable(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.suitability_violations += 1
    _lead(s, p["lead_id"], suitable=False)


@folds("discovery_answered")
def _answered(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    lid = p["lead_id"]
    lead = s.leads[lid]
    if all(topic != p["topic"] for topic, _ in lead.topics):
        _lead(s, lid, topics=(*lead.topics, (p["topic"], p["value"])))
    if s.call is not None:
        s.call = replaced(s.call, {"questions": s.call.questions + 1})


@folds("quote_issued")
def _quoted(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    q: Quote = tuple.__new__(Quote, (p["quote_id"], p["lead_id"], p["plan"], p["coverage"], p["term_years"],
                                     p["premium"], e.time))  # fmt: skip
    s.quotes[q.id] = q
    s.quote_of[(q.lead_id, q.plan, q.coverage, q.term_years)] = q.id
    _lead(s, q.lead_id, quotes=s.leads[q.lead_id].quotes + 1)


@folds("offer_proposed")
def _offered(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    _lead(s, p["lead_id"], offers=s.leads[p["lead_id"]].offers + 1)
    if s.call is not None:
        s.call = replaced(s.call, {"offers": s.call.offers + 1})


@folds("buyer_decided")
def _decided(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    lid = p["lead_id"]
    lead = s.leads[lid]
    refused = p["decision"] in ("reject", "hang_up")  # a language-model buyer may also "ask": no refusal
    _lead(s, lid, patience=p["patience"], rejections=lead.rejections + refused, last_reason=p["reason"])


@folds("evidence_recorded")
def _evidence(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    ev = p["evidence"]
    lid = ev["subject"]
    if ev["type"] == ACCEPTED:
        if not s.leads[lid].suitable:  # an unsuitable sale (recorded just before): the buyer is lost, it earns nothing
            _lead(s, lid, status="converted", plan=ev["claim"]["plan"])
            return
        premium = float(ev["claim"]["premium"])
        _lead(s, lid, status="converted", mrr=premium, plan=ev["claim"]["plan"])
        s.mrr = rounded(s.mrr + premium, 2)
        s.conversions += 1
    elif ev["type"] == DNC_REQUEST:
        _lead(s, lid, status="dnc")


@folds("buyer_hung_up")
def _hung_up(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    if s.call is not None and s.call.lead_id == p["lead_id"]:
        s.call = None


@folds("call_ended")
def _ended(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.call = None


@folds("buyer_error_recorded")
def _buyer_error(s: DeskState, world: DeskWorld, e: Event, p: Mapping[str, Any]) -> None:
    s.buyer_errors += 1
