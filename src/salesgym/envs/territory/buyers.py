"""Buyer actors: how stakeholders, committees, competitors and the world respond.

Every decision reads hidden truth plus what the seller did, draws keyed noise for that stakeholder only,
and emits events; only functions here create evidence (``ctx.issue_evidence``). Responses that take time
are scheduled (``schedule``) and resolved by :func:`fire` when the clock reaches them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from itertools import repeat
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.env import Context
from salesgym.envs.territory.calendar import HOURS_PER_DAY, day_of, stamp, start_of_week, week_of
from salesgym.envs.territory.catalog import FamilySpec
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.milestones import APPROVAL_EVIDENCE, DECIDES, MILESTONES, final_discount, times_from_first
from salesgym.envs.territory.state import Person, TerritoryState
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
    cares = sum(map(severity.get, who.pains, repeat(0.3)))  # severity.get(p, 0.3) for each pain, without a frame
    hit = sum(map(severity.get, refs & set(who.pains), repeat(0.3))) / cares if cares else 0.0
    real = refs & set(account.pains)
    return float(hit * (len(real) / len(refs)) ** 0.5)


def is_champion_engaged(ctx: Ctx, opp: Opportunity) -> bool:
    stakeholders, people = ctx.world.stakeholders, ctx.state.people
    for sid in opp.stakeholder_ids:
        if stakeholders[sid].role == "champion":
            person = people[sid]
            if person.engaged and not person.left:
                return True
    return False


FOLLOW_UP_H = 16.0  # answering a buyer within two business days keeps momentum


# The helpers below take the person's state record the caller has already read (a decision reads one person
# several ways).
def momentum(now: float, person: Person) -> float:
    """1 if the seller is following up promptly on this person's last reply, else 0."""
    return 1.0 if now - person.replied_at <= FOLLOW_UP_H else 0.0


def seniority_gap(ctx: Ctx, opp: Opportunity, who: Stakeholder, person: Person, champion: bool | None = None) -> float:
    """Senior people ignore cold outreach unless a champion brought the seller in (``champion``: whether one is
    engaged, where the caller knows already)."""
    if person.engaged:
        return 0.0
    if champion is None:
        champion = is_champion_engaged(ctx, opp)
    return 0.0 if champion else max(0.0, who.authority - 0.6) * 3.0


def fatigue(now: float, person: Person) -> int:
    return sum(1 for t in person.recent if now - t < 40.0)


def schedule(ctx: Ctx, delay_hours: float, what: str, actor: str, **data: Any) -> None:
    ctx.emit("scheduled", actor, {"due": round(ctx.state.now + max(0.25, delay_hours), 2), "what": what, "data": data})


def nudge(ctx: Ctx, sid: str, delta: float, why: str) -> None:
    if delta:
        ctx.emit("disposition_changed", sid, {"stakeholder_id": sid, "delta": round(delta, 4), "why": why})


def notify(ctx: Ctx, opp_id: str, sender: str, kind: str, text: str, **fields: Any) -> None:
    """A new inbox item for the seller: the text a buyer would write, and the same facts as typed ``fields``
    (``contract.INBOX_FIELDS``), so code never has to parse the text. Public by construction."""
    ctx.emit(
        "inbox_received", sender, {"opportunity_id": opp_id, "from": sender, "kind": kind, "text": text, **fields}
    )


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
    top = len(times_from_first(opp, deal.first)) - 1
    if top > deal.milestone:
        payload: dict[str, Any] = {"opportunity_id": opp.id, "from": deal.milestone, "to": top, "name": MILESTONES[top]}
        discount = final_discount(opp, deal.evidence, top)
        if discount:
            payload["discount"] = discount
        ctx.emit("milestone_advanced", "verifier", payload)


