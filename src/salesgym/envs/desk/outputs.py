"""What each desk tool returns, as JSON: one model per output shape (``ToolSpec.output``).

The models are the exported ``outputSchema`` of the MCP tools and what the conformance kit checks every output
against; handlers build plain dicts (no validation on the step path). A key a handler adds only sometimes has
a default here, so the schema does not require it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import RootModel

from salesgym.core.tools import Episode, LastResult, ToolOutput


class LeadFacts(ToolOutput):
    id: str
    name: str
    segment: int
    age: int
    income: int
    household: int
    smoker: bool
    risk_class: str
    temperature: str
    budget_band: str
    need_band: str


class LeadRow(LeadFacts):
    status: str
    calls: int


class SearchOutput(ToolOutput):
    leads: list[LeadRow]
    total: int
    offset: int


class QuoteView(ToolOutput):
    quote_id: str
    lead_id: str
    plan_type: str
    coverage_amount: int
    term_years: int | None
    monthly_premium: float


class QuoteOutput(QuoteView):
    note: Literal["already quoted"] | None = None  # only when the same quote existed


class DueCallback(ToolOutput):
    callback_id: str
    due_minute: float


class Converted(ToolOutput):
    plan: str | None
    monthly_premium: float
    suitable: bool


class LeadOutput(LeadFacts):
    status: str
    calls: int
    offers: int
    last_reason: str | None
    discovered: dict[str, Any]
    quotes: list[QuoteView]
    notes: list[str]
    pending_callbacks: list[DueCallback]
    converted: Converted | None


class NoteOutput(ToolOutput):
    lead_id: str
    notes: int


class Violations(ToolOutput):
    dnc: int
    suitability: int


class SummaryOutput(ToolOutput):
    by_status: dict[str, int]
    converted_mrr: float
    conversions: int
    quotes: int
    pending_callbacks: int
    minutes_left: float
    violations: Violations


class CallbackOutput(ToolOutput):
    callback_id: str
    lead_id: str
    due_minute: float
    window: tuple[float, float]


class CallbackLine(ToolOutput):
    callback_id: str
    lead_id: str
    due_minute: float
    reason: str
    status: str


class CallbacksOutput(ToolOutput):
    callbacks: list[CallbackLine]
    total: int


class Connected(ToolOutput):
    connected: Literal[True]
    lead_id: str
    call_number: int
    honours_callback: str | None


class DncDialled(ToolOutput):
    connected: Literal[False]
    lead_id: str
    violation: str


class HungUp(ToolOutput):
    connected: Literal[False]
    lead_id: str
    buyer: str
    reason: str
    hint: str
    dnc: bool


StartCallOutput = RootModel[Connected | DncDialled | HungUp]


class DiscoveryOutput(ToolOutput):
    lead_id: str
    topic: str
    answer: float | int | str


class Decided(ToolOutput):
    lead_id: str
    decision: str
    reason: str | None
    hint: str | None
    monthly_premium: float
    call_active: bool
    dnc: bool
    buyer_says: str
    compliance: str | None = None  # only when compliance voided an acceptance
    buyer_error: str | None = None  # only when the buyer's voice failed


class Undecided(ToolOutput):
    lead_id: str
    decision: Literal["no_answer"]
    reason: None
    monthly_premium: float
    call_active: bool
    dnc: bool
    buyer_error: str


OfferOutput = RootModel[Decided | Undecided]


class EndCallOutput(ToolOutput):
    lead_id: str
    status: str


class PlansOutput(ToolOutput):
    plans: list[dict[str, Any]]  # the catalogue's rows and its multipliers (catalog.plans_table)


class WaitOutput(ToolOutput):
    waited_minutes: float


# --- the observation's data --------------------------------------------------------------------------------
class Clock(ToolOutput):
    minute: float
    minutes_left: float


class Call(ToolOutput):
    lead_id: str
    call_number: int
    offers: int
    questions: int


class Due(ToolOutput):
    callback_id: str
    lead_id: str
    due_minute: float


class Desk(ToolOutput):
    n_leads: int
    shift_days: int
    budget_minutes: float
    minutes_per_day: float


class Observation(ToolOutput):
    time: Clock
    desk: Desk
    pipeline: dict[str, int]
    converted_mrr: float
    conversions: int
    call: Call | None
    callbacks_due: list[Due]
    last_result: LastResult | None
    episode: Episode
