"""The scheduler's pages (Calendly-shaped): scheduled events (upcoming, past, canceled) with their invitees,
cancellation with a reason and no-shows; event types with a week of open slots, the booking form and single-use
links; the host's busy times. Every read is a scheduler read tool, every form one scheduler write tool call."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.webapps.page import Cell, Field, Form, Heading, Link, Notice, Page, Props, Redirect, Slot, Table, Text
from salesgym.webapps.page import Week as WeekBlock
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import keep, options, read_only_note, refusal, status_of, when, write_form

API = "https://api.calendly.com"
LOCATIONS = ("google_conference", "zoom_conference", "outbound_call", "physical")
TABS = ("upcoming", "past", "canceled")


def uuid(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def _now(q: Q) -> datetime:
    moment = parse_iso(q.run.observation()["clock"]["now"])
    assert moment is not None
    return moment


def event_type(q: Q, key: str) -> dict[str, Any]:
    return dict(q.read("event_types-get_event_type", {"event_type": f"{API}/event_types/{key}"})["resource"])


def _monday(moment: datetime) -> datetime:
    return (moment - timedelta(days=moment.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)


def _week(q: Q) -> datetime:
    """The Monday the page shows: ``?week=YYYY-MM-DD`` (any day of it), else this week."""
    asked = parse_iso(q.query.get("week")) if q.query.get("week") else None
    return _monday(asked or _now(q))


# --- events -------------------------------------------------------------------------------------------------------
def events(q: Q) -> Page:
    tab = q.query.get("tab") if q.query.get("tab") in TABS else "upcoming"
    now = iso(_now(q))
    args: dict[str, Any] = {"count": 50}
    if tab == "canceled":
        args["status"] = "canceled"
    else:
        args.update({"status": "active", "min_start_time" if tab == "upcoming" else "max_start_time": now})
    if q.query.get("invitee_email"):
        args["invitee_email"] = q.query.get("invitee_email")
    problem: list[Any] = []
    try:
        found = q.read("meetings-list_events", args)["collection"]
    except Refused as err:
        found, problem = [], [refusal(err)]
    rows = []
    for e in found:
        invitees = q.read("meetings-list_event_invitees", {"uuid": uuid(e["uri"])})["collection"]
        people = ", ".join(f"{i['name']} <{i['email']}>" for i in invitees)
        rows.append([Cell(when(e["start_time"]), f"/events/{uuid(e['uri'])}", f"open-{uuid(e['uri'])}"),
                     Cell(e["name"]), Cell(people), Cell(e["status"])])  # fmt: skip
    tabs = [Link(t.capitalize(), q.href("/events", tab=t), f"tab-{t}") for t in TABS]
    filters = [Field("tab", "Tab", "select", tab, [(t, t) for t in TABS]),
               Field("invitee_email", q.word("invitee_email"), "text", q.query.get("invitee_email"))]
    return Page("scheduler", q.word("events"), [
        Heading(q.word("events"), tabs),
        Form("/events", filters, q.word("search"), "btn-search", method="get", inline=True, id="filters"),
        *problem, Table([q.word("start_time"), q.word("name"), q.word("invitees"), q.word("status")], rows,
                        f"No {tab} events.", id="records"),
    ])  # fmt: skip


def _invitee_rows(q: Q, event: dict[str, Any], invitees: list[dict[str, Any]]) -> list[list[Cell]]:
    rows = []
    for i in invitees:
        action = Cell("")
        if i["status"] == "active" and i["no_show"] is None and event["status"] == "active":
            action = Cell("", form=Form(f"/events/{uuid(event['uri'])}/no-show/{uuid(i['uri'])}", [],
                                        q.word("no_show"), f"no-show-{uuid(i['uri'])}", inline=True,
                                        disabled=read_only_note(q)))  # fmt: skip
        rows.append([Cell(i["name"]), Cell(i["email"]), Cell(i["timezone"]), Cell(i["status"]),
                     Cell("yes" if i["no_show"] else ""), action])  # fmt: skip
    return rows


def event_view(q: Q) -> Page | Redirect:
    key = q.path["key"]
    problem: list[Any] = []
    if q.posted:
        try:
            q.write("meetings-cancel_event", {"uuid": key, "reason": q.form.get("reason")})
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Event canceled.")
            return Redirect(f"/events/{key}")
    event = q.read("meetings-get_event", {"uuid": key})["resource"]
    invitees = q.read("meetings-list_event_invitees", {"uuid": key})["collection"]
    cancellation = event.get("cancellation") or {}
    props = [(q.word("name"), event["name"]), (q.word("start_time"), when(event["start_time"])),
             (q.word("end_time"), when(event["end_time"])), (q.word("status"), event["status"]),
             (q.word("location"), (event.get("location") or {}).get("type", "")),
             (q.word("reason"), cancellation.get("reason", ""))]  # fmt: skip
    blocks: list[Any] = [*problem, Heading(f"{event['name']} · {when(event['start_time'])}"), Props(props),
                         Table(["Name", q.word("email"), q.word("timezone"), q.word("status"), "No-show", ""],
                               _invitee_rows(q, event, invitees), "No invitees.", caption=q.word("invitees"))]
    if event["status"] == "active":
        reason = Field("reason", q.word("reason"), "textarea", keep(q, "reason", ""), required=True)
        blocks.append(write_form(q, f"/events/{key}", [reason], "cancel", q.word("cancel"), "cancel-form"))
    return Page("scheduler", event["name"], blocks, status=status_of(problem),
                crumbs=[Link(q.word("events"), "/events")])


def no_show(q: Q) -> Page | Redirect:
    event_key, invitee_key = q.path["key"], q.path["invitee"]
    invitees = q.read("meetings-list_event_invitees", {"uuid": event_key})["collection"]
    found = next((i for i in invitees if uuid(i["uri"]) == invitee_key), None)
    uri = found["uri"] if found else f"{API}/scheduled_events/{event_key}/invitees/{invitee_key}"
    try:
        q.write("invitee_no_shows-create", {"invitee": uri})
    except Refused as err:
        return Page("scheduler", "Not marked", [refusal(err), Text("The invitee was not marked as a no-show.")],
                    status=err.status, crumbs=[Link(q.word("events"), f"/events/{event_key}")])
    q.say("Marked as a no-show.")
    return Redirect(f"/events/{event_key}")


# --- event types, slots, booking, links ---------------------------------------------------------------------------
def event_types(q: Q) -> Page:
    found = q.read("event_types-list_event_types")["collection"]
    rows = [[Cell(e["name"], f"/event-types/{uuid(e['uri'])}", f"open-{uuid(e['uri'])}"), Cell(str(e["duration"])),
             Cell("yes" if e["active"] else "no"), Cell(e["scheduling_url"])] for e in found]
    return Page("scheduler", q.word("event_types"), [Heading(q.word("event_types")), Table(
        [q.word("name"), q.word("duration"), q.word("active"), "Scheduling page"], rows, id="records")])


def _slots(q: Q, et: dict[str, Any], monday: datetime) -> WeekBlock:
    start, end = max(monday, _now(q)), monday + timedelta(days=7)
    days: dict[str, list[Slot]] = {}
    for d in range(5):
        day = monday + timedelta(days=d)
        days[day.strftime("%a %Y-%m-%d")] = []
    if start < end and et["active"]:
        found = q.read("event_types-list_event_type_available_times",
                       {"event_type": et["uri"], "start_time": iso(start), "end_time": iso(end)})["collection"]
        for s in found:
            moment = parse_iso(s["start_time"])
            assert moment is not None
            label = moment.strftime("%a %Y-%m-%d")
            if label in days:
                days[label].append(Slot(moment.strftime("%H:%M"), q.href(
                    f"/event-types/{uuid(et['uri'])}/book", start=s["start_time"], week=None),
                    id=f"slot-{moment.strftime('%Y%m%dT%H%M')}"))  # fmt: skip
    previous = monday - timedelta(days=7)
    path = f"/event-types/{uuid(et['uri'])}"
    return WeekBlock(list(days.items()), q.href(path, week=previous.date().isoformat()) if previous + timedelta(
        days=7) > _now(q) else "", q.href(path, week=(monday + timedelta(days=7)).date().isoformat()),
        f"{q.word('week')} {monday.date().isoformat()} (times in UTC)")  # fmt: skip


def event_type_view(q: Q) -> Page:
    key = q.path["key"]
    et = event_type(q, key)
    blocks: list[Any] = []
    if q.posted:
        try:
            out = q.write("scheduling_links-create_single_use_scheduling_link", {"owner": et["uri"]})
        except Refused as err:
            blocks.append(refusal(err))
        else:
            blocks += [Notice("Single-use link created: it books one event.", "success", "link-created"),
                       Text(out["resource"]["booking_url"], copy_id="single-use-link")]
    go = Form(f"/event-types/{key}", [Field("week", q.word("week"), "text", q.query.get("week"),
                                            placeholder="YYYY-MM-DD")], "Go", "btn-week", method="get", inline=True)
    link = Form(f"/event-types/{key}", [], q.word("single_use_link"), "btn-single-use-link", inline=True,
                disabled=read_only_note(q), id="link-form")  # fmt: skip
    note = "" if et["active"] else "This event type is not active: it cannot be booked."
    blocks += [Heading(et["name"]), Props([(q.word("duration"), str(et["duration"])),
                                           (q.word("active"), "yes" if et["active"] else "no"),
                                           ("Scheduling page", et["scheduling_url"])]),
               *([Notice(note, "warning")] if note else []), link, go, _slots(q, et, _week(q))]  # fmt: skip
    return Page("scheduler", et["name"], blocks, status=status_of(blocks),
                crumbs=[Link(q.word("event_types"), "/event-types")])


def book(q: Q) -> Page | Redirect:
    key = q.path["key"]
    et = event_type(q, key)
    start = q.form.get("start_time") if q.posted else q.query.get("start")
    problem: list[Any] = []
    if q.posted:
        args: dict[str, Any] = {"event_type": et["uri"], "start_time": start, "invitee": {
            "name": q.form.get("name"), "email": q.form.get("email"), "timezone": q.form.get("timezone")}}
        if q.form.get("location"):
            args["location"] = {"kind": q.form.get("location")}
        try:
            out = q.write("meetings-create_invitee", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Event scheduled.")
            return Redirect(f"/events/{uuid(out['resource']['scheduled_event']['uri'])}")
    fields = [Field("start_time", q.word("start_time"), "text", start,
                    required=True, placeholder="YYYY-MM-DDTHH:MM:SSZ (UTC)"),
              Field("name", q.word("name"), "text", keep(q, "name", ""), required=True),
              Field("email", q.word("email"), "text", keep(q, "email", ""), required=True),
              Field("timezone", q.word("timezone"), "text", keep(q, "timezone", ""),
                    required=True, placeholder="e.g. Europe/Berlin", help="an IANA time zone"),
              Field("location", q.word("location"), "select", keep(q, "location", ""),
                    options((k, k.replace("_", " ")) for k in LOCATIONS))]  # fmt: skip
    return Page("scheduler", f"{q.word('book')}: {et['name']}", [
        *problem, Heading(f"{et['name']} · {when(start)}", level=2),
        write_form(q, f"/event-types/{key}/book", fields, "book", form_id="book-form"),
    ], status=status_of(problem), crumbs=[Link(q.word("event_types"), "/event-types"),
                                          Link(et["name"], f"/event-types/{key}")])  # fmt: skip


def availability(q: Q) -> Page:
    monday = _week(q)
    start, end = max(monday, _now(q)), monday + timedelta(days=7)
    user = q.read("users-get_current_user")["resource"]
    rows = []
    if start < end:
        found = q.read("availability-list_user_busy_times", {"user": user["uri"], "start_time": iso(start),
                                                              "end_time": iso(end)})["collection"]  # fmt: skip
        rows = [[Cell(when(b["start_time"])), Cell(when(b["end_time"])), Cell(b["type"])] for b in found]
    nxt = (monday + timedelta(days=7)).date().isoformat()
    return Page("scheduler", q.word("availability"), [
        Heading(f"{q.word('availability')}: {user['name']}", [Link("Next week", q.href("/availability", week=nxt),
                                                                   "week-next")]),
        Props([("Host", f"{user['name']} <{user['email']}>"), (q.word("timezone"), user["timezone"]),
               (q.word("week"), monday.date().isoformat())]),
        Table([q.word("start_time"), q.word("end_time"), q.word("busy")], rows, "Free all week.", id="records"),
    ])  # fmt: skip


ROUTES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("/events", events, ("GET",)), ("/events/{key}", event_view, ("GET", "POST")),
    ("/events/{key}/no-show/{invitee}", no_show, ("POST",)), ("/event-types", event_types, ("GET",)),
    ("/event-types/{key}", event_type_view, ("GET", "POST")), ("/event-types/{key}/book", book, ("GET", "POST")),
    ("/availability", availability, ("GET",)),
]  # fmt: skip
NAV = [("events", "/events"), ("event_types", "/event-types"), ("availability", "/availability")]
