"""Appearance variants of the web apps: theme, density, label wording and column order.

The same state renders under every variant; only the look changes, so a studio can measure how much an agent's
pass rate drops on a look it never saw (the UI splits hold some variants out, ``envs/workflows_ui/splits.py``).
A label is looked up by key (``Variant.word``); a key without a label of its own shows the key in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

T = TypeVar("T")

# the standard wording: what each app's pages call things (keys are field names, object names and verbs)
STANDARD: dict[str, str] = {
    # crm
    "contacts": "Contacts", "companies": "Companies", "deals": "Deals", "board": "Pipeline board",
    "notes": "Notes", "tasks": "Tasks", "meetings": "Meetings", "activities": "Activities",
    "email": "Email", "firstname": "First name", "lastname": "Last name", "jobtitle": "Job title",
    "company": "Company name", "phone": "Phone", "country": "Country", "lifecyclestage": "Lifecycle stage",
    "hs_lead_status": "Lead status", "hubspot_owner_id": "Owner", "name": "Name", "domain": "Domain",
    "industry": "Industry", "numberofemployees": "Employees", "dealname": "Deal name", "dealstage": "Deal stage",
    "pipeline": "Pipeline", "amount": "Amount", "closedate": "Close date", "createdAt": "Created",
    "hs_timestamp": "Date", "hs_note_body": "Note", "hs_task_subject": "Subject", "hs_task_body": "Details",
    "hs_task_status": "Status", "hs_task_type": "Type", "hs_task_priority": "Priority",
    "hs_meeting_title": "Title", "hs_meeting_start_time": "Start", "hs_meeting_end_time": "End",
    "hs_meeting_outcome": "Outcome", "hs_meeting_body": "Notes",
    "associate": "Associate", "associations": "Associations", "new": "Create", "edit": "Edit", "save": "Save",
    "search": "Search", "log_note": "Log note", "create_task": "Create task", "log_meeting": "Log meeting",
    "record": "Record", "id": "ID", "filters": "Filters", "sort": "Sort by", "next": "Next page",
    "previous": "Previous page", "type": "Type", "to": "To record",
    # sequencer
    "prospects": "Prospects", "accounts": "Accounts", "sequences": "Sequences", "mailboxes": "Mailboxes",
    "mailings": "Emails", "emails": "Emails", "firstName": "First name", "lastName": "Last name", "title": "Title",
    "tags": "Tags", "account": "Account", "owner": "Owner", "optedOut": "Opted out", "state": "State",
    "enabled": "Enabled", "stepTypes": "Steps", "ruleset": "Ruleset", "add_prospects": "Add prospects",
    "enroll": "Add to sequence", "mailbox": "Mailbox", "finish": "Finish", "sequence": "Sequence",
    "sequence_states": "Sequence states", "action": "Action", "dueAt": "Due", "note": "Note",
    "new_task": "New task", "shareType": "Sharing", "subject": "Subject", "body": "Body",
    # scheduler
    "events": "Scheduled events", "event_types": "Event types", "availability": "Availability",
    "duration": "Duration (minutes)", "active": "Active", "start_time": "Start", "end_time": "End",
    "status": "Status", "invitees": "Invitees", "timezone": "Time zone", "location": "Location",
    "cancel": "Cancel event", "reason": "Reason", "no_show": "Mark as no-show", "book": "Schedule event",
    "single_use_link": "Create single-use link", "week": "Week of", "busy": "Busy",
    "invitee_email": "Invitee email",
    # prospecting
    "leads": "Lead search", "account_search": "Account search", "lists": "Lead lists",
    "messages": "Sent InMails", "keywords": "Keywords", "geography": "Geography", "seniority": "Seniority",
    "function": "Function", "changed_jobs": "Changed jobs in the last 90 days", "headcount": "Headcount",
    "save_lead": "Save to list", "list": "Lead list", "inmail": "Message (InMail)", "send": "Send",
    "credits": "InMail credits", "degree": "Connection degree", "open_profile": "Open Profile",
    "teamlink": "TeamLink", "left_account": "Left the company", "current_company": "Current company",
    "current_title": "Current title", "past_companies": "Past companies", "summary": "About", "hq": "Headquarters",
    "size": "Leads", "headcount_growth_pct": "Headcount growth (%)",
    # task desk
    "task": "Task", "request": "Request", "requester": "Requested by", "ask": "Ask", "question": "Your question",
    "inbox": "Inbox", "reply": "Reply", "finish_task": "Mark the task done", "summary_text": "Summary",
    "apps": "Apps", "clock": "Sandbox time", "calls_left": "Calls left", "conversation": "Conversation",
}  # fmt: skip

# another product's wording for the same things (a held-out look)
REWORDED: dict[str, str] = {
    **STANDARD,
    "contacts": "People", "companies": "Organizations", "deals": "Opportunities", "board": "Deal board",
    "jobtitle": "Role", "lifecyclestage": "Stage in funnel", "hs_lead_status": "Lead state",
    "hubspot_owner_id": "Record owner", "dealstage": "Stage", "amount": "Value", "closedate": "Expected close",
    "new": "Add", "edit": "Change", "save": "Save changes", "search": "Find", "log_note": "Add a note",
    "create_task": "Add a to-do", "log_meeting": "Record a meeting", "prospects": "People",
    "sequences": "Cadences", "enroll": "Start cadence", "add_prospects": "Add people", "finish": "Mark finished",
    "events": "Meetings", "event_types": "Meeting types", "book": "Confirm booking", "cancel": "Cancel meeting",
    "no_show": "Flag no-show", "single_use_link": "Get a one-time link", "leads": "People search",
    "lists": "Saved lists", "save_lead": "Add to list", "inmail": "Write InMail", "send": "Send message",
    "ask": "Send question", "finish_task": "Close the task", "reply": "Answer",
}  # fmt: skip

Theme = Literal["light", "dark"]
Density = Literal["comfortable", "compact"]
Wording = Literal["standard", "reworded"]
Columns = Literal["standard", "reversed"]
WORDINGS: dict[str, dict[str, str]] = {"standard": STANDARD, "reworded": REWORDED}


@dataclass(frozen=True)
class Variant:
    """One look of the apps."""

    name: str
    theme: Theme = "light"
    density: Density = "comfortable"
    wording: Wording = "standard"
    columns: Columns = "standard"

    def word(self, key: str) -> str:
        words = WORDINGS[self.wording]
        return words.get(key) or key.replace("_", " ").capitalize()

    def order(self, columns: Sequence[T]) -> list[T]:
        """A table's columns in this look's order (the first, the record's name, stays first)."""
        if self.columns == "reversed" and len(columns) > 2:
            return [columns[0], *reversed(columns[1:])]
        return list(columns)

    @property
    def css_class(self) -> str:
        return f"theme-{self.theme} density-{self.density}"


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("default"),
    Variant("dark", theme="dark"),
    Variant("compact", density="compact"),
    Variant("reworded", wording="reworded"),
    Variant("rearranged", theme="dark", density="compact", wording="reworded", columns="reversed"),
)}  # fmt: skip
DEFAULT_VARIANT = VARIANTS["default"]
TRAIN_LOOKS = ("default", "dark", "compact")  # the looks of the UI train split
HELD_OUT_LOOKS = ("reworded", "rearranged")  # never in train: the UI held-out-look split measures the drop


def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; choose from {', '.join(VARIANTS)}")
    return VARIANTS[name]
