"""Bad input at the web apps' boundary: any path, query or form gives a page with a 4xx or a 2xx/3xx, never a
server error, and a form that reaches a tool changes the state only through that one call (one event's worth:
a tool call or one invalid action)."""

from __future__ import annotations

import random
import re
from urllib.parse import urlencode

import pytest
from webapps_client import Apps

from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.webapps.views import ROUTES

KEYS = (*keyed(("101", "1", "ET0001", "L0001", "LL001", "A001", "EV00001")), "999999", "x" * 300, "%00", "..", "-1",
        "0")
VALUES = ("", "x", "1", "-5", "999999999999999999999", "2026-07-27T10:00:00Z", "not a date", "a@b", "\u0000\u202e",
          "y" * 5000, "IN_PROGRESS", "salesqualifiedlead", "Europe/London", "<script>alert(1)</script>")
NAMES = ("email", "firstname", "lifecyclestage", "hs_lead_status", "hubspot_owner_id", "dealstage", "ownerId",
         "timestamp", "body", "title", "startTime", "endTime", "contacts", "deals", "toId", "associationTypeId",
         "toObjectType", "emails", "accountId", "prospectIds", "mailboxId", "action", "dueAt", "note", "reason",
         "start_time", "name", "timezone", "location", "list_id", "subject", "question", "summary", "message_id",
         "text", "unknown_field")  # fmt: skip


def _paths() -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for app, spec in ROUTES.items():
        for path, _, methods in spec.routes:
            out.append((app, path, methods))
    return out


@pytest.mark.parametrize("route", _paths(), ids=lambda r: f"{r[0]}{r[1]}")
def test_no_input_makes_a_server_error(route: tuple[str, str, tuple[str, ...]]) -> None:
    app, path, methods = route
    a = Apps("new-exec-full-cycle")
    client = a(app)
    rng = random.Random(path)
    for _ in range(12):
        concrete = re.sub(r"\{[a-z_]+\}", lambda _: rng.choice(KEYS), path)
        query = urlencode([(rng.choice(NAMES), rng.choice(VALUES)) for _ in range(rng.randint(0, 4))])
        response = client.get(concrete + "?" + query)
        assert response.status_code < 500, (concrete, query, response.text[-400:])
        if "POST" in methods:
            start = len(a.events())
            pairs = [(rng.choice(NAMES), rng.choice(VALUES)) for _ in range(rng.randint(0, 8))]
            response = client.post(concrete, content=urlencode(pairs), follow_redirects=False,
                                   headers={"content-type": "application/x-www-form-urlencoded"})
            assert response.status_code < 500, (concrete, pairs, response.text[-400:])
            calls = [e for e in a.events()[start:] if e["kind"] in ("tool_completed", "invalid_action")]
            assert len(calls) <= 1, (concrete, pairs, calls)


def test_a_body_that_is_not_a_form_is_refused_in_one_line() -> None:
    a = Apps("crm-inbound-sql")
    start = len(a.events())
    crm = a("crm")
    not_utf8 = crm.post("/contacts/new", content=b"\xff\xfe=\xff", headers={"content-type":
                                                                            "application/x-www-form-urlencoded"})
    assert not_utf8.status_code == 400 and "could not be read" in not_utf8.text
    huge = crm.post("/contacts/new", content=b"email=" + b"a" * (70 * 1024), headers={"content-type":
                                                                                     "application/x-www-form-urlencoded"})
    assert huge.status_code == 413
    assert a.events()[start:] == []


def test_text_the_agent_typed_is_escaped_in_every_page() -> None:
    a = Apps("crm-inbound-sql")
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    a("crm").post(keyed("/contacts/101/note"), content=urlencode([("ownerId", keyed("61000001")), ("timestamp",
                  "2026-07-20T08:00:00Z"), ("body", payload), ("contacts", keyed("101"))]), follow_redirects=False,
                  headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    page = a("crm").get(keyed("/contacts/101")).text
    assert payload not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
