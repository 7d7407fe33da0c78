"""The CRM's activity pages: the forms that log notes, tasks and meetings
(``hubspot-create-engagement``), associating records (``hubspot-batch-create-associations``) and the deal
pipeline board, where dragging a card or choosing a stage moves the deal (``hubspot-batch-update-objects``)."""

from __future__ import annotations

from typing import Any

from salesgym.envs.workflows.apps.crm import ASSOCIATION_TYPES, DEFAULT_TYPE, MEETING_OUTCOME, PRIORITY, TASK_TYPE
from salesgym.webapps.page import Board, Card, Field, Form, Heading, Link, Page, Redirect
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import as_int, keep, options, refusal, status_of, titled, write_form
from salesgym.webapps.views.crm import (
    OBJECTS,
    every,
    name_of,
    owners,
    pipelines,
    record,
)

KINDS = {"note": "NOTE", "task": "TASK", "meeting": "MEETING"}
ID_LISTS = {"contacts": "contactIds", "companies": "companyIds", "deals": "dealIds"}  # the engagement's associations


def _targets(q: Q, object_type: str, key: str) -> list[Field]:
    """Which records the activity is associated to: the page's own record is ticked."""
    fields = []
    for to_type in ("contacts", "companies", "deals"):
        chosen = q.form.getlist(to_type) if q.posted else ([key] if to_type == object_type else [])
        fields.append(Field(to_type, f"{q.word('associations')}: {q.word(to_type)}", "checkboxes", chosen,
                            [(r["id"], name_of(to_type, r)) for r in every(q, to_type)]))  # fmt: skip
    return fields


def _engagement_fields(q: Q, kind: str, now: str, owner: str) -> list[Field]:
    names = owners(q)
    fields = [Field("ownerId", q.word("hubspot_owner_id"), "select", keep(q, "ownerId", owner),
                    options(names.items()), True),
              Field("timestamp", q.word("hs_timestamp"), "text", keep(q, "timestamp", now),
                    required=True, placeholder="YYYY-MM-DDTHH:MM:SSZ (UTC)",
                    help="for a task, its due date")]  # fmt: skip
    if kind == "NOTE":
        fields.append(Field("body", q.word("hs_note_body"), "textarea", keep(q, "body", ""), required=True))
    elif kind == "TASK":
        fields += [Field("subject", q.word("hs_task_subject"), "text", keep(q, "subject", ""), required=True),
                   Field("body", q.word("hs_task_body"), "textarea", keep(q, "body", "")),
                   Field("status", q.word("hs_task_status"), "select", keep(q, "status", ""),
                         options((s, titled(s)) for s in ("NOT_STARTED", "COMPLETED"))),
                   Field("taskType", q.word("hs_task_type"), "select", keep(q, "taskType", ""),
                         options((s, titled(s)) for s in TASK_TYPE)),
                   Field("priority", q.word("hs_task_priority"), "select", keep(q, "priority", ""),
                         options((s, titled(s)) for s in PRIORITY))]  # fmt: skip
    else:
        fields += [Field("title", q.word("hs_meeting_title"), "text", keep(q, "title", ""), required=True),
                   Field("startTime", q.word("hs_meeting_start_time"), "text", keep(q, "startTime", ""),
                         required=True, placeholder="YYYY-MM-DDTHH:MM:SSZ (UTC)"),
                   Field("endTime", q.word("hs_meeting_end_time"), "text", keep(q, "endTime", ""),
                         required=True, placeholder="YYYY-MM-DDTHH:MM:SSZ (UTC)"),
                   Field("outcome", q.word("hs_meeting_outcome"), "select", keep(q, "outcome", ""),
                         options((s, titled(s)) for s in MEETING_OUTCOME)),
                   Field("body", q.word("hs_meeting_body"), "textarea", keep(q, "body", ""))]  # fmt: skip
    return fields


METADATA = {"NOTE": ("body",), "TASK": ("subject", "body", "status", "taskType", "priority"),
            "MEETING": ("title", "startTime", "endTime", "outcome", "body")}  # fmt: skip


def engagement_view(object_type: str, kind_key: str) -> Any:
    kind = KINDS[kind_key]

    def view(q: Q) -> Page | Redirect:
        key = q.path["key"]
        r = record(q, object_type, key)
        problem: list[Any] = []
        if q.posted:
            metadata: dict[str, Any] = {"timestamp": q.form.get("timestamp")}
            metadata.update({k: q.form.get(k) for k in METADATA[kind] if q.form.get(k)})
            args = {"type": kind, "ownerId": as_int(q.form.get("ownerId")), "metadata": metadata,
                    "associations": {ids: [as_int(i) for i in q.form.getlist(t)]
                                     for t, ids in ID_LISTS.items() if q.form.getlist(t)}}  # fmt: skip
            try:
                q.write("hubspot-create-engagement", args)
            except Refused as err:
                problem = [refusal(err)]
            else:
                q.say(f"{kind.capitalize()} logged.")
                return Redirect(f"/{object_type}/{key}")
        now = q.run.observation()["clock"]["now"]
        owner = str(r["properties"].get("hubspot_owner_id") or "")
        fields = _engagement_fields(q, kind, now, owner) + _targets(q, object_type, key)
        title = {"NOTE": q.word("log_note"), "TASK": q.word("create_task"), "MEETING": q.word("log_meeting")}[kind]
        return Page("crm", title, [*problem, write_form(q, f"/{object_type}/{key}/{kind_key}", fields, "save",
                                                        form_id="activity-form")],
                    status=status_of(problem), crumbs=[Link(q.word(object_type), f"/{object_type}"),
                                                     Link(name_of(object_type, r), f"/{object_type}/{key}")])

    return view


