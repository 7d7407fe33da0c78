"""Buyer actors: how stakeholders, committees, competitors and the world respond.

Every decision reads hidden truth plus what the seller did, draws keyed noise for that stakeholder only,
and emits events; only functions here create evidence (``ctx.issue_evidence``). Responses that take time
are scheduled (``schedule``) and resolved by :func:`fire` when the clock reaches them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from salesgym.core.clock import HOURS_PER_DAY, Scheduled, day_of, stamp, start_of_week, week_of
from salesgym.core.env import Context
from salesgym.core.evidence import EvidenceType
from salesgym.envs.territory.catalog import FamilySpec
from salesgym.envs.territory.milestones import APPROVAL_EVIDENCE, DECIDES, MILESTONES, reached
from salesgym.envs.territory.state import TerritoryState
from salesgym.envs.territory.world import Opportunity, Stakeholder, TerritoryWorld

Ctx = Context[TerritoryWorld, TerritoryState]
E = EvidenceType
SPAM_THRESHOLD = 3  # messages to one person within a business week before it starts to hurt


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


_KEYWORDS: dict[str, dict[str, str]] = {}


def keyword_index(spec: FamilySpec) -> dict[str, str]:
    """keyword -> pain id, for one family (keywords are unique within a family); built once per family."""
    index = _KEYWORDS.get(spec.name)
    if index is None:
        index = _KEYWORDS[spec.name] = {kw: p.id for p in spec.pains for kw in p.keywords}
    return index


def known_keywords(ctx: Ctx, opp: Opportunity) -> set[str]:
    """Keywords the seller has legitimately learnt about this account: research plus discovered pains."""
    s, w = ctx.state, ctx.world
    known = set(s.researched.get(opp.account_id, ()))
    for pid in s.deals[opp.id].pains_known:
        known.update(w.spec.pain(pid).keywords)
    return known


def referenced_pains(ctx: Ctx, opp: Opportunity, text: str) -> set[str]:
    """Pains a text references through keywords the seller actually learnt (guessing earns nothing)."""
    lowered = text.lower()
    index = keyword_index(ctx.world.spec)
    return {index[kw] for kw in known_keywords(ctx, opp) if kw in lowered}


def relevance(ctx: Ctx, opp: Opportunity, who: Stakeholder, refs: set[str]) -> float:
    """Share of this person's pains the text addresses, weighted by how much each hurts the account, and
    diluted by references to pains the account does not have (kitchen-sink messages earn less)."""
    if not refs:
        return 0.0
    account = ctx.world.accounts[opp.account_id]
    severity = dict(zip(account.pains, account.severity, strict=True))
    cares = sum(severity.get(p, 0.3) for p in who.pains)
    hit = sum(severity.get(p, 0.3) for p in refs & set(who.pains)) / cares if cares else 0.0
    real = refs & set(account.pains)
    return float(hit * (len(real) / len(refs)) ** 0.5)


def is_champion_engaged(ctx: Ctx, opp: Opportunity) -> bool:
    return any(
        ctx.world.stakeholders[sid].role == "champion"
        and ctx.state.people[sid].engaged
        and not ctx.state.people[sid].left
        for sid in opp.stakeholder_ids
    )


FOLLOW_UP_H = 16.0  # answering a buyer within two business days keeps momentum


def momentum(ctx: Ctx, who: Stakeholder) -> float:
    """1 if the seller is following up promptly on this person's last reply, else 0."""
    return 1.0 if ctx.now - ctx.state.people[who.id].replied_at <= FOLLOW_UP_H else 0.0


def seniority_gap(ctx: Ctx, opp: Opportunity, who: Stakeholder) -> float:
    """Senior people ignore cold outreach unless a champion brought the seller in."""
    if ctx.state.people[who.id].engaged or is_champion_engaged(ctx, opp):
        return 0.0
    return max(0.0, who.authority - 0.6) * 3.0


