"""What each territory tool returns, as JSON: one model per output shape (``ToolSpec.output``).

The models are the exported ``outputSchema`` of the MCP tools and what the conformance kit checks every output
against; handlers build plain dicts (no validation on the step path). A key a handler adds only sometimes has
a default here, so the schema does not require it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, RootModel

from salesgym.core.tools import Episode, LastResult, ToolOutput

Unknown = Literal["unknown"]
NotDiscussed = Literal["not discussed"]
# a portfolio row: id | account | milestone | crm stage | value low $k | value high $k | target | last activity day
Row = tuple[str, str, str, str, float, float, str, float]


class Portfolio(ToolOutput):
    columns: list[str]
    rows: list[Row]


class PortfolioOutput(ToolOutput):
    portfolio: Portfolio


class Crm(ToolOutput):
    stage: str
    fields: dict[str, str]
    next_step: str | None


class OpportunityView(ToolOutput):
    id: str
    account_id: str
    product_line: str
    value_band: list[float]
    target_quarter: str
    status: str
    milestone: str
    crm: Crm


class Account(ToolOutput):
    id: str
    name: str
    industry: str
    employees: int
    region: str


class AccountView(Account):
    stack: list[str] | None = None  # once researched
    news: list[str] | None = None


class Person(ToolOutput):
    id: str
    name: str
    title: str


class KnownPerson(Person):
    role: str | None
    engaged: bool
    left: bool


class Learned(ToolOutput):
    keywords: list[str]
    pains: list[str]
    required_approvals: list[str] | Unknown
    budget_band: list[float] | Unknown
    economic_buyer: str
    budget_timing: str


class EvidenceLine(ToolOutput):
    type: str
    count: int
    from_: list[str] = Field(alias="from")
    first: str
    last: str


class Meeting(ToolOutput):
    id: str
    start: str
    invited: list[str]
    accepted: list[str]
    declined: list[str]
    discovery_done: bool


class BookingView(ToolOutput):
    id: str
    resource: str
    hours: float
    start: str
    status: str


class Terms(ToolOutput):
    offered_pct: float | None
    buyer_asks_pct: float | None
    agreed_pct: float | None
    management_approved_pct: float | None
    contract_out: bool


class Page(ToolOutput):
    page: int
    pages: int
    total: int


class More(ToolOutput):
    meetings: Page | None
    bookings: Page | None
    note: str


class DealOutput(ToolOutput):
    opportunity: OpportunityView
    account: AccountView
    stakeholders: list[KnownPerson]
    learned: Learned
    evidence: list[EvidenceLine]
    meetings: list[Meeting]
    bookings: list[BookingView]
    terms: Terms
    in_progress: list[str]
    more: More | None = None  # only when a list was cut to a page


ViewOutput = RootModel[PortfolioOutput | DealOutput]


class Researched(ToolOutput):
    account: AccountView
    news: list[str]
    keywords: list[str]


class ResearchedAgain(ToolOutput):
    note: Literal["already researched"]
    keywords: list[str]


ResearchOutput = RootModel[Researched | ResearchedAgain]


class Found(Person):
    left: bool


class StakeholdersOutput(ToolOutput):
    stakeholders: list[Found]


class MessageOutput(ToolOutput):
    sent_to: str
    note: str


class MeetingOutput(ToolOutput):
    meeting_id: str
    start: str
    note: str


class Booked(ToolOutput):
    booking_id: str
    resource: str
    hours: float
    start: str


class Cancelled(ToolOutput):
    cancelled: str
    refunded: bool
    note: str


BookOutput = RootModel[Booked | Cancelled]


class Pain(ToolOutput):
    label: str
    keywords: list[str]
    severity: Literal["high", "medium", "low"]


class DiscoveryOutput(ToolOutput):
    attendees: list[str]
    pains: list[Pain]
    roles: dict[str, str]
    required_approvals: list[str] | NotDiscussed
    budget_band: list[float] | NotDiscussed
    economic_buyer: str
    budget_timing: str


class EvaluationOutput(ToolOutput):
    started: bool
    se_hours: float
    note: str


class CaseOutput(ToolOutput):
    business_case: str
    addresses: int


class PlanOutput(ToolOutput):
    proposed_to: str
    close_date: str


class ProposalOutput(ToolOutput):
    proposal: str
    authority_pct: float


class CounterOutput(ToolOutput):
    counter_offer: str
    authority_pct: float


class ApprovalOutput(ToolOutput):
    review: str
    note: str


class EscalateOutput(ToolOutput):
    escalated: str
    note: str


class ContractOutput(ToolOutput):
    contract: str


class CrmOutput(ToolOutput):
    crm: Literal["updated"]


class DisqualifyOutput(ToolOutput):
    disqualified: str


class WaitOutput(ToolOutput):
    waited: Literal["hours", "next_event", "next_week"]


# --- the observation's data --------------------------------------------------------------------------------
class Clock(ToolOutput):
    now_hours: float
    stamp: str
    day: int
    week: int
    days_left: int


class Facts(ToolOutput):
    n_opportunities: int
    horizon_days: int
    business_days: int
    capacity_per_week: dict[str, float]
    lead_days: dict[str, int]
    discount_authority: float


class InboxItem(ToolOutput):
    """One new inbox item: every key of ``contract.INBOX_FIELDS`` is present, None where it does not apply."""

    time: str
    opportunity_id: str
    from_: str = Field(alias="from")
    kind: str
    text: str
    decision: str | None
    evidence: str | None
    milestone: str | None
    meeting_id: str | None
    stakeholder_id: str | None
    approval: str | None
    discount_pct: float | None
    reason: str | None
    until: str | None


class Observation(ToolOutput):
    time: Clock
    capacity_left: dict[str, float]
    territory: Facts
    milestone_counts: dict[str, int]
    portfolio: Portfolio
    inbox: list[InboxItem]
    alerts: list[str]
    last_result: LastResult | None
    episode: Episode
