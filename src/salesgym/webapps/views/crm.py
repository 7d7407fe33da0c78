"""The CRM's pages (HubSpot-shaped): object lists with filters, sort and paging; record pages with properties,
associations and an activity timeline; create and edit forms. Activities, associations and the pipeline board
are in ``crm_activity.py``. Every read is a CRM read tool, every form one CRM write tool call."""

from __future__ import annotations

import re
from typing import Any

from salesgym.envs.workflows.apps.crm import DEFAULT_TYPE, PROPERTIES
from salesgym.webapps.page import Cell, Field, Heading, Link, Notice, Page, Props, Redirect, Table, Timeline
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import (
    PAGE_SIZE,
    keep,
    options,
    page_of,
    pager,
    refusal,
    status_of,
    titled,
    when,
    write_form,
)

OBJECTS = ("contacts", "companies", "deals")
SINGULAR = {"contacts": "contact", "companies": "company", "deals": "deal", "notes": "note", "tasks": "task",
            "meetings": "meeting"}  # fmt: skip
COLUMNS: dict[str, tuple[str, ...]] = {
    "contacts": ("email", "jobtitle", "company", "lifecyclestage", "hs_lead_status", "hubspot_owner_id"),
    "companies": ("domain", "industry", "numberofemployees", "country", "hubspot_owner_id"),
    "deals": ("dealstage", "amount", "closedate", "pipeline", "hubspot_owner_id"),
}
FILTERS: dict[str, tuple[str, ...]] = {"contacts": ("lifecyclestage", "hs_lead_status", "hubspot_owner_id"),
                                       "companies": ("industry", "hubspot_owner_id"),
                                       "deals": ("pipeline", "dealstage", "hubspot_owner_id")}  # fmt: skip
SEARCHED = {"contacts": ("email", "firstname", "lastname", "company"), "companies": ("name", "domain"),
            "deals": ("dealname",)}  # fmt: skip
RELATED = {"contacts": ("companies", "deals"), "companies": ("contacts", "deals"), "deals": ("contacts", "companies")}


# --- lookups (each a read tool) ----------------------------------------------------------------------------------
def owners(q: Q) -> dict[str, str]:
    return {o["id"]: f"{o['firstName']} {o['lastName']}" for o in q.read("hubspot-list-owners")["results"]}


def pipelines(q: Q) -> list[dict[str, Any]]:
    return list(q.read("hubspot-list-pipelines")["results"])


def stage_labels(q: Q) -> dict[str, str]:
    return {s["id"]: s["label"] for p in pipelines(q) for s in p["stages"]}


def record(q: Q, object_type: str, key: str) -> dict[str, Any]:
    out = q.read("hubspot-batch-read-objects", {"objectType": object_type, "inputs": [{"id": key}]})
    if not out["results"]:
        raise Refused(f"404 Not Found: no {SINGULAR[object_type]} with id {key}")
    return dict(out["results"][0])


def every(q: Q, object_type: str) -> list[dict[str, Any]]:
    """All records of a type, in creation order (the list tool's pages, read to the end)."""
    found: list[dict[str, Any]] = []
    while True:
        out = q.read("hubspot-list-objects", {"objectType": object_type, "limit": 50, "after": len(found)})
        found.extend(out["results"])
        if "paging" not in out or len(found) >= 2000:
            return found


def name_of(object_type: str, r: dict[str, Any]) -> str:
    p = r["properties"]
    if object_type == "contacts":
        full = f"{p.get('firstname') or ''} {p.get('lastname') or ''}".strip()
        return full or p.get("email") or r["id"]
    key = {"companies": "name", "deals": "dealname"}.get(object_type, "")
    return str(p.get(key) or r["id"])


def shown(q: Q, prop: str, value: Any, names: dict[str, str], stages: dict[str, str]) -> str:
    """A property's value in words: owner names, stage and pipeline labels, dates in the sandbox's format."""
    if value in (None, ""):
        return ""
    if prop == "hubspot_owner_id":
        return names.get(str(value), str(value))
    if prop == "dealstage":
        return stages.get(str(value), str(value))
    kind = next((spec[0] for spec in (PROPERTIES[t].get(prop) for t in PROPERTIES) if spec), "string")
    if kind == "datetime":
        return when(value)
    return titled(str(value)) if kind == "enumeration" else str(value)


