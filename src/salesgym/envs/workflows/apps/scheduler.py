"""The scheduler replica, shaped like Calendly's API v2 (URIs as identifiers), with the tool names of the
official Calendly MCP server (``mcp.calendly.com``).

An independent implementation for offline evaluation: no Calendly code or data. Rules enforced here:

- a booking starts exactly at an open slot of its event type (on the hour or half hour, inside the host's
  working hours, in the future, overlapping no busy time and no active booking) and lasts the event type's
  duration (409 Conflict otherwise); the event type must be active;
- available-times and busy-times queries start in the future and span at most seven days;
- a cancellation records its reason, and only an active event can be canceled; canceling cancels its invitees;
- a no-show can be marked only on an active invitee of an event that has started, once;
- a single-use scheduling link books at most one event.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows import outputs
from salesgym.envs.workflows.apps.common import Ctx, create, done, get, next_key, now_iso, rows, update
from salesgym.envs.workflows.contract import (
    AVAILABLE_RANGE_DAYS,
    MAX_PAGE,
    SLOT_INCREMENT_MINUTES,
    WORKDAY_HOURS,
    iso,
    parse_iso,
    sandbox_now,
)
from salesgym.envs.workflows.state import Record

API = "https://api.calendly.com"
Text = Annotated[str, StringConstraints(max_length=200)]
Uri = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MAX_SLOTS = 100


# --- records and lookups ----------------------------------------------------------------------------------------
def uuid_of(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def event_type_record(key: str, name: str, slug: str, duration: int, owner: str, active: bool = True) -> Record:
    return {"uri": f"{API}/event_types/{key}", "name": name, "slug": slug, "duration": duration, "active": active,
            "kind": "solo", "pooling_type": None, "type": "StandardEventType",
            "scheduling_url": f"https://calendly.com/sandbox/{slug}", "profile": {"type": "User", "owner": owner}}


def scheduled_event_record(key: str, event_type: Record, start: datetime, host: str, at: str) -> Record:
    end = start + timedelta(minutes=event_type["duration"])
    return {"uri": f"{API}/scheduled_events/{key}", "name": event_type["name"], "status": "active",
            "start_time": iso(start), "end_time": iso(end), "event_type": event_type["uri"],
            "location": {"type": "google_conference"}, "invitees_counter": {"total": 1, "active": 1, "limit": 1},
            "event_memberships": [{"user": host}], "cancellation": None, "created_at": at, "updated_at": at}


def invitee_record(key: str, event: Record, name: str, email: str, timezone: str, at: str) -> Record:
    uri = f"{event['uri']}/invitees/{key}"
    return {"uri": uri, "event": event["uri"], "name": name, "email": email, "status": "active", "timezone": timezone,
            "cancel_url": f"https://calendly.com/cancellations/{key}",
            "reschedule_url": f"https://calendly.com/reschedulings/{key}", "rescheduled": False, "old_invitee": None,
            "new_invitee": None, "no_show": None, "questions_and_answers": [], "created_at": at, "updated_at": at}


def host(ctx: Ctx) -> Record:
    return next(iter(rows(ctx, "scheduler.users").values()))


def _now(ctx: Ctx) -> datetime:
    return sandbox_now(ctx.world.anchor, ctx.state.now)


def _event_type(ctx: Ctx, uri: str) -> Record:
    return get(ctx, "scheduler.event_types", uuid_of(uri), "event type")


def _busy(ctx: Ctx) -> list[tuple[datetime, datetime]]:
    out = []
    for table in ("scheduler.busy_times", "scheduler.scheduled_events"):
        for r in rows(ctx, table).values():
            if r.get("status", "active") == "active":
                start, end = parse_iso(r["start_time"]), parse_iso(r["end_time"])
                assert start is not None and end is not None
                out.append((start, end))
    return out


def open_slots(tables_busy: list[tuple[datetime, datetime]], duration: int, start: datetime, end: datetime,
               now: datetime) -> list[datetime]:  # fmt: skip
    """Slot starts in [start, end): on the increment, inside working hours (Mon-Fri), after ``now``, free."""
    step = timedelta(minutes=SLOT_INCREMENT_MINUTES)
    length = timedelta(minutes=duration)
    first = start.replace(second=0, microsecond=0)
    rem = first.minute % SLOT_INCREMENT_MINUTES
    if rem or first < start:
        first += timedelta(minutes=SLOT_INCREMENT_MINUTES - rem) if rem else step
    out: list[datetime] = []
    busy = [(b0, b1) for b0, b1 in tables_busy if b1 > first and b0 < end + length]  # only what can overlap
    t = first
    while t < end and len(out) < MAX_SLOTS:
        day_open = t.replace(hour=WORKDAY_HOURS[0], minute=0)
        day_close = t.replace(hour=WORKDAY_HOURS[1], minute=0)
        if (t.weekday() < 5 and day_open <= t and t + length <= day_close and t > now
                and all(t + length <= b0 or t >= b1 for b0, b1 in busy)):  # fmt: skip
            out.append(t)
        t += step
    return out


def slots(ctx: Ctx, event_type: Record, start: datetime, end: datetime) -> list[datetime]:
    return open_slots(_busy(ctx), event_type["duration"], start, end, _now(ctx))


def _range(ctx: Ctx, start_text: str, end_text: str) -> tuple[datetime, datetime]:
    start, end = parse_iso(start_text), parse_iso(end_text)
    if start is None or end is None:
        raise ToolError("400 Bad Request: start_time and end_time must be ISO 8601 times")
    if start < _now(ctx):
        raise ToolError(f"400 Bad Request: start_time must be in the future (now is {now_iso(ctx)})")
    if not start < end <= start + timedelta(days=AVAILABLE_RANGE_DAYS):
        raise ToolError(f"400 Bad Request: the range must end after it starts and span at most "
                        f"{AVAILABLE_RANGE_DAYS} days")  # fmt: skip
    return start, end


# --- argument models --------------------------------------------------------------------------------------------
class NoArgs(ToolArgs):
    pass


class EventTypeArgs(ToolArgs):
    event_type: Uri = Field(description="the event type's uri")


class ListEventTypesArgs(ToolArgs):
    active: bool | None = Field(None, description="only active (true) or inactive (false) event types")


class RangeArgs(ToolArgs):
    event_type: Uri = Field(description="the event type's uri")
    start_time: Text = Field(description="ISO 8601, in the future")
    end_time: Text = Field(description=f"ISO 8601, at most {AVAILABLE_RANGE_DAYS} days after start_time")


class BusyArgs(ToolArgs):
    user: Uri = Field(description="the user's uri (users-get_current_user)")
    start_time: Text
    end_time: Text


class ListEventsArgs(ToolArgs):
    invitee_email: Text | None = None
    status: Literal["active", "canceled"] | None = None
    min_start_time: Text | None = None
    max_start_time: Text | None = None
    count: int = Field(20, ge=1, le=MAX_PAGE)
    page_token: int = Field(0, ge=0, le=10_000)


class EventArgs(ToolArgs):
    uuid: Uri = Field(description="the scheduled event's uuid (the last part of its uri)")


class InviteesArgs(ToolArgs):
    uuid: Uri
    status: Literal["active", "canceled"] | None = None
    email: Text | None = None


class Invitee(ToolArgs):
    name: Text = Field(min_length=1)
    email: Text = Field(min_length=3)
    timezone: Text = Field(description="an IANA time zone, e.g. Europe/Berlin")


class Location(ToolArgs):
    kind: Literal["google_conference", "zoom_conference", "outbound_call", "physical"] = "google_conference"


class CreateInviteeArgs(ToolArgs):
    event_type: Uri = Field(description="the event type's uri")
    start_time: Text = Field(description="ISO 8601 start: an open slot (event_types-list_event_type_available_times)")
    invitee: Invitee
    location: Location | None = None


class CancelArgs(ToolArgs):
    uuid: Uri
    reason: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(description="why (recorded)")


class LinkArgs(ToolArgs):
    owner: Uri = Field(description="the event type's uri")
    max_event_count: Literal[1] = 1
    owner_type: Literal["EventType"] = "EventType"


class NoShowArgs(ToolArgs):
    invitee: Uri = Field(description="the invitee's uri")


# --- handlers ---------------------------------------------------------------------------------------------------
def current_user(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"resource": host(ctx)})


def list_event_types(ctx: Ctx, a: ListEventTypesArgs) -> ToolOutcome:
    found = [r for r in rows(ctx, "scheduler.event_types").values() if a.active is None or r["active"] == a.active]
    return done({"collection": found, "pagination": {"count": len(found), "next_page_token": None}})


def get_event_type(ctx: Ctx, a: EventTypeArgs) -> ToolOutcome:
    return done({"resource": _event_type(ctx, a.event_type)})


def available_times(ctx: Ctx, a: RangeArgs) -> ToolOutcome:
    et = _event_type(ctx, a.event_type)
    start, end = _range(ctx, a.start_time, a.end_time)
    found = slots(ctx, et, start, end) if et["active"] else []
    return done({"collection": [{"status": "available", "invitees_remaining": 1, "start_time": iso(t),
                                 "scheduling_url": et["scheduling_url"]} for t in found]})  # fmt: skip


def busy_times(ctx: Ctx, a: BusyArgs) -> ToolOutcome:
    if a.user != host(ctx)["uri"]:
        raise ToolError(f"404 Not Found: no user {quote(a.user)}")
    start, end = _range(ctx, a.start_time, a.end_time)
    out = []
    for table, kind in (("scheduler.busy_times", "external"), ("scheduler.scheduled_events", "calendly")):
        for r in rows(ctx, table).values():
            s, e = parse_iso(r["start_time"]), parse_iso(r["end_time"])
            assert s is not None and e is not None
            if r.get("status", "active") == "active" and s < end and e > start:
                item = {"type": kind, "start_time": r["start_time"], "end_time": r["end_time"]}
                if kind == "calendly":
                    item["event"] = {"uri": r["uri"]}
                out.append(item)
    out.sort(key=lambda x: x["start_time"])
    return done({"collection": out})


def _invitees_of(ctx: Ctx, event_uri: str) -> list[Record]:
    return [r for r in rows(ctx, "scheduler.invitees").values() if r["event"] == event_uri]


def list_events(ctx: Ctx, a: ListEventsArgs) -> ToolOutcome:
    found = []
    for r in rows(ctx, "scheduler.scheduled_events").values():
        if a.status is not None and r["status"] != a.status:
            continue
        if a.min_start_time is not None and r["start_time"] < (iso(parse_iso(a.min_start_time) or _now(ctx))):
            continue
        if a.max_start_time is not None and r["start_time"] > (iso(parse_iso(a.max_start_time) or _now(ctx))):
            continue
        if a.invitee_email is not None and not any(
            i["email"].lower() == a.invitee_email.lower() for i in _invitees_of(ctx, r["uri"])
        ):
            continue
        found.append(r)
    found.sort(key=lambda r: r["start_time"])
    shown = found[a.page_token : a.page_token + a.count]
    more = a.page_token + len(shown) < len(found)
    return done({"collection": shown, "pagination": {"count": len(shown),
                                                     "next_page_token": a.page_token + len(shown) if more else None}})


def get_event(ctx: Ctx, a: EventArgs) -> ToolOutcome:
    return done({"resource": get(ctx, "scheduler.scheduled_events", uuid_of(a.uuid), "scheduled event")})


def list_invitees(ctx: Ctx, a: InviteesArgs) -> ToolOutcome:
    event = get(ctx, "scheduler.scheduled_events", uuid_of(a.uuid), "scheduled event")
    found = [i for i in _invitees_of(ctx, event["uri"]) if (a.status is None or i["status"] == a.status)
             and (a.email is None or i["email"].lower() == a.email.lower())]  # fmt: skip
    return done({"collection": found})


def create_invitee(ctx: Ctx, a: CreateInviteeArgs) -> ToolOutcome:
    et = _event_type(ctx, a.event_type)
    if not et["active"]:
        raise ToolError("400 Bad Request: this event type is not active")
    start = parse_iso(a.start_time)
    if start is None:
        raise ToolError("400 Bad Request: start_time must be an ISO 8601 time")
    if "@" not in a.invitee.email:
        raise ToolError("400 Bad Request: invitee.email must be an email address")
    try:
        ZoneInfo(a.invitee.timezone)
    except (ValueError, KeyError, OSError):
        raise ToolError(f"400 Bad Request: {quote(a.invitee.timezone)} is not an IANA time zone") from None
    if start not in slots(ctx, et, start, start + timedelta(minutes=1)):
        raise ToolError(f"409 Conflict: {quote(a.start_time)} is not an open slot of {et['name']} (see "
                        "event_types-list_event_type_available_times)")  # fmt: skip
    at = now_iso(ctx)
    key, n = next_key(ctx, "scheduler.scheduled_events")
    event = scheduled_event_record(key, et, start, host(ctx)["uri"], at)
    if a.location is not None:
        event["location"] = {"type": a.location.kind}
    create(ctx, "scheduler.scheduled_events", key, event, n)
    ikey, m = next_key(ctx, "scheduler.invitees")
    invitee = create(ctx, "scheduler.invitees", ikey,
                     invitee_record(ikey, event, a.invitee.name, a.invitee.email, a.invitee.timezone, at), m)
    return done({"resource": {**invitee, "scheduled_event": event}})


def cancel_event(ctx: Ctx, a: CancelArgs) -> ToolOutcome:
    key = uuid_of(a.uuid)
    event = get(ctx, "scheduler.scheduled_events", key, "scheduled event")
    if event["status"] != "active":
        raise ToolError("403 Forbidden: this event is already canceled")
    at = now_iso(ctx)
    cancellation = {"canceled_by": host(ctx)["name"], "reason": a.reason, "canceler_type": "host", "created_at": at}
    out = update(ctx, "scheduler.scheduled_events", key,
                 {**event, "status": "canceled", "cancellation": cancellation, "updated_at": at,
                  "invitees_counter": {**event["invitees_counter"], "active": 0}}, ["status", "cancellation"])
    for inv_key, inv in list(rows(ctx, "scheduler.invitees").items()):
        if inv["event"] == event["uri"] and inv["status"] == "active":
            update(ctx, "scheduler.invitees", inv_key, {**inv, "status": "canceled", "updated_at": at}, ["status"])
    return done({"resource": out["cancellation"]})


def create_link(ctx: Ctx, a: LinkArgs) -> ToolOutcome:
    et = _event_type(ctx, a.owner)
    if not et["active"]:
        raise ToolError("400 Bad Request: this event type is not active")
    key, n = next_key(ctx, "scheduler.scheduling_links")
    link = {"booking_url": f"https://calendly.com/d/{key.lower()}", "owner": et["uri"], "owner_type": "EventType",
            "max_event_count": 1, "created_at": now_iso(ctx)}
    create(ctx, "scheduler.scheduling_links", key, link, n)
    return done({"resource": {k: link[k] for k in ("booking_url", "owner", "owner_type")}})


def create_no_show(ctx: Ctx, a: NoShowArgs) -> ToolOutcome:
    key = uuid_of(a.invitee)
    inv = get(ctx, "scheduler.invitees", key, "invitee")
    event = get(ctx, "scheduler.scheduled_events", uuid_of(inv["event"]), "scheduled event")
    if inv["status"] != "active" or event["status"] != "active":
        raise ToolError("400 Bad Request: only an active invitee of an active event can be a no-show")
    if (parse_iso(event["start_time"]) or _now(ctx)) > _now(ctx):
        raise ToolError("400 Bad Request: the event has not started yet")
    if inv["no_show"] is not None:
        raise ToolError("409 Conflict: this invitee is already marked as a no-show")
    nkey, n = next_key(ctx, "scheduler.no_shows")
    at = now_iso(ctx)
    no_show = {"uri": f"{API}/invitee_no_shows/{nkey}", "invitee": inv["uri"], "created_at": at}
    create(ctx, "scheduler.no_shows", nkey, no_show, n)
    update(ctx, "scheduler.invitees", key, {**inv, "no_show": no_show, "updated_at": at}, ["no_show"])
    return done({"resource": no_show})


def _spec(name: str, description: str, args: type[ToolArgs], handler: Any, writes: bool,
          failures: tuple[str, ...] = (), *, output: type[BaseModel]) -> ToolSpec[Any, Ctx]:  # fmt: skip
    return ToolSpec(name, description, args, handler, "1 minute", writes=writes, failure_modes=failures,
                    output=output)


TOOLS: list[ToolSpec[Any, Ctx]] = [
    _spec("users-get_current_user", "The scheduling user (the host): uri, name, email, time zone, organization.",
          NoArgs, current_user, False, output=outputs.Resource),
    _spec("event_types-list_event_types", "The host's event types: uri, name, duration (minutes), active.",
          ListEventTypesArgs, list_event_types, False, output=outputs.PagedCollection),
    _spec("event_types-get_event_type", "One event type by uri.", EventTypeArgs, get_event_type, False,
          output=outputs.Resource),
    _spec("event_types-list_event_type_available_times", "Open start times of an event type in a future range of at "
          f"most {AVAILABLE_RANGE_DAYS} days (slots start on the hour or half hour inside working hours and avoid "
          "busy times and bookings).", RangeArgs, available_times, False, ("range in the past or too long",),
          output=outputs.Collection),
    _spec("availability-list_user_busy_times", f"The host's busy times (external calendar and bookings) in a future "
          f"range of at most {AVAILABLE_RANGE_DAYS} days.", BusyArgs, busy_times, False, output=outputs.Collection),
    _spec("meetings-list_events", "Scheduled events, by invitee email, status and start range, soonest first.",
          ListEventsArgs, list_events, False, output=outputs.PagedCollection),
    _spec("meetings-get_event", "One scheduled event by uuid.", EventArgs, get_event, False, output=outputs.Resource),
    _spec("meetings-list_event_invitees", "The invitees of a scheduled event.", InviteesArgs, list_invitees, False,
          output=outputs.Collection),
    _spec("meetings-create_invitee", "Book an event: an invitee at an open start time of an event type; the event "
          "lasts the event type's duration.", CreateInviteeArgs, create_invitee, True,
          ("409 not an open slot", "inactive event type", "bad time zone"), output=outputs.Resource),
    _spec("meetings-cancel_event", "Cancel an active scheduled event, with a reason; its invitees are canceled.",
          CancelArgs, cancel_event, True, ("already canceled",), output=outputs.Resource),
    _spec("scheduling_links-create_single_use_scheduling_link", "A booking link for one event of an event type.",
          LinkArgs, create_link, True, output=outputs.Resource),
    _spec("invitee_no_shows-create", "Mark an invitee of an event that has started as a no-show.", NoShowArgs,
          create_no_show, True, ("event not started", "already a no-show"), output=outputs.Resource),
]  # fmt: skip
TABLES = ("scheduler.users", "scheduler.event_types", "scheduler.busy_times", "scheduler.scheduled_events",
          "scheduler.invitees", "scheduler.scheduling_links", "scheduler.no_shows")  # fmt: skip
