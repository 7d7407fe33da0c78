"""What each workflows tool returns, as JSON: one model per output shape (``ToolSpec.output``).

The replicas answer in their platforms' envelopes (HubSpot ``results``, Outreach ``data``/``meta``, Calendly
``resource``/``collection``, Sales Navigator ``elements``/``paging``); the envelopes are typed here. A record is a
JSON object whose fields are the app's table data (seeded per task), typed as such. A key a handler adds only
sometimes has a default, so the schema does not require it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, RootModel

from salesgym.core.tools import Episode, LastResult, ToolOutput

Record = dict[str, Any]  # one row of an app's table, as the platform shows it
RecordOutput = RootModel[Record]  # a tool that answers with one record, bare


# --- the task tools ---------------------------------------------------------------------------------------------
class AnswerOutput(ToolOutput):
    from_: str = Field(alias="from")
    answer: str
    voice_error: str | None = None  # only when the optional voice failed


class PolicyLine(ToolOutput):
    name: str
    title: str
    applies_to_this_task: bool


class PoliciesOutput(ToolOutput):
    policies: list[PolicyLine]


class PolicyOutput(ToolOutput):
    name: str
    title: str
    text: str


class FinishOutput(ToolOutput):
    finished: bool


# --- CRM (HubSpot) ----------------------------------------------------------------------------------------------
class UserDetails(ToolOutput):
    hubId: int
    portalType: str
    user: str
    scopes: list[str]


class After(ToolOutput):
    after: str


class Paging(ToolOutput):
    next: After


class ListedObjects(ToolOutput):
    results: list[Record]
    paging: Paging | None = None  # only when there is a next page


class FoundObjects(ListedObjects):
    total: int


class NotFound(ToolOutput):
    status: Literal["error"]
    category: str
    context: dict[str, list[str]]


class BatchRead(ToolOutput):
    status: Literal["COMPLETE"]
    results: list[Record]
    errors: list[NotFound]


class Batch(ToolOutput):
    status: Literal["COMPLETE"]
    results: list[Record]


class Ref(ToolOutput):
    id: str


class Associated(ToolOutput):
    from_: Ref = Field(alias="from")
    to: Ref
    types: list[int]


class AssociationsCreated(ToolOutput):
    status: Literal["COMPLETE"]
    created: int
    results: list[Associated]


class AssociationType(ToolOutput):
    category: str
    typeId: int
    label: str | None


class AssociatedTo(ToolOutput):
    toObjectId: str
    associationTypes: list[AssociationType]


class Associations(ToolOutput):
    results: list[AssociatedTo]


class AssociationDefinitions(ToolOutput):
    results: list[AssociationType]


class Engagement(ToolOutput):
    id: int
    type: str
    ownerId: Any


class EngagementCreated(ToolOutput):
    engagement: Engagement
    associations: dict[str, list[Any]]
    metadata: dict[str, Any]
    object: Record


class Results(ToolOutput):
    results: list[Record]


# --- prospecting (Sales Navigator) ------------------------------------------------------------------------------
class Window(ToolOutput):
    start: int
    count: int
    total: int


class SearchPage(ToolOutput):
    elements: list[Record]
    paging: Window


class Elements(ToolOutput):
    elements: list[Record]


class Saved(ToolOutput):
    saved: bool
    list_id: str
    lead_id: str
    size: int


class InMailSent(ToolOutput):
    sent: bool
    id: str
    credit_spent: bool
    credits_left: int


class Credits(ToolOutput):
    available: int
    monthly_allowance: int
    banked_max: int


# --- scheduler (Calendly) ---------------------------------------------------------------------------------------
class Resource(ToolOutput):
    resource: Record


class Pagination(ToolOutput):
    count: int
    next_page_token: int | None


class Collection(ToolOutput):
    collection: list[Record]


class PagedCollection(Collection):
    pagination: Pagination


# --- sequencer (Outreach) ---------------------------------------------------------------------------------------
class Data(ToolOutput):
    data: Record


class Count(ToolOutput):
    count: int


class DataList(ToolOutput):
    data: list[Record]
    meta: Count


class BatchState(ToolOutput):
    state: str
    total: int
    failures: list[Record]


class Added(ToolOutput):
    batch: BatchState
    sequenceStateIds: list[int]


# --- the observation's data -------------------------------------------------------------------------------------
class Clock(ToolOutput):
    now: str
    calls_used: int
    calls_left: int


class Message(ToolOutput):
    id: str
    from_: str = Field(alias="from")
    text: str
    at: str


class Ending(Episode):
    verdict: Literal["pass", "fail"] | None  # at the end only


class Task(ToolOutput):
    title: str
    prompt: str
    apps: list[str]
    read_only: list[str]
    requester: str
    policies: list[str] | None = None  # only when the card names policies


class Observation(ToolOutput):
    task: Task
    clock: Clock
    told: dict[str, Any]
    inbox: list[Message]
    last_result: LastResult | None
    episode: Ending