def _property_field(q: Q, object_type: str, prop: str, value: str, names: dict[str, str]) -> Field:
    kind, choices = PROPERTIES[object_type][prop]
    label = q.word(prop)
    required = (object_type, prop) in (("contacts", "email"), ("companies", "name"), ("deals", "dealname"),
                                        ("deals", "dealstage"))  # fmt: skip
    if kind == "enumeration" and choices is not None:
        return Field(prop, label, "select", value, options((c, titled(c)) for c in choices), required)
    if kind == "owner":
        return Field(prop, label, "select", value, options(names.items()))
    if kind == "pipeline":
        return Field(prop, label, "select", value, options((p["id"], p["label"]) for p in pipelines(q)))
    if kind == "stage":
        pairs = [(s["id"], f"{p['label']}: {s['label']}") for p in pipelines(q) for s in p["stages"]]
        return Field(prop, label, "select", value, options(pairs), required)
    hint = "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)" if kind == "datetime" else ""
    return Field(prop, label, "text", value, required=required, placeholder=hint)


# --- lists --------------------------------------------------------------------------------------------------------
def _search_args(q: Q, object_type: str, page: int) -> dict[str, Any]:
    fixed = [{"propertyName": f, "operator": "EQ", "value": q.query.get(f)} for f in FILTERS[object_type]
             if q.query.get(f)]  # fmt: skip
    text = q.query.get("q")
    if text:
        groups = [{"filters": [*fixed, {"propertyName": p, "operator": "CONTAINS_TOKEN", "value": text}]}
                  for p in SEARCHED[object_type]]  # fmt: skip
    else:
        groups = [{"filters": fixed}] if fixed else []
    args: dict[str, Any] = {"objectType": object_type, "filterGroups": groups, "limit": PAGE_SIZE,
                            "after": (page - 1) * PAGE_SIZE}  # fmt: skip
    sort = q.query.get("sort")
    if sort in PROPERTIES[object_type]:
        direction = "DESCENDING" if q.query.get("dir") == "desc" else "ASCENDING"
        args["sorts"] = [{"propertyName": sort, "direction": direction}]
    return args


def object_list(object_type: str) -> Any:
    def view(q: Q) -> Page:
        page = page_of(q)
        names, stages = owners(q), stage_labels(q)
        try:
            found = q.read("hubspot-search-objects", _search_args(q, object_type, page))
        except Refused as err:
            found = {"total": 0, "results": []}
            problem = [refusal(err)]
        else:
            problem = []
        columns = q.run.variant.order(["name", *COLUMNS[object_type]])
        rows = []
        for r in found["results"]:
            cells = {"name": Cell(name_of(object_type, r), f"/{object_type}/{r['id']}", f"open-{r['id']}")}
            cells.update({c: Cell(shown(q, c, r["properties"].get(c), names, stages)) for c in COLUMNS[object_type]})
            rows.append([cells[c] for c in columns])
        filters = [Field("q", q.word("search"), "text", q.query.get("q"), placeholder="name, email, company...")]
        for f in FILTERS[object_type]:
            field = _property_field(q, object_type, f, q.query.get(f), names)
            filters.append(Field(f, field.label, "select", q.query.get(f), field.options))
        sortable = options((p, q.word(p)) for p in ("createdAt", *COLUMNS[object_type], *SEARCHED[object_type])
                           if p in PROPERTIES[object_type])  # fmt: skip
        filters += [Field("sort", q.word("sort"), "select", q.query.get("sort"), sortable),
                    Field("dir", "Direction", "select", q.query.get("dir"),
                          [("asc", "Ascending"), ("desc", "Descending")])]  # fmt: skip
        from salesgym.webapps.page import Form

        return Page("crm", q.word(object_type), [
            Heading(q.word(object_type), [Link(f"{q.word('new')} {SINGULAR[object_type]}", f"/{object_type}/new",
                                               "new-record")]),
            Form(f"/{object_type}", filters, q.word("search"), "btn-search", method="get", inline=True,
                 id="filters"),
            *problem,
            Table([q.word(c) for c in columns], rows, f"No {object_type} match.", id="records"),
            pager(q, f"/{object_type}", int(found["total"]), page),
        ])  # fmt: skip

    return view


