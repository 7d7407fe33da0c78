"""The prospecting replica, shaped like LinkedIn Sales Navigator's concepts (lead and account filters, profiles
with "changed jobs" and "left account" signals, lead lists, InMail credits), with the tool names of the
unofficial Sales Navigator MCP servers and the UI's verbs: Sales Navigator has no public search or write API.

An independent implementation for offline evaluation: no LinkedIn code or data. Rules enforced here:

- search results match every filter (AND) and any value within one filter (OR);
- a lead appears at most once in a list (409 on a second save);
- an InMail's subject is at most 200 characters and its body at most 2,000;
- an InMail costs one credit unless the recipient is a 1st-degree connection or has an Open Profile; credits
  never go below zero (a send without a credit is refused).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows import outputs
from salesgym.envs.workflows.apps.common import Ctx, create, done, get, next_key, now_iso, rows, update
from salesgym.envs.workflows.contract import INMAIL_BODY_MAX, INMAIL_SUBJECT_MAX, MAX_PAGE
from salesgym.envs.workflows.state import Record

Text = Annotated[str, StringConstraints(max_length=200)]
Seniority = Literal["Entry", "Senior", "Manager", "Director", "VP", "CXO", "Owner"]
SENIORITY_CODES = {"Entry": 3, "Senior": 4, "Manager": 5, "Director": 6, "VP": 7, "CXO": 8, "Owner": 10}
Function = Literal["Engineering", "Sales", "Marketing", "Finance", "Operations", "Information Technology",
                   "Human Resources"]  # fmt: skip
HEADCOUNT_BANDS = {"B": (1, 10), "C": (11, 50), "D": (51, 200), "E": (201, 500), "F": (501, 1000),
                   "G": (1001, 5000), "H": (5001, 10000), "I": (10001, 10**9)}  # fmt: skip


def profile_view(lead: Record, full: bool) -> dict[str, Any]:
    keys = ("lead_id", "urn", "firstName", "lastName", "title", "company", "account_id", "geography", "industry",
            "seniority", "function", "changed_jobs_recently", "degree")  # fmt: skip
    out = {k: lead[k] for k in keys}
    if full:
        out.update({k: lead[k] for k in ("left_account", "current_company", "current_title", "open_profile",
                                         "teamlink", "past_companies", "summary")})  # fmt: skip
    return out


def _credits(ctx: Ctx) -> Record:
    return rows(ctx, "prospecting.credits")["inmail"]


# --- argument models --------------------------------------------------------------------------------------------
class SearchLeadsArgs(ToolArgs):
    keywords: Text | None = Field(None, description="words in the name, title or company")
    title: Text | None = Field(None, description="part of the current title")
    company: list[Text] | None = Field(None, max_length=10, description="current company names (any of them)")
    geography: list[Text] | None = Field(None, max_length=10)
    industry: list[Text] | None = Field(None, max_length=10)
    seniority_level: list[Seniority] | None = Field(None, max_length=7, description="any of these seniorities")
    function_area: list[Function] | None = Field(None, max_length=7, description="any of these functions")
    changed_jobs: bool | None = Field(None, description="spotlight: changed jobs in the last 90 days")
    start: int = Field(0, ge=0, le=10_000)
    count: int = Field(25, ge=1, le=MAX_PAGE)


class SearchAccountsArgs(ToolArgs):
    keywords: Text | None = None
    industry: list[Text] | None = Field(None, max_length=10)
    headcount: list[Literal["B", "C", "D", "E", "F", "G", "H", "I"]] | None = Field(
        None, max_length=8, description="headcount bands: B=1-10, C=11-50, D=51-200, E=201-500, F=501-1000, "
        "G=1001-5000, H=5001-10000, I=10001+")
    start: int = Field(0, ge=0, le=10_000)
    count: int = Field(25, ge=1, le=MAX_PAGE)


class LeadArgs(ToolArgs):
    lead_id: Text = Field(min_length=1)


class AccountArgs(ToolArgs):
    account_id: Text = Field(min_length=1)


class NoArgs(ToolArgs):
    pass


class ListArgs(ToolArgs):
    list_id: Text = Field(min_length=1)


class SaveArgs(ToolArgs):
    lead_id: Text = Field(min_length=1)
    list_id: Text = Field(min_length=1)


class InMailArgs(ToolArgs):
    recipient_urn: Text = Field(min_length=1, description="the lead's urn (get_sales_profile)")
    subject: Annotated[str, StringConstraints(min_length=1, max_length=INMAIL_SUBJECT_MAX)]
    body: Annotated[str, StringConstraints(min_length=1, max_length=INMAIL_BODY_MAX)]


# --- handlers ---------------------------------------------------------------------------------------------------
def _any(value: str, wanted: Sequence[str] | None) -> bool:
    return wanted is None or value.lower() in (w.lower() for w in wanted)


def search_leads(ctx: Ctx, a: SearchLeadsArgs) -> ToolOutcome:
    found = []
    for lead in rows(ctx, "prospecting.leads").values():
        text = f"{lead['firstName']} {lead['lastName']} {lead['title']} {lead['company']}".lower()
        if a.keywords is not None and not all(w in text for w in a.keywords.lower().split()):
            continue
        if a.title is not None and a.title.lower() not in lead["title"].lower():
            continue
        if not (_any(lead["company"], a.company) and _any(lead["geography"], a.geography)
                and _any(lead["industry"], a.industry) and _any(lead["seniority"], a.seniority_level)
                and _any(lead["function"], a.function_area)):  # fmt: skip
            continue
        if a.changed_jobs is not None and lead["changed_jobs_recently"] != a.changed_jobs:
            continue
        found.append(profile_view(lead, False))
    return done({"elements": found[a.start : a.start + a.count], "paging": {"start": a.start, "count": a.count,
                                                                           "total": len(found)}})  # fmt: skip


def search_accounts(ctx: Ctx, a: SearchAccountsArgs) -> ToolOutcome:
    found = []
    for acc in rows(ctx, "prospecting.accounts").values():
        if a.keywords is not None and a.keywords.lower() not in acc["name"].lower():
            continue
        if not _any(acc["industry"], a.industry):
            continue
        if a.headcount is not None and not any(lo <= acc["headcount"] <= hi for lo, hi in
                                               (HEADCOUNT_BANDS[b] for b in a.headcount)):  # fmt: skip
            continue
        found.append(acc)
    return done({"elements": found[a.start : a.start + a.count], "paging": {"start": a.start, "count": a.count,
                                                                           "total": len(found)}})  # fmt: skip


def get_profile(ctx: Ctx, a: LeadArgs) -> ToolOutcome:
    return done(profile_view(get(ctx, "prospecting.leads", a.lead_id, "lead"), True))


def get_account(ctx: Ctx, a: AccountArgs) -> ToolOutcome:
    return done(get(ctx, "prospecting.accounts", a.account_id, "account"))


def _members(ctx: Ctx, list_id: str) -> list[str]:
    return [m["lead_id"] for m in rows(ctx, "prospecting.list_members").values() if m["list_id"] == list_id]


def get_lists(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"elements": [{**lst, "size": len(_members(ctx, key))}
                              for key, lst in rows(ctx, "prospecting.lists").items()]})  # fmt: skip


def get_members(ctx: Ctx, a: ListArgs) -> ToolOutcome:
    get(ctx, "prospecting.lists", a.list_id, "lead list")
    leads = rows(ctx, "prospecting.leads")
    return done({"elements": [profile_view(leads[lid], False) for lid in _members(ctx, a.list_id)]})


def save_lead(ctx: Ctx, a: SaveArgs) -> ToolOutcome:
    lead = get(ctx, "prospecting.leads", a.lead_id, "lead")
    lst = get(ctx, "prospecting.lists", a.list_id, "lead list")
    key = f"{a.list_id}:{a.lead_id}"
    if key in rows(ctx, "prospecting.list_members"):
        raise ToolError(f"409 Conflict: {lead['firstName']} {lead['lastName']} is already in {lst['name']!r}")
    create(ctx, "prospecting.list_members", key, {"list_id": a.list_id, "lead_id": a.lead_id,
                                                  "saved_at": now_iso(ctx)})  # fmt: skip
    return done({"saved": True, "list_id": a.list_id, "lead_id": a.lead_id, "size": len(_members(ctx, a.list_id))})


def send_inmail(ctx: Ctx, a: InMailArgs) -> ToolOutcome:
    lead = next((x for x in rows(ctx, "prospecting.leads").values() if x["urn"] == a.recipient_urn), None)
    if lead is None:
        raise ToolError(f"404 Not Found: no lead with urn {quote(a.recipient_urn)}")
    free = lead["degree"] == 1 or lead["open_profile"]
    credits = _credits(ctx)
    if not free and credits["available"] < 1:
        raise ToolError("403 Forbidden: no InMail credits left (credits never go below zero)")
    key, n = next_key(ctx, "prospecting.inmails")
    record = {"id": key, "recipient_urn": lead["urn"], "lead_id": lead["lead_id"], "subject": a.subject,
              "body": a.body, "sent_at": now_iso(ctx), "credit_spent": not free, "replied": False}  # fmt: skip
    create(ctx, "prospecting.inmails", key, record, n)
    if not free:
        update(ctx, "prospecting.credits", "inmail", {**credits, "available": credits["available"] - 1},
               ["available"])
    return done({"sent": True, "id": key, "credit_spent": not free, "credits_left": _credits(ctx)["available"]})


def get_credits(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done(dict(_credits(ctx)))


def get_conversations(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"elements": list(rows(ctx, "prospecting.inmails").values())[:MAX_PAGE]})


def _spec(name: str, description: str, args: type[ToolArgs], handler: Any, writes: bool,
          failures: tuple[str, ...] = (), *, output: type[BaseModel]) -> ToolSpec[Any, Ctx]:  # fmt: skip
    return ToolSpec(name, description, args, handler, "1 minute", writes=writes, failure_modes=failures,
                    output=output)


TOOLS: list[ToolSpec[Any, Ctx]] = [
    _spec("sales_search_leads", "Search leads: AND across filters, OR within one; spotlight changed_jobs.",
          SearchLeadsArgs, search_leads, False, output=outputs.SearchPage),
    _spec("sales_search_accounts", "Search accounts by keywords, industry and headcount band.", SearchAccountsArgs,
          search_accounts, False, output=outputs.SearchPage),
    _spec("get_sales_profile", "A lead's full profile: left_account (current job no longer matches), current "
          "company and title, degree, open_profile, teamlink.", LeadArgs, get_profile, False,
          output=outputs.RecordOutput),
    _spec("get_account", "One account in full: industry, headcount, growth, headquarters.", AccountArgs,
          get_account, False, output=outputs.RecordOutput),
    _spec("get_lead_lists", "Your lead lists with their sizes.", NoArgs, get_lists, False, output=outputs.Elements),
    _spec("get_lead_list_members", "The leads saved in a list.", ListArgs, get_members, False, output=outputs.Elements),
    _spec("save_lead", "Save a lead to a lead list (at most once per list).", SaveArgs, save_lead, True,
          ("409 already in the list",), output=outputs.Saved),
    _spec("send_inmail", f"Send an InMail (subject <= {INMAIL_SUBJECT_MAX}, body <= {INMAIL_BODY_MAX} characters); "
          "costs a credit unless the lead is 1st-degree or has an Open Profile.", InMailArgs, send_inmail, True,
          ("403 no credits left", "unknown urn"), output=outputs.InMailSent),
    _spec("get_inmail_credits", "InMail credits available.", NoArgs, get_credits, False, output=outputs.Credits),
    _spec("get_conversations", "The InMails you have sent, with whether each spent a credit.", NoArgs,
          get_conversations, False, output=outputs.Elements),
]  # fmt: skip
TABLES = ("prospecting.leads", "prospecting.accounts", "prospecting.lists", "prospecting.list_members",
          "prospecting.inmails", "prospecting.credits")  # fmt: skip