def fatigue(ctx: Ctx, sid: str) -> int:
    now = ctx.now
    return sum(1 for t in ctx.state.people[sid].recent if now - t < 40.0)


def schedule(ctx: Ctx, delay_hours: float, what: str, actor: str, **data: Any) -> None:
    ctx.emit("scheduled", actor, {"due": round(ctx.now + max(0.25, delay_hours), 2), "what": what, "data": data})


def nudge(ctx: Ctx, sid: str, delta: float, why: str) -> None:
    if delta:
        ctx.emit("disposition_changed", sid, {"stakeholder_id": sid, "delta": round(delta, 4), "why": why})


def notify(ctx: Ctx, opp_id: str, sender: str, kind: str, text: str) -> None:
    """A new inbox item for the seller (public by construction: only say what a buyer would say)."""
    ctx.emit("inbox_received", sender, {"opportunity_id": opp_id, "from": sender, "kind": kind, "text": text})


def latency(ctx: Ctx, who: Stakeholder, kind: str) -> float:
    return float(who.responsiveness_h * (0.4 + 1.2 * ctx.draw("latency", who.id, kind)))


def record(ctx: Ctx, kind: EvidenceType, opp: Opportunity, source: str, claim: Mapping[str, Any]) -> None:
    """A buyer creates evidence; the verified milestone is re-derived from it at once when it could move."""
    ctx.issue_evidence(kind, opp.id, source, claim)
    if DECIDES[kind] > ctx.state.deals[opp.id].milestone:
        update_milestone(ctx, opp)


def update_milestone(ctx: Ctx, opp: Opportunity) -> None:
    deal = ctx.state.deals[opp.id]
    if deal.status == "disqualified":
        return
    top = len(reached(ctx.world, opp, deal.evidence)) - 1
    if top > deal.milestone:
        ctx.emit(
            "milestone_advanced",
            "verifier",
            {"opportunity_id": opp.id, "from": deal.milestone, "to": top, "name": MILESTONES[top]},
        )


def people(ctx: Ctx, opp: Opportunity, *roles: str) -> list[Stakeholder]:
    """Committee members still at the account with one of ``roles`` (in committee order)."""
    return [
        ctx.world.stakeholders[sid]
        for sid in opp.stakeholder_ids
        if ctx.world.stakeholders[sid].role in roles and not ctx.state.people[sid].left
    ]


def first_of(ctx: Ctx, opp: Opportunity, *roles: str) -> Stakeholder | None:
    for role in roles:
        found = people(ctx, opp, role)
        if found:
            return found[0]
    return None


def frozen(ctx: Ctx, opp: Opportunity) -> bool:
    return ctx.state.deals[opp.id].frozen_until > ctx.now


# --- decisions taken when the seller acts ----------------------------------------------------------


def on_message(ctx: Ctx, opp: Opportunity, who: Stakeholder, rel: float) -> bool:
    """Decide whether and when ``who`` replies; returns True if a reply is on its way."""
    d = ctx.state.people[who.id].disposition
    tired = fatigue(ctx, who.id)
    if tired > SPAM_THRESHOLD:
        nudge(ctx, who.id, -0.08 * (tired - SPAM_THRESHOLD), "too many messages")
    engaged = 1.0 if ctx.state.people[who.id].engaged else 0.0
    p = sigmoid(
        -1.2
        + 2.5 * rel
        + 1.5 * d
        + 0.8 * engaged
        + 0.7 * momentum(ctx, who)
        - 0.9 * max(0, tired - 2)
        - seniority_gap(ctx, opp, who)
    )
    if ctx.draw("buyer", who.id, "reply") >= p:
        return False
    schedule(
        ctx,
        latency(ctx, who, "reply"),
        "reply",
        who.id,
        opportunity_id=opp.id,
        stakeholder_id=who.id,
        relevance=round(rel, 4),
    )
    return True


