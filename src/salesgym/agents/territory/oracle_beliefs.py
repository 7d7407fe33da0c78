"""What the oracle believes about a territory, every belief read from the hidden truth: who sits on each
committee and what they care about, the budget days and freezes, a ledger of everyone's disposition from what
its own calls and the inbox did to them, and the odds and needs that follow (SE and review hours for the odds
wanted, the discount the buyer will need, the buyers' odds of answering)."""

from __future__ import annotations

import math
from typing import Any

from salesgym.agents.base import Action
from salesgym.agents.territory.memory import Deal, SellerMemory
from salesgym.agents.territory.oracle_rules import (
    CASE_DISCOUNT,
    CASE_WARMTH,
    CONTACT_WINDOW_H,
    DISCOVERY_WARMTH,
    EXEC_WARMTH,
    EXPECTED_MEETINGS,
    LATENCY,
    PRICE_CUT,
    REPLY_WARMTH,
    REVIEW_TARGET,
    RIVAL_COOLING,
    SENIOR,
    SETBACK,
    TECH_DAYS,
    TECH_TARGET,
    WARM_EB,
    WARM_EB_DISCOUNT,
    hours_for,
    sigmoid,
)
from salesgym.agents.territory.playbook import Playbook, Style
from salesgym.envs.territory.buyers import (  # operator side: the oracle knows how buyers decide
    APPROVER_ROLES,
    REVIEW_BASE,
    REVIEW_GOODWILL,
    REVIEW_HOUR,
    TECH_BASE,
    TECH_FIT,
    TECH_GOODWILL,
    TECH_RIVAL,
    TECH_SE_HOUR,
)
from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    APPROVAL_RESOURCE,
    HOURS_PER_DAY,
    MIN_BOOKING_HOURS,
    hours_of,
)
from salesgym.envs.territory.milestones import AUTHORITY_MIN


