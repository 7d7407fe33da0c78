"""The desk's tools, in the shape SalesBench users know: typed arguments, model-facing descriptions, costs
and handlers.

A handler checks everything first and raises ``ToolError`` before it emits any event; after that it only
emits. Read tools (``writes=False``) emit nothing but the engine's ``tool_completed`` record. Every cost is in
minutes (``contract.TOOL_MINUTES``); ``docs/desk.md`` lists the tools with their failure modes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from salesgym.core.env import Context
from salesgym.core.numbers import rounded
from salesgym.core.tools import NO_COST, Strip, ToolArgs, ToolBox, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.desk import buyers, outputs
from salesgym.envs.desk.catalog import CATALOGUE, TERM_MULTIPLIER, plans_table, premium
from salesgym.envs.desk.contract import (
    CALLBACK_EARLY_MINUTES,
    CALLBACK_LATE_MINUTES,
    DISCOUNT_AUTHORITY_PCT,
    HANG_UP_REASONS,
    MAX_NOTES,
    MAX_PENDING_CALLBACKS,
    REJECT_REASONS,
    SEARCH_LIMIT_MAX,
    STATUSES,
    SUITABILITY_PENALTY,
    SUITABLE_COVER_MAX,
    TEMPERATURES,
    TERMINAL,
    TOOL_MINUTES,
    WAIT_MAX_MINUTES,
    Disposition,
    NextStep,
    Plan,
    Status,
    Temperature,
    Topic,
    need_band,
    suitable,
)
from salesgym.envs.desk.state import ACCEPTED, DNC_REQUEST, DeskState, Quote
from salesgym.envs.desk.world import DeskWorld, Lead

Ctx = Context[DeskWorld, DeskState]
LeadId = Annotated[str, StringConstraints(min_length=1, max_length=40), Strip]
Note = Annotated[str, StringConstraints(min_length=1, max_length=500), Strip]
Reason = Annotated[str, StringConstraints(max_length=200), Strip]
PITCH_MAX = 1000
Pitch = Annotated[str, StringConstraints(max_length=PITCH_MAX), Strip]
LEAD = "lead id, e.g. 'L007' (from crm_search_leads)"
NEED_ORDER = {"high": 0, "medium": 1, "low": 2}
HINTS = {**REJECT_REASONS, **HANG_UP_REASONS}
TEMPERATURE_ORDER = {t: -i for i, t in enumerate(TEMPERATURES)}  # hot first


# --- lookups shared by handlers -------------------------------------------------------------------------------
def lead_of(ctx: Ctx, lead_id: str) -> Lead:
    lead = ctx.world.leads.get(lead_id)
    if lead is None:
        raise ToolError(f"unknown lead {quote(lead_id)}; ids look like 'L000'..'L{ctx.world.n_leads - 1:03d}'")
    return lead


def in_call(ctx: Ctx) -> Lead:
    call = ctx.state.call
    if call is None:
        raise ToolError("no call is active; start one with calling_start_call")
    return ctx.world.leads[call.lead_id]


def done(output: Mapping[str, Any], tool: str) -> ToolOutcome:
    # tuple.__new__ with the defaults spelled out: the named tuple's Python-level __new__ is a frame per step
    return tuple.__new__(ToolOutcome, (output, TOOL_MINUTES[tool], NO_COST, False))


def row(ctx: Ctx, lead: Lead) -> dict[str, Any]:
    s = ctx.state.leads[lead.id]
    return {**lead.public(), "status": s.status, "calls": s.calls}


# --- argument models ------------------------------------------------------------------------------------------
class SearchArgs(ToolArgs):
    min_income: int | None = Field(None, ge=0, le=10_000_000, description="only leads earning at least this a year")
    max_age: int | None = Field(None, ge=18, le=120, description="only leads at most this old")
    temperature: Temperature | None = Field(None, description="only leads of this temperature")
    need_band: Literal["low", "medium", "high"] | None = Field(None, description="only leads in this need band")
    status: Status | None = Field(None, description="only leads with this status")
    sort_by: Literal["id", "income", "need", "temperature"] = Field(
        "id", description="order: id, income (highest first), need (highest band first), temperature (hot first)"
    )
    limit: int = Field(10, ge=1, le=SEARCH_LIMIT_MAX, description=f"rows to return (1-{SEARCH_LIMIT_MAX})")
    offset: int = Field(0, ge=0, le=10_000, description="rows to skip (paging)")


class LeadArgs(ToolArgs):
    lead_id: LeadId = Field(description=LEAD)


class NoteArgs(ToolArgs):
    lead_id: LeadId = Field(description=LEAD)
    note: Note = Field(description="your note (1-500 characters); notes are yours: no buyer reads them")


class NoArgs(ToolArgs):
    pass


class CallbackArgs(ToolArgs):
    lead_id: LeadId = Field(description=LEAD)
    minutes_from_now: int = Field(ge=15, le=int(WAIT_MAX_MINUTES), description="when to call back, in minutes")
    reason: Reason = Field(description="why (your own note)")


class ListCallbacksArgs(ToolArgs):
    within_minutes: int | None = Field(None, ge=0, le=10_000, description="only callbacks due within this")
    include_closed: bool = Field(False, description="also list honoured and missed callbacks")


class DiscoveryArgs(ToolArgs):
    topic: Topic = Field(description="what to ask the buyer on the line: budget (monthly), dependents, goal "
                         "(what the cover is for), coverage (how much cover they feel they need)")


class QuoteArgs(ToolArgs):
    lead_id: LeadId = Field(description=LEAD)
    plan_type: Plan = Field(description="TERM, WHOLE, UL or DI (see products_list_plans)")
    coverage_amount: int = Field(ge=1000, le=10_000_000, multiple_of=1000,
                                 description="cover in dollars (DI: monthly benefit), a multiple of 1000")
    term_years: int | None = Field(None, description="TERM: 10, 15, 20 or 30; null for WHOLE, UL and DI")


class OfferArgs(ToolArgs):
    plan_type: Plan = Field(description="the quoted plan")
    coverage_amount: int = Field(ge=1000, le=10_000_000, multiple_of=1000, description="the quoted cover")
    term_years: int | None = Field(None, description="the quoted term (null unless TERM)")
    monthly_premium: float = Field(ge=0, le=1_000_000, description="the quoted premium, exactly as quoted")
    discount_pct: int = Field(0, ge=0, le=DISCOUNT_AUTHORITY_PCT,
                              description=f"discount off the quoted premium, 0-{DISCOUNT_AUTHORITY_PCT} percent")
    next_step: NextStep = Field(description="close_today (ask for the decision now) or follow_up")


class SpokenOfferArgs(OfferArgs):
    pitch: Pitch | None = Field(None, description="what you say to the buyer as you make the offer (up to "
                                f"{PITCH_MAX} characters); the buyer hears it and answers")


class EndCallArgs(ToolArgs):
    disposition: Disposition = Field(description="how the call went (your own record)")


class WaitArgs(ToolArgs):
    minutes: float = Field(ge=1, le=WAIT_MAX_MINUTES, description="minutes to let pass")


# --- handlers -------------------------------------------------------------------------------------------------
def search_leads(ctx: Ctx, a: SearchArgs) -> ToolOutcome:
    states = ctx.state.leads
    found = [
        lead
        for lead in ctx.world.leads.values()
        if (a.min_income is None or lead.income >= a.min_income)
        and (a.max_age is None or lead.age <= a.max_age)
        and (a.temperature is None or lead.temperature == a.temperature)
        and (a.need_band is None or need_band(lead.need) == a.need_band)
        and (a.status is None or states[lead.id].status == a.status)
    ]
    if a.sort_by == "income":
        found.sort(key=lambda x: (-x.income, x.id))
    elif a.sort_by == "need":
        found.sort(key=lambda x: (NEED_ORDER[need_band(x.need)], x.id))
    elif a.sort_by == "temperature":
        found.sort(key=lambda x: (TEMPERATURE_ORDER[x.temperature], x.id))
    rows = [row(ctx, lead) for lead in found[a.offset : a.offset + a.limit]]
    return done({"leads": rows, "total": len(found), "offset": a.offset}, "crm_search_leads")


def get_lead(ctx: Ctx, a: LeadArgs) -> ToolOutcome:
    lead = lead_of(ctx, a.lead_id)
    s = ctx.state
    ls = s.leads[lead.id]
    quotes = [q for q in s.quotes.values() if q.lead_id == lead.id] if ls.quotes else []
    callbacks = [cb for cb in map(s.callbacks.__getitem__, s.pending) if cb.lead_id == lead.id]
    return done(
        {
            **lead.public(),
            "status": ls.status,
            "calls": ls.calls,
            "offers": ls.offers,
            "last_reason": ls.last_reason,
            "discovered": dict(ls.topics),
            "quotes": [_quote_view(q) for q in quotes],
            "notes": list(ls.notes),
            "pending_callbacks": [{"callback_id": cb.id, "due_minute": cb.due} for cb in callbacks],
            "converted": ({"plan": ls.plan, "monthly_premium": ls.mrr, "suitable": ls.suitable}
                          if ls.status == "converted" else None),
        },
        "crm_get_lead",
    )


def add_note(ctx: Ctx, a: NoteArgs) -> ToolOutcome:
    lead = lead_of(ctx, a.lead_id)
    if len(ctx.state.leads[lead.id].notes) >= MAX_NOTES:
        raise ToolError(f"lead {lead.id} already has {MAX_NOTES} notes, the most it can hold")
    ctx.emit("note_added", "agent", {"lead_id": lead.id, "note": a.note})
    return done({"lead_id": lead.id, "notes": len(ctx.state.leads[lead.id].notes)}, "crm_add_note")


def pipeline_summary(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    s = ctx.state
    return done(
        {
            "by_status": dict(s.counts),
            "converted_mrr": s.mrr,
            "conversions": s.conversions,
            "quotes": len(s.quotes),
            "pending_callbacks": len(s.pending),
            "minutes_left": round(ctx.world.horizon - s.now, 2),
            "violations": {"dnc": s.dnc_violations, "suitability": s.suitability_violations},
        },
        "crm_pipeline_summary",
    )


def schedule_callback(ctx: Ctx, a: CallbackArgs) -> ToolOutcome:
    lead = lead_of(ctx, a.lead_id)
    ls = ctx.state.leads[lead.id]
    if ls.status in TERMINAL:
        raise ToolError(f"lead {lead.id} is {ls.status}; no callback can be scheduled")
    if ls.pending_callbacks >= MAX_PENDING_CALLBACKS:
        raise ToolError(f"lead {lead.id} already has {MAX_PENDING_CALLBACKS} pending callbacks")
    due = round(ctx.now + a.minutes_from_now, 4)
    if due > ctx.world.horizon:
        raise ToolError(f"a callback in {a.minutes_from_now} minutes falls after the shift ends")
    cb_id = f"cb{len(ctx.state.callbacks):04d}"
    ctx.emit("callback_scheduled", "agent", {"callback_id": cb_id, "lead_id": lead.id, "due": due,
                                             "reason": a.reason})  # fmt: skip
    expiry = round(due + CALLBACK_LATE_MINUTES, 4)
    ctx.emit("scheduled", "env", {"due": expiry, "what": "callback_expiry", "data": {"callback_id": cb_id}})
    out = {"callback_id": cb_id, "lead_id": lead.id, "due_minute": due,
           "window": [round(due - CALLBACK_EARLY_MINUTES, 4), expiry]}  # fmt: skip
    return done(out, "calendar_schedule_callback")


def list_callbacks(ctx: Ctx, a: ListCallbacksArgs) -> ToolOutcome:
    s = ctx.state
    items = list(s.callbacks.values()) if a.include_closed else [s.callbacks[i] for i in s.pending]
    if a.within_minutes is not None:
        items = [cb for cb in items if cb.due <= s.now + a.within_minutes]
    shown = [{"callback_id": cb.id, "lead_id": cb.lead_id, "due_minute": cb.due, "reason": cb.reason,
              "status": cb.status} for cb in sorted(items, key=lambda c: (c.due, c.id))[:SEARCH_LIMIT_MAX]]  # fmt: skip
    return done({"callbacks": shown, "total": len(items)}, "calendar_list_callbacks")


def start_call(ctx: Ctx, a: LeadArgs) -> ToolOutcome:
    s = ctx.state
    if s.call is not None:
        raise ToolError(f"a call with {s.call.lead_id} is active; end it with calling_end_call first")
    lead = lead_of(ctx, a.lead_id)
    ls = s.leads[lead.id]
    if ls.status == "converted":
        raise ToolError(f"lead {lead.id} is already a customer")
    if ls.status == "exhausted":
        raise ToolError(f"lead {lead.id} takes no more calls (exhausted)")
    tool = "calling_start_call"
    if ls.status == "dnc":  # dialling is possible, and a breach of the rules: recorded, and it costs
        ctx.emit("dnc_violation_recorded", "agent", {"lead_id": lead.id})
        return done({"connected": False, "lead_id": lead.id, "violation": "this lead asked not to be called: "
                     "a do-not-call violation was recorded"}, tool)  # fmt: skip
    if not buyers.takes_call(lead, ls.calls + 1):
        ctx.emit("call_refused", lead_actor(lead), {"lead_id": lead.id, "reason": "too_many_calls"})
        dnc = buyers.dnc_when_over_limit(lead)
        if dnc:
            ctx.issue_evidence(DNC_REQUEST, lead.id, lead_actor(lead), {"reason": "too_many_calls"})
        return done({"connected": False, "lead_id": lead.id, "buyer": "hung up at once",
                     "reason": "too_many_calls", "hint": HANG_UP_REASONS["too_many_calls"], "dnc": dnc}, tool)
    honoured = _honoured_callback(ctx, lead.id)
    ctx.emit("call_started", "agent", {"lead_id": lead.id, "callback_id": honoured}, owned=True)
    return done({"connected": True, "lead_id": lead.id, "call_number": ls.calls + 1,
                 "honours_callback": honoured}, tool)  # fmt: skip


def lead_actor(lead: Lead) -> str:
    return f"buyer:{lead.id}"


def _honoured_callback(ctx: Ctx, lead_id: str) -> str | None:
    s, now = ctx.state, ctx.now
    if not s.leads[lead_id].pending_callbacks:
        return None
    for cb in map(s.callbacks.__getitem__, s.pending):
        if cb.lead_id == lead_id and cb.due - CALLBACK_EARLY_MINUTES <= now <= cb.due + CALLBACK_LATE_MINUTES:
            return cb.id
    return None


def ask_discovery(ctx: Ctx, a: DiscoveryArgs) -> ToolOutcome:
    lead = in_call(ctx)
    answer: Any = {
        "budget": lead.budget,
        "dependents": lead.dependents,
        "goal": lead.goal,
        "coverage": int(buyers.target_cover(lead, "TERM")),
    }[a.topic]
    ctx.emit("discovery_answered", lead_actor(lead), {"lead_id": lead.id, "topic": a.topic, "value": answer})
    return done({"lead_id": lead.id, "topic": a.topic, "answer": answer}, "calling_ask_discovery")


def _check_plan(lead: Lead, plan: str, coverage: int, term_years: int | None) -> None:
    spec = CATALOGUE[plan]
    if not spec.min_age <= lead.age <= spec.max_age:
        raise ToolError(f"{plan} is sold to ages {spec.min_age}-{spec.max_age}; {lead.id} is {lead.age}")
    if not spec.min_cover <= coverage <= spec.max_cover:
        raise ToolError(f"{plan} cover must be {spec.min_cover:,}-{spec.max_cover:,}, got {coverage:,}")
    if spec.term and term_years not in TERM_MULTIPLIER:
        raise ToolError(f"TERM needs term_years of {', '.join(map(str, TERM_MULTIPLIER))}")
    if not spec.term and term_years is not None:
        raise ToolError(f"{plan} has no term: give term_years null")


def _quote_view(q: Quote) -> dict[str, Any]:
    return {"quote_id": q.id, "lead_id": q.lead_id, "plan_type": q.plan, "coverage_amount": q.coverage,
            "term_years": q.term_years, "monthly_premium": q.premium}  # fmt: skip


def quote_plan(ctx: Ctx, a: QuoteArgs) -> ToolOutcome:
    lead = lead_of(ctx, a.lead_id)
    _check_plan(lead, a.plan_type, a.coverage_amount, a.term_years)
    s = ctx.state
    known = s.quote_of.get((lead.id, a.plan_type, a.coverage_amount, a.term_years))
    if known is not None:
        return done({**_quote_view(s.quotes[known]), "note": "already quoted"}, "products_quote_plan")
    price = premium(a.plan_type, a.coverage_amount, a.term_years, lead.age, lead.risk_class, lead.smoker)
    q_id = f"q{len(s.quotes):04d}"
    ctx.emit("quote_issued", "agent", {"quote_id": q_id, "lead_id": lead.id, "plan": a.plan_type,
                                       "coverage": a.coverage_amount, "term_years": a.term_years, "premium": price},
             owned=True)
    return done(_quote_view(s.quotes[q_id]), "products_quote_plan")


def propose_offer(ctx: Ctx, a: OfferArgs) -> ToolOutcome:
    lead = in_call(ctx)
    s = ctx.state
    ls, call = s.leads[lead.id], s.call
    assert call is not None
    if ls.status == "converted":
        raise ToolError(f"{lead.id} has already accepted an offer")
    q_id = s.quote_of.get((lead.id, a.plan_type, a.coverage_amount, a.term_years))
    if q_id is None:
        raise ToolError(f"no quote for {lead.id} on {a.plan_type} {a.coverage_amount:,}"
                        + (f" {a.term_years}y" if a.term_years else "") + "; call products_quote_plan first")
    q = s.quotes[q_id]
    if abs(a.monthly_premium - q.premium) > 0.005:
        raise ToolError(f"monthly_premium {a.monthly_premium:.2f} is not the quoted premium {q.premium:.2f} "
                        f"({q_id}); offer the quote as quoted (a discount goes in discount_pct)")
    price = rounded(q.premium * (1 - a.discount_pct / 100), 2)
    patience = lead.patience if ls.patience is None else ls.patience
    # tuple.__new__: the named tuples' Python-level __new__ is a frame each
    history: buyers.History = tuple.__new__(buyers.History, (
        ls.calls, ls.offers, call.offers, ls.rejections, patience, len(ls.topics), call.questions, ls.quotes,
        call.callback_id is not None))  # fmt: skip
    offer: buyers.Offer = tuple.__new__(buyers.Offer, (a.plan_type, a.coverage_amount, price, a.next_step))
    pitch: str | None = a.__dict__.get("pitch") or None  # only SpokenOfferArgs has one: no AttributeError raised
    model = getattr(ctx.family, "buyer", None)  # the language-model buyer (llm_buyer), None: the rule table's
    heard = None
    if model is None:
        u, u2 = ctx.draw("offer", lead.id), ctx.draw("gate", lead.id)
        d = buyers.decide(lead, ctx.world.variant, offer, history, u, u2)
    else:
        heard = model.hear(ctx, lead, offer, history, a.term_years, a.discount_pct, pitch)
    actor = lead_actor(lead)
    proposed = {"lead_id": lead.id, "quote_id": q_id, "discount_pct": a.discount_pct, "premium": price,
                "next_step": a.next_step}  # fmt: skip
    ctx.emit("offer_proposed", "agent", proposed if pitch is None else {**proposed, "pitch": pitch}, owned=True)
    if heard is not None:
        if heard.reply is not None:
            ctx.emit("buyer_replied", actor, heard.reply)  # the tape: replay and clones read it, never the model
        if heard.decision is None:  # the buyer's failure, not the seller's: recorded, the offer left undecided
            ctx.emit("buyer_error_recorded", actor, {"lead_id": lead.id, "stage": "decision", "error": heard.error})
            return done({"lead_id": lead.id, "decision": "no_answer", "reason": None, "monthly_premium": price,
                         "call_active": True, "dnc": False,
                         "buyer_error": f"the buyer model gave no valid answer ({heard.error}); this is not your "
                                        "mistake: the offer is undecided"}, "calling_propose_offer")  # fmt: skip
        d = heard.decision
    ctx.emit("buyer_decided", actor, {"lead_id": lead.id, "decision": d.decision, "reason": d.reason,
                                      "patience": d.patience}, owned=True)  # fmt: skip
    unsuitable = d.decision == "accept" and not suitable(a.plan_type, a.coverage_amount, lead.income,
                                                         lead.dependents)
    if unsuitable:  # the buyer said yes, and compliance voids it: recorded before the sale it voids
        ctx.emit("suitability_violation_recorded", "agent", {"lead_id": lead.id, "quote_id": q_id})
    if d.decision == "accept":
        ctx.issue_evidence(ACCEPTED, lead.id, actor, {"quote_id": q_id, "plan": a.plan_type,
                                                      "coverage": a.coverage_amount, "term_years": a.term_years,
                                                      "quoted": q.premium, "discount_pct": a.discount_pct,
                                                      "premium": price})  # fmt: skip
    elif d.decision == "hang_up":
        ctx.emit("buyer_hung_up", actor, {"lead_id": lead.id, "reason": d.reason}, owned=True)
        if d.dnc:
            ctx.issue_evidence(DNC_REQUEST, lead.id, actor, {"reason": d.reason})
    out: dict[str, Any] = {"lead_id": lead.id, "decision": d.decision, "reason": d.reason,
                           "hint": HINTS.get(d.reason or "") if d.decision != "ask" else ASK_HINT,
                           "monthly_premium": price, "call_active": d.decision != "hang_up", "dnc": d.dnc}  # fmt: skip
    if unsuitable:
        out["compliance"] = UNSUITABLE
    if heard is not None:
        out["buyer_says"] = heard.say
        return done(out, "calling_propose_offer")
    words, failure = speak(ctx, d.decision, d.reason, lead.persona)
    out["buyer_says"] = words
    if failure is not None:  # a buyer-side failure is data: recorded and shown, the decision stands
        ctx.emit("buyer_error_recorded", actor, {"lead_id": lead.id, "stage": "voice", "error": failure})
        out["buyer_error"] = f"the buyer's voice failed ({failure}); the decision above stands"
    return done(out, "calling_propose_offer")


ASK_HINT = "the buyer wants a question answered before deciding: answer it in the pitch of your next offer"
UNSUITABLE = (f"unsuitable: the cover is more than {SUITABLE_COVER_MAX:g}x the buyer's need; the sale earns nothing "
              f"and a compliance violation was recorded (${SUITABILITY_PENALTY:g})")


def speak(ctx: Ctx, decision: str, reason: str | None, persona: str) -> tuple[str, str | None]:
    """The buyer's words from the family's voice (cached by hash), or the canned line and what went wrong."""
    voice: buyers.Voice = getattr(ctx.family, "voice", None) or CANNED_VOICE
    if voice is CANNED_VOICE:
        return CANNED_VOICE.speak(decision, reason, persona), None
    cache: dict[str, str] = getattr(ctx.family, "voice_cache", {})
    key = hashlib.sha256(f"{decision}\x1f{reason}\x1f{persona}".encode()).hexdigest()
    if key not in cache:
        try:
            text = voice.speak(decision, reason, persona)
        except Exception as err:  # any failure of the optional voice: recorded, never a silent reject
            return CANNED_VOICE.speak(decision, reason, persona), f"{type(err).__name__}: {err}"[:200]
        if not isinstance(text, str):
            return CANNED_VOICE.speak(decision, reason, persona), "the voice returned no text"
        cache[key] = text[:600]
    return cache[key], None


CANNED_VOICE = buyers.CannedVoice()


def end_call(ctx: Ctx, a: EndCallArgs) -> ToolOutcome:
    lead = in_call(ctx)
    ctx.emit("call_ended", "agent", {"lead_id": lead.id, "disposition": a.disposition}, owned=True)
    return done({"lead_id": lead.id, "status": ctx.state.leads[lead.id].status}, "calling_end_call")


def list_plans(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"plans": PLANS_TABLE}, "products_list_plans")


PLANS_TABLE = plans_table()


def wait(ctx: Ctx, a: WaitArgs) -> ToolOutcome:
    return ToolOutcome({"waited_minutes": a.minutes}, a.minutes)


TOOLS: ToolBox[Ctx] = ToolBox(
    [
        ToolSpec("crm_search_leads", "Search the lead list with filters; each row shows the CRM's public facts, "
                 "banded budget and need estimates, status and calls so far.", SearchArgs, search_leads,
                 "1 minute", writes=False, output=outputs.SearchOutput),
        ToolSpec("crm_get_lead", "One lead in full: public facts, status, what discovery revealed, its quotes, "
                 "your notes and pending callbacks.", LeadArgs, get_lead, "0.5 minutes",
                 failure_modes=("unknown lead id",), writes=False, output=outputs.LeadOutput),
        ToolSpec("crm_add_note", "Add a note to a lead (your own record; no buyer reads it).", NoteArgs, add_note,
                 "0.5 minutes", failure_modes=("unknown lead id", f"{MAX_NOTES} notes already"),
                 output=outputs.NoteOutput),
        ToolSpec("crm_pipeline_summary", "Leads by status, converted MRR, conversions, quotes, callbacks, minutes "
                 "left, compliance violations.", NoArgs, pipeline_summary, "0.5 minutes", writes=False,
                 output=outputs.SummaryOutput),
        ToolSpec("calendar_schedule_callback", "Schedule a callback with a lead; calling it back within the "
                 f"window ({CALLBACK_EARLY_MINUTES:g} minutes before to {CALLBACK_LATE_MINUTES:g} after) honours "
                 "it, which buyers who wanted time appreciate.", CallbackArgs, schedule_callback, "1 minute",
                 failure_modes=("lead converted, exhausted or do-not-call",
                                f"{MAX_PENDING_CALLBACKS} callbacks already pending", "after the shift ends"),
                                output=outputs.CallbackOutput),
        ToolSpec("calendar_list_callbacks", "List callbacks (pending by default), soonest first.",
                 ListCallbacksArgs, list_callbacks, "0.5 minutes", writes=False, output=outputs.CallbacksOutput),
        ToolSpec("calling_start_call", "Call a lead. Only one call at a time. A lead takes a limited number of "
                 "calls; calling a do-not-call lead is a recorded violation.", LeadArgs, start_call, "2 minutes",
                 failure_modes=("a call is active", "unknown lead id", "lead converted or exhausted"),
                 output=outputs.StartCallOutput),
        ToolSpec("calling_ask_discovery", "Ask the buyer on the line one discovery question; the answer is the "
                 "true value (budget, dependents, goal or the cover they feel they need).", DiscoveryArgs,
                 ask_discovery, "3 minutes", failure_modes=("no active call",), output=outputs.DiscoveryOutput),
        ToolSpec("products_quote_plan", "Quote a plan for a lead (no call needed): the monthly premium from the "
                 "catalogue's formula. An offer must use a stored quote.", QuoteArgs, quote_plan, "1 minute",
                 failure_modes=("unknown lead id", "age outside the plan's ages", "cover outside the plan's range",
                                "term_years missing for TERM or given for another plan"), output=outputs.QuoteOutput),
        ToolSpec("calling_propose_offer", "Propose a quoted plan to the buyer on the line, at the quoted premium "
                 f"(optionally up to {DISCOUNT_AUTHORITY_PCT}% off). The buyer accepts, refuses with a reason code "
                 f"and a hint, or hangs up. A sale whose cover is more than {SUITABLE_COVER_MAX:g}x the buyer's need "
                 "is unsuitable: it earns nothing and is a recorded compliance violation.", OfferArgs, propose_offer,
                 "4 minutes",
                 failure_modes=("no active call", "the lead already accepted", "no stored quote for this lead, "
                                "plan, cover and term", "premium differs from the quote"), output=outputs.OfferOutput),
        ToolSpec("calling_end_call", "End the active call with a disposition (your own record).", EndCallArgs,
                 end_call, "1 minute", failure_modes=("no active call",), output=outputs.EndCallOutput),
        ToolSpec("products_list_plans", "The catalogue: plans, ages, cover ranges, rates per $1,000 by age band "
                 "and the multipliers of the premium formula.", NoArgs, list_plans, "0.5 minutes", writes=False,
                 output=outputs.PlansOutput),
        ToolSpec("wait", "Let minutes pass (e.g. until a callback is due).", WaitArgs, wait, "the minutes asked",
                 writes=False, output=outputs.WaitOutput),
    ]
)  # fmt: skip
# the desk with a language-model buyer: the same tools, and the offer carries what the seller says
SPOKEN_TOOLS: ToolBox[Ctx] = ToolBox([
    dataclasses.replace(spec, args=SpokenOfferArgs, description=spec.description + " Your pitch reaches the buyer.")
    if spec.name == "calling_propose_offer" else spec
    for spec in TOOLS.specs.values()
])  # fmt: skip
assert set(TOOL_MINUTES) | {"wait"} == set(TOOLS.names())
assert set(STATUSES) >= TERMINAL
