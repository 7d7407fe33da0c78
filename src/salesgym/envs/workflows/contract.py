"""The workflows family's public contract: the apps, the sandbox clock, limits and what each call costs.

Everything here is public: a task card, the tools, the verifier and the baselines read these same constants.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache

# the four replicas, by the neutral name the state document, permissions and tasks use
APPS: tuple[str, ...] = ("crm", "prospecting", "sequencer", "scheduler")
APP_TITLES: dict[str, str] = {
    "crm": "CRM (HubSpot-shaped: contacts, companies, deals, pipelines, owners, associations, engagements)",
    "prospecting": "prospecting database (Sales Navigator-shaped: lead and account search, profiles, lead lists, "
    "InMail credits)",
    "sequencer": "sequencer (Outreach-shaped: prospects, accounts, sequences, sequence states, mailboxes, tasks)",
    "scheduler": "scheduler (Calendly-shaped: event types, available and busy times, bookings, single-use links, "
    "cancellations, no-shows)",
}
TASK_APP = "task"  # the task's own tools (ask the requester, finish): always allowed

CALL_MINUTES = 1.0  # every tool call moves the sandbox clock one minute
DEFAULT_MAX_CALLS = 60  # the episode's budget of tool calls (its horizon, in minutes)
MAX_CALLS_RANGE = (10, 400)
MAX_PAGE = 50  # rows per page of any list or search
MAX_BATCH = 25  # inputs per batch call (HubSpot's search limits are of the same order)
MAX_TEXT = 2_000  # a note, a task body, an InMail body
INMAIL_SUBJECT_MAX = 200
INMAIL_BODY_MAX = 2_000
SLOT_INCREMENT_MINUTES = 30  # scheduler: a slot starts on the hour or the half hour
WORKDAY_HOURS = (9, 17)  # scheduler: the host's working hours, UTC, Monday to Friday
AVAILABLE_RANGE_DAYS = 7  # scheduler: the most an available-times or busy-times query may span

BASE_DATE = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday; each world starts some whole weeks later


def iso(moment: datetime) -> str:
    """The sandbox's timestamp format (UTC, seconds, a ``Z``): what every replica writes and reads."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=65536)  # the scheduler re-reads every busy time on each call: parse each text once
def parse_iso(text: str) -> datetime | None:
    """A timestamp in ISO 8601 (``Z`` or an offset; a bare date is midnight UTC), or None when it is not one."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@lru_cache(maxsize=4096)
def sandbox_now_iso(anchor: str, minutes: float) -> str:
    """:func:`sandbox_now` as the sandbox's timestamp text (every observation and every write shows it)."""
    return iso(sandbox_now(anchor, minutes))


@lru_cache(maxsize=4096)
def sandbox_now(anchor: str, minutes: float) -> datetime:
    start = parse_iso(anchor)
    assert start is not None
    return start + timedelta(minutes=minutes)