def associate_view(object_type: str) -> Any:
    def view(q: Q) -> Page | Redirect:
        key = q.path["key"]
        r = record(q, object_type, key)
        problem: list[Any] = []
        to_type = q.form.get("toObjectType") or q.query.get("to") or ("companies" if object_type != "companies"
                                                                       else "contacts")
        if to_type not in OBJECTS or to_type == object_type:
            to_type = "companies" if object_type != "companies" else "contacts"
        if q.posted:
            type_id = q.form.get("associationTypeId") or str(DEFAULT_TYPE[(object_type, to_type)])
            link = {"from": {"id": key}, "to": {"id": q.form.get("toId")},
                    "types": [{"associationTypeId": as_int(type_id)}]}
            args = {"fromObjectType": object_type, "toObjectType": to_type, "inputs": [link]}
            try:
                q.write("hubspot-batch-create-associations", args)
            except Refused as err:
                problem = [refusal(err)]
            else:
                q.say("Association saved.")
                return Redirect(f"/{object_type}/{key}")
        kinds = ASSOCIATION_TYPES[(object_type, to_type)]
        fields = [
            Field("toObjectType", q.word("type"), "select", to_type,
                  [(t, q.word(t)) for t in OBJECTS if t != object_type]),
            Field("toId", q.word("to"), "select", keep(q, "toId", ""),
                  options((o["id"], name_of(to_type, o)) for o in every(q, to_type)), True),
            Field("associationTypeId", "Association label", "select",
                  keep(q, "associationTypeId", str(DEFAULT_TYPE[(object_type, to_type)])),
                  [(str(k), label) for k, label in kinds.items()]),
        ]  # fmt: skip
        switch = [Link(q.word(t), f"/{object_type}/{key}/associate?to={t}", f"to-{t}") for t in OBJECTS
                  if t != object_type]  # fmt: skip
        return Page("crm", f"{q.word('associate')} {name_of(object_type, r)}", [
            *problem, Heading(f"{q.word('associate')}: {q.word(to_type)}", switch, level=2),
            write_form(q, f"/{object_type}/{key}/associate", fields, "save", form_id="associate-form"),
        ], status=status_of(problem), crumbs=[Link(name_of(object_type, r), f"/{object_type}/{key}")])  # fmt: skip

    return view


def board(q: Q) -> Page:
    all_pipelines = pipelines(q)
    chosen = q.query.get("pipeline") or "default"
    pipeline = next((p for p in all_pipelines if p["id"] == chosen), all_pipelines[0])
    deals = [d for d in every(q, "deals") if (d["properties"].get("pipeline") or "default") == pipeline["id"]]
    names = owners(q)
    stages = [(s["id"], s["label"]) for s in sorted(pipeline["stages"], key=lambda s: s["displayOrder"])]
    columns = []
    for stage_id, label in stages:
        cards = []
        for d in deals:
            p = d["properties"]
            if p.get("dealstage") != stage_id:
                continue
            move = Form(f"/deals/{d['id']}/move", [Field("dealstage", q.word("dealstage"), "select", stage_id,
                                                         stages)], "Move", f"move-{d['id']}", inline=True)
            cards.append(Card(name_of("deals", d), f"/deals/{d['id']}",
                              [f"{q.word('amount')}: {p.get('amount') or '—'}",
                               names.get(str(p.get("hubspot_owner_id")), "")], f"deal-{d['id']}", move))
        columns.append((label, stage_id, cards))
    switch = [Link(p["label"], f"/deals/board?pipeline={p['id']}", f"pipeline-{p['id']}") for p in all_pipelines]
    return Page("crm", f"{q.word('board')}: {pipeline['label']}", [
        Heading(f"{q.word('board')}: {pipeline['label']}", switch), Board(columns)])


def move(q: Q) -> Page | Redirect:
    key = q.path["key"]
    record(q, "deals", key)
    try:
        q.write("hubspot-batch-update-objects", {"objectType": "deals", "inputs": [
            {"id": key, "properties": {"dealstage": q.form.get("dealstage")}}]})
    except Refused as err:
        page = board(q)
        page.blocks.insert(0, refusal(err))
        page.status = err.status
        return page
    q.say("Deal moved.")
    return Redirect(q.form.get("back") if q.form.get("back", "").startswith("/deals") else "/deals/board")


def routes() -> list[tuple[str, Any, tuple[str, ...]]]:
    from salesgym.webapps.views.crm import create_view, edit_view, object_list, record_view

    out: list[tuple[str, Any, tuple[str, ...]]] = [("/deals/board", board, ("GET",)),
                                                   ("/deals/{key}/move", move, ("POST",))]
    for t in OBJECTS:
        out += [(f"/{t}", object_list(t), ("GET",)), (f"/{t}/new", create_view(t), ("GET", "POST")),
                (f"/{t}/{{key}}", record_view(t), ("GET",)), (f"/{t}/{{key}}/edit", edit_view(t), ("GET", "POST")),
                (f"/{t}/{{key}}/associate", associate_view(t), ("GET", "POST"))]  # fmt: skip
        out += [(f"/{t}/{{key}}/{k}", engagement_view(t, k), ("GET", "POST")) for k in KINDS]
    return out


NAV = [("contacts", "/contacts"), ("companies", "/companies"), ("deals", "/deals"), ("board", "/deals/board")]