def people(ctx: Ctx, opp: Opportunity, *roles: str) -> list[Stakeholder]:
    """Committee members still at the account with one of ``roles`` (in committee order)."""
    state_people = ctx.state.people
    return [
        who
        for who in map(ctx.world.stakeholders.__getitem__, opp.stakeholder_ids)
        if who.role in roles and not state_people[who.id].left
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
    person = ctx.state.people[who.id]
    d, tired, ignored = person.disposition, fatigue(ctx.now, person), person.unanswered - 1  # this one included
    if tired > SPAM_THRESHOLD or ignored > 1:
        why = "too many messages" if tired > SPAM_THRESHOLD else "keeps writing though we did not answer"
        nudge(ctx, who.id, -0.08 * max(tired - SPAM_THRESHOLD, ignored - 1), why)
    bump = rel == 0.0 and (person.engaged or ignored > 0)  # nothing new, to someone already written to
    if bump:  # it irritates, and earns no answer
        nudge(ctx, who.id, -0.06, "a generic bump")
    engaged = 1.0 if person.engaged else 0.0
    p = sigmoid(
        -1.2
        + 2.5 * rel
        + 1.5 * d
        + 0.8 * engaged
        + 0.7 * momentum(ctx.now, person)  # the nudges above change only the disposition (read before them)
        - 0.9 * max(0, tired - 2)
        - 0.6 * max(0, ignored)  # someone who ignored one message tends to ignore the next
        - (1.5 if bump else 0.0)
        - seniority_gap(ctx, opp, who, person)
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
    champion = is_champion_engaged(ctx, opp)  # answers are only scheduled here: nobody's state moves in the loop
    intro = 1.0 if champion else 0.0
    now = ctx.now
    for who in invitees:
        person = ctx.state.people[who.id]
        p = sigmoid(
            -0.8
            + 1.8 * person.disposition
            + 1.2 * person.engaged
            + 1.0 * rel
            + 0.8 * intro
            + 0.7 * momentum(now, person)
            - 0.5 * max(0, fatigue(now, person) - 2)
            - seniority_gap(ctx, opp, who, person, champion)
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
    # a deal that cannot close never gets past Engaged: nobody confirms a budget or sponsors a purchase that
    # cannot happen (so paperwork on a dead deal earns no reward either)
    budget_ok = ctx.now >= opp.budget_day * HOURS_PER_DAY and not frozen(ctx, opp) and opp.viable
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
            opp.viable
            and (p.role in ("economic_buyer", "champion") or p.authority >= 0.6)
            and person.disposition >= 0.3
            and person.value_seen >= 0.3
            and ctx.draw("buyer", p.id, "sponsor") < 0.85
        ):
            record(ctx, E.AUTHORISED_SPONSOR, opp, p.id, {"statement": "I will sponsor this purchase internally"})
    if not opp.viable:
        speaker = champion or next((p for p in attendees if p.role == "economic_buyer"), None)
        if speaker is not None and ctx.draw("buyer", speaker.id, "disqualify") < 0.4:
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
    notify(ctx, opp.id, who.id, "reply", text, decision="replied", evidence=E.BUYER_REPLY, stakeholder_id=who.id)
    record(ctx, E.BUYER_REPLY, opp, who.id, {"statement": "replied to the seller"})


def _meeting_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = ctx.world.stakeholders[data["stakeholder_id"]]
    accepted = bool(data["accepted"]) and not ctx.state.people[who.id].left
    meeting = data["meeting_id"]
    ctx.emit("meeting_answered", who.id, {"meeting_id": meeting, "stakeholder_id": who.id, "accepted": accepted})
    start = ctx.state.meetings[meeting].start
    notify(
        ctx,
        opp.id,
        who.id,
        "meeting_answer",
        f"{'Accepted' if accepted else 'Declined'}: meeting {meeting} on {stamp(start)}",
        decision="accepted" if accepted else "declined",
        evidence=E.MEETING_ACCEPTANCE if accepted else None,
        meeting_id=meeting,
        stakeholder_id=who.id,
    )
    if accepted:
        record(ctx, E.MEETING_ACCEPTANCE, opp, who.id, {"meeting_id": meeting})


# A technical evaluation's odds: product fit and the evaluator's goodwill help, a competitor hurts, and every
# SE hour spent on it helps a lot, so where SE hours go decides which deals validate.
TECH_BASE, TECH_FIT, TECH_SE_HOUR, TECH_RIVAL, TECH_GOODWILL = -3.5, 4.5, 0.3, 1.5, 1.0


def tech_odds(fit: float, se_hours: float, rival: float, disposition: float) -> float:
    logit = TECH_BASE + TECH_FIT * fit + TECH_SE_HOUR * se_hours - TECH_RIVAL * rival + TECH_GOODWILL * disposition
    return sigmoid(logit)


def _tech_result(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": "tech_eval"})
    evaluator = first_of(ctx, opp, "technical_evaluator", "champion", "economic_buyer")
    if evaluator is None:
        notify(ctx, opp.id, "system", "tech_eval", "Technical evaluation ended without a buyer-side evaluator.",
               decision="failed", reason="no evaluator left")
        return
    d = ctx.state.people[evaluator.id].disposition
    rival = opp.competitor_aggression if opp.competitor else 0.0
    if ctx.draw("buyer", evaluator.id, "tech") < tech_odds(opp.fit, data["hours"], rival, d):
        notify(ctx, opp.id, evaluator.id, "tech_eval", "The technical evaluation succeeded; we are satisfied with fit.",
               decision="passed", evidence=E.TECHNICAL_SUCCESS)
        record(ctx, E.TECHNICAL_SUCCESS, opp, evaluator.id, {"statement": "technical evaluation passed"})
    else:
        nudge(ctx, evaluator.id, -0.1, "technical setback")
        notify(ctx, opp.id, evaluator.id, "tech_eval", "The evaluation hit problems; we are not convinced yet.",
               decision="failed")


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
        notify(ctx, opp.id, who.id, "action_plan", "We agree to the mutual action plan.", decision="agreed",
               evidence=E.MUTUAL_ACTION_PLAN)
        record(ctx, E.MUTUAL_ACTION_PLAN, opp, who.id, {"close_day": data["close_day"]})
    else:
        why = "dates" if not fits else "not ready"
        text = "the dates do not work for us" if not fits else "we are not ready to commit to a plan"
        notify(ctx, opp.id, who.id, "action_plan", f"Plan declined: {text}.", decision="declined", reason=why)


APPROVER_ROLES = {
    "security": ("security", "technical_evaluator"),
    "legal": ("legal", "economic_buyer"),
    "procurement": ("procurement", "economic_buyer"),
}
# A review's odds: the approver's goodwill and the hours our team put into it (a thin review comes back with
# changes, and a resubmission waits for a new booking: internal hours are what a review really costs).
REVIEW_BASE, REVIEW_GOODWILL, REVIEW_HOUR = -2.0, 1.5, 0.8


def review_odds(disposition: float, hours: float) -> float:
    return sigmoid(REVIEW_BASE + REVIEW_GOODWILL * disposition + REVIEW_HOUR * hours)


def _approval(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    kind = data["kind"]
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": f"approval:{kind}"})
    approver = first_of(ctx, opp, *APPROVER_ROLES[kind])
    if approver is None:
        notify(ctx, opp.id, "system", "approval", f"{kind.capitalize()} review: nobody is left to approve it.",
               approval=kind, decision="changes_requested", reason="no approver left")
        return
    d = ctx.state.people[approver.id].disposition
    if ctx.draw("buyer", approver.id, f"approval:{kind}") < review_odds(d, data["hours"]):
        agreed = ctx.state.deals[opp.id].agreed_discount
        final = kind == "procurement" and agreed is not None
        notify(ctx, opp.id, approver.id, "approval", f"{kind.capitalize()} review approved.", approval=kind,
               decision="approved", evidence=APPROVAL_EVIDENCE[kind], discount_pct=_pct(agreed) if final else None)
        claim: dict[str, Any] = {"approval": kind, "final_terms": final}
        if final:
            claim["discount"] = agreed
        record(ctx, APPROVAL_EVIDENCE[kind], opp, approver.id, claim)
    else:
        notify(ctx, opp.id, approver.id, "approval", f"{kind.capitalize()} review: changes requested; resubmit.",
               approval=kind, decision="changes_requested")


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100.0 * x, 1)


def price_need(ctx: Ctx, opp: Opportunity) -> float:
    """The discount the buyer needs today: walk-away point, competitor pressure, goodwill."""
    deal = ctx.state.deals[opp.id]
    eb = first_of(ctx, opp, "economic_buyer")
    warm = 0.04 if eb is not None and ctx.state.people[eb.id].disposition > 0.5 else 0.0
    return max(0.0, opp.required_discount + deal.pressure - warm - 0.05 * deal.business_case)


def _terms_answer(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    who = first_of(ctx, opp, "procurement", "economic_buyer", "champion")
    if who is None:
        notify(ctx, opp.id, "system", "terms", "Nobody is left to answer the offer.", decision="countered",
               reason="nobody left")
        return
    need = price_need(ctx, opp)
    offered = data["discount"]
    if offered + 1e-9 >= need:
        ctx.emit("terms_agreed", who.id, {"opportunity_id": opp.id, "discount": offered})
        no_review = "procurement" not in opp.required_approvals  # no procurement review: agreeing is the sign-off
        notify(ctx, opp.id, who.id, "terms", f"We accept the commercial terms at {offered:.0%} discount.",
               decision="agreed", discount_pct=_pct(offered), evidence=E.PROCUREMENT_APPROVAL if no_review else None)
        if no_review:
            claim = {"approval": "procurement", "final_terms": True, "discount": offered}
            record(ctx, E.PROCUREMENT_APPROVAL, opp, who.id, claim)
    else:
        asked = round(min(0.6, need + 0.04 * ctx.draw("buyer", who.id, "counter")), 2)
        ctx.emit("terms_countered", who.id, {"opportunity_id": opp.id, "asked_discount": asked})
        notify(ctx, opp.id, who.id, "terms", f"Counter-offer: we need a {asked:.0%} discount to proceed.",
               decision="countered", discount_pct=_pct(asked))


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
        notify(ctx, opp.id, signer.id if signer else "system", "contract", f"Contract on hold: {reason}.",
               decision="stalled", reason=reason)
        return
    discount = deal.agreed_discount or 0.0
    record(ctx, E.CONTRACT_SIGNATURE, opp, signer.id, {"discount": discount})
    ctx.emit("deal_closed", signer.id, {"opportunity_id": opp.id, "discount": discount})
    notify(ctx, opp.id, signer.id, "contract", "Contract signed. Welcome aboard!", decision="signed",
           evidence=E.CONTRACT_SIGNATURE, discount_pct=_pct(discount))


def discount_limit(ctx: Ctx, opp: Opportunity) -> float:
    """The deepest discount management signs off on this deal: a little above the seller's authority, more for
    a verified, contested deal with a business case, never above 35%. Management sees what the seller sees."""
    deal = ctx.state.deals[opp.id]
    limit = ctx.world.discount_authority + 0.05
    if deal.milestone >= MILESTONES.index("Validated"):
        limit += 0.05
    if deal.business_case >= 0.3:  # a case that addresses the buyer's pains
        limit += 0.05
    if deal.pressure > 0:  # a competitor is cutting prices here
        limit += 0.05
    return min(0.35, round(limit, 4))


def _escalation(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("process_finished", "buyer", {"opportunity_id": opp.id, "process": "escalation"})
    if data["purpose"] == "discount":
        asked = data["discount"]
        granted = asked <= discount_limit(ctx, opp) + 1e-9
        if granted:
            ctx.emit(
                "escalation_granted",
                "management",
                {"opportunity_id": opp.id, "purpose": "discount", "discount": asked},
            )
        notify(
            ctx,
            opp.id,
            "management",
            "escalation",
            f"Management {'approved' if granted else 'refused'} a discount up to {asked:.0%}.",
            decision="approved" if granted else "refused",
            discount_pct=_pct(asked),
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
        notify(ctx, opp.id, "management", "escalation", "Our executive met your economic buyer.", decision="met")


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
    notify(ctx, opp.id, "system", "competitor", f"Heard that {data['competitor']} is pushing a {word} at this account.",
           decision="demo" if data["kind"] == "competitor_demo" else "price_cut")


def _freeze(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    ctx.emit("budget_frozen", "world", {"opportunity_id": opp.id, "until": data["until"]})
    notify(ctx, opp.id, "system", "news", f"Spending freeze announced at the account until {stamp(data['until'])}.",
           decision="freeze", until=stamp(data["until"]))


def _left(ctx: Ctx, opp: Opportunity, data: Mapping[str, Any]) -> None:
    sid = data["stakeholder_id"]
    ctx.emit("stakeholder_left", "world", {"stakeholder_id": sid, "opportunity_id": opp.id})
    notify(ctx, opp.id, "system", "news", f"{ctx.world.stakeholders[sid].name} has left the company.",
           decision="left", stakeholder_id=sid)


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
