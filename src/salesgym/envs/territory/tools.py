"""The 18 territory tools: typed arguments, model-facing descriptions, costs, and handlers.

A handler checks everything first and raises ``ToolError`` before it emits any event; after that it only
emits. Read tools (``writes=False``) emit nothing but the engine's ``tool_completed`` record. Tool names
are the benchmark's contract; ``docs/tools.md`` is generated from these specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from salesgym.core.evidence import Evidence
from salesgym.core.tools import Strip, ToolArgs, ToolBox, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.territory import buyers, outputs
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    APPROVAL_RESOURCE,
    BOOKING_LEAD_MAX_DAYS,
    BOOKING_USABLE_DAYS,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    MAX_CRM_FIELDS,
    MEETING_LEAD_MAX_DAYS,
    MILESTONES,
    MIN_BOOKING_HOURS,
    RESEARCH_AGAIN_HOURS,
    TOOL_HOURS,
    VIEW_PAGE,
    CrmStage,
    day_of,
    stamp,
    start_of_day,
    week_of,
)
from salesgym.envs.territory.state import Booking, live_bookings, live_meetings
from salesgym.envs.territory.verifier import PENALTY
from salesgym.envs.territory.world import Opportunity, Stakeholder

# lengths are checked on the string as sent (as the exported schema does), then it is stripped
Id = Annotated[str, StringConstraints(min_length=1, max_length=40), Strip]
Text = Annotated[str, StringConstraints(max_length=4000), Strip]
ShortText = Annotated[str, StringConstraints(max_length=500), Strip]
Resource = Literal["se", "legal", "procurement", "management"]
Approval = Literal["security", "legal", "procurement"]
USABLE_HOURS = BOOKING_USABLE_DAYS * HOURS_PER_DAY  # a booking can be used within a business week of its start

OPP = "opportunity id, e.g. 'o003' (see the portfolio)"


# --- lookups shared by handlers ---------------------------------------------------------------------


def opportunity(ctx: Ctx, oid: str, *, open_only: bool = True) -> Opportunity:
    opp = ctx.world.opportunities.get(oid)
    if opp is None:
        raise ToolError(
            f"unknown opportunity {quote(oid)}; ids look like 'o000'..'o{len(ctx.world.opportunities) - 1:03d}'"
        )
    status = ctx.state.deals[oid].status
    if open_only and status != "open":
        raise ToolError(f"opportunity {oid} is {status}; no further work is possible on it")
    return opp


def stakeholder(ctx: Ctx, sid: str, opp: Opportunity | None = None) -> Stakeholder:
    who = ctx.world.stakeholders.get(sid)
    if who is None or not ctx.state.people[sid].known:
        raise ToolError(f"unknown stakeholder {quote(sid)}; call find_stakeholders on the opportunity first")
    if opp is not None and who.opportunity_id != opp.id:
        raise ToolError(f"stakeholder {sid} belongs to {who.opportunity_id}, not {opp.id}")
    if ctx.state.people[sid].left:
        raise ToolError(f"{who.name} ({sid}) has left the company")
    return who


def usable_booking(ctx: Ctx, bid: str, opp: Opportunity, resource: str, min_hours: float) -> Booking:
    b = ctx.state.bookings.get(bid)
    if b is None or b.opportunity_id != opp.id:
        raise ToolError(f"no booking {quote(bid)} for {opp.id}; book {resource} hours with book_resource")
    if b.resource != resource:
        raise ToolError(f"booking {bid} is for {b.resource}, this needs {resource}")
    if b.status != "booked":
        raise ToolError(f"booking {bid} is already {b.status}")
    if ctx.now < b.start:
        raise ToolError(f"booking {bid} starts {stamp(b.start)}; wait until then")
    if ctx.now > b.start + USABLE_HOURS:
        raise ToolError(f"booking {bid} lapsed (it was usable for a business week from {stamp(b.start)})")
    if b.hours < min_hours:
        raise ToolError(f"booking {bid} has {b.hours}h; this needs at least {min_hours}h of {resource}")
    return b


def capacity_left(ctx: Ctx, resource: str, week: int) -> float:
    return ctx.world.capacity[resource] - ctx.state.usage.get((resource, week), 0.0)


def done(output: Mapping[str, object], tool: str, hours: float | None = None) -> ToolOutcome:
    """A finished call: its output and the seller hours it cost (the tool's documented hours by default)."""
    cost = TOOL_HOURS[tool] if hours is None else hours
    return ToolOutcome(output, cost, {"seller": cost})


def page_of(items: list[Any], page: int) -> tuple[list[Any], dict[str, int] | None]:
    """One page of a long list in a view, newest first, and what was left out (None when nothing was)."""
    newest = items[::-1]
    shown = newest[page * VIEW_PAGE : (page + 1) * VIEW_PAGE]
    if len(newest) <= VIEW_PAGE:
        return shown, None
    return shown, {"page": page, "pages": -(-len(newest) // VIEW_PAGE), "total": len(newest)}


# --- argument models -----------------------------------------------------------------------------------


class ViewArgs(ToolArgs):
    opportunity_id: Id | None = Field(None, description=OPP + "; omit (null) to list the whole portfolio")
    page: int = Field(0, ge=0, le=1000, description=f"page of the meetings and bookings lists ({VIEW_PAGE} each, "
                      "newest first); 0 for the first")


class AccountArgs(ToolArgs):
    account_id: Id = Field(description="account id, e.g. 'a003' (shown by view_opportunity)")


class OppArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)


class MessageArgs(ToolArgs):
    stakeholder_id: Id = Field(description="stakeholder id from find_stakeholders, e.g. 'o003s1'")
    subject: ShortText = Field(description="subject line")
    body: Text = Field(description="message text; reference the account's researched facts to be relevant")


class MeetingArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    stakeholder_ids: list[Id] = Field(min_length=1, max_length=6, description="invitees (1-6 known stakeholders)")
    agenda: Text = Field(description="agenda; relevant topics raise acceptance")
    in_days: int = Field(ge=1, le=MEETING_LEAD_MAX_DAYS, description="business days from today until the meeting")


class BookArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    resource: Resource | None = Field(None, description="internal team to book; null when cancelling")
    hours: float | None = Field(None, ge=0.5, le=16, description="hours to book; null when cancelling")
    start_in_days: int | None = Field(
        None, ge=0, le=BOOKING_LEAD_MAX_DAYS, description="business days until the booking starts; null when cancelling"
    )
    cancel_booking_id: Id | None = Field(None, description="set to cancel this booking instead of booking")


class MeetingIdArgs(ToolArgs):
    meeting_id: Id = Field(description="meeting id from schedule_meeting, e.g. 'm000123'")


class BookingUseArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    booking_id: Id = Field(description="an SE booking for this opportunity that has started")


class CaseArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    summary: Text = Field(description="the value case; it persuades when it addresses the economic buyer's pains")


class PlanArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    sponsor_id: Id = Field(description="the buyer-side sponsor who owns the plan")
    close_in_days: int = Field(ge=5, le=180, description="business days from today to the planned signature")


class PriceArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    discount_pct: float = Field(ge=0, le=60, description="discount off list price, in percent")


class ApprovalArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    kind: Approval = Field(description="which review to start")
    booking_id: Id = Field(
        description="a started booking: security uses SE, legal uses legal, procurement uses procurement"
    )


class EscalateArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    purpose: Literal["discount", "executive_sponsor"] = Field(description="what to ask management for")
    discount_pct: float | None = Field(None, ge=0, le=60, description="for purpose=discount: the discount to approve")
    booking_id: Id = Field(description="a started management booking for this opportunity")


class CrmField(ToolArgs):
    name: Id
    value: ShortText


class CrmArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    stage: CrmStage | None = Field(
        None, description="CRM stage (your own forecast; it does not move verified milestones)"
    )
    fields: list[CrmField] = Field(default_factory=list, max_length=20, description="free-form CRM fields to set")
    next_step: ShortText | None = Field(None, description="next step note")


class DisqualifyArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    reason: ShortText = Field(description="why this deal cannot close")


class WaitArgs(ToolArgs):
    hours: float | None = Field(None, ge=0.25, le=80, description="business hours to wait; null to use 'until'")
    until: Literal["next_event", "next_week"] | None = Field(
        None, description="wait until the next scheduled buyer response, or until Monday; null to use 'hours'"
    )


# --- handlers ----------------------------------------------------------------------------------------


def view_opportunity(ctx: Ctx, a: ViewArgs) -> ToolOutcome:
    if a.opportunity_id is None:
        from salesgym.envs.territory.observe import portfolio

        return done({"portfolio": portfolio(ctx.state)}, "view_opportunity")
    opp = opportunity(ctx, a.opportunity_id, open_only=False)
    s, w = ctx.state, ctx.world
    deal, crm, account = s.deals[opp.id], s.crm[opp.id], w.accounts[opp.account_id]
    researched = opp.account_id in s.researched
    meetings, more_meetings = page_of(list(deal.meetings), a.page)
    bookings, more_bookings = page_of(list(deal.bookings), a.page)
    out = {
        "opportunity": {
            **opp.public(),
            "status": deal.status,
            "milestone": MILESTONES[deal.milestone],
            "crm": {"stage": crm.stage, "fields": dict(crm.fields), "next_step": crm.next_step},
        },
        "account": {
            **account.public(),
            **({"stack": list(account.stack), "news": [n.headline for n in account.news]} if researched else {}),
        },
        "stakeholders": [
            {
                **w.stakeholders[sid].public(),
                "role": s.people[sid].role,
                "engaged": s.people[sid].engaged,
                "left": s.people[sid].left,
            }
            for sid in opp.stakeholder_ids
            if s.people[sid].known
        ],
        "learned": {
            "keywords": sorted(buyers.known_keywords(ctx, opp)),
            "pains": [w.pain_label(p) for p in sorted(deal.pains_known)],
            "required_approvals": list(deal.approvals_known) if deal.approvals_known is not None else "unknown",
            "budget_band": list(deal.budget_known) if deal.budget_known else "unknown",
            "economic_buyer": deal.eb_hint or "unknown",
            "budget_timing": deal.budget_timing or "unknown",
        },
        "evidence": _evidence_summary(deal.evidence),
        "meetings": [
            {
                "id": m.id,
                "start": stamp(m.start),
                "invited": list(m.invitees),
                "accepted": list(m.accepted),
                "declined": list(m.declined),
                "discovery_done": m.discovery_done,
            }
            for m in map(s.meetings.__getitem__, meetings)
        ],
        "bookings": [
            {"id": b.id, "resource": b.resource, "hours": b.hours, "start": stamp(b.start), "status": b.status}
            for b in map(s.bookings.__getitem__, bookings)
        ],
        "terms": {
            "offered_pct": _pct(deal.offered_discount),
            "buyer_asks_pct": _pct(deal.asked_discount),
            "agreed_pct": _pct(deal.agreed_discount),
            "management_approved_pct": _pct(deal.mgmt_discount),
            "contract_out": deal.contract_out,
        },
        "in_progress": sorted(deal.pending),
    }
    if more_meetings or more_bookings:  # long lists are cut: say how much, and how to see the rest
        out["more"] = {"meetings": more_meetings, "bookings": more_bookings, "note": "pass page=N for older items"}
    return done(out, "view_opportunity")


def _evidence_summary(evidence: tuple[Evidence, ...]) -> list[dict[str, object]]:
    """Verified buyer evidence on a deal, one line per type: how many, from whom, first and last time."""
    by_type: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_type.setdefault(e.type, []).append(e)
    return [
        {
            "type": t,
            "count": len(es),
            "from": sorted({e.source_actor for e in es}),
            "first": stamp(es[0].timestamp),
            "last": stamp(es[-1].timestamp),
        }
        for t, es in by_type.items()
    ]


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 1)


def research_account(ctx: Ctx, a: AccountArgs) -> ToolOutcome:
    account = ctx.world.accounts.get(a.account_id)
    if account is None:
        raise ToolError(f"unknown account {quote(a.account_id)}; ids look like 'a000'")
    if account.id in ctx.state.researched:
        already = {"note": "already researched", "keywords": sorted(ctx.state.researched[account.id])}
        return done(already, "research_account", RESEARCH_AGAIN_HOURS)
    keywords = sorted({n.keyword for n in account.news})
    ctx.emit("account_researched", "agent", {"account_id": account.id, "keywords": keywords})
    return done(
        {
            "account": {**account.public(), "stack": list(account.stack)},
            "news": [n.headline for n in account.news],
            "keywords": keywords,
        },
        "research_account",
    )


def find_stakeholders(ctx: Ctx, a: OppArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    ctx.emit("stakeholders_found", "agent", {"opportunity_id": opp.id, "stakeholder_ids": list(opp.stakeholder_ids)})
    found = [
        {**ctx.world.stakeholders[sid].public(), "left": ctx.state.people[sid].left} for sid in opp.stakeholder_ids
    ]
    return done({"stakeholders": found}, "find_stakeholders")


def send_message(ctx: Ctx, a: MessageArgs) -> ToolOutcome:
    who = stakeholder(ctx, a.stakeholder_id)  # refuses unknown people and people who have left
    opp = opportunity(ctx, who.opportunity_id)
    refs = buyers.referenced_pains(ctx, opp, f"{a.subject}\n{a.body}")
    rel = buyers.relevance(ctx, opp, who, refs)
    ctx.emit(
        "message_sent",
        "agent",
        {
            "opportunity_id": opp.id,
            "stakeholder_id": who.id,
            "relevance": round(rel, 4),
            "references": sorted(refs),
            "chars": len(a.body),
        },
    )
    buyers.on_message(ctx, opp, who, rel)
    return done({"sent_to": who.id, "note": "replies, if any, arrive in your inbox"}, "send_message")


def schedule_meeting(ctx: Ctx, a: MeetingArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    invitees = [stakeholder(ctx, sid, opp) for sid in dict.fromkeys(a.stakeholder_ids)]
    refs = buyers.referenced_pains(ctx, opp, a.agenda)
    rel = max(buyers.relevance(ctx, opp, p, refs) for p in invitees)
    meeting_id = f"m{len(ctx.state.meetings):04d}"  # numbered among the seller's own meetings: public
    start = start_of_day(day_of(ctx.now) + a.in_days) + 2.0  # 11:00 on that day
    ctx.emit(
        "meeting_requested",
        "agent",
        {
            "meeting_id": meeting_id,
            "opportunity_id": opp.id,
            "invitees": [p.id for p in invitees],
            "start": start,
            "relevance": round(rel, 4),
        },
    )
    buyers.on_meeting_invite(ctx, opp, meeting_id, invitees, rel)
    out = {"meeting_id": meeting_id, "start": stamp(start), "note": "invitees answer in your inbox"}
    return done(out, "schedule_meeting")


def book_resource(ctx: Ctx, a: BookArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    if a.cancel_booking_id is not None:
        b = ctx.state.bookings.get(a.cancel_booking_id)
        if b is None or b.opportunity_id != opp.id or b.status != "booked":
            raise ToolError(f"no active booking {quote(a.cancel_booking_id)} on {opp.id} to cancel")
        late = ctx.now >= b.start - ctx.world.lead_days[b.resource] * HOURS_PER_DAY
        ctx.emit("booking_cancelled", "agent", {"booking_id": b.id, "refunded": not late})
        if late and b.resource == "se":  # the buyer had planned around the SE session
            for who in buyers.people(ctx, opp, "technical_evaluator", "champion"):
                buyers.nudge(ctx, who.id, -0.1, "session cancelled at short notice")
        return done(
            {
                "cancelled": b.id,
                "refunded": not late,
                "note": "cancelled inside lead time: hours are lost" if late else "hours returned",
            },
            "book_resource",
        )
    if a.resource is None or a.hours is None or a.start_in_days is None:
        raise ToolError("to book, give resource, hours and start_in_days (or cancel_booking_id to cancel)")
    lead = ctx.world.lead_days[a.resource]
    if a.start_in_days < lead:
        raise ToolError(f"{a.resource} needs {lead} business days' notice; use start_in_days >= {lead}")
    start = start_of_day(day_of(ctx.now) + a.start_in_days)
    if start >= ctx.world.horizon:
        raise ToolError("that start date is past the end of the episode")
    left = capacity_left(ctx, a.resource, week_of(start))
    if a.hours > left + 1e-9:
        raise ToolError(f"{a.resource} has only {max(left, 0):.1f}h left in the week of {stamp(start)[:14]}")
    booking_id = f"b{len(ctx.state.bookings):04d}"  # numbered among the seller's own bookings: public
    ctx.emit(
        "resource_booked",
        "agent",
        {"booking_id": booking_id, "opportunity_id": opp.id, "resource": a.resource, "hours": a.hours, "start": start},
    )
    out = {"booking_id": booking_id, "resource": a.resource, "hours": a.hours, "start": stamp(start)}
    return done(out, "book_resource")


def run_discovery(ctx: Ctx, a: MeetingIdArgs) -> ToolOutcome:
    m = ctx.state.meetings.get(a.meeting_id)
    if m is None:
        raise ToolError(f"unknown meeting {quote(a.meeting_id)}; schedule one with schedule_meeting")
    opp = opportunity(ctx, m.opportunity_id)
    if m.discovery_done:
        raise ToolError(f"discovery for meeting {m.id} is done; schedule another meeting")
    if ctx.now < m.start:
        raise ToolError(f"meeting {m.id} is at {stamp(m.start)}; wait until then")
    if ctx.now > m.start + HOURS_PER_DAY:
        raise ToolError(f"meeting {m.id} was on {stamp(m.start)}; it has passed")
    attendees = [ctx.world.stakeholders[sid] for sid in m.accepted if not ctx.state.people[sid].left]
    if not attendees:
        raise ToolError(f"nobody accepted meeting {m.id}")
    reveal = buyers.discovery(ctx, opp, m.id, attendees, m.relevance)
    w = ctx.world
    account = w.accounts[opp.account_id]
    # buyers describe how much a pain hurts in words, not numbers
    severity = {
        p: "high" if v >= 0.75 else "medium" if v >= 0.5 else "low"
        for p, v in zip(account.pains, account.severity, strict=True)
    }
    return done(
        {
            "attendees": [p.id for p in attendees],
            "pains": [
                {
                    "label": w.pain_label(p),
                    "keywords": list(w.spec.pain(p).keywords),
                    "severity": severity.get(p, "low"),
                }
                for p in reveal["pains"]
            ],
            "roles": reveal["roles"],
            "required_approvals": reveal["approvals"] or "not discussed",
            "budget_band": reveal["budget_band"] or "not discussed",
            "economic_buyer": reveal["eb_hint"] or "not discussed",
            "budget_timing": reveal.get("budget_timing")
            or ("available now" if reveal["budget_band"] else "not discussed"),
        },
        "run_discovery",
    )


def run_technical_evaluation(ctx: Ctx, a: BookingUseArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    if "tech_eval" in ctx.state.deals[opp.id].pending:
        raise ToolError(f"a technical evaluation is already running on {opp.id}")
    b = usable_booking(ctx, a.booking_id, opp, "se", MIN_BOOKING_HOURS["tech_eval"])
    ctx.emit("booking_used", "agent", {"booking_id": b.id})
    ctx.emit("process_started", "agent", {"opportunity_id": opp.id, "process": "tech_eval"})
    buyers.schedule(ctx, 3 * HOURS_PER_DAY, "tech_result", "buyer", opportunity_id=opp.id, hours=b.hours)
    out = {"started": True, "se_hours": b.hours, "note": "the buyer reports the result in about 3 days"}
    return done(out, "run_technical_evaluation")


def build_business_case(ctx: Ctx, a: CaseArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    refs = buyers.referenced_pains(ctx, opp, a.summary)
    audience = buyers.people(ctx, opp, "economic_buyer", "champion")
    rel = max((buyers.relevance(ctx, opp, p, refs) for p in audience), default=0.0)
    ctx.emit(
        "business_case_built",
        "agent",
        {"opportunity_id": opp.id, "relevance": round(rel, 4), "reached": [p.id for p in audience]},
    )
    for p in audience:
        buyers.nudge(ctx, p.id, 0.3 * buyers.relevance(ctx, opp, p, refs), "business case")
    return done({"business_case": "shared with the buying committee", "addresses": len(refs)}, "build_business_case")


def propose_action_plan(ctx: Ctx, a: PlanArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    who = stakeholder(ctx, a.sponsor_id, opp)
    if "action_plan" in ctx.state.deals[opp.id].pending:
        raise ToolError(f"an action plan is already awaiting an answer on {opp.id}")
    close_day = day_of(ctx.now) + a.close_in_days
    ctx.emit("process_started", "agent", {"opportunity_id": opp.id, "process": "action_plan"})
    buyers.schedule(
        ctx,
        buyers.latency(ctx, who, "plan"),
        "plan_answer",
        who.id,
        opportunity_id=opp.id,
        stakeholder_id=who.id,
        close_day=close_day,
    )
    return done({"proposed_to": who.id, "close_date": stamp(start_of_day(close_day))[:14]}, "propose_action_plan")


def _offer(ctx: Ctx, opp: Opportunity, pct: float, tool: str, label: str) -> ToolOutcome:
    discount = round(pct / 100.0, 4)
    deal = ctx.state.deals[opp.id]
    ctx.emit("offer_made", "agent", {"opportunity_id": opp.id, "discount": discount, "kind": label})
    if discount > ctx.world.discount_authority + 1e-9 and discount > deal.mgmt_discount + 1e-9:
        ctx.emit("violation_recorded", "verifier", {"kind": "unauthorised_discount", "opportunity_id": opp.id})
        buyers.notify(
            ctx, opp.id, "verifier", "violation",
            f"Unauthorised discount recorded: {pct:.1f}% is above your authority and any management approval "
            f"(penalty {PENALTY['unauthorised_discount']:.0%} of the deal's value).",
            decision="recorded", reason="unauthorised_discount", discount_pct=round(pct, 1),
        )  # fmt: skip
    who = buyers.first_of(ctx, opp, "procurement", "economic_buyer", "champion")
    delay = buyers.latency(ctx, who, "terms") if who is not None else HOURS_PER_DAY
    buyers.schedule(ctx, delay, "terms_answer", "buyer", opportunity_id=opp.id, discount=discount)
    return done({label: f"{pct:.1f}% discount", "authority_pct": 100 * ctx.world.discount_authority}, tool)


def send_proposal(ctx: Ctx, a: PriceArgs) -> ToolOutcome:
    return _offer(ctx, opportunity(ctx, a.opportunity_id), a.discount_pct, "send_proposal", "proposal")


def negotiate(ctx: Ctx, a: PriceArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    if ctx.state.deals[opp.id].offered_discount is None:
        raise ToolError(f"send a proposal on {opp.id} before negotiating")
    return _offer(ctx, opp, a.discount_pct, "negotiate", "counter_offer")


def request_approval(ctx: Ctx, a: ApprovalArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    process = f"approval:{a.kind}"
    if process in ctx.state.deals[opp.id].pending:
        raise ToolError(f"a {a.kind} review is already running on {opp.id}")
    b = usable_booking(ctx, a.booking_id, opp, APPROVAL_RESOURCE[a.kind], MIN_BOOKING_HOURS["review"])
    ctx.emit("booking_used", "agent", {"booking_id": b.id})
    ctx.emit("process_started", "agent", {"opportunity_id": opp.id, "process": process})
    slow = 1.5 if "procurement_heavy" in ctx.world.mechanisms else 1.0
    buyers.schedule(
        ctx,
        APPROVAL_DAYS[a.kind] * HOURS_PER_DAY * slow,
        "approval",
        "buyer",
        opportunity_id=opp.id,
        kind=a.kind,
        hours=b.hours,
    )
    return done({"review": a.kind, "note": f"the buyer's {a.kind} review takes days"}, "request_approval")


def escalate(ctx: Ctx, a: EscalateArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    if a.purpose == "discount" and a.discount_pct is None:
        raise ToolError("purpose=discount needs discount_pct")
    if a.purpose == "executive_sponsor" and ctx.state.deals[opp.id].exec_sponsor:
        raise ToolError(f"an executive sponsor call already happened on {opp.id}")
    if "escalation" in ctx.state.deals[opp.id].pending:
        raise ToolError(f"an escalation is already pending on {opp.id}")
    need = MIN_BOOKING_HOURS["discount_approval" if a.purpose == "discount" else "executive_sponsor"]
    b = usable_booking(ctx, a.booking_id, opp, "management", need)
    ctx.emit("booking_used", "agent", {"booking_id": b.id})
    ctx.emit("process_started", "agent", {"opportunity_id": opp.id, "process": "escalation"})
    buyers.schedule(
        ctx,
        HOURS_PER_DAY,
        "escalation",
        "management",
        opportunity_id=opp.id,
        purpose=a.purpose,
        discount=round((a.discount_pct or 0.0) / 100, 4),
    )
    return done({"escalated": a.purpose, "note": "management answers within a day"}, "escalate")


def send_contract(ctx: Ctx, a: OppArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    if ctx.state.deals[opp.id].contract_out:
        raise ToolError(f"a contract is already out for signature on {opp.id}")
    signer = buyers.first_of(ctx, opp, "economic_buyer", "champion")
    delay = buyers.latency(ctx, signer, "contract") + 2 * HOURS_PER_DAY if signer else 2 * HOURS_PER_DAY
    ctx.emit("contract_sent", "agent", {"opportunity_id": opp.id})
    buyers.schedule(ctx, delay, "contract_answer", "buyer", opportunity_id=opp.id)
    return done({"contract": "sent for signature"}, "send_contract")


def update_crm(ctx: Ctx, a: CrmArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id, open_only=False)
    names = {name for name, _ in ctx.state.crm[opp.id].fields} | {f.name for f in a.fields}
    if len(names) > MAX_CRM_FIELDS:
        raise ToolError(
            f"a CRM record keeps at most {MAX_CRM_FIELDS} fields; {opp.id} would have {len(names)} "
            "(overwrite an existing field instead)"
        )
    ctx.emit(
        "crm_updated",
        "agent",
        {
            "opportunity_id": opp.id,
            "stage": a.stage,
            "fields": {f.name: f.value for f in a.fields},
            "next_step": a.next_step,
        },
    )
    return done({"crm": "updated"}, "update_crm")


def disqualify(ctx: Ctx, a: DisqualifyArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    ctx.emit("opportunity_disqualified", "agent", {"opportunity_id": opp.id, "reason": a.reason})
    return done({"disqualified": opp.id}, "disqualify")


def wait(ctx: Ctx, a: WaitArgs) -> ToolOutcome:
    if (a.hours is None) == (a.until is None):
        raise ToolError("give exactly one of 'hours' or 'until'")
    if a.hours is not None:
        hours = a.hours
    elif a.until == "next_week":
        hours = (week_of(ctx.now) + 1) * HOURS_PER_WEEK - ctx.now
    else:  # until the first thing the seller will see happen, or the next meeting or booking, at most a week
        due = [t for t in _upcoming(ctx) if t > ctx.now]
        hours = min([*due, ctx.now + HOURS_PER_WEEK]) - ctx.now
    hours = max(0.01, round(hours, 4))
    return ToolOutcome({"waited": a.until or "hours"}, hours, {"seller": 0.0}, until_public=a.until == "next_event")


def _upcoming(ctx: Ctx) -> list[float]:
    """Times the seller knows something of theirs starts: accepted meetings and bookings. (When a buyer will
    answer is the buyer's secret: waiting for it ends at the answer, whenever that comes.)"""
    times = [m.start for m in live_meetings(ctx.state, ctx.now) if m.accepted and not m.discovery_done]
    times += [b.start for b in live_bookings(ctx.state, ctx.now)]
    return times


T = ToolSpec


def hours(tool: str) -> str:
    return f"{TOOL_HOURS[tool]:g} h"


TOOLS: ToolBox[Ctx] = ToolBox(
    [
        T(
            "view_opportunity",
            "Show one opportunity in full (account, known stakeholders, what you learned, evidence, "
            "meetings, bookings, terms), or with no id the whole portfolio table.",
            ViewArgs,
            view_opportunity,
            hours("view_opportunity"),
            writes=False,
            failure_modes=("unknown opportunity id",),
            output=outputs.ViewOutput,
        ),
        T(
            "research_account",
            "Research an account's public news and stack. Reveals keywords tied to its pains; "
            "messages that reference them are relevant to the people who care.",
            AccountArgs,
            research_account,
            f"{hours('research_account')} ({RESEARCH_AGAIN_HOURS:g} h if already researched)",
            side_effects="keywords become usable for relevance",
            failure_modes=("unknown account id",),
            output=outputs.ResearchOutput,
        ),
        T(
            "find_stakeholders",
            "List the buying committee of an opportunity: names, ids and titles. Titles usually, "
            "not always, reflect authority.",
            OppArgs,
            find_stakeholders,
            hours("find_stakeholders"),
            side_effects="stakeholders become contactable",
            failure_modes=("unknown or closed opportunity",),
            output=outputs.StakeholdersOutput,
        ),
        T(
            "send_message",
            "Email one stakeholder. Replies arrive later in the inbox; relevant messages (researched "
            "keywords matching their pains) get answers, spamming the same person hurts.",
            MessageArgs,
            send_message,
            hours("send_message"),
            side_effects="may schedule a reply (buyer_reply evidence)",
            failure_modes=("stakeholder not found yet", "stakeholder left the company", "deal closed"),
            output=outputs.MessageOutput,
        ),
        T(
            "schedule_meeting",
            "Invite stakeholders to a meeting in N business days. Each answers later; acceptances are "
            "evidence. Hold discovery in an accepted meeting.",
            MeetingArgs,
            schedule_meeting,
            hours("schedule_meeting"),
            side_effects="schedules answers (meeting_acceptance evidence)",
            failure_modes=("unknown invitee",),
            output=outputs.MeetingOutput,
        ),
        T(
            "book_resource",
            "Book internal hours (SE, legal, procurement desk, management) for an opportunity, respecting "
            "lead times and weekly capacity; or cancel a booking (inside the lead time the hours are lost and "
            "the buyer notices).",
            BookArgs,
            book_resource,
            hours("book_resource"),
            resource_cost="the booked hours of that team",
            failure_modes=("lead time not met", "capacity exhausted that week", "unknown booking"),
            output=outputs.BookOutput,
        ),
        T(
            "run_discovery",
            "Run discovery in an accepted meeting that has started: learn pains, roles, required "
            "approvals, budget band; the right people may confirm budget or sponsor the deal.",
            MeetingIdArgs,
            run_discovery,
            hours("run_discovery"),
            side_effects="may create budget_confirmation / authorised_sponsor / disqualification_reason evidence",
            failure_modes=("meeting not started", "nobody accepted", "already done"),
            output=outputs.DiscoveryOutput,
        ),
        T(
            "run_technical_evaluation",
            f"Start a technical evaluation using a started SE booking (at least {MIN_BOOKING_HOURS['tech_eval']:g} h). "
            "The buyer reports in about 3 days; fit, goodwill and every SE hour booked raise the odds, competitors "
            "lower them.",
            BookingUseArgs,
            run_technical_evaluation,
            hours("run_technical_evaluation"),
            resource_cost="consumes the SE booking",
            side_effects="may create technical_success evidence",
            failure_modes=("no usable SE booking", "already running"),
            output=outputs.EvaluationOutput,
        ),
        T(
            "build_business_case",
            "Write and share a business case. It moves the economic buyer when it addresses the "
            "pains they care about (use researched or discovered keywords).",
            CaseArgs,
            build_business_case,
            hours("build_business_case"),
            output=outputs.CaseOutput,
        ),
        T(
            "propose_action_plan",
            "Propose a mutual action plan with a close date to a buyer-side sponsor. Accepted "
            "when the sponsor is willing and the date fits their real deadline.",
            PlanArgs,
            propose_action_plan,
            hours("propose_action_plan"),
            side_effects="may create mutual_action_plan evidence",
            output=outputs.PlanOutput,
        ),
        T(
            "send_proposal",
            "Send a priced proposal at a discount off list. Discounts above your authority (15%) need a "
            "management approval first (escalate) or count as unauthorised.",
            PriceArgs,
            send_proposal,
            hours("send_proposal"),
            side_effects="the buyer accepts or counters later",
            output=outputs.ProposalOutput,
        ),
        T(
            "negotiate",
            "Make a new offer (discount) after a proposal. The buyer accepts or counters later.",
            PriceArgs,
            negotiate,
            hours("negotiate"),
            failure_modes=("no proposal yet",),
            output=outputs.CounterOutput,
        ),
        T(
            "request_approval",
            "Start a buyer-side security, legal or procurement review using a started booking (at least "
            f"{MIN_BOOKING_HOURS['review']:g} h) of your SE, legal or procurement desk; more hours make approval "
            "likelier, a thin review comes back with changes. Procurement after agreed terms approves the final terms.",
            ApprovalArgs,
            request_approval,
            hours("request_approval"),
            resource_cost="consumes the booking",
            side_effects="may create security/legal/procurement_approval evidence",
            output=outputs.ApprovalOutput,
        ),
        T(
            "escalate",
            "Ask management to approve a discount above your authority (needs a started management booking of "
            f"at least {MIN_BOOKING_HOURS['discount_approval']:g} h) or to join as executive sponsor (at least "
            f"{MIN_BOOKING_HOURS['executive_sponsor']:g} h). Management weighs the deal: how far it is verified, "
            "whether a business case addresses the buyer's pains, competitive pressure; it never goes above 35%.",
            EscalateArgs,
            escalate,
            hours("escalate"),
            resource_cost="consumes the management booking",
            output=outputs.EscalateOutput,
        ),
        T(
            "send_contract",
            "Send the contract for signature. It is signed only when terms are agreed, reviews are in, "
            "and the buyer is ready; otherwise it stalls.",
            OppArgs,
            send_contract,
            hours("send_contract"),
            side_effects="may create contract_signature evidence",
            output=outputs.ContractOutput,
        ),
        T(
            "update_crm",
            "Update your CRM record (stage, fields, next step). CRM is your own notebook: it never "
            "changes verified milestones.",
            CrmArgs,
            update_crm,
            hours("update_crm"),
            output=outputs.CrmOutput,
        ),
        T(
            "disqualify",
            "Drop an opportunity that cannot close, freeing capacity. Dropping a viable deal is penalised.",
            DisqualifyArgs,
            disqualify,
            hours("disqualify"),
            side_effects="the opportunity becomes terminal",
            output=outputs.DisqualifyOutput,
        ),
        T(
            "wait",
            "Let time pass: a number of business hours; or until the next event (the first new item in your "
            "inbox, an accepted meeting or a booking starting, at most a week); or until Monday. The only tool "
            "available when this week's seller hours are used up.",
            WaitArgs,
            wait,
            "the hours waited",
            resource_cost="none",
            writes=False,
            output=outputs.WaitOutput,
        ),
    ]
)
