"""The territory's tools that close (or drop) a deal, and time: offers, reviews, escalation, the contract, the
CRM notebook, disqualification and waiting."""

from __future__ import annotations

from salesgym.core.tools import ToolError, ToolOutcome
from salesgym.envs.territory import buyers
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    APPROVAL_RESOURCE,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    MAX_CRM_FIELDS,
    MIN_BOOKING_HOURS,
    week_of,
)
from salesgym.envs.territory.state import live_bookings, live_meetings
from salesgym.envs.territory.tools_args import (
    ApprovalArgs,
    CrmArgs,
    DisqualifyArgs,
    EscalateArgs,
    OppArgs,
    PriceArgs,
    WaitArgs,
)
from salesgym.envs.territory.tools_lookups import done, opportunity, usable_booking
from salesgym.envs.territory.verifier import PENALTY
from salesgym.envs.territory.world import Opportunity


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
