"""The sequencer's pages (Outreach-shaped): prospects (list, record with its sequence states and emails, create,
edit, a manual task), accounts, sequences with their rulesets, the enrol dialog that reports each prospect it
could not add, mailboxes, and finishing a sequence state. Every read is a sequencer read tool, every form one
sequencer write tool call."""

from __future__ import annotations

from typing import Any

from salesgym.webapps.page import Cell, Field, Form, Heading, Link, Page, Props, Redirect, Table
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import (
    PAGE_SIZE,
    as_int,
    keep,
    options,
    page_of,
    pager,
    read_only_note,
    refusal,
    status_of,
    when,
    write_form,
)

ACTIONS = ("action_item", "call", "email", "in_person")


def _rel(r: dict[str, Any], name: str) -> int | None:
    data = (r.get("relationships") or {}).get(name, {}).get("data")
    return None if data is None else int(data["id"])


def _name(p: dict[str, Any]) -> str:
    a = p["attributes"]
    return f"{a['firstName']} {a['lastName']}".strip() or (a["emails"] or [str(p["id"])])[0]


def accounts(q: Q) -> dict[int, str]:
    return {a["id"]: a["attributes"]["name"] for a in q.read("account_search")["data"]}


def mailboxes(q: Q) -> dict[int, dict[str, Any]]:
    return {m["id"]: m for m in q.read("mailbox_search")["data"]}


def users(q: Q) -> dict[int, str]:
    """Users by id, as their mailboxes name them (the sequencer has no user search)."""
    return {m["attributes"]["userId"]: m["attributes"]["email"] for m in mailboxes(q).values()}


def sequences(q: Q) -> dict[int, dict[str, Any]]:
    return {s["id"]: s for s in q.read("sequence_search")["data"]}


def prospect(q: Q, key: str) -> dict[str, Any]:
    return dict(q.read("prospect_get_by_id", {"id": as_int(key)})["data"])


def _ruleset(s: dict[str, Any]) -> str:
    r = s["attributes"]["ruleset"]
    return (f"duplicates: {r['permitDuplicateProspects']}; opted-out prospects: {r['emailOptOutAction']}; "
            f"exclusivity: {r['sequenceExclusivity']}; meeting booked: {r['meetingBookedAction']}")  # fmt: skip


# --- prospects ----------------------------------------------------------------------------------------------------
def prospects(q: Q) -> Page:
    page = page_of(q)
    args: dict[str, Any] = {"limit": PAGE_SIZE, "offset": (page - 1) * PAGE_SIZE}
    for name in ("email", "tag", "name"):
        if q.query.get(name):
            args[name] = q.query.get(name)
    if q.query.get("account"):
        args["accountId"] = as_int(q.query.get("account"))
    problem: list[Any] = []
    try:
        found = q.read("prospect_search", args)
    except Refused as err:
        found, problem = {"data": [], "meta": {"count": 0}}, [refusal(err)]
    names, owners = accounts(q), users(q)
    columns = q.run.variant.order(["name", "emails", "title", "company", "account", "owner", "tags", "optedOut"])
    rows = []
    for p in found["data"]:
        a = p["attributes"]
        cells = {"name": Cell(_name(p), f"/prospects/{p['id']}", f"open-{p['id']}"),
                 "emails": Cell(", ".join(a["emails"])), "title": Cell(a["title"]), "company": Cell(a["company"]),
                 "account": Cell(names.get(_rel(p, "account") or 0, "")),
                 "owner": Cell(owners.get(_rel(p, "owner") or 0, "")), "tags": Cell(", ".join(a["tags"])),
                 "optedOut": Cell("yes" if a["optedOut"] else "")}  # fmt: skip
        rows.append([cells[c] for c in columns])
    filters = [Field("name", q.word("name"), "text", q.query.get("name"), placeholder="part of a name"),
               Field("email", q.word("email"), "text", q.query.get("email"), placeholder="exact email"),
               Field("tag", q.word("tags"), "text", q.query.get("tag"), placeholder="a tag"),
               Field("account", q.word("account"), "select", q.query.get("account"), options(names.items()))]
    return Page("sequencer", q.word("prospects"), [
        Heading(q.word("prospects"), [Link(f"{q.word('new')} prospect", "/prospects/new", "new-record")]),
        Form("/prospects", filters, q.word("search"), "btn-search", method="get", inline=True, id="filters"),
        *problem, Table([q.word(c) for c in columns], rows, "No prospects match.", id="records"),
        pager(q, "/prospects", int(found["meta"]["count"]), page),
    ])  # fmt: skip