def on_meeting_invite(ctx: Ctx, opp: Opportunity, meeting_id: str, invitees: Iterable[Stakeholder], rel: float) -> None:
    intro = 1.0 if is_champion_engaged(ctx, opp) else 0.0
    for who in invitees:
        person = ctx.state.people[who.id]
        p = sigmoid(
            -0.8
            + 1.8 * person.disposition
            + 1.2 * person.engaged
            + 1.0 * rel
            + 0.8 * intro
            + 0.7 * momentum(ctx, who)
            - 0.5 * max(0, fatigue(ctx, who.id) - 2)
            - seniority_gap(ctx, opp, who)
        )
        accepted = ctx.draw("buyer", who.id, "meeting") < p
        schedule(
            ctx,
            latency(ctx, who, "meeting") / 2,
            "meeting_answer",
            who.id,
            opportunity_id=opp.id,
            meeting_id=meeting_id,
            stakeholder_id=who.id,
            accepted=accepted,
        )


def discovery(ctx: Ctx, opp: Opportunity, meeting_id: str, attendees: list[Stakeholder], rel: float) -> dict[str, Any]:
    """A discovery conversation: reveals what attendees know and may produce qualification evidence."""
    w, s = ctx.world, ctx.state
    roles = {p.role for p in attendees}
    pains = sorted(
        {pain for p in attendees for pain in p.pains}
        | (set(w.accounts[opp.account_id].pains) if roles & {"champion", "economic_buyer"} else set())
    )
    champion = next((p for p in attendees if p.role == "champion"), None)
    eb = first_of(ctx, opp, "economic_buyer")
    reveal: dict[str, Any] = {
        "meeting_id": meeting_id,
        "opportunity_id": opp.id,
        "pains": pains,
        "roles": {p.id: p.role for p in attendees},
        "approvals": sorted(opp.required_approvals)
        if roles & {"champion", "economic_buyer", "procurement", "legal", "security"}
        else None,
        "budget_band": None,
        "eb_hint": None,
    }
    if roles & {"champion", "economic_buyer"}:
        if ctx.now < opp.budget_day * HOURS_PER_DAY:  # buyers say when money opens up, to the week
            reveal["budget_timing"] = (
                f"budget opens around {stamp(start_of_week(week_of(opp.budget_day * HOURS_PER_DAY)))[:14]}"
            )
        lo, hi = opp.true_value * 0.85, opp.true_value * 1.15
        reveal["budget_band"] = [5.0 * math.floor(lo / 5), 5.0 * math.ceil(hi / 5)]
    if champion is not None and s.people[champion.id].disposition > 0.1 and eb is not None:
        reveal["eb_hint"] = eb.id
    ctx.emit("discovery_held", "buyer", reveal)
    for p in attendees:
        nudge(ctx, p.id, 0.05 + 0.15 * rel, "useful discovery conversation")
    budget_ok = (
        ctx.now >= opp.budget_day * HOURS_PER_DAY
        and not frozen(ctx, opp)
        and opp.nonviable_reason != "no budget this fiscal year"
    )
    for p in attendees:
        person = s.people[p.id]
        if (
            budget_ok
            and p.role in ("economic_buyer", "champion")
            and person.disposition >= 0.0
            and ctx.draw("buyer", p.id, "budget") < 0.8
        ):
            record(ctx, E.BUDGET_CONFIRMATION, opp, p.id, {"statement": "budget is available for this purchase"})
        if (
            (p.role in ("economic_buyer", "champion") or p.authority >= 0.6)
            and person.disposition >= 0.3
            and person.value_seen >= 0.3
            and ctx.draw("buyer", p.id, "sponsor") < 0.85
        ):
            record(ctx, E.AUTHORISED_SPONSOR, opp, p.id, {"statement": "I will sponsor this purchase internally"})
    if not opp.viable:
        speaker = champion or next((p for p in attendees if p.role == "economic_buyer"), None)
        if speaker is not None and ctx.draw("buyer", speaker.id, "disqualify") < 0.6:
            record(ctx, E.DISQUALIFICATION_REASON, opp, speaker.id, {"reason": opp.nonviable_reason})
    return reveal


