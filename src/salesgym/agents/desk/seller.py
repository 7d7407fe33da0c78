"""`DeskSeller`: the loop every desk baseline shares, so each policy file holds only its own selling.

It reads the lead list first (``crm_search_leads``, fifty rows a page), orders it (``order``), then works one
lead at a time with ``work(lead)``: a generator that yields tool calls and receives each call's tool result,
so a policy reads top to bottom like a call script. When a script ends with a call still open, the call is
ended; when no lead is left, or too few minutes to work one, it waits out the shift. A policy sees only
observations and its own tool results (the CRM rows), never hidden state.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from salesgym.agents.base import Action, Policy, call
from salesgym.envs.desk.catalog import CATALOGUE, TERM_MULTIPLIER, premium
from salesgym.envs.desk.contract import SEARCH_LIMIT_MAX, TERMINAL, WAIT_MAX_MINUTES

Result = dict[str, Any]
Script = Generator[Action, Result, None]
MIN_MINUTES = 8.0  # fewer minutes than a call, a quote and an offer: not worth starting a lead


def wait_out(minutes_left: float) -> Action:
    return call("wait", minutes=max(1.0, min(WAIT_MAX_MINUTES, float(minutes_left))))


def offer_of(quote: Result, next_step: str = "close_today", discount_pct: int = 0) -> Action:
    """The offer of a quote exactly as quoted (the only kind the desk accepts)."""
    o = quote["output"]
    return call("calling_propose_offer", plan_type=o["plan_type"], coverage_amount=o["coverage_amount"],
                term_years=o["term_years"], monthly_premium=o["monthly_premium"], discount_pct=discount_pct,
                next_step=next_step)  # fmt: skip


def quote_call(lead_id: str, plan: str, cover: float, term_years: int | None = None) -> Action:
    spec = CATALOGUE[plan]
    cover_k = int(min(spec.max_cover, max(spec.min_cover, round(cover / 1000) * 1000)))
    if spec.term and term_years not in TERM_MULTIPLIER:
        term_years = 20
    return call("products_quote_plan", lead_id=lead_id, plan_type=plan, coverage_amount=cover_k,
                term_years=term_years if spec.term else None)  # fmt: skip


def sellable(lead: Result, plan: str) -> bool:
    spec = CATALOGUE[plan]
    return bool(spec.min_age <= lead["age"] <= spec.max_age)


def price(lead: Result, plan: str, cover: float, term_years: int | None = 20) -> float:
    """The catalogue's premium for this lead (public formula, the same the desk quotes)."""
    return premium(plan, int(cover), term_years if CATALOGUE[plan].term else None, lead["age"], lead["risk_class"],
                   lead["smoker"])  # fmt: skip


def ok(result: Result) -> bool:
    return bool(result.get("status") == "ok")


class DeskSeller(Policy):
    """Read the list, order it, work each lead with ``work``; subclasses override ``order`` and ``work``."""

    name = "desk-seller"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        self.leads: dict[str, Result] = {}
        self.total: int | None = None
        self.queue: list[str] = []
        self.script: Script | None = None
        self.result: Result = {}
        self.minutes_left = float(observation["data"]["time"]["minutes_left"])
        self.in_call = False
        self.callbacks: list[tuple[float, str]] = []  # (due minute, lead) of callbacks it scheduled

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.result = tool_result
        out = tool_result.get("output", {})
        if "leads" in out and tool_result.get("status") == "ok":
            for row in out["leads"]:
                self.leads[row["id"]] = row
            self.total = out["total"]

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        self.minutes_left = float(data["time"]["minutes_left"])
        self.in_call = data["call"] is not None
        self.observation = observation
        if self.total is None or len(self.leads) < self.total:  # read the whole list first
            return call("crm_search_leads", min_income=None, max_age=None, temperature=None, need_band=None,
                        status=None, sort_by="id", limit=SEARCH_LIMIT_MAX, offset=len(self.leads))  # fmt: skip
        if not self.queue and self.script is None and not getattr(self, "ordered", False):
            self.ordered = True
            self.queue = self.order(list(self.leads.values()))
        if self.script is not None:
            try:
                return self.script.send(self.result)
            except StopIteration:
                self.script = None
        if self.in_call:
            return call("calling_end_call", disposition="other")
        while self.minutes_left >= MIN_MINUTES:
            lead_id = self.next_lead()
            if lead_id is None:
                break
            self.script = self.work(self.leads[lead_id])
            try:
                return next(self.script)
            except StopIteration:
                self.script = None
        return wait_out(self.minutes_left)

    def next_lead(self) -> str | None:
        """A lead whose callback is due comes first, then the queue in order."""
        minute = float(self.observation["data"]["time"]["minute"])
        due = [c for c in self.callbacks if c[0] - 10 <= minute]
        if due:
            self.callbacks.remove(due[0])
            return due[0][1]
        return self.queue.pop(0) if self.queue else None

    def call_back(self, lead: Result, minutes: int = 30) -> Script:
        """Schedule a callback and remember to call back when it is due."""
        booked = yield call("calendar_schedule_callback", lead_id=lead["id"], minutes_from_now=minutes,
                            reason="wants time to think")  # fmt: skip
        if ok(booked):
            self.callbacks.append((float(booked["output"]["due_minute"]), lead["id"]))

    def status(self, lead_id: str) -> str:
        return str(self.leads[lead_id]["status"])

    def order(self, leads: list[Result]) -> list[str]:
        return [lead["id"] for lead in leads if lead["status"] not in TERMINAL]

    def work(self, lead: Result) -> Script:
        raise NotImplementedError
        yield  # pragma: no cover
