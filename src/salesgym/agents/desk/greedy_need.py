"""`greedy-by-need`: the highest-need leads first, one standard offer each, no discovery.

It orders the list by the CRM's need band (high first), then temperature (hot first), and on each call
quotes 20-year term cover at nine times income (the rule of thumb, capped where the public contract's
suitability bound lies for a buyer of any household: 1.5x a need of at least six times income), offers it as
quoted and hangs up, whatever the answer. Fast and blind: it never learns a budget, a goal or a reason.
"""

from __future__ import annotations

from salesgym.agents.base import call
from salesgym.agents.desk.seller import DeskSeller, Result, Script, offer_of, ok, quote_call
from salesgym.envs.desk.contract import SUITABLE_COVER_MAX, TEMPERATURES, TERMINAL, cover_need

NEED = {"high": 0, "medium": 1, "low": 2}


class GreedyByNeed(DeskSeller):
    name = "greedy-by-need"

    def order(self, leads: list[Result]) -> list[str]:
        open_ = [x for x in leads if x["status"] not in TERMINAL]
        open_.sort(key=lambda x: (NEED[x["need_band"]], -TEMPERATURES.index(x["temperature"]), x["id"]))
        return [x["id"] for x in open_]

    def work(self, lead: Result) -> Script:
        started = yield call("calling_start_call", lead_id=lead["id"])
        if not ok(started) or not started["output"].get("connected"):
            return
        quote = yield quote_call(lead["id"], "TERM", SUITABLE_COVER_MAX * cover_need("TERM", lead["income"], 0), 20)
        if ok(quote):
            yield offer_of(quote)