def _prospect_fields(q: Q, current: dict[str, Any]) -> list[Field]:
    a = current.get("attributes", {})
    return [
        Field("emails", q.word("email"), "text", keep(q, "emails", ", ".join(a.get("emails", []))),
              required=True, help="one or more, separated by commas"),
        Field("firstName", q.word("firstName"), "text", keep(q, "firstName", a.get("firstName", ""))),
        Field("lastName", q.word("lastName"), "text", keep(q, "lastName", a.get("lastName", ""))),
        Field("title", q.word("title"), "text", keep(q, "title", a.get("title", ""))),
        Field("company", q.word("company"), "text", keep(q, "company", a.get("company", ""))),
        Field("tags", q.word("tags"), "text", keep(q, "tags", ", ".join(a.get("tags", []))),
              help="separated by commas"),
        Field("accountId", q.word("account"), "select", keep(q, "accountId", str(_rel(current, "account") or "")),
              options(accounts(q).items())),
    ]  # fmt: skip


def _listed(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _attrs(q: Q, current: dict[str, Any]) -> dict[str, Any]:
    """The attributes the form sets (on an edit, only those that change)."""
    a = current.get("attributes", {})
    out: dict[str, Any] = {}
    for name in ("emails", "tags"):
        listed = _listed(q.form.get(name))
        if listed != a.get(name, []) and (listed or name in a):
            out[name] = listed
    for name in ("firstName", "lastName", "title", "company"):
        text = q.form.get(name)
        if text != a.get(name, "") and (text or name in a):
            out[name] = text
    return out


def prospect_new(q: Q) -> Page | Redirect:
    problem: list[Any] = []
    if q.posted:
        args: dict[str, Any] = {"attrs": _attrs(q, {})}
        for name in ("accountId", "ownerId"):
            if q.form.get(name):
                args[name] = as_int(q.form.get(name))
        try:
            out = q.write("prospect_create", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Prospect created.")
            return Redirect(f"/prospects/{out['data']['id']}")
    fields = [*_prospect_fields(q, {}),
              Field("ownerId", q.word("owner"), "select", keep(q, "ownerId", ""), options(users(q).items()))]
    return Page("sequencer", f"{q.word('new')} prospect", [
        *problem, write_form(q, "/prospects/new", fields, "save", form_id="record-form")],
        status=status_of(problem), crumbs=[Link(q.word("prospects"), "/prospects")])  # fmt: skip


def prospect_edit(q: Q) -> Page | Redirect:
    key = q.path["key"]
    p = prospect(q, key)
    problem: list[Any] = []
    if q.posted:
        args: dict[str, Any] = {"id": as_int(key), "attrs": _attrs(q, p)}
        account = q.form.get("accountId")
        if account and account != str(_rel(p, "account") or ""):
            args["accountId"] = as_int(account)
        if not args["attrs"] and "accountId" not in args:
            q.say("Nothing changed.")
            return Redirect(f"/prospects/{key}")
        try:
            q.write("prospect_update", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Prospect saved.")
            return Redirect(f"/prospects/{key}")
    return Page("sequencer", f"{q.word('edit')} {_name(p)}", [
        *problem, write_form(q, f"/prospects/{key}/edit", _prospect_fields(q, p), "save", form_id="record-form")],
        status=status_of(problem), crumbs=[Link(q.word("prospects"), "/prospects"),
                                           Link(_name(p), f"/prospects/{key}")])  # fmt: skip


def _finish_form(q: Q, state_id: int) -> Form:
    return Form(f"/states/{state_id}/finish", [], q.word("finish"), f"finish-{state_id}", inline=True,
                disabled=read_only_note(q))  # fmt: skip


def _states_table(q: Q, states: list[dict[str, Any]], by: str) -> Table:
    seqs, boxes = sequences(q), mailboxes(q)
    rows = []
    for s in states:
        a = s["attributes"]
        if by == "prospect":
            pid = _rel(s, "prospect") or 0
            first = Cell(f"prospect {pid}", f"/prospects/{pid}", f"state-prospect-{pid}")
        else:
            seq = seqs.get(_rel(s, "sequence") or 0)
            first = Cell(seq["attributes"]["name"] if seq else "?", f"/sequences/{_rel(s, 'sequence')}")
        box = boxes.get(_rel(s, "mailbox") or 0)
        rows.append([first, Cell(a["state"]), Cell(box["attributes"]["email"] if box else ""),
                     Cell(when(a["createdAt"])), Cell(when(a.get("finishedAt"))),
                     Cell("", form=_finish_form(q, s["id"])) if a["state"] != "finished" else Cell("")])  # fmt: skip
    label = q.word("prospects") if by == "prospect" else q.word("sequence")
    return Table([label, q.word("state"), q.word("mailbox"), "Added", "Finished", ""], rows, "None.",
                 caption=q.word("sequence_states"), id="states")  # fmt: skip


def prospect_view(q: Q) -> Page:
    key = q.path["key"]
    p = prospect(q, key)
    a = p["attributes"]
    props = [(q.word("email"), ", ".join(a["emails"])), (q.word("title"), a["title"]),
             (q.word("company"), a["company"]), (q.word("account"), accounts(q).get(_rel(p, "account") or 0, "")),
             (q.word("owner"), users(q).get(_rel(p, "owner") or 0, "")), (q.word("tags"), ", ".join(a["tags"])),
             (q.word("optedOut"), "yes" if a["optedOut"] else "no"), ("Created", when(a["createdAt"]))]  # fmt: skip
    states = q.read("sequence_state_search", {"prospectId": as_int(key)})["data"]
    mails = q.read("emails_search", {"prospectId": as_int(key)})["data"]
    mail_rows = [_mail_cells(m)[1:] for m in mails]
    return Page("sequencer", _name(p), [
        Heading(_name(p), [Link(q.word("edit"), f"/prospects/{key}/edit", "edit"),
                           Link(q.word("new_task"), f"/prospects/{key}/task", "new-task"),
                           Link(q.word("enroll"), f"/sequences?prospect={key}", "enroll")]),
        Props(props), _states_table(q, states, "sequence"),
        Table([q.word("subject"), q.word("state"), "Replied", q.word("body")], mail_rows, "No emails.",
              caption=q.word("mailings"), id="emails"),
    ], crumbs=[Link(q.word("prospects"), "/prospects")])  # fmt: skip


def prospect_task(q: Q) -> Page | Redirect:
    key = q.path["key"]
    p = prospect(q, key)
    problem: list[Any] = []
    if q.posted:
        args = {"prospectId": as_int(key), "action": q.form.get("action"), "dueAt": q.form.get("dueAt"),
                "note": q.form.get("note")}  # fmt: skip
        try:
            q.write("task_create", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Task created.")
            return Redirect(f"/prospects/{key}")
    fields = [Field("action", q.word("action"), "select", keep(q, "action", "call"),
                    [(x, x.replace("_", " ")) for x in ACTIONS], True),
              Field("dueAt", q.word("dueAt"), "text", keep(q, "dueAt", ""),
                    required=True, placeholder="YYYY-MM-DDTHH:MM:SSZ (UTC)"),
              Field("note", q.word("note"), "textarea", keep(q, "note", ""))]  # fmt: skip
    return Page("sequencer", f"{q.word('new_task')}: {_name(p)}", [
        *problem, write_form(q, f"/prospects/{key}/task", fields, "save", form_id="task-form")],
        status=status_of(problem), crumbs=[Link(_name(p), f"/prospects/{key}")])  # fmt: skip


# --- accounts, sequences, mailboxes, emails -------------------------------------------------------------------------
def accounts_view(q: Q) -> Page:
    args = {k: q.query.get(k) for k in ("name", "domain") if q.query.get(k)}
    found = q.read("account_search", args)["data"]
    rows = [[Cell(a["attributes"]["name"]), Cell(a["attributes"].get("domain") or ""),
             Cell(a["attributes"].get("industry") or ""), Cell(str(a["attributes"].get("numberOfEmployees") or "")),
             Cell("prospects", f"/prospects?account={a['id']}", f"account-prospects-{a['id']}")] for a in found]
    filters = [Field("name", q.word("name"), "text", q.query.get("name")),
               Field("domain", q.word("domain"), "text", q.query.get("domain"), placeholder="exact domain")]
    return Page("sequencer", q.word("accounts"), [
        Heading(q.word("accounts"), [Link(f"{q.word('new')} account", "/accounts/new", "new-record")]),
        Form("/accounts", filters, q.word("search"), "btn-search", method="get", inline=True, id="filters"),
        Table([q.word("name"), q.word("domain"), q.word("industry"), "Employees", ""], rows, "No accounts match.",
              id="records")])  # fmt: skip


def account_new(q: Q) -> Page | Redirect:
    problem: list[Any] = []
    if q.posted:
        args = {k: q.form.get(k) for k in ("name", "domain", "industry") if q.form.get(k)}
        try:
            q.write("account_create", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say("Account created.")
            return Redirect(q.href("/accounts", name=args.get("name", "")))
    fields = [Field("name", q.word("name"), "text", keep(q, "name", ""), required=True),
              Field("domain", q.word("domain"), "text", keep(q, "domain", "")),
              Field("industry", q.word("industry"), "text", keep(q, "industry", ""))]
    return Page("sequencer", f"{q.word('new')} account", [
        *problem, write_form(q, "/accounts/new", fields, "save", form_id="record-form")],
        status=status_of(problem), crumbs=[Link(q.word("accounts"), "/accounts")])  # fmt: skip


def sequences_view(q: Q) -> Page:
    found = q.read("sequence_search", {"name": q.query.get("name")} if q.query.get("name") else {})["data"]
    owners = users(q)
    pre = f"?prospect={q.query.get('prospect')}" if q.query.get("prospect").isdigit() else ""
    rows = [[Cell(s["attributes"]["name"], f"/sequences/{s['id']}/add{pre}" if pre else f"/sequences/{s['id']}",
                  f"open-{s['id']}"),
             Cell("yes" if s["attributes"]["enabled"] else "no"), Cell(", ".join(s["attributes"]["stepTypes"])),
             Cell(s["attributes"]["shareType"]), Cell(owners.get(_rel(s, "owner") or 0, "")), Cell(_ruleset(s))]
            for s in found]  # fmt: skip
    filters = [Field("name", q.word("name"), "text", q.query.get("name"))]
    return Page("sequencer", q.word("sequences"), [
        Heading(q.word("sequences")),
        Form("/sequences", filters, q.word("search"), "btn-search", method="get", inline=True, id="filters"),
        Table([q.word("name"), q.word("enabled"), q.word("stepTypes"), q.word("shareType"), q.word("owner"),
               q.word("ruleset")], rows, "No sequences match.", id="records")])  # fmt: skip


def sequence_view(q: Q) -> Page:
    key = q.path["key"]
    seq = sequences(q).get(int(key)) if key.isdigit() else None
    if seq is None:
        raise Refused(f"404 Not Found: no sequence with id {key}")
    a = seq["attributes"]
    states = q.read("sequence_state_search", {"sequenceId": seq["id"]})["data"]
    return Page("sequencer", a["name"], [
        Heading(a["name"], [Link(q.word("add_prospects"), f"/sequences/{key}/add", "add-prospects")]),
        Props([(q.word("enabled"), "yes" if a["enabled"] else "no"), (q.word("stepTypes"), ", ".join(a["stepTypes"])),
               (q.word("shareType"), a["shareType"]), (q.word("owner"), users(q).get(_rel(seq, "owner") or 0, "")),
               (q.word("ruleset"), _ruleset(seq))]),
        _states_table(q, states, "prospect"),
    ], crumbs=[Link(q.word("sequences"), "/sequences")])  # fmt: skip


def _enrol_summary(q: Q, out: dict[str, Any], chosen: list[str]) -> str:
    failures = out["batch"]["failures"]
    text = f"Added {len(out.get('sequenceStateIds', []))} of {len(chosen)} prospects."
    if failures:
        text += " Not added: " + "; ".join(f"prospect {f['prospectId']}: {f['error']}" for f in failures) + "."
    return text


def enrol(q: Q) -> Page | Redirect:
    """The enrol dialog: pick prospects (filter, tick) and a mailbox; the batch reports who could not be added."""
    key = q.path["key"]
    seq = sequences(q).get(int(key)) if key.isdigit() else None
    if seq is None:
        raise Refused(f"404 Not Found: no sequence with id {key}")
    problem: list[Any] = []
    if q.posted:
        chosen = q.form.getlist("prospectIds")
        args = {"sequenceId": seq["id"], "prospectIds": [as_int(x) for x in chosen],
                "mailboxId": as_int(q.form.get("mailboxId"))}  # fmt: skip
        try:
            out = q.write("sequence_add_prospects", args)
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say(_enrol_summary(q, out, chosen))
            return Redirect(f"/sequences/{key}")
    search: dict[str, Any] = {"limit": 50}
    for name in ("name", "tag", "email"):
        if q.query.get(name):
            search[name] = q.query.get(name)
    found = q.read("prospect_search", search)["data"]
    if q.query.get("prospect").isdigit():
        found = [p for p in found if str(p["id"]) == q.query.get("prospect")] or found
    rows = [[Cell(_name(p), f"/prospects/{p['id']}"), Cell(", ".join(p["attributes"]["emails"])),
             Cell(", ".join(p["attributes"]["tags"])), Cell("yes" if p["attributes"]["optedOut"] else "")]
            for p in found]  # fmt: skip
    boxes = [(str(m["id"]), m["attributes"]["email"]) for m in mailboxes(q).values()]
    filters = [Field("name", q.word("name"), "text", q.query.get("name")),
               Field("tag", q.word("tags"), "text", q.query.get("tag")),
               Field("email", q.word("email"), "text", q.query.get("email"))]
    wrap = Form(f"/sequences/{key}/add", [Field("mailboxId", q.word("mailbox"), "select", q.form.get("mailboxId"),
                                                options(boxes), True)],
                q.word("enroll"), "btn-enroll", disabled=read_only_note(q), id="enrol-form")  # fmt: skip
    return Page("sequencer", f"{q.word('add_prospects')}: {seq['attributes']['name']}", [
        *problem,
        Form(f"/sequences/{key}/add", filters, q.word("search"), "btn-search", method="get", inline=True,
             id="filters"),
        Table(["Prospect", q.word("email"), q.word("tags"), q.word("optedOut")], rows, "No prospects match.",
              select="prospectIds", select_values=[str(p["id"]) for p in found], select_form="enrol-form",
              id="candidates"),
    ], status=status_of(problem), wrap=wrap, crumbs=[Link(q.word("sequences"), "/sequences"),
                                                     Link(seq["attributes"]["name"], f"/sequences/{key}")])


def finish(q: Q) -> Page | Redirect:
    key = q.path["key"]
    try:
        out = q.write("sequence_state_finish", {"id": as_int(key)})
    except Refused as err:
        return Page("sequencer", "Not finished", [refusal(err)], status=err.status)
    q.say("Sequence state finished.")
    pid = _rel(out["data"], "prospect")
    return Redirect(f"/prospects/{pid}" if pid else "/sequences")


def mailboxes_view(q: Q) -> Page:
    rows = [[Cell(m["attributes"]["email"]), Cell(str(m["attributes"]["userId"])),
             Cell("yes" if m["attributes"].get("sendDisabled") else "no")] for m in mailboxes(q).values()]
    return Page("sequencer", q.word("mailboxes"), [Heading(q.word("mailboxes")),
                                                   Table([q.word("email"), "User id", "Sending disabled"], rows)])


def emails_view(q: Q) -> Page:
    state = q.query.get("state")
    args = {"state": state} if state in ("delivered", "opened", "replied", "bounced") else {}
    found = q.read("emails_search", args)["data"]
    rows = [_mail_cells(m) for m in found]
    filters = [Field("state", q.word("state"), "select", state,
                     options((s, s) for s in ("delivered", "opened", "replied", "bounced")))]
    return Page("sequencer", q.word("mailings"), [
        Heading(q.word("mailings")),
        Form("/emails", filters, q.word("search"), "btn-search", method="get", inline=True, id="filters"),
        Table(["Prospect", q.word("subject"), q.word("state"), "Replied", q.word("body")], rows, "No emails.",
              id="records")])  # fmt: skip


def _mail_cells(m: dict[str, Any]) -> list[Cell]:
    a, pid = m["attributes"], _rel(m, "prospect")
    return [Cell(f"prospect {pid}", f"/prospects/{pid}", f"mail-prospect-{m['id']}"), Cell(a.get("subject", "")),
            Cell(a.get("state", "")), Cell(when(a.get("repliedAt"))), Cell(a.get("bodyText") or "")]


ROUTES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("/prospects", prospects, ("GET",)), ("/prospects/new", prospect_new, ("GET", "POST")),
    ("/prospects/{key}", prospect_view, ("GET",)), ("/prospects/{key}/edit", prospect_edit, ("GET", "POST")),
    ("/prospects/{key}/task", prospect_task, ("GET", "POST")), ("/accounts", accounts_view, ("GET",)),
    ("/accounts/new", account_new, ("GET", "POST")), ("/sequences", sequences_view, ("GET",)),
    ("/sequences/{key}", sequence_view, ("GET",)), ("/sequences/{key}/add", enrol, ("GET", "POST")),
    ("/states/{key}/finish", finish, ("POST",)), ("/mailboxes", mailboxes_view, ("GET",)),
    ("/emails", emails_view, ("GET",)),
]  # fmt: skip
NAV = [("prospects", "/prospects"), ("accounts", "/accounts"), ("sequences", "/sequences"),
       ("mailboxes", "/mailboxes"), ("mailings", "/emails")]  # fmt: skip