# --- records ------------------------------------------------------------------------------------------------------
def related(q: Q, object_type: str, key: str, to_type: str) -> list[tuple[dict[str, Any], list[str]]]:
    """The records associated to one record, with the association labels."""
    links = q.read("hubspot-list-associations", {"objectType": object_type, "objectId": key,
                                                 "toObjectType": to_type})["results"]  # fmt: skip
    if not links:
        return []
    found = q.read("hubspot-batch-read-objects", {"objectType": to_type,
                                                  "inputs": [{"id": str(x["toObjectId"])} for x in links[:25]]})
    by_id = {r["id"]: r for r in found["results"]}
    return [(by_id[str(x["toObjectId"])], [t["label"] or "Unlabeled" for t in x["associationTypes"]])
            for x in links[:25] if str(x["toObjectId"]) in by_id]  # fmt: skip


def timeline(q: Q, object_type: str, key: str) -> Timeline:
    items = []
    for kind, table in (("Note", "notes"), ("Task", "tasks"), ("Meeting", "meetings")):
        for r, _ in related(q, object_type, key, table):
            p = r["properties"]
            if table == "notes":
                items.append((p.get("hs_timestamp", ""), kind, "Note", p.get("hs_note_body", "")))
            elif table == "tasks":
                state = titled(p.get("hs_task_status", ""))
                items.append((p.get("hs_timestamp", ""), f"{kind} · {state}", p.get("hs_task_subject", ""),
                              p.get("hs_task_body", "")))  # fmt: skip
            else:
                span = f"{when(p.get('hs_meeting_start_time'))} – {when(p.get('hs_meeting_end_time'))}"
                outcome = titled(p.get("hs_meeting_outcome") or "")
                items.append((p.get("hs_timestamp", ""), f"{kind} · {outcome}", p.get("hs_meeting_title", ""), span))
    items.sort(key=lambda i: i[0], reverse=True)
    return Timeline([(when(d), k, t, b) for d, k, t, b in items], q.word("activities"))


def record_view(object_type: str) -> Any:
    def view(q: Q) -> Page:
        key = q.path["key"]
        r = record(q, object_type, key)
        names, stages = owners(q), stage_labels(q)
        props = [(q.word(p), shown(q, p, r["properties"].get(p), names, stages)) for p in PROPERTIES[object_type]]
        props += [(q.word("id"), r["id"]), (q.word("createdAt"), when(r["createdAt"]))]
        blocks: list[Any] = [
            Heading(name_of(object_type, r), [
                Link(q.word("edit"), f"/{object_type}/{key}/edit", "edit"),
                Link(q.word("log_note"), f"/{object_type}/{key}/note", "log-note"),
                Link(q.word("create_task"), f"/{object_type}/{key}/task", "create-task"),
                Link(q.word("log_meeting"), f"/{object_type}/{key}/meeting", "log-meeting"),
                Link(q.word("associate"), f"/{object_type}/{key}/associate", "associate"),
            ]),
            Props(props),
        ]  # fmt: skip
        for to_type in RELATED[object_type]:
            rows = [[Cell(name_of(to_type, other), f"/{to_type}/{other['id']}", f"assoc-{to_type}-{other['id']}"),
                     Cell(", ".join(labels))] for other, labels in related(q, object_type, key, to_type)]  # fmt: skip
            blocks.append(Table([q.word("name"), q.word("type")], rows, f"No associated {to_type}.",
                                caption=f"{q.word('associations')}: {q.word(to_type)}"))  # fmt: skip
        blocks.append(timeline(q, object_type, key))
        return Page("crm", name_of(object_type, r), blocks,
                    crumbs=[Link(q.word(object_type), f"/{object_type}")])  # fmt: skip

    return view


