"""`oracle`: the expected-value seller with perfect information (operator side; headroom, never ranked).

It receives ``hidden_truth`` (``env.hidden_truth()``) and reads from it what a seller could only guess:
which deals are viable (the rest are dropped at once, which earns the disqualification credit), the real
economic buyer and champion, who holds real authority, each person's pains (so every message is fully
relevant and never cites the distractor headline), which approvals the account requires (booked from the
start), when the budget opens (discovery with the economic buyer is timed for it), the real deadline, the
discount the buyer needs, how many SE hours the evaluation needs, and who has the authority and warmth to
own the mutual action plan (that person is warmed first, never offered a plan they would refuse). It still
acts only through tools and still learns keywords by research: hidden truth chooses, it never substitutes
for the buyer's evidence.
"""

from __future__ import annotations

import math
from typing import Any

from salesgym.agents.base import call
from salesgym.agents.territory.expected_value import HOURS_TO_GO, ExpectedValue
from salesgym.agents.territory.memory import Deal, SellerMemory
from salesgym.agents.territory.playbook import Move, Playbook, Style
from salesgym.envs.territory.buyers import (  # operator side: the oracle knows how buyers decide
    APPROVER_ROLES,
    PLAN_MIN_AUTHORITY,
    PLAN_MIN_DISPOSITION,
    REVIEW_BASE,
    REVIEW_GOODWILL,
    REVIEW_HOUR,
    TECH_BASE,
    TECH_FIT,
    TECH_GOODWILL,
    TECH_RIVAL,
    TECH_SE_HOUR,
)
from salesgym.envs.territory.contract import APPROVAL_RESOURCE, HOURS_PER_DAY, MIN_BOOKING_HOURS
from salesgym.envs.territory.milestones import AUTHORITY_MIN


