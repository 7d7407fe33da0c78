"""`quote-then-fit`: discovery first, then an offer sized to what the buyer said; the strongest heuristic and
the anchor the exploit probes are compared with.

Order: warm and hot leads first, richer budget bands first. On each call it asks the budget, the goal and
the dependents (three questions, nine minutes; only the budget, or nothing, when the minutes left per lead
are short), picks the plan the goal asks for (else term life, or whole
life when the budget easily pays for it), sizes the cover to the buyer's need in the public contract (six
times income plus one and a half per dependent; for DI 60% of monthly income), so every sale is suitable, but
no dearer than 60% of the stated budget, quotes it and offers it. A refusal's
reason code steers the next offer (less cover when over budget, toward the target when the cover is off,
the goal's or term plan when the plan is wrong); a buyer who needs time gets a callback half an hour later and
is called back when it is due. At most three offers a lead.
"""

from __future__ import annotations

from salesgym.agents.base import Action, call
from salesgym.agents.desk.seller import DeskSeller, Result, Script, offer_of, ok, price, quote_call, sellable
from salesgym.envs.desk.contract import GOAL_PLAN, TEMPERATURES, TERMINAL, cover_need

BAND_ORDER = ("$800+", "$400-800", "$200-400", "$100-200", "$25-100")
BAND_BUDGET = {"$800+": 900.0, "$400-800": 550.0, "$200-400": 280.0, "$100-200": 140.0, "$25-100": 60.0}
MAX_OFFERS = 3
SPEND = 0.6  # the share of the stated budget an offer aims at
QUESTIONS = ("budget", "goal", "dependents")


class QuoteThenFit(DeskSeller):
    name = "quote-then-fit"

    def order(self, leads: list[Result]) -> list[str]:
        open_ = [x for x in leads if x["status"] not in TERMINAL]
        open_.sort(key=lambda x: (-TEMPERATURES.index(x["temperature"]), BAND_ORDER.index(x["budget_band"]), x["id"]))
        return [x["id"] for x in open_]

    # -- the call script --------------------------------------------------------------------------------------
    def work(self, lead: Result) -> Script:
        started = yield call("calling_start_call", lead_id=lead["id"])
        if not ok(started) or not started["output"].get("connected"):
            return
        facts: dict[str, object] = {}
        for topic in self.questions(lead):
            answer = yield call("calling_ask_discovery", topic=topic)
            if ok(answer):
                facts[topic] = answer["output"]["answer"]
        yield from self.sell(lead, facts)

    def questions(self, lead: Result) -> tuple[str, ...]:
        """All three questions while time is plentiful, only the budget when it is short, none when scarce."""
        left = self.minutes_left / max(1, len(self.queue) + 1)
        return QUESTIONS if left >= 25 else QUESTIONS[:1] if left >= 13 else ()

    def sell(self, lead: Result, facts: dict[str, object]) -> Script:
        budget = float(facts.get("budget") or BAND_BUDGET[lead["budget_band"]])  # type: ignore[arg-type]
        dependents = int(facts.get("dependents") or 0)  # type: ignore[call-overload]
        target = cover_need("TERM", lead["income"], dependents)  # the need it would answer to `coverage`
        plan = self.first_plan(lead, facts, budget, target)
        cover = self.size(lead, plan, budget, target)
        for _ in range(MAX_OFFERS):
            quote = yield quote_call(lead["id"], plan, cover)
            if not ok(quote):
                return
            answer = yield self.offer(quote)
            out = answer.get("output", {})
            if not ok(answer) or out.get("decision") != "reject":
                return  # accepted, hung up, or refused by the desk
            reason = out.get("reason")
            if reason == "needs_time":
                yield from self.call_back(lead)
                return
            plan, cover = self.adjust(lead, facts, str(reason), plan, cover, budget, target)

    def offer(self, quote: Result) -> Action:
        return offer_of(quote, next_step="follow_up")

    def first_plan(self, lead: Result, facts: dict[str, object], budget: float, target: float) -> str:
        wanted = GOAL_PLAN.get(str(facts.get("goal")))
        if wanted is not None and sellable(lead, wanted):
            return wanted
        if sellable(lead, "WHOLE") and price(lead, "WHOLE", 0.6 * target) <= SPEND * budget:
            return "WHOLE"
        return "TERM"

    def size(self, lead: Result, plan: str, budget: float, target: float) -> float:
        """The cover nearest the target whose premium is at most SPEND of the budget."""
        if plan == "DI":
            target = cover_need("DI", lead["income"], 0)
        per_unit = price(lead, plan, 1000.0 if plan == "DI" else 100_000.0) / (1000.0 if plan == "DI" else 100_000.0)
        affordable = SPEND * budget / per_unit if per_unit > 0 else target
        return min(target, affordable)

    def adjust(self, lead: Result, facts: dict[str, object], reason: str, plan: str, cover: float, budget: float,
               target: float) -> tuple[str, float]:  # fmt: skip
        if reason == "over_budget":
            return plan, cover * 0.7
        if reason == "coverage_too_high":
            return plan, cover * 0.8
        if reason == "coverage_too_low":
            return plan, cover * 1.25
        if reason == "wrong_plan":
            other = "TERM" if plan != "TERM" else "WHOLE"
            return other, self.size(lead, other, budget, target)
        return plan, cover * 0.9
