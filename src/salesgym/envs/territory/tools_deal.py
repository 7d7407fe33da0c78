"""The territory's tools that work a deal: messages, meetings, bookings, discovery, the technical evaluation,
the business case and the mutual action plan."""

from __future__ import annotations

from salesgym.core.tools import ToolError, ToolOutcome, quote
from salesgym.envs.territory import buyers
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    HOURS_PER_DAY,
    MIN_BOOKING_HOURS,
    day_of,
    stamp,
    start_of_day,
    week_of,
)
from salesgym.envs.territory.tools_args import (
    BookArgs,
    BookingUseArgs,
    CaseArgs,
    MeetingArgs,
    MeetingIdArgs,
    MessageArgs,
    PlanArgs,
)
from salesgym.envs.territory.tools_lookups import capacity_left, done, opportunity, stakeholder, usable_booking


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