class OracleBeliefs(Playbook):
    """A playbook whose beliefs are read from the hidden truth (the sales motion is ``oracle.OraclePlaybook``)."""

    def __init__(self, memory: SellerMemory, style: Style, truth: dict[str, Any]) -> None:
        super().__init__(memory, style)
        self.opps: dict[str, Any] = truth["opportunities"]
        self.people: dict[str, Any] = truth["stakeholders"]
        self.accounts: dict[str, Any] = truth["accounts"]
        self.tape: list[dict[str, Any]] = truth["tape"]
        self.slow_reviews = 1.5 if "procurement_heavy" in truth.get("mechanisms", []) else 1.0
        self.pain_of = {n["keyword"]: n["pain_id"] for a in self.accounts.values() for n in a["news"]}
        self.warmth = {sid: float(p["disposition"]) for sid, p in self.people.items()}  # the ledger
        self.case_relevance: dict[str, float] = {}  # deal -> the business case's relevance
        self.pressure: dict[str, float] = {}  # deal -> competitor pressure on the price so far
        self.last_contact: dict[str, float] = {}  # deal -> our last message or invitation
        self.message_rel: dict[str, float] = {}  # person -> relevance of our last message
        self.meeting_rel: dict[str, float] = {}  # meeting -> relevance of its agenda
        self.purpose: dict[str, str] = {}  # booking -> what it is for (tech_eval, a review, discount, sponsor)
        self.intent: dict[tuple[str, str, float, int], str] = {}  # a booking call sent -> its purpose
        self.finish: dict[tuple[str, str], float] = {}  # (deal, buyer process) -> when its answer is due at latest
        self.modes: dict[str, str] = {}
        self.rank: dict[str, int] = {}  # deal -> its place in the seller's order
        self.roles: dict[str, dict[str, list[str]]] = {}  # deal -> role -> its committee members, in order
        self._seen = 0

    # -- hidden truth ---------------------------------------------------------------------------------------
    def present(self, deal: Deal, sid: str) -> bool:
        return not (sid in deal.people and deal.people[sid].left)

    def first_of(self, deal: Deal, *roles: str) -> str | None:
        """The person a buyer rule picks: the first present committee member with the first role that exists."""
        by_role = self.roles.get(deal.id)
        if by_role is None:  # the committee in order, by role (hidden truth: it never changes)
            by_role = self.roles[deal.id] = {}
            for sid in self.opps[deal.id]["stakeholder_ids"]:
                by_role.setdefault(self.people[sid]["role"], []).append(sid)
        for role in roles:
            for sid in by_role.get(role, ()):
                if self.present(deal, sid):
                    return sid
        return None

    def authority(self, sid: str) -> float:
        return float(self.people[sid]["authority"])

    def responsiveness(self, sid: str) -> float:
        return float(self.people[sid]["responsiveness_h"])

    def is_viable(self, deal: Deal) -> bool | None:
        return bool(self.opps[deal.id]["viable"])

    def economic_buyer(self, deal: Deal) -> str | None:
        return self.first_of(deal, "economic_buyer")

    def champion(self, deal: Deal) -> str | None:
        return self.first_of(deal, "champion")

    def evaluator(self, deal: Deal) -> str | None:
        return self.first_of(deal, "technical_evaluator", "champion", "economic_buyer")

    def approver(self, deal: Deal, kind: str) -> str | None:
        return self.first_of(deal, *APPROVER_ROLES[kind])

    def required_approvals(self, deal: Deal) -> list[str] | None:
        return list(self.opps[deal.id]["required_approvals"])

    def deadline_day(self, deal: Deal) -> int:
        return int(self.opps[deal.id]["deadline_day"])

    def budget_day(self, deal: Deal) -> int:
        return int(self.opps[deal.id]["budget_day"])

    def frozen_at(self, deal: Deal, t: float) -> bool:
        return any(x["kind"] == "budget_freeze" and x["data"]["opportunity_id"] == deal.id
                   and x["due"] <= t < x["data"]["until"] for x in self.tape)

    def money_on(self, deal: Deal, day: int) -> bool:
        """Whether a discovery held on ``day`` can confirm the budget: it has opened and no freeze holds it."""
        start = day * HOURS_PER_DAY + 2
        return day >= self.budget_day(deal) and not (self.frozen_at(deal, start) or self.frozen_at(deal, start + 5))

    def money_day(self, deal: Deal, soonest: int) -> int | None:
        """The first day from ``soonest`` on when a discovery can confirm the budget (None: not in this episode)."""
        last = int(self.mem.horizon // HOURS_PER_DAY)
        return next((d for d in range(soonest, last) if self.money_on(deal, d)), None)

    def budget_open(self, deal: Deal) -> bool:
        return self.money_on(deal, self.mem.day + self.meeting_day_offset(deal))

    def keywords_for(self, deal: Deal, sid: str | None) -> list[str]:
        """Researched keywords of exactly the pains ``sid`` has (the account's, for the whole committee)."""
        known = set(self.mem.known_keywords(deal))
        account = self.accounts[self.opps[deal.id]["account_id"]]
        pains = set(self.people[sid]["pains"]) if sid in self.people else set(account["pains"])
        return sorted({n["keyword"] for n in account["news"] if n["pain_id"] in pains and n["keyword"] in known})

    def keywords_in(self, deal: Deal, text: str) -> list[str]:
        low = text.lower()
        return [k for k in self.mem.known_keywords(deal) if k in low]

    def relevance(self, deal: Deal, sid: str, keywords: list[str]) -> float:
        """``buyers.relevance`` of a text that references ``keywords``, as ``sid`` reads it."""
        account = self.accounts[self.opps[deal.id]["account_id"]]
        refs = {self.pain_of[k] for k in keywords if k in self.pain_of}
        if not refs:
            return 0.0
        severity = dict(zip(account["pains"], account["severity"], strict=True))
        pains = set(self.people[sid]["pains"])
        cares = sum(severity.get(p, 0.3) for p in pains)
        hit = sum(severity.get(p, 0.3) for p in refs & pains) / cares if cares else 0.0
        return float(hit * (len(refs & set(account["pains"])) / len(refs)) ** 0.5)

    def qualified_sources(self, deal: Deal) -> tuple[bool, bool]:
        """Whether budget and sponsorship evidence came from someone with real authority."""
        if deal.stage >= 2:
            return True, True
        return (any(self.authority(s) >= AUTHORITY_MIN for s in deal.sources("budget_confirmation")),
                any(self.authority(s) >= AUTHORITY_MIN for s in deal.sources("authorised_sponsor")))

    def qualifiers(self, deal: Deal) -> list[str]:
        """Present people whose word counts for Qualified: real authority, and not against us."""
        return [s for s in self.opps[deal.id]["stakeholder_ids"] if s in deal.people and self.present(deal, s)
                and self.authority(s) >= AUTHORITY_MIN and self.people[s]["role"] != "blocker"]

    def approved(self, deal: Deal, kind: str) -> bool:
        if kind == "procurement":
            return deal.final_terms_approved
        return deal.approvals.get(kind) == "approved"

    # -- the warmth ledger: what our calls and the inbox did to each person ------------------------------------
    def nudge(self, sid: str, delta: float) -> None:
        self.warmth[sid] = max(-1.0, min(1.0, self.warmth[sid] + delta))

    def note(self, action: Action | None, result: dict[str, Any]) -> None:
        """Fold one of our own calls into the ledger and the process clock (after the memory folded it)."""
        if not action or result.get("status") != "ok":
            return
        tool, args, out = action["tool"], action.get("args", {}), result.get("output", {}) or {}
        now = self.mem.now
        if tool == "send_message":
            sid = args["stakeholder_id"]
            deal = self.mem.deals[self.people[sid]["opportunity_id"]]
            text = f"{args['subject']} {args['body']}"
            self.message_rel[sid] = self.relevance(deal, sid, self.keywords_in(deal, text))
            self.last_contact[deal.id] = now
        elif tool == "schedule_meeting":
            deal = self.mem.deals[args["opportunity_id"]]
            kws = self.keywords_in(deal, args["agenda"])
            self.meeting_rel[out["meeting_id"]] = max(self.relevance(deal, s, kws) for s in args["stakeholder_ids"])
            self.last_contact[deal.id] = now
        elif tool == "run_discovery":
            rel = self.meeting_rel.get(args["meeting_id"], 0.0)
            for sid in out.get("attendees", []):
                self.nudge(sid, DISCOVERY_WARMTH[0] + DISCOVERY_WARMTH[1] * rel)
        elif tool == "build_business_case":
            deal = self.mem.deals[args["opportunity_id"]]
            kws = self.keywords_in(deal, args["summary"])
            audience = [s for s in self.opps[deal.id]["stakeholder_ids"] if self.present(deal, s)
                        and self.people[s]["role"] in ("economic_buyer", "champion")]
            rels = {s: self.relevance(deal, s, kws) for s in audience}
            self.case_relevance[deal.id] = max(rels.values(), default=0.0)
            for sid, rel in rels.items():
                self.nudge(sid, CASE_WARMTH * rel)
        elif tool == "run_technical_evaluation":
            self.finish[(args["opportunity_id"], "tech_eval")] = now + TECH_DAYS * HOURS_PER_DAY
        elif tool == "request_approval":
            days = APPROVAL_DAYS[args["kind"]] * self.slow_reviews
            self.finish[(args["opportunity_id"], f"approval:{args['kind']}")] = now + days * HOURS_PER_DAY
        elif tool == "propose_action_plan":
            self.finish[(args["opportunity_id"], "action_plan")] = now + LATENCY[1] * self.responsiveness(
                args["sponsor_id"])
        elif tool in ("send_proposal", "negotiate"):
            deal = self.mem.deals[args["opportunity_id"]]
            self.finish[(deal.id, "terms")] = now + self.answer_latency(deal)
        elif tool == "book_resource" and out.get("booking_id"):
            key = (args["opportunity_id"], args["resource"], float(args["hours"]), int(args["start_in_days"]))
            self.purpose[out["booking_id"]] = self.intent.pop(key, args["resource"])

    def catch_up(self) -> None:
        """Fold the inbox items that arrived since the last look into the ledger."""
        log = self.mem.inbox_log
        for item in log[self._seen:]:
            oid, kind, sender = item.get("opportunity_id", ""), item.get("kind"), item.get("from", "")
            deal = self.mem.deals.get(oid)
            if deal is None:
                continue
            if kind == "reply" and sender in self.warmth:
                self.nudge(sender, REPLY_WARMTH * self.message_rel.get(sender, 1.0))
            elif kind == "escalation" and item.get("decision") == "met":
                eb = self.economic_buyer(deal)
                if eb:
                    self.nudge(eb, EXEC_WARMTH)
            elif kind == "tech_eval" and item.get("decision") == "failed" and sender in self.warmth:
                self.nudge(sender, SETBACK)
            elif kind == "competitor":
                when = hours_of(item["time"]) if item.get("time") else self.mem.now
                damp = 0.5 if when - self.last_contact.get(oid, -1e9) < CONTACT_WINDOW_H else 1.0
                if item.get("decision") == "price_cut":
                    self.pressure[oid] = self.pressure.get(oid, 0.0) + PRICE_CUT * damp
                aggression = float(self.opps[oid]["competitor_aggression"])
                for sid in self.opps[oid]["stakeholder_ids"]:
                    if self.people[sid]["role"] in ("technical_evaluator", "champion") and self.present(deal, sid):
                        self.nudge(sid, RIVAL_COOLING * aggression * damp)
        self._seen = len(log)

    # -- odds and needs -------------------------------------------------------------------------------------
    def expected_warmth(self, deal: Deal, sid: str | None) -> float:
        """How warm ``sid`` will be when a process finishes: now, plus the discoveries still to come on a deal to
        close (they go on while someone who decides is not warm)."""
        if sid is None:
            return 0.0
        bonus = EXPECTED_MEETINGS * sum(DISCOVERY_WARMTH) if self.modes.get(deal.id) == "close" else 0.0
        return min(1.0, self.warmth[sid] + bonus)

    def tech_base(self, deal: Deal) -> float:
        """The evaluation's logit before SE hours, with the evaluator as warm as expected."""
        opp = self.opps[deal.id]
        rival = float(opp["competitor_aggression"]) if opp["competitor"] else 0.0
        d = self.expected_warmth(deal, self.evaluator(deal))
        return TECH_BASE + TECH_FIT * float(opp["fit"]) - TECH_RIVAL * rival + TECH_GOODWILL * d

    def tech_odds(self, deal: Deal, hours: float) -> float:
        return sigmoid(self.tech_base(deal) + TECH_SE_HOUR * hours)

    def se_hours(self, deal: Deal) -> float:
        """SE hours for the evaluation to pass at ``TECH_TARGET`` (a booking fits in one week)."""
        most = min(16.0, self.mem.full_capacity.get("se", 16.0))
        return hours_for(TECH_TARGET, self.tech_base(deal), TECH_SE_HOUR, MIN_BOOKING_HOURS["tech_eval"], most)

    def review_hours(self, deal: Deal, kind: str) -> float:
        """Hours for the buyer's review to pass at ``REVIEW_TARGET`` with the approver as warm as expected."""
        d = self.expected_warmth(deal, self.approver(deal, kind))
        most = min(8.0, self.mem.full_capacity.get(APPROVAL_RESOURCE[kind], 8.0))
        return hours_for(REVIEW_TARGET, REVIEW_BASE + REVIEW_GOODWILL * d, REVIEW_HOUR, MIN_BOOKING_HOURS["review"],
                         most)

    def need_discount(self, deal: Deal, horizon_h: float = 0.0) -> float:
        """The discount the buyer will need when it answers an offer made now (``buyers.price_need``): the
        walk-away point, competitor pressure (including price cuts due before the answer), less a warm economic
        buyer and a relevant business case."""
        opp = self.opps[deal.id]
        pressure = self.pressure.get(deal.id, 0.0)
        answer_by = self.mem.now + (horizon_h or self.answer_latency(deal))
        pressure += sum(PRICE_CUT for t in self.tape if t["kind"] == "competitor_price_cut"
                        and t["data"]["opportunity_id"] == deal.id and self.mem.now <= t["due"] <= answer_by + 1)
        eb = self.economic_buyer(deal)
        warm = WARM_EB_DISCOUNT if eb is not None and self.warmth[eb] > WARM_EB + 0.01 else 0.0
        case = CASE_DISCOUNT * self.case_relevance.get(deal.id, 0.0)
        return max(0.0, float(opp["required_discount"]) + pressure - warm - case)

    def answer_latency(self, deal: Deal) -> float:
        """The longest the buyer takes to answer an offer (procurement answers, else the economic buyer)."""
        who = self.first_of(deal, "procurement", "economic_buyer", "champion")
        return LATENCY[1] * self.responsiveness(who) if who else HOURS_PER_DAY

    def discount_to_offer(self, deal: Deal) -> float:
        return math.ceil(self.need_discount(deal) * 1000 - 1e-6) / 1000

    # -- the buyers' odds of answering ----------------------------------------------------------------------
    def intro(self, deal: Deal) -> bool:
        """A champion answered us: senior people no longer ignore our outreach."""
        return any(q.engaged and not q.left for s, q in deal.people.items() if self.people[s]["role"] == "champion")

    def reply_odds(self, deal: Deal, sid: str) -> float:
        """``buyers.on_message``'s odds that ``sid`` answers a first relevant message sent now."""
        rel = self.relevance(deal, sid, self.keywords_for(deal, sid))
        gap = 0.0 if self.intro(deal) else max(0.0, self.authority(sid) - SENIOR) * 3.0
        return sigmoid(-1.2 + 2.5 * rel + 1.5 * self.warmth[sid] - gap)

    def accept_odds(self, deal: Deal, sid: str) -> float:
        """``buyers.on_meeting_invite``'s odds that ``sid`` accepts an invitation sent now (full relevance)."""
        p, intro = deal.people[sid], self.intro(deal)
        tired = sum(1 for t in p.messages if self.mem.now - t < 40.0)
        gap = 0.0 if p.engaged or intro else max(0.0, self.authority(sid) - SENIOR) * 3.0
        return sigmoid(-0.8 + 1.8 * self.warmth[sid] + 1.2 * p.engaged + 1.0 + 0.8 * intro
                       - 0.5 * max(0, tired - 2) - gap)
