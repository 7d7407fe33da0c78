"""`oracle`: a seller with perfect information (every buyer's hidden facts, the variant, the buyers' rules
and their keyed dice) that still acts only through tools: headroom, never ranked.

For each lead it searches plans, cover, term, discount, pressure and whether to ask one question first for
the dearest offer the buyer will accept, exactly as ``buyers.decide`` would answer it, and works the leads in
order of MRR per minute. A buyer who wants time first gets a callback and is called back inside its window.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from salesgym.agents.base import call
from salesgym.agents.desk.seller import DeskSeller, Result, Script, offer_of, ok, quote_call
from salesgym.core.rng import uniform
from salesgym.envs.desk import buyers  # operator side: the oracle knows how buyers decide
from salesgym.envs.desk.archetypes import BY_NAME
from salesgym.envs.desk.catalog import CATALOGUE, TERM_MULTIPLIER, premium
from salesgym.envs.desk.contract import DISCOUNT_AUTHORITY_PCT, TERMINAL, suitable
from salesgym.envs.desk.world import Lead

SHARES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5)  # cover as a share of the target
DISCOUNTS = (0, 5, 10, DISCOUNT_AUTHORITY_PCT)


class Plan(NamedTuple):
    mrr: float
    minutes: float
    plan: str
    cover: int
    term: int | None
    discount: int
    next_step: str
    ask: bool  # ask one question first (it builds trust; a skeptical buyer wants it)
    callback: bool  # needs time first: a callback, then the offer on the call back


def best_offer(seed: int, variant: str, lead: Lead) -> Plan | None:
    """The dearest offer this buyer accepts on its first offer, and what it takes to get there."""
    u, u2 = uniform(seed, "offer", lead.id, 0), uniform(seed, "gate", lead.id, 0)
    callback = BY_NAME[lead.archetype].needs_time
    best: Plan | None = None
    for name, spec in CATALOGUE.items():
        if not spec.min_age <= lead.age <= spec.max_age:
            continue
        target = buyers.target_cover(lead, name)
        for share in SHARES:
            cover = int(min(spec.max_cover, max(spec.min_cover, round(target * share / 1000) * 1000)))
            if not suitable(name, cover, lead.income, lead.dependents):
                continue  # over-insured: the desk voids the sale (rounding can cross the bound at 1.5)
            for term in (TERM_MULTIPLIER if spec.term else (None,)):
                quoted = premium(name, cover, term, lead.age, lead.risk_class, lead.smoker)
                for ask in (False, True):
                    for discount in DISCOUNTS:
                        price = round(quoted * (1 - discount / 100), 2)
                        if best is not None and price <= best.mrr:
                            break
                        if _accepts(lead, variant, name, cover, price, ask, callback, u, u2):
                            minutes = 8.0 + 3.0 * ask + 4.0 * callback
                            step = "close_today" if _accepts(lead, variant, name, cover, price, ask, callback, u, u2,
                                                             "close_today") else "follow_up"  # fmt: skip
                            best = Plan(price, minutes, name, cover, term, discount, step, ask, callback)
                            break
    return best


def _accepts(lead: Lead, variant: str, plan: str, cover: int, price: float, ask: bool, callback: bool, u: float,
             u2: float, step: str | None = None) -> bool:  # fmt: skip
    history = buyers.History(calls=1 + callback, offers=0, offers_this_call=0, rejections=0, patience=lead.patience,
                             topics=int(ask), questions_this_call=int(ask), quotes=1, honoured_callback=callback)
    steps = (step,) if step else ("follow_up", "close_today")
    return any(buyers.decide(lead, variant, buyers.Offer(plan, cover, price, s), history, u, u2).decision == "accept"
               for s in steps)  # fmt: skip


class Oracle(DeskSeller):
    name = "oracle"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        truth = self.hidden_truth or {}
        leads = {lid: Lead(**{k: d[k] for k in Lead._fields}) for lid, d in truth["leads"].items()}
        self.plans = {lid: best_offer(truth["seed"], truth["variant"], lead) for lid, lead in leads.items()}
        self.waiting: set[str] = set()  # leads called once, waiting for their callback

    def order(self, leads: list[Result]) -> list[str]:
        worth = [(p.mrr / p.minutes, lid) for lid, p in self.plans.items()
                 if p is not None and self.leads[lid]["status"] not in TERMINAL]  # fmt: skip
        return [lid for _, lid in sorted(worth, key=lambda x: (-x[0], x[1]))]

    def work(self, lead: Result) -> Script:
        plan = self.plans[lead["id"]]
        if plan is None:
            return
        started = yield call("calling_start_call", lead_id=lead["id"])
        if not ok(started) or not started["output"].get("connected"):
            return
        if plan.callback and lead["id"] not in self.waiting:
            self.waiting.add(lead["id"])
            yield from self.call_back(lead, 15)
            return
        if plan.ask:
            yield call("calling_ask_discovery", topic="budget")
        quote = yield quote_call(lead["id"], plan.plan, plan.cover, plan.term)
        if ok(quote):
            yield offer_of(quote, plan.next_step, plan.discount)
