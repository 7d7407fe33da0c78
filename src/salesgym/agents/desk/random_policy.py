"""`random`: a random but well-formed call built from what the seller has seen.

Each step it picks a tool at random and fills its arguments from memory: a lead it has listed, a quote it
holds for the lead on the line (offered as quoted), a random plan and cover. It never repeats a refused call
and falls back to waiting a few minutes, so it does not run into the invalid-action ceiling. It is one of the
normalised score's floors.
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, call
from salesgym.agents.desk.seller import quote_call
from salesgym.envs.desk.catalog import CATALOGUE
from salesgym.envs.desk.contract import PLANS, TOPICS

TOOLS = {"crm_search_leads": 1, "crm_get_lead": 1, "calling_start_call": 3, "calling_ask_discovery": 2,
         "products_quote_plan": 3, "calling_propose_offer": 3, "calling_end_call": 2, "wait": 1}  # fmt: skip


class RandomPolicy(Policy):
    name = "random"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        self.leads: list[dict[str, Any]] = []
        self.quotes: list[dict[str, Any]] = []
        self.refused: set[str] = set()

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        out = tool_result.get("output", {})
        if tool_result.get("status") != "ok" and self.last_action is not None:
            self.refused.add(repr(self.last_action))
        elif "leads" in out:
            known = {lead["id"] for lead in self.leads}
            self.leads += [row for row in out["leads"] if row["id"] not in known]
        elif "quote_id" in out:
            self.quotes.append(out)

    def act(self, observation: dict[str, Any]) -> Action:
        action = self._choose(observation)
        if repr(action) in self.refused:
            action = call("wait", minutes=float(self.rng.choice((1, 5))))
        self.last_action = action
        return action

    def _choose(self, observation: dict[str, Any]) -> Action:
        rng, active = self.rng, observation["data"]["call"]
        if not self.leads:
            return call("crm_search_leads", min_income=None, max_age=None, temperature=None, need_band=None,
                        status=None, sort_by="id", limit=50, offset=0)  # fmt: skip
        tool = rng.choices(list(TOOLS), weights=list(TOOLS.values()))[0]
        lead = rng.choice(self.leads)
        if tool == "crm_search_leads":
            return call(tool, min_income=None, max_age=None, temperature=None, need_band=None, status=None,
                        sort_by=rng.choice(("id", "income")), limit=50, offset=0)  # fmt: skip
        if tool in ("crm_get_lead", "calling_start_call"):
            return call(tool, lead_id=lead["id"])
        if tool == "calling_ask_discovery":
            return call(tool, topic=rng.choice(TOPICS))
        if tool == "products_quote_plan":
            plan = rng.choice(PLANS)
            spec = CATALOGUE[plan]
            target = lead if active is None else next((x for x in self.leads if x["id"] == active["lead_id"]), lead)
            return quote_call(target["id"], plan, rng.uniform(spec.min_cover, spec.max_cover / 10),
                              rng.choice((10, 15, 20, 30)))  # fmt: skip
        if tool == "calling_propose_offer" and active is not None:
            mine = [q for q in self.quotes if q["lead_id"] == active["lead_id"]]
            if mine:
                q = rng.choice(mine)
                return call(tool, plan_type=q["plan_type"], coverage_amount=q["coverage_amount"],
                            term_years=q["term_years"], monthly_premium=q["monthly_premium"], discount_pct=0,
                            next_step=rng.choice(("close_today", "follow_up")))  # fmt: skip
        if tool == "calling_end_call":
            return call(tool, disposition="other")
        return call("wait", minutes=float(rng.choice((1, 5, 15))))