def _changed(q: Q, object_type: str, current: dict[str, Any]) -> dict[str, str]:
    """The properties the form changes (what a person edited), as the tool takes them: text."""
    out = {}
    for prop in PROPERTIES[object_type]:
        if prop in q.form and q.form.get(prop) != str(current.get(prop) or ""):
            out[prop] = q.form.get(prop)
    return out


def edit_view(object_type: str) -> Any:
    def view(q: Q) -> Page | Redirect:
        key = q.path["key"]
        r = record(q, object_type, key)
        problem: list[Any] = []
        if q.posted:
            props = _changed(q, object_type, r["properties"])
            if not props:
                q.say("Nothing changed.")
                return Redirect(f"/{object_type}/{key}")
            try:
                q.write("hubspot-batch-update-objects", {"objectType": object_type,
                                                         "inputs": [{"id": key, "properties": props}]})
            except Refused as err:
                problem = [refusal(err)]
            else:
                q.say(f"{SINGULAR[object_type].capitalize()} saved.")
                return Redirect(f"/{object_type}/{key}")
        names = owners(q)
        fields = [_property_field(q, object_type, p, keep(q, p, r["properties"].get(p)), names)
                  for p in PROPERTIES[object_type]]  # fmt: skip
        return Page("crm", f"{q.word('edit')} {name_of(object_type, r)}", [
            *problem, write_form(q, f"/{object_type}/{key}/edit", fields, "save", form_id="record-form"),
        ], status=status_of(problem), crumbs=[Link(q.word(object_type), f"/{object_type}"),
                                            Link(name_of(object_type, r), f"/{object_type}/{key}")])  # fmt: skip

    return view


def _duplicate_link(problem: list[Any]) -> list[Any]:
    """A 409 on a contact's email links the existing record, as the product does."""
    for p in list(problem):
        found = re.search(r"Existing ID: (\d+)", p.text) if isinstance(p, Notice) else None
        if found:
            problem.append(Heading("A contact with this email already exists", [
                Link("Open the existing contact", f"/contacts/{found.group(1)}", "open-existing")], level=2))
    return problem


def create_view(object_type: str) -> Any:
    def view(q: Q) -> Page | Redirect:
        problem: list[Any] = []
        if q.posted:
            props = {p: q.form.get(p) for p in PROPERTIES[object_type] if q.form.get(p)}
            associations = [{"to": {"id": q.form.get(f"assoc_{to_type}")},
                             "types": [{"associationTypeId": DEFAULT_TYPE[(object_type, to_type)]}]}
                            for to_type in RELATED[object_type] if q.form.get(f"assoc_{to_type}")]  # fmt: skip
            item: dict[str, Any] = {"properties": props}
            if associations:
                item["associations"] = associations
            try:
                out = q.write("hubspot-batch-create-objects", {"objectType": object_type, "inputs": [item]})
            except Refused as err:
                problem = _duplicate_link([refusal(err)])
            else:
                made = out["results"][0]
                q.say(f"{SINGULAR[object_type].capitalize()} created.")
                return Redirect(f"/{object_type}/{made['id']}")
        names = owners(q)
        fields = [_property_field(q, object_type, p, keep(q, p, ""), names) for p in PROPERTIES[object_type]]
        for to_type in RELATED[object_type]:
            choices = options((r["id"], name_of(to_type, r)) for r in every(q, to_type))
            fields.append(Field(f"assoc_{to_type}", f"{q.word('associate')}: {SINGULAR[to_type]}", "select",
                                keep(q, f"assoc_{to_type}", ""), choices))  # fmt: skip
        title = f"{q.word('new')} {SINGULAR[object_type]}"
        return Page("crm", title, [*problem, write_form(q, f"/{object_type}/new", fields, "save",
                                                        form_id="record-form")],
                    status=status_of(problem), crumbs=[Link(q.word(object_type), f"/{object_type}")])  # fmt: skip

    return view
