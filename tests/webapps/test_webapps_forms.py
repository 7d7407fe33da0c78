"""Every form of the web apps is a tool call: the same handler, the same events, the same refusal.

Each case submits one form and plays the equivalent tool call on a twin environment cloned just before: the
record events must be identical (payloads included), and so is the tool the log says was called.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from webapps_client import Apps

from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.envs.workflows.state import APPLY

RECORD_KINDS = set(APPLY)  # record_created / _updated / _deleted, fact_revealed, message_received, task_finished

# (template, app, path, form, the tool call it must be)
CASES: list[tuple[str, str, str, dict[str, Any], dict[str, Any]]] = [
    ("crm-inbound-sql", "crm", "/contacts/101/edit",
     {"lifecyclestage": "salesqualifiedlead", "hs_lead_status": "IN_PROGRESS", "email": "yara.novak@globex.io"},
     {"tool": "hubspot-batch-update-objects", "args": {"objectType": "contacts", "inputs": [
         {"id": "101", "properties": {"lifecyclestage": "salesqualifiedlead", "hs_lead_status": "IN_PROGRESS"}}]}}),
    ("crm-inbound-sql", "crm", "/contacts/new",
     {"email": "new.person@globex.io", "firstname": "New", "lastname": "Person", "assoc_companies": "5001"},
     {"tool": "hubspot-batch-create-objects", "args": {"objectType": "contacts", "inputs": [
         {"properties": {"email": "new.person@globex.io", "firstname": "New", "lastname": "Person"},
          "associations": [{"to": {"id": "5001"}, "types": [{"associationTypeId": 279}]}]}]}}),
    ("crm-inbound-sql", "crm", "/contacts/101/note",
     [("ownerId", "61000001"), ("timestamp", "2026-07-20T08:00:00Z"), ("body", "Asked for a demo."),
      ("contacts", "101")],
     {"tool": "hubspot-create-engagement", "args": {"type": "NOTE", "ownerId": 61000001, "associations": {
         "contactIds": [101]}, "metadata": {"timestamp": "2026-07-20T08:00:00Z", "body": "Asked for a demo."}}}),
    ("crm-inbound-sql", "crm", "/contacts/101/meeting",
     [("ownerId", "61000001"), ("timestamp", "2026-07-21T10:00:00Z"), ("title", "Discovery"),
      ("startTime", "2026-07-21T10:00:00Z"), ("endTime", "2026-07-21T10:30:00Z"), ("contacts", "101"),
      ("deals", "9001")],
     {"tool": "hubspot-create-engagement", "args": {"type": "MEETING", "ownerId": 61000001, "associations": {
         "contactIds": [101], "dealIds": [9001]}, "metadata": {"timestamp": "2026-07-21T10:00:00Z",
         "title": "Discovery", "startTime": "2026-07-21T10:00:00Z", "endTime": "2026-07-21T10:30:00Z"}}}),
    ("crm-inbound-sql", "crm", "/deals/9001/move", {"dealstage": "presentationscheduled"},
     {"tool": "hubspot-batch-update-objects", "args": {"objectType": "deals", "inputs": [
         {"id": "9001", "properties": {"dealstage": "presentationscheduled"}}]}}),
    ("crm-inbound-sql", "crm", "/contacts/101/associate",
     {"toObjectType": "deals", "toId": "9001", "associationTypeId": "4"},
     {"tool": "hubspot-batch-create-associations", "args": {"fromObjectType": "contacts", "toObjectType": "deals",
      "inputs": [{"from": {"id": "101"}, "to": {"id": "9001"}, "types": [{"associationTypeId": 4}]}]}}),
    ("new-exec-full-cycle", "sequencer", "/prospects/new",
     {"emails": "sara.new@wayne.co", "firstName": "Sara", "lastName": "New", "accountId": "2", "ownerId": "3"},
     {"tool": "prospect_create", "args": {"attrs": {"emails": ["sara.new@wayne.co"], "firstName": "Sara",
                                                    "lastName": "New"}, "accountId": 2, "ownerId": 3}}),
    ("seq-webinar-followup", "sequencer", "/sequences/1/add", [("prospectIds", "1"), ("mailboxId", "3")],
     {"tool": "sequence_add_prospects", "args": {"sequenceId": 1, "prospectIds": [1], "mailboxId": 3}}),
    ("new-exec-full-cycle", "sequencer", "/prospects/1/task",
     {"action": "call", "dueAt": "2026-07-22T09:00:00Z", "note": "Call about the demo"},
     {"tool": "task_create", "args": {"prospectId": 1, "action": "call", "dueAt": "2026-07-22T09:00:00Z",
                                      "note": "Call about the demo"}}),
    ("new-exec-full-cycle", "scheduler", "/event-types/ET0001/book",
     {"start_time": "2026-07-27T10:00:00Z", "name": "Sara Abbott", "email": "sara.abbott@wayne.co",
      "timezone": "Europe/London"},
     {"tool": "meetings-create_invitee", "args": {"event_type": "https://api.calendly.com/event_types/ET0001",
      "start_time": "2026-07-27T10:00:00Z", "invitee": {"name": "Sara Abbott", "email": "sara.abbott@wayne.co",
                                                       "timezone": "Europe/London"}}}),
    ("new-exec-full-cycle", "scheduler", "/event-types/ET0001", {},
     {"tool": "scheduling_links-create_single_use_scheduling_link",
      "args": {"owner": "https://api.calendly.com/event_types/ET0001"}}),
    ("pros-abm-list", "prospecting", "/leads/L0001", {"list_id": "LL001"},
     {"tool": "save_lead", "args": {"lead_id": "L0001", "list_id": "LL001"}}),
    ("pros-inmail-free", "prospecting", "/leads/L0001/inmail", {"subject": "Hello", "body": "A short note."},
     {"tool": "send_inmail", "args": {"recipient_urn": "urn:li:fs_salesProfile:L0001", "subject": "Hello",
                                      "body": "A short note."}}),
    ("crm-inbound-sql", "task", "/ask", {"question": "Why is this needed?"},
     {"tool": "ask_requester", "args": {"question": "Why is this needed?"}}),
    ("crm-inbound-sql", "task", "/finish", {"summary": "done"},
     {"tool": "finish_task", "args": {"summary": "done"}}),
]
CASES = keyed(CASES)  # written by place in each table (contact 101, deal 9001, ...); the instance's ids


def post(client: Any, path: str, form: Any) -> Any:
    """A form POST (a list of pairs keeps repeated names, as a browser sends checkboxes)."""
    pairs = list(form.items()) if isinstance(form, dict) else list(form)
    return client.post(path, content=urlencode(pairs), follow_redirects=False,
                       headers={"content-type": "application/x-www-form-urlencoded"})


def _record_events(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["kind"], e["payload"]) for e in events if e["kind"] in RECORD_KINDS]


def _tools(events: list[dict[str, Any]]) -> list[Any]:
    return [e["payload"]["tool"] for e in events if e["kind"] in ("tool_completed", "invalid_action")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}{c[2]}")
def test_a_form_submitted_is_the_tool_call(case: tuple[str, str, str, Any, dict[str, Any]]) -> None:
    template, app, path, form, call = case
    a = Apps(template)
    twin = a.env.clone()
    start = len(a.events())
    response = post(a(app), path, form)
    assert response.status_code in (200, 303), response.text[-600:]
    ui = a.events()[start:]
    twin.step(call)
    tool = twin.event_log()[start:]
    assert _tools(ui) == _tools(tool) == [call["tool"]]
    assert _record_events(ui) == _record_events(tool)
    assert _record_events(ui), "the form changed nothing"
    ui_args = next(e["payload"]["args"] for e in ui if e["kind"] == "tool_completed")
    tool_args = next(e["payload"]["args"] for e in tool if e["kind"] == "tool_completed")
    assert ui_args == tool_args


def test_a_duplicate_email_is_refused_as_the_product_shows_it() -> None:
    a = Apps("crm-inbound-sql")
    start, before = len(a.events()), a.env.replay().digest()
    response = a("crm").post("/contacts/new", data={"email": "YARA.NOVAK@globex.io", "firstname": "Yara"})
    assert response.status_code == 409
    assert keyed("409 Conflict: Contact already exists. Existing ID: 101") in response.text
    assert keyed('href="/contacts/101"') in response.text  # the existing record, linked
    assert 'value="YARA.NOVAK@globex.io"' in response.text  # what the person typed stays in the form
    new = a.events()[start:]
    assert [(e["kind"], e["payload"]["tool"]) for e in new] == [("invalid_action", "hubspot-batch-create-objects")]
    assert a.env.replay().digest() != before  # the invalid action is counted, as for a tool call


def test_a_read_only_app_shows_its_forms_disabled_and_refuses_the_post() -> None:
    a = Apps("new-exec-full-cycle")  # prospecting is read only in this task
    page = a("prospecting").get(keyed("/leads/L0001"))
    assert page.status_code == 200 and 'id="btn-save_lead" disabled' in page.text
    start = len(a.events())
    response = a("prospecting").post(keyed("/leads/L0001"), data=keyed({"list_id": "LL001"}))
    assert response.status_code == 403 and "may read the prospecting app but not write" in response.text
    assert [(e["kind"], e["payload"]["tool"]) for e in a.events()[start:]] == [("invalid_action", "save_lead")]


def test_an_app_the_task_does_not_use_answers_403_and_records_nothing() -> None:
    a = Apps("crm-inbound-sql")
    start = len(a.events())
    for path in ("/prospects", keyed("/sequences/1/add")):
        assert a("sequencer").get(path).status_code == 403
    form = keyed({"prospectIds": "1", "mailboxId": "1"})
    assert a("sequencer").post(keyed("/sequences/1/add"), data=form).status_code == 403
    assert a.events()[start:] == []


def test_pages_cost_no_call_and_move_no_clock() -> None:
    a = Apps("new-exec-full-cycle")
    start, clock = len(a.events()), a.env.observe()["data"]["clock"]
    for app, path in (("crm", "/contacts"), ("crm", keyed("/contacts/101")), ("crm", "/deals/board"),
                      ("sequencer", keyed("/sequences/1")), ("scheduler", keyed("/event-types/ET0001")),
                      ("prospecting", "/leads"), ("task", "/")):
        assert a(app).get(path).status_code == 200
    assert len(a.events()) == start and a.env.observe()["data"]["clock"] == clock


def test_without_a_run_cookie_there_is_no_page() -> None:
    a = Apps("crm-inbound-sql")
    a("crm").cookies.clear()
    assert a("crm").get("/contacts").status_code == 404
    opened = a("crm").get(f"/open/{a.run.run_id}", follow_redirects=False)
    assert opened.status_code == 303 and opened.cookies.get("sgrun") == a.run.run_id
    assert a("crm").get("/open/no-such-run").status_code == 404


def test_a_closed_task_takes_no_more_changes() -> None:
    a = Apps("crm-inbound-sql")
    assert a("task").post("/finish", data={"summary": ""}, follow_redirects=False).status_code == 303
    page = a("task").get("/")
    assert "This task is closed. Verdict: fail." in page.text
    start = len(a.events())
    response = a("crm").post(keyed("/contacts/101/edit"), data={"hs_lead_status": "IN_PROGRESS"})
    assert response.status_code == 409 and a.events()[start:] == []