# --- scheduled happenings ---------------------------------------------------------------------------


def fire(ctx: Ctx, item: Scheduled) -> None:
    """Resolve a scheduled buyer response or a pinned exogenous happening."""
    data = item.data
    opp = ctx.world.opportunities[data["opportunity_id"]]
    if ctx.state.deals[opp.id].status != "open":
        return  # a closed or dropped deal no longer responds
    handler = FIRE.get(item.kind)
    if handler is None:
        raise ValueError(f"no handler for scheduled item {item.kind!r}")
    handler(ctx, opp, data)


def _reply(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = ctx.world.stakeholders[data["stakeholder_id"]]
    if ctx.state.people[who.id].left:
        return
    ctx.emit("buyer_replied", who.id, {"opportunity_id": opp.id, "stakeholder_id": who.id})
    nudge(ctx, who.id, 0.1 * data["relevance"], "relevant outreach")
    topic = ctx.world.pain_label(who.pains[0]) if data["relevance"] > 0 and who.pains else None
    text = (
        f"Thanks for reaching out - {topic} is on our agenda this quarter."
        if topic
        else "Thanks for the note. Happy to hear more."
    )
    notify(ctx, opp.id, who.id, "reply", text)
    record(ctx, E.BUYER_REPLY, opp, who.id, {"statement": "replied to the seller"})


def _meeting_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = ctx.world.stakeholders[data["stakeholder_id"]]
    accepted = bool(data["accepted"]) and not ctx.state.people[who.id].left
    ctx.emit(
        "meeting_answered", who.id, {"meeting_id": data["meeting_id"], "stakeholder_id": who.id, "accepted": accepted}
    )
    start = ctx.state.meetings[data["meeting_id"]].start
    notify(
        ctx,
        opp.id,
        who.id,
        "meeting_accepted" if accepted else "meeting_declined",
        f"{'Accepted' if accepted else 'Declined'}: meeting {data['meeting_id']} on {stamp(start)}",
    )
    if accepted:
        record(ctx, E.MEETING_ACCEPTANCE, opp, who.id, {"meeting_id": data["meeting_id"]})


def _tech_result(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": "tech_eval"})
    evaluator = first_of(ctx, opp, "technical_evaluator", "champion", "economic_buyer")
    if evaluator is None:
        notify(ctx, opp.id, "system", "tech_eval", "Technical evaluation ended without a buyer-side evaluator.")
        return
    d = ctx.state.people[evaluator.id].disposition
    rival = opp.competitor_aggression if opp.competitor else 0.0
    p = sigmoid(-1.0 + 3.0 * opp.fit + 0.12 * data["hours"] - 1.5 * rival + 1.0 * d)
    if ctx.draw("buyer", evaluator.id, "tech") < p:
        notify(ctx, opp.id, evaluator.id, "tech_eval", "The technical evaluation succeeded; we are satisfied with fit.")
        record(ctx, E.TECHNICAL_SUCCESS, opp, evaluator.id, {"statement": "technical evaluation passed"})
    else:
        nudge(ctx, evaluator.id, -0.1, "technical setback")
        notify(ctx, opp.id, evaluator.id, "tech_eval", "The evaluation hit problems; we are not convinced yet.")


PLAN_MIN_DISPOSITION = 0.25  # a plan's sponsor must be this warm towards us
PLAN_MIN_AUTHORITY = 0.45  # and able to commit the buying team


def _plan_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = ctx.world.stakeholders[data["stakeholder_id"]]
    person = ctx.state.people[who.id]
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": "action_plan"})
    if person.left:
        return
    fits = data["close_day"] <= opp.deadline_day
    willing = person.disposition >= PLAN_MIN_DISPOSITION and who.authority >= PLAN_MIN_AUTHORITY
    if fits and willing and ctx.draw("buyer", who.id, "plan") < 0.85:
        notify(ctx, opp.id, who.id, "action_plan", "We agree to the mutual action plan.")
        record(ctx, E.MUTUAL_ACTION_PLAN, opp, who.id, {"close_day": data["close_day"]})
    else:
        why = "the dates do not work for us" if not fits else "we are not ready to commit to a plan"
        notify(ctx, opp.id, who.id, "action_plan", f"Plan declined: {why}.")


APPROVER_ROLES = {
    "security": ("security", "technical_evaluator"),
    "legal": ("legal", "economic_buyer"),
    "procurement": ("procurement", "economic_buyer"),
}


def _approval(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    kind = data["kind"]
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": f"approval:{kind}"})
    approver = first_of(ctx, opp, *APPROVER_ROLES[kind])
    if approver is None:
        return
    d = ctx.state.people[approver.id].disposition
    if ctx.draw("buyer", approver.id, f"approval:{kind}") < sigmoid(0.8 + 1.5 * d + 0.25 * data["hours"]):
        agreed = ctx.state.deals[opp.id].agreed_discount
        notify(ctx, opp.id, approver.id, "approval", f"{kind.capitalize()} review approved.")
        record(
            ctx,
            APPROVAL_EVIDENCE[kind],
            opp,
            approver.id,
            {"approval": kind, "final_terms": kind == "procurement" and agreed is not None},
        )
    else:
        notify(ctx, opp.id, approver.id, "approval", f"{kind.capitalize()} review: changes requested; resubmit.")


def price_need(ctx: Ctx, opp: Opportunity) -> float:
    """The discount the buyer needs today: walk-away point, competitor pressure, goodwill."""
    deal = ctx.state.deals[opp.id]
    eb = first_of(ctx, opp, "economic_buyer")
    warm = 0.04 if eb is not None and ctx.state.people[eb.id].disposition > 0.5 else 0.0
    return max(0.0, opp.required_discount + deal.pressure - warm - 0.05 * deal.business_case)


def _terms_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = first_of(ctx, opp, "procurement", "economic_buyer", "champion")
    if who is None:
        return
    need = price_need(ctx, opp)
    offered = data["discount"]
    if offered + 1e-9 >= need:
        ctx.emit("terms_agreed", who.id, {"opportunity_id": opp.id, "discount": offered})
        if "procurement" not in opp.required_approvals:  # no procurement review: agreeing terms is the sign-off
            record(ctx, E.PROCUREMENT_APPROVAL, opp, who.id, {"approval": "procurement", "final_terms": True})
        notify(ctx, opp.id, who.id, "terms", f"We accept the commercial terms at {offered:.0%} discount.")
    else:
        asked = round(min(0.6, need + 0.04 * ctx.draw("buyer", who.id, "counter")), 2)
        ctx.emit("terms_countered", who.id, {"opportunity_id": opp.id, "asked_discount": asked})
        notify(ctx, opp.id, who.id, "terms", f"Counter-offer: we need a {asked:.0%} discount to proceed.")


# What a buyer says when a contract arrives before its own process is complete (by missing milestone).
NOT_READY = (
    "we are not engaged in this yet",
    "we have not confirmed budget and an executive sponsor",
    "technical validation is not complete",
    "we have no agreed plan to a decision",
    "internal reviews are still open",
    "procurement has not approved the final terms",
)


def _contract_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    """The buyer signs only at the end of its own process (the Commit milestone), on agreed terms,
    inside its decision window and with the budget released."""
    deal = ctx.state.deals[opp.id]
    signer = first_of(ctx, opp, "economic_buyer", "champion")
    reason = None
    if signer is None:
        reason = "nobody is left to sign"
    elif deal.milestone < len(MILESTONES) - 2:
        reason = NOT_READY[min(deal.milestone, len(NOT_READY) - 1)]
    elif deal.agreed_discount is None:
        reason = "we have not agreed commercial terms"
    elif not opp.viable or frozen(ctx, opp) or ctx.now < opp.budget_day * HOURS_PER_DAY:
        reason = "the budget has not been released"
    elif day_of(ctx.now) > opp.deadline_day:
        reason = "this slipped past our decision window"
    elif ctx.state.people[signer.id].disposition < 0.2:
        reason = "this is not the priority right now"
    if reason is not None or signer is None:
        ctx.emit("contract_stalled", "buyer", {"opportunity_id": opp.id})
        notify(ctx, opp.id, signer.id if signer else "system", "contract", f"Contract on hold: {reason}.")
        return
    discount = deal.agreed_discount or 0.0
    record(ctx, E.CONTRACT_SIGNATURE, opp, signer.id, {"discount": discount})
    ctx.emit("deal_closed", signer.id, {"opportunity_id": opp.id, "discount": discount})
    notify(ctx, opp.id, signer.id, "contract", "Contract signed. Welcome aboard!")


def _escalation(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": "escalation"})
    if data["purpose"] == "discount":
        granted = data["discount"] <= 0.35
        if granted:
            ctx.emit(
                "escalation_granted",
                "management",
                {"opportunity_id": opp.id, "purpose": "discount", "discount": data["discount"]},
            )
        notify(
            ctx,
            opp.id,
            "management",
            "escalation",
            f"Management {'approved' if granted else 'refused'} a discount up to {data['discount']:.0%}.",
        )
    else:
        eb = first_of(ctx, opp, "economic_buyer")
        ctx.emit(
            "escalation_granted",
            "management",
            {"opportunity_id": opp.id, "purpose": "executive_sponsor", "discount": 0.0},
        )
        if eb is not None:
            nudge(ctx, eb.id, 0.25, "executive sponsor call")
        notify(ctx, opp.id, "management", "escalation", "Our executive met your economic buyer.")


# --- the pinned exogenous tape ------------------------------------------------------------------------


def _competitor(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    """A competitor demo or price cut: hurts unless the seller was recently in touch (answered)."""
    recent = any(ctx.now - ctx.state.people[sid].last_contact < 5 * HOURS_PER_DAY for sid in opp.stakeholder_ids)
    damp = 0.5 if recent else 1.0
    ctx.emit(
        "competitor_moved",
        "world",
        {"opportunity_id": opp.id, "pressure": round(0.03 * damp if "price" in data["kind"] else 0.0, 4)},
    )
    for who in people(ctx, opp, "technical_evaluator", "champion"):
        nudge(ctx, who.id, -0.12 * opp.competitor_aggression * damp, data["kind"])
    word = "demo" if data["kind"] == "competitor_demo" else "price cut"
    notify(ctx, opp.id, "system", "competitor", f"Heard that {data['competitor']} is pushing a {word} at this account.")


def _freeze(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("budget_frozen", "world", {"opportunity_id": opp.id, "until": data["until"]})
    notify(ctx, opp.id, "system", "news", f"Spending freeze announced at the account until {stamp(data['until'])}.")


def _left(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    sid = data["stakeholder_id"]
    ctx.emit("stakeholder_left", "world", {"stakeholder_id": sid, "opportunity_id": opp.id})
    notify(ctx, opp.id, "system", "news", f"{ctx.world.stakeholders[sid].name} has left the company.")


FIRE = {
    "reply": _reply,
    "meeting_answer": _meeting_answer,
    "tech_result": _tech_result,
    "plan_answer": _plan_answer,
    "approval": _approval,
    "terms_answer": _terms_answer,
    "contract_answer": _contract_answer,
    "escalation": _escalation,
    "competitor_demo": lambda ctx, opp, data: _competitor(ctx, opp, {**data, "kind": "competitor_demo"}),
    "competitor_price_cut": lambda ctx, opp, data: _competitor(ctx, opp, {**data, "kind": "competitor_price_cut"}),
    "budget_freeze": _freeze,
    "stakeholder_left": _left,
}