class OraclePlaybook(Playbook):
    def __init__(self, memory: SellerMemory, style: Style, truth: dict[str, Any]) -> None:
        super().__init__(memory, style)
        self.opps: dict[str, Any] = truth["opportunities"]
        self.people: dict[str, Any] = truth["stakeholders"]
        self.accounts: dict[str, Any] = truth["accounts"]
        self.price_cuts = [(t["due"], t["data"]["opportunity_id"]) for t in truth["tape"]
                           if t["kind"] == "competitor_price_cut"]

    def _role(self, deal: Deal, role: str) -> str | None:
        return next((sid for sid in self.opps[deal.id]["stakeholder_ids"] if self.people[sid]["role"] == role
                     and not (sid in deal.people and deal.people[sid].left)), None)

    def is_viable(self, deal: Deal) -> bool | None:
        return bool(self.opps[deal.id]["viable"])

    def economic_buyer(self, deal: Deal) -> str | None:
        return self._role(deal, "economic_buyer")

    def champion(self, deal: Deal) -> str | None:
        return self._role(deal, "champion")

    def required_approvals(self, deal: Deal) -> list[str] | None:
        return list(self.opps[deal.id]["required_approvals"])

    def keywords_for(self, deal: Deal, sid: str | None) -> list[str]:
        known = set(self.mem.known_keywords(deal))
        account = self.accounts[self.opps[deal.id]["account_id"]]
        pains = set(self.people[sid]["pains"]) if sid in self.people else set(account["pains"])
        return sorted({n["keyword"] for n in account["news"] if n["pain_id"] in pains and n["keyword"] in known})

    def budget_open(self, deal: Deal) -> bool:
        return self.mem.day + self.meeting_day_offset(deal) >= int(self.opps[deal.id]["budget_day"])

    def meeting_day_offset(self, deal: Deal) -> int:
        soonest = super().meeting_day_offset(deal)
        if not deal.meetings:  # the first meeting as soon as possible: it warms the committee
            return soonest
        return min(15, max(soonest, int(self.opps[deal.id]["budget_day"]) - self.mem.day))

    def deadline_day(self, deal: Deal) -> int:
        return int(self.opps[deal.id]["deadline_day"])

    def discount_to_offer(self, deal: Deal) -> float:
        opp = self.opps[deal.id]
        cuts = sum(1 for due, oid in self.price_cuts if oid == deal.id and due <= self.mem.now + 24)
        return float(opp["required_discount"]) + 0.03 * cuts + 0.005

    def se_hours(self, deal: Deal) -> float:
        """Enough SE hours for the evaluation to pass nine times in ten (the oracle knows the odds)."""
        opp = self.opps[deal.id]
        rival = opp["competitor_aggression"] if opp["competitor"] else 0.0
        evaluator = self._role(deal, "technical_evaluator") or self.champion(deal) or self.economic_buyer(deal)
        d = self.disposition(deal, evaluator) if evaluator else 0.0
        logit = math.log(0.9 / (1 - 0.9)) - TECH_BASE - TECH_FIT * opp["fit"] + TECH_RIVAL * rival - TECH_GOODWILL * d
        most = min(16.0, self.mem.full_capacity.get("se", 16.0))  # a booking fits in one week
        return float(min(most, max(MIN_BOOKING_HOURS["tech_eval"], math.ceil(logit / TECH_SE_HOUR))))

    def review_hours(self, deal: Deal, kind: str) -> float:
        """Enough hours for the buyer's review to pass nine times in ten."""
        approver = next((sid for role in APPROVER_ROLES[kind] if (sid := self._role(deal, role))), None)
        d = self.disposition(deal, approver) if approver else 0.0
        logit = math.log(0.9 / 0.1) - REVIEW_BASE - REVIEW_GOODWILL * d
        most = min(8.0, self.mem.full_capacity.get(APPROVAL_RESOURCE[kind], 8.0))
        return float(min(most, max(MIN_BOOKING_HOURS["review"], math.ceil(logit / REVIEW_HOUR))))

    def ready_to_price(self, deal: Deal) -> bool:
        return deal.found

    def ready_to_evaluate(self, deal: Deal) -> bool:
        return any(p.engaged for p in deal.people.values())

    def disposition(self, deal: Deal, sid: str) -> float:
        """An estimate of how warm ``sid`` is now: the hidden start, plus a cautious share of what the seller
        saw warm them (replies, discovery meetings they attended, the executive call), less competitor moves."""
        person, role = deal.people.get(sid), self.people[sid]["role"]
        d = float(self.people[sid]["disposition"])
        d += 0.05 * (person.replied if person else 0)
        d += 0.08 * sum(1 for m in deal.meetings.values() if m.discovery_done and sid in m.accepted)
        if deal.exec_sponsor and role == "economic_buyer":
            d += 0.25
        if role in ("technical_evaluator", "champion"):
            d -= 0.12 * self.opps[deal.id]["competitor_aggression"] * deal.competitor_moves
        return d

    def plan_candidates(self, deal: Deal) -> list[str]:
        """Known, present committee members with the authority to own a plan, the economic buyer first."""
        ids = [sid for sid, p in deal.people.items() if not p.left
               and self.people[sid]["authority"] >= PLAN_MIN_AUTHORITY]
        return sorted(ids, key=lambda sid: (self.people[sid]["role"] != "economic_buyer", sid))

    def plan_sponsor(self, deal: Deal) -> str | None:
        """Whoever can own the plan and is warm enough to accept it (the oracle knows authority and warmth,
        so it never spends one of its three proposals on someone who would decline)."""
        if not (deal.discoveries or deal.exec_sponsor):
            return None
        return next((sid for sid in self.plan_candidates(deal)
                     if self.disposition(deal, sid) >= PLAN_MIN_DISPOSITION), None)

    def _plan(self, deal: Deal) -> Move | None:
        move = super()._plan(deal)
        if move is not None or deal.plan_agreed or "action_plan" in deal.pending or self.capped(deal):
            return move
        if not deal.tech_success or self._live_meeting(deal):
            return None
        # nobody warm enough owns the plan yet: meet the warmest candidate (discovery warms attendees)
        candidates = self.plan_candidates(deal)
        last = max((m.start for m in deal.meetings.values()), default=-1e9)
        if not candidates or self.mem.now - last < 2 * HOURS_PER_DAY:
            return None
        sid = max(candidates, key=lambda s: self.disposition(deal, s))
        return Move(deal.id, call("schedule_meeting", opportunity_id=deal.id, stakeholder_ids=[sid],
                                  agenda=self.text(deal, sid, "Plan review: the path to go-live around"),
                                  in_days=super().meeting_day_offset(deal)), "warm the plan's sponsor")

    def qualified_sources(self, deal: Deal) -> tuple[bool, bool]:
        def real(sid: str) -> bool:
            return float(self.people.get(sid, {}).get("authority", 0.0)) >= AUTHORITY_MIN
        if deal.stage >= 2:
            return True, True
        return (any(real(s) for s in deal.sources("budget_confirmation")),
                any(real(s) for s in deal.sources("authorised_sponsor")))


class Oracle(ExpectedValue):
    name = "oracle"

    def make_playbook(self) -> Playbook:
        if self.hidden_truth is None:
            raise ValueError("the oracle needs hidden_truth (env.hidden_truth())")
        return OraclePlaybook(self.mem, self.style, self.hidden_truth)

    def priority(self, deal: Deal) -> float:
        """True value per SE hour still needed (the scarcest hours), for deals that can still close in time."""
        opp = self.book.opps[deal.id]  # type: ignore[attr-defined]
        p = 0.9 if self.mem.day + 8 <= opp["deadline_day"] else 0.4
        se = 1.0 if deal.tech_success else self.book.se_hours(deal)
        return float(opp["true_value"]) * p / max(1.0, HOURS_TO_GO[deal.stage]) / se

    def choose(self) -> Move | None:
        for deal in self.mem.open_deals():
            if not self.book.is_viable(deal):
                return Move(deal.id, call("disqualify", opportunity_id=deal.id, reason="no viable path this year"),
                            "not viable")
        return super().choose()
