"""`random`: a random but well-formed call built from what the seller knows.

Each step it picks a random tool (``wait`` and the cheap lookups a little more often, ``disqualify``
rarely) and fills the arguments from memory: a known opportunity, account, stakeholder, meeting or
booking, random keywords it has researched, a random discount. Calls can still be refused (a meeting that
has not started, a booking in the wrong week); it never repeats a refused call and falls back to waiting,
so it does not hit the invalid-action ceiling. It is the floor of the normalised score.
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, call, wait
from salesgym.agents.territory.memory import Deal
from salesgym.agents.territory.seller import MAX_INVALID, ScriptedSeller
from salesgym.envs.territory.contract import OPEN_CRM_STAGES

TOOLS = {  # tool -> relative weight
    "view_opportunity": 2, "research_account": 2, "find_stakeholders": 2, "send_message": 3, "schedule_meeting": 2,
    "book_resource": 2, "run_discovery": 2, "run_technical_evaluation": 1, "build_business_case": 1,
    "propose_action_plan": 1, "send_proposal": 1, "negotiate": 1, "request_approval": 1, "escalate": 1,
    "send_contract": 1, "update_crm": 1, "disqualify": 0.05, "wait": 3,
}


class RandomPolicy(ScriptedSeller):
    name = "random"

    def act(self, observation: dict[str, Any]) -> Action:
        self.mem.observe(observation)
        if self.out_of_hours():
            return self._send(self.until_monday())
        deals = self.mem.open_deals()
        if not deals or self.mem.invalid >= MAX_INVALID:
            return self._send(wait(hours=4.0))
        for _ in range(5):
            tool = self.rng.choices(list(TOOLS), weights=list(TOOLS.values()))[0]
            action = self.build(tool, self.rng.choice(deals))
            if action is not None and (self._key(action) not in self.refused):
                return self._send(action)
        return self._send(wait(hours=self.rng.choice((1.0, 4.0, 8.0))))

    def build(self, tool: str, deal: Deal) -> Action | None:
        rng, oid = self.rng, deal.id
        people = [p.id for p in deal.active_people()]
        kws = self.mem.known_keywords(deal)
        words = " ".join(rng.sample(kws, min(len(kws), rng.randint(0, 2))))
        bookings = [b.id for b in deal.bookings.values() if b.status == "booked"]
        if tool == "view_opportunity":
            return call(tool, opportunity_id=oid)
        if tool == "research_account":
            if not deal.account_id:
                return call("view_opportunity", opportunity_id=oid)
            return call(tool, account_id=deal.account_id)
        if tool in ("find_stakeholders", "send_contract"):
            return call(tool, opportunity_id=oid)
        if tool == "send_message" and people:
            body = f"Thoughts on {words or 'your plans'}?"
            return call(tool, stakeholder_id=rng.choice(people), subject="Hello", body=body)
        if tool == "schedule_meeting" and people:
            invitees = rng.sample(people, rng.randint(1, min(3, len(people))))
            return call(tool, opportunity_id=oid, stakeholder_ids=invitees, agenda=f"Agenda: {words}",
                        in_days=rng.randint(1, 5))
        if tool == "book_resource":
            resource = rng.choice(("se", "legal", "procurement", "management"))
            return call(tool, opportunity_id=oid, resource=resource, hours=rng.choice((1.0, 2.0, 4.0)),
                        start_in_days=self.mem.lead_days[resource] + rng.randint(0, 3), cancel_booking_id=None)
        if tool == "run_discovery" and deal.meetings:
            return call(tool, meeting_id=rng.choice(sorted(deal.meetings)))
        if tool == "run_technical_evaluation" and bookings:
            return call(tool, opportunity_id=oid, booking_id=rng.choice(bookings))
        if tool == "build_business_case":
            return call(tool, opportunity_id=oid, summary=f"Value: {words}")
        if tool == "propose_action_plan" and people:
            return call(tool, opportunity_id=oid, sponsor_id=rng.choice(people), close_in_days=rng.randint(5, 40))
        if tool in ("send_proposal", "negotiate") and (tool == "send_proposal" or deal.offered is not None):
            return call(tool, opportunity_id=oid, discount_pct=float(rng.randint(0, 25)))
        if tool == "request_approval" and bookings:
            return call(tool, opportunity_id=oid, kind=rng.choice(("security", "legal", "procurement")),
                        booking_id=rng.choice(bookings))
        if tool == "escalate" and bookings:
            return call(tool, opportunity_id=oid, purpose="executive_sponsor", discount_pct=None,
                        booking_id=rng.choice(bookings))
        if tool == "update_crm":
            return call(tool, opportunity_id=oid, stage=rng.choice(OPEN_CRM_STAGES), fields=[], next_step=None)
        if tool == "disqualify":
            return call(tool, opportunity_id=oid, reason="random pick")
        if tool == "wait":
            return wait(hours=rng.choice((0.5, 1.0, 4.0)))
        return None
