"""The CRM replica, shaped like HubSpot's CRM v3 objects and v4 associations, with tool names and argument
shapes of the official ``@hubspot/mcp-server`` (plus its REST pipelines and owners endpoints).

An independent implementation for offline evaluation: no HubSpot code or data; it reproduces the public
shapes and these platform rules, enforced here rather than in tool descriptions:

- a contact's ``email`` is unique, case-insensitively (409 Conflict on create or on an update to an email in use);
- a deal's ``dealstage`` is an internal stage id of the deal's ``pipeline`` (``default`` when none is given);
  stage, pipeline and owner values are internal ids;
- ``lifecyclestage`` never moves backwards: an earlier stage is accepted and silently ignored, as HubSpot does,
  unless the property was cleared (set to ``""``) by an earlier request;
- enumeration values must be among the property's options; unknown properties are refused;
- a deal in a closed-won stage has a ``closedate``;
- every engagement has a timestamp and at least one association; association type ids match the object pair.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows import outputs
from salesgym.envs.workflows.apps.common import Ctx, create, done, get, next_key, now_iso, page, rows, update
from salesgym.envs.workflows.contract import MAX_BATCH, MAX_PAGE, MAX_TEXT, iso, parse_iso
from salesgym.envs.workflows.state import Record

ObjectType = Literal["contacts", "companies", "deals", "notes", "tasks", "meetings"]
WritableType = Literal["contacts", "companies", "deals"]
Text = Annotated[str, StringConstraints(max_length=200)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=40)]
Body = Annotated[str, StringConstraints(max_length=MAX_TEXT)]

LIFECYCLE = ("subscriber", "lead", "marketingqualifiedlead", "salesqualifiedlead", "opportunity", "customer",
             "evangelist", "other")  # fmt: skip
LEAD_STATUS = ("NEW", "OPEN", "IN_PROGRESS", "OPEN_DEAL", "UNQUALIFIED", "ATTEMPTED_TO_CONTACT", "CONNECTED",
               "BAD_TIMING")  # fmt: skip
TASK_STATUS = ("NOT_STARTED", "COMPLETED")
TASK_TYPE = ("EMAIL", "CALL", "TODO")
PRIORITY = ("LOW", "MEDIUM", "HIGH")
MEETING_OUTCOME = ("SCHEDULED", "COMPLETED", "RESCHEDULED", "NO_SHOW", "CANCELED")
INDUSTRIES = ("COMPUTER_SOFTWARE", "FINANCIAL_SERVICES", "HOSPITAL_HEALTH_CARE", "RETAIL", "LOGISTICS_AND_SUPPLY_CHAIN",
              "MANUFACTURING", "TELECOMMUNICATIONS", "HIGHER_EDUCATION")  # fmt: skip

# property -> (type, options or None); what hubspot-list-properties shows and every write is checked against
PROPERTIES: dict[str, dict[str, tuple[str, tuple[str, ...] | None]]] = {
    "contacts": {"email": ("string", None), "firstname": ("string", None), "lastname": ("string", None),
                 "jobtitle": ("string", None), "company": ("string", None), "phone": ("string", None),
                 "country": ("string", None), "lifecyclestage": ("enumeration", LIFECYCLE),
                 "hs_lead_status": ("enumeration", LEAD_STATUS), "hubspot_owner_id": ("owner", None)},
    "companies": {"name": ("string", None), "domain": ("string", None), "industry": ("enumeration", INDUSTRIES),
                  "numberofemployees": ("number", None), "country": ("string", None),
                  "hubspot_owner_id": ("owner", None)},
    "deals": {"dealname": ("string", None), "dealstage": ("stage", None), "pipeline": ("pipeline", None),
              "amount": ("number", None), "closedate": ("datetime", None), "hubspot_owner_id": ("owner", None)},
    "notes": {"hs_timestamp": ("datetime", None), "hs_note_body": ("string", None),
              "hubspot_owner_id": ("owner", None)},
    "tasks": {"hs_timestamp": ("datetime", None), "hs_task_subject": ("string", None),
              "hs_task_body": ("string", None), "hs_task_status": ("enumeration", TASK_STATUS),
              "hs_task_priority": ("enumeration", PRIORITY), "hs_task_type": ("enumeration", TASK_TYPE),
              "hubspot_owner_id": ("owner", None)},
    "meetings": {"hs_timestamp": ("datetime", None), "hs_meeting_title": ("string", None),
                 "hs_meeting_body": ("string", None), "hs_meeting_start_time": ("datetime", None),
                 "hs_meeting_end_time": ("datetime", None), "hs_meeting_outcome": ("enumeration", MEETING_OUTCOME),
                 "hubspot_owner_id": ("owner", None)},
}  # fmt: skip

# HubSpot-defined association types: (from, to) -> {type id: label}; each has an inverse
ASSOCIATION_TYPES: dict[tuple[str, str], dict[int, str]] = {
    ("contacts", "companies"): {279: "Unlabeled", 1: "Primary"},
    ("companies", "contacts"): {280: "Unlabeled", 2: "Primary"},
    ("deals", "contacts"): {3: "Unlabeled"},
    ("contacts", "deals"): {4: "Unlabeled"},
    ("deals", "companies"): {5: "Primary", 341: "Unlabeled"},
    ("companies", "deals"): {6: "Primary", 342: "Unlabeled"},
    ("notes", "contacts"): {202: "Unlabeled"}, ("contacts", "notes"): {201: "Unlabeled"},
    ("notes", "companies"): {190: "Unlabeled"}, ("companies", "notes"): {189: "Unlabeled"},
    ("notes", "deals"): {214: "Unlabeled"}, ("deals", "notes"): {213: "Unlabeled"},
    ("tasks", "contacts"): {204: "Unlabeled"}, ("contacts", "tasks"): {203: "Unlabeled"},
    ("tasks", "companies"): {192: "Unlabeled"}, ("companies", "tasks"): {191: "Unlabeled"},
    ("tasks", "deals"): {216: "Unlabeled"}, ("deals", "tasks"): {215: "Unlabeled"},
    ("meetings", "contacts"): {200: "Unlabeled"}, ("contacts", "meetings"): {199: "Unlabeled"},
    ("meetings", "companies"): {188: "Unlabeled"}, ("companies", "meetings"): {187: "Unlabeled"},
    ("meetings", "deals"): {212: "Unlabeled"}, ("deals", "meetings"): {211: "Unlabeled"},
}  # fmt: skip
INVERSE: dict[int, int] = {279: 280, 1: 2, 3: 4, 5: 6, 341: 342, 202: 201, 190: 189, 214: 213, 204: 203, 192: 191,
                           216: 215, 200: 199, 188: 187, 212: 211}  # fmt: skip
INVERSE.update({v: k for k, v in list(INVERSE.items())})
DEFAULT_TYPE = {pair: next(iter(types)) for pair, types in ASSOCIATION_TYPES.items()}  # unlabeled / primary first
DEFAULT_TYPE.update({("contacts", "companies"): 279, ("companies", "contacts"): 280, ("deals", "companies"): 5,
                     ("companies", "deals"): 6})  # fmt: skip


# --- records and lookups ----------------------------------------------------------------------------------------
def crm_object(key: str, properties: dict[str, str], at: str) -> Record:
    return {"id": key, "properties": dict(properties), "createdAt": at, "updatedAt": at, "archived": False}


def association(from_type: str, from_id: str, to_type: str, to_id: str, type_id: int) -> tuple[str, Record]:
    key = f"{from_type}:{from_id}:{to_type}:{to_id}:{type_id}"
    return key, {"fromObjectType": from_type, "fromId": from_id, "toObjectType": to_type, "toId": to_id,
                 "associationCategory": "HUBSPOT_DEFINED", "associationTypeId": type_id}  # fmt: skip


def stage_of(ctx: Ctx, pipeline: str, stage: str) -> Record | None:
    found = rows(ctx, "crm.pipelines").get(pipeline)
    if found is None:
        return None
    return next((s for s in found["stages"] if s["id"] == stage), None)


def _check_value(ctx: Ctx, object_type: str, name: str, value: str) -> None:
    spec = PROPERTIES[object_type].get(name)
    if spec is None:
        raise ToolError(f"400 Bad Request: property {quote(name)} does not exist on {object_type} "
                        f"(see hubspot-list-properties)")  # fmt: skip
    kind, options = spec
    if len(value) > MAX_TEXT:
        raise ToolError(f"400 Bad Request: {name} is longer than {MAX_TEXT} characters")
    if value == "":
        return  # clearing a property is always allowed
    if kind == "enumeration" and options is not None and value not in options:
        raise ToolError(f"400 Bad Request: {quote(value)} is not a valid option for {name}; options: "
                        f"{', '.join(options)}")  # fmt: skip
    if kind == "owner" and value not in rows(ctx, "crm.owners"):
        raise ToolError(f"400 Bad Request: {quote(value)} is not an owner id (see hubspot-list-owners; use 'id', "
                        "not 'userId')")  # fmt: skip
    if kind == "number":
        try:
            float(value)
        except ValueError:
            raise ToolError(f"400 Bad Request: {name} must be a number, got {quote(value)}") from None
    if kind == "datetime" and parse_iso(value) is None:
        raise ToolError(f"400 Bad Request: {name} must be an ISO 8601 date or time, got {quote(value)}")
    if kind == "pipeline" and value not in rows(ctx, "crm.pipelines"):
        raise ToolError(f"400 Bad Request: {quote(value)} is not a pipeline id (see hubspot-list-pipelines)")


def _email_owner(ctx: Ctx, email: str) -> str | None:
    low = email.lower()
    for key, c in rows(ctx, "crm.contacts").items():
        if c["properties"].get("email", "").lower() == low:
            return key
    return None


def _merge(ctx: Ctx, object_type: str, old: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    """The properties after a write: checked, with the platform's own rules applied."""
    for name, value in new.items():
        _check_value(ctx, object_type, name, value)
    merged = {**old, **new}
    for name, value in new.items():  # times are stored normalised (UTC, seconds, Z), as the platform returns them
        if value and PROPERTIES[object_type][name][0] == "datetime":
            moment = parse_iso(value)
            assert moment is not None
            merged[name] = iso(moment)
    if object_type == "contacts" and "lifecyclestage" in new:
        before, after = old.get("lifecyclestage", ""), new["lifecyclestage"]
        if before and after and LIFECYCLE.index(after) < LIFECYCLE.index(before):
            merged["lifecyclestage"] = before  # backwards without a clear first: accepted, and nothing changes
    if object_type == "deals":
        pipeline = merged.get("pipeline") or "default"
        merged["pipeline"] = pipeline
        stage = stage_of(ctx, pipeline, merged.get("dealstage", ""))
        if stage is None:
            raise ToolError(f"400 Bad Request: dealstage {quote(merged.get('dealstage', ''))} is not a stage of "
                            f"pipeline {quote(pipeline)}; stage and pipeline values are internal ids "
                            "(see hubspot-list-pipelines)")  # fmt: skip
        if stage["metadata"]["isClosed"] and stage["metadata"]["probability"] == 1.0 and not merged.get("closedate"):
            raise ToolError("400 Bad Request: a deal in a closed-won stage needs a closedate")
    return merged


# --- argument models --------------------------------------------------------------------------------------------
class Properties(ToolArgs):
    """Every writable property of contacts, companies and deals (HubSpot sends all values as strings)."""

    email: Text | None = Field(None, description="contacts: the unique email")
    firstname: Text | None = None
    lastname: Text | None = None
    jobtitle: Text | None = None
    company: Text | None = Field(None, description="contacts: the company name as text")
    phone: Text | None = None
    country: Text | None = None
    lifecyclestage: Text | None = Field(None, description="contacts: a lifecycle stage internal value; '' clears it")
    hs_lead_status: Text | None = Field(None, description="contacts: a lead status internal value")
    hubspot_owner_id: Text | None = Field(None, description="an owner's id from hubspot-list-owners")
    name: Text | None = Field(None, description="companies: the company name")
    domain: Text | None = Field(None, description="companies: the web domain, e.g. acme.io")
    industry: Text | None = Field(None, description="companies: an industry internal value")
    numberofemployees: Text | None = None
    dealname: Text | None = Field(None, description="deals: required on create")
    dealstage: Text | None = Field(None, description="deals: a stage id of the deal's pipeline; required on create")
    pipeline: Text | None = Field(None, description="deals: a pipeline id ('default' when omitted)")
    amount: Text | None = Field(None, description="deals: a number as text")
    closedate: Text | None = Field(None, description="deals: ISO 8601 date")

    def given(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class AssociationType(ToolArgs):
    associationCategory: Literal["HUBSPOT_DEFINED"] = "HUBSPOT_DEFINED"
    associationTypeId: int = Field(ge=1, le=100_000, description="see hubspot-get-association-definitions")


class ObjectRef(ToolArgs):
    id: Id


class AssociationSpec(ToolArgs):
    to: ObjectRef
    types: list[AssociationType] = Field(min_length=1, max_length=2)


class CreateInput(ToolArgs):
    properties: Properties
    associations: list[AssociationSpec] = Field(default_factory=list, max_length=10)


class CreateArgs(ToolArgs):
    objectType: WritableType
    inputs: list[CreateInput] = Field(min_length=1, max_length=MAX_BATCH)


class UpdateInput(ToolArgs):
    id: Id
    properties: Properties


class UpdateArgs(ToolArgs):
    objectType: WritableType
    inputs: list[UpdateInput] = Field(min_length=1, max_length=MAX_BATCH)


Operator = Literal["EQ", "NEQ", "LT", "LTE", "GT", "GTE", "HAS_PROPERTY", "NOT_HAS_PROPERTY", "CONTAINS_TOKEN", "IN",
                   "NOT_IN"]  # fmt: skip


class Filter(ToolArgs):
    propertyName: Text
    operator: Operator
    value: Text | None = Field(None, description="for EQ, NEQ, LT, LTE, GT, GTE, CONTAINS_TOKEN")
    values: list[Text] | None = Field(None, max_length=50, description="for IN and NOT_IN")


class FilterGroup(ToolArgs):
    filters: list[Filter] = Field(min_length=1, max_length=10)


class Sort(ToolArgs):
    propertyName: Text
    direction: Literal["ASCENDING", "DESCENDING"] = "ASCENDING"


class SearchArgs(ToolArgs):
    objectType: ObjectType
    filterGroups: list[FilterGroup] = Field(default_factory=list, max_length=5,
                                            description="OR between groups, AND inside a group")
    sorts: list[Sort] = Field(default_factory=list, max_length=2)
    properties: list[Text] | None = Field(None, max_length=30, description="properties to return (default: all)")
    limit: int = Field(10, ge=1, le=MAX_PAGE)
    after: int = Field(0, ge=0, le=10_000, description="the paging cursor from the previous page")


class ListArgs(ToolArgs):
    objectType: ObjectType
    limit: int = Field(10, ge=1, le=MAX_PAGE)
    after: int = Field(0, ge=0, le=10_000)
    properties: list[Text] | None = Field(None, max_length=30)


class ReadArgs(ToolArgs):
    objectType: ObjectType
    inputs: list[ObjectRef] = Field(min_length=1, max_length=MAX_BATCH)
    properties: list[Text] | None = Field(None, max_length=30)


class AssocInput(ToolArgs):
    from_: ObjectRef = Field(alias="from")
    to: ObjectRef
    types: list[AssociationType] = Field(min_length=1, max_length=2)


class AssocCreateArgs(ToolArgs):
    fromObjectType: ObjectType
    toObjectType: ObjectType
    inputs: list[AssocInput] = Field(min_length=1, max_length=MAX_BATCH)


class AssocListArgs(ToolArgs):
    objectType: ObjectType
    objectId: Id
    toObjectType: ObjectType


class AssocDefArgs(ToolArgs):
    fromObjectType: ObjectType
    toObjectType: ObjectType


class EngagementAssociations(ToolArgs):
    contactIds: list[int] = Field(default_factory=list, max_length=10)
    companyIds: list[int] = Field(default_factory=list, max_length=10)
    dealIds: list[int] = Field(default_factory=list, max_length=10)


class EngagementMetadata(ToolArgs):
    timestamp: Text = Field(description="ISO 8601; the activity's date (hs_timestamp); for a TASK, its due date")
    body: Body | None = Field(None, description="NOTE/TASK/MEETING text")
    subject: Text | None = Field(None, description="TASK: the subject")
    status: Literal["NOT_STARTED", "COMPLETED"] | None = Field(None, description="TASK (default NOT_STARTED)")
    taskType: Literal["EMAIL", "CALL", "TODO"] | None = Field(None, description="TASK (default TODO)")
    priority: Literal["LOW", "MEDIUM", "HIGH"] | None = Field(None, description="TASK")
    title: Text | None = Field(None, description="MEETING: the title")
    startTime: Text | None = Field(None, description="MEETING: ISO 8601 start")
    endTime: Text | None = Field(None, description="MEETING: ISO 8601 end")
    outcome: Literal["SCHEDULED", "COMPLETED", "RESCHEDULED", "NO_SHOW", "CANCELED"] | None = None


class EngagementArgs(ToolArgs):
    type: Literal["NOTE", "TASK", "MEETING"]
    ownerId: int = Field(ge=1, le=10**12, description="an owner's id (hubspot-list-owners)")
    associations: EngagementAssociations
    metadata: EngagementMetadata


class TypeArgs(ToolArgs):
    objectType: ObjectType


class NoArgs(ToolArgs):
    pass


# --- handlers ---------------------------------------------------------------------------------------------------
def _view(record: Record, properties: list[str] | None) -> dict[str, Any]:
    props = record["properties"]
    shown = props if properties is None else {k: props.get(k) for k in properties}
    return {"id": record["id"], "properties": {**shown, "hs_object_id": record["id"]},
            "createdAt": record["createdAt"], "updatedAt": record["updatedAt"], "archived": False}  # fmt: skip


def _table(object_type: str) -> str:
    return f"crm.{object_type}"


def _compare(actual: str | None, f: Filter) -> bool:
    op = f.operator
    if op == "HAS_PROPERTY":
        return bool(actual)
    if op == "NOT_HAS_PROPERTY":
        return not actual
    if op in ("IN", "NOT_IN"):
        hit = (actual or "").lower() in {v.lower() for v in f.values or ()}
        return hit if op == "IN" else not hit
    if f.value is None:
        raise ToolError(f"400 Bad Request: operator {op} needs a value")
    a, v = (actual or ""), f.value
    if op == "EQ":
        return a.lower() == v.lower()
    if op == "NEQ":
        return a.lower() != v.lower()
    if op == "CONTAINS_TOKEN":
        return v.lower().strip("*") in a.lower()
    try:
        x, y = float(a), float(v)
        return {"LT": x < y, "LTE": x <= y, "GT": x > y, "GTE": x >= y}[op]
    except ValueError:
        return {"LT": a < v, "LTE": a <= v, "GT": a > v, "GTE": a >= v}[op]


def _matcher(f: Filter) -> Callable[[str | None], bool]:
    """:func:`_compare` for one filter with its value prepared once (a search runs it on every record)."""
    op = f.operator
    if op in ("IN", "NOT_IN"):
        values = {v.lower() for v in f.values or ()}
        return (lambda a: (a or "").lower() in values) if op == "IN" else (lambda a: (a or "").lower() not in values)
    if op in ("EQ", "NEQ", "CONTAINS_TOKEN") and f.value is not None:
        v = f.value.lower()
        if op == "EQ":
            return lambda a: (a or "").lower() == v
        if op == "NEQ":
            return lambda a: (a or "").lower() != v
        token = v.strip("*")
        return lambda a: token in (a or "").lower()
    return lambda a: _compare(a, f)  # presence, ranges, and a missing value (refused when a record is tested)


def search_objects(ctx: Ctx, a: SearchArgs) -> ToolOutcome:
    if sum(len(g.filters) for g in a.filterGroups) > 25:
        raise ToolError("400 Bad Request: at most 25 filters in all")
    known = PROPERTIES[a.objectType]
    for g in a.filterGroups:
        for f in g.filters:
            if f.propertyName not in known and f.propertyName != "hs_object_id":
                raise ToolError(f"400 Bad Request: property {quote(f.propertyName)} does not exist on {a.objectType}")
    def value(r: Record, name: str) -> str | None:
        found: str | None = r["id"] if name == "hs_object_id" else r["properties"].get(name)
        return found

    groups = [[(f.propertyName, _matcher(f)) for f in g.filters] for g in a.filterGroups]
    found = [r for r in rows(ctx, _table(a.objectType)).values()
             if not groups or any(all(test(value(r, name)) for name, test in g) for g in groups)]  # fmt: skip
    for s in reversed(a.sorts):
        name = s.propertyName
        found.sort(key=lambda r: str(r["properties"].get(name) or ""), reverse=s.direction == "DESCENDING")
    shown = page(found, a.after, a.limit)
    nxt = a.after + len(shown)
    out: dict[str, Any] = {"total": len(found), "results": [_view(r, a.properties) for r in shown]}
    if nxt < len(found):
        out["paging"] = {"next": {"after": str(nxt)}}
    return done(out)


def list_objects(ctx: Ctx, a: ListArgs) -> ToolOutcome:
    found = list(rows(ctx, _table(a.objectType)).values())
    shown = page(found, a.after, a.limit)
    out: dict[str, Any] = {"results": [_view(r, a.properties) for r in shown]}
    if a.after + len(shown) < len(found):
        out["paging"] = {"next": {"after": str(a.after + len(shown))}}
    return done(out)


def batch_read(ctx: Ctx, a: ReadArgs) -> ToolOutcome:
    table = rows(ctx, _table(a.objectType))
    results = [_view(table[i.id], a.properties) for i in a.inputs if i.id in table]
    errors = [{"status": "error", "category": "OBJECT_NOT_FOUND", "context": {"ids": [i.id]}}
              for i in a.inputs if i.id not in table]  # fmt: skip
    return done({"status": "COMPLETE", "results": results, "errors": errors})


def _check_association(ctx: Ctx, from_type: str, to_type: str, to_id: str, type_id: int) -> None:
    types = ASSOCIATION_TYPES.get((from_type, to_type))
    if types is None:
        raise ToolError(f"400 Bad Request: {from_type} cannot be associated to {to_type}")
    if type_id not in types:
        raise ToolError(f"400 Bad Request: association type {type_id} is not defined from {from_type} to {to_type}; "
                        f"defined: {', '.join(map(str, types))}")  # fmt: skip
    if to_id not in rows(ctx, _table(to_type)):
        raise ToolError(f"404 Not Found: no {to_type} record with id {quote(to_id)}")


def _associate(ctx: Ctx, from_type: str, from_id: str, to_type: str, to_id: str, type_id: int) -> bool:
    """Write the association and its inverse (HubSpot shows both sides); False if it already existed."""
    key, record = association(from_type, from_id, to_type, to_id, type_id)
    if key in rows(ctx, "crm.associations"):
        return False
    create(ctx, "crm.associations", key, record)
    inv_key, inv = association(to_type, to_id, from_type, from_id, INVERSE[type_id])
    if inv_key not in rows(ctx, "crm.associations"):
        create(ctx, "crm.associations", inv_key, inv)
    return True


def batch_create(ctx: Ctx, a: CreateArgs) -> ToolOutcome:
    table = _table(a.objectType)
    planned: list[dict[str, str]] = []
    emails: set[str] = set()
    for item in a.inputs:  # check the whole batch first: it is created in full or not at all
        props = item.properties.given()
        if a.objectType == "contacts":
            email = props.get("email", "")
            if "@" not in email:
                raise ToolError("400 Bad Request: a contact needs a valid email")
            existing = _email_owner(ctx, email)
            if existing is not None or email.lower() in emails:
                raise ToolError(f"409 Conflict: Contact already exists. Existing ID: {existing or 'in this batch'}")
            emails.add(email.lower())
        if a.objectType == "deals" and not (props.get("dealname") and props.get("dealstage")):
            raise ToolError("400 Bad Request: a deal needs dealname and dealstage")
        if a.objectType == "companies" and not props.get("name"):
            raise ToolError("400 Bad Request: a company needs a name")
        merged = _merge(ctx, a.objectType, {}, props)
        for assoc in item.associations:
            for t in assoc.types:
                _check_association(ctx, a.objectType, _to_type(assoc.to.id, t.associationTypeId, a.objectType),
                                   assoc.to.id, t.associationTypeId)  # fmt: skip
        planned.append(merged)
    at = now_iso(ctx)
    out = []
    for item, props in zip(a.inputs, planned, strict=True):
        key, n = next_key(ctx, table)
        out.append(_view(create(ctx, table, key, crm_object(key, props, at), n), None))
        for assoc in item.associations:
            for t in assoc.types:
                to_type = _to_type(assoc.to.id, t.associationTypeId, a.objectType)
                _associate(ctx, a.objectType, key, to_type, assoc.to.id, t.associationTypeId)
    return done({"status": "COMPLETE", "results": out})


def _to_type(to_id: str, type_id: int, from_type: str) -> str:
    """The object type an association type id points to from ``from_type`` (ids are unique per pair)."""
    for (f, t), types in ASSOCIATION_TYPES.items():
        if f == from_type and type_id in types:
            return t
    raise ToolError(f"400 Bad Request: association type {type_id} is not defined from {from_type}")


def batch_update(ctx: Ctx, a: UpdateArgs) -> ToolOutcome:
    table = _table(a.objectType)
    planned: list[tuple[str, Record, dict[str, str], list[str]]] = []
    for item in a.inputs:
        record = get(ctx, table, item.id, a.objectType[:-1])
        props = item.properties.given()
        if a.objectType == "contacts" and "email" in props:
            holder = _email_owner(ctx, props["email"])
            if holder is not None and holder != item.id:
                raise ToolError(f"409 Conflict: the email is already used by contact {holder}")
        merged = _merge(ctx, a.objectType, record["properties"], props)
        changed = sorted(k for k in merged if merged[k] != record["properties"].get(k))
        planned.append((item.id, record, merged, changed))
    at = now_iso(ctx)
    out = []
    for key, record, merged, changed in planned:
        if changed:
            record = update(ctx, table, key, {**record, "properties": merged, "updatedAt": at}, changed)
        out.append(_view(record, None))
    return done({"status": "COMPLETE", "results": out})


def create_associations(ctx: Ctx, a: AssocCreateArgs) -> ToolOutcome:
    for item in a.inputs:
        get(ctx, _table(a.fromObjectType), item.from_.id, a.fromObjectType[:-1])
        for t in item.types:
            _check_association(ctx, a.fromObjectType, a.toObjectType, item.to.id, t.associationTypeId)
    made = 0
    for item in a.inputs:
        for t in item.types:
            made += _associate(ctx, a.fromObjectType, item.from_.id, a.toObjectType, item.to.id, t.associationTypeId)
    return done({"status": "COMPLETE", "created": made,
                 "results": [{"from": {"id": i.from_.id}, "to": {"id": i.to.id},
                              "types": [t.associationTypeId for t in i.types]} for i in a.inputs]})  # fmt: skip


def list_associations(ctx: Ctx, a: AssocListArgs) -> ToolOutcome:
    get(ctx, _table(a.objectType), a.objectId, a.objectType[:-1])
    found: dict[str, list[dict[str, Any]]] = {}
    for r in rows(ctx, "crm.associations").values():
        if r["fromObjectType"] == a.objectType and r["fromId"] == a.objectId and r["toObjectType"] == a.toObjectType:
            label = ASSOCIATION_TYPES[(a.objectType, a.toObjectType)][r["associationTypeId"]]
            found.setdefault(r["toId"], []).append({"category": "HUBSPOT_DEFINED", "typeId": r["associationTypeId"],
                                                    "label": None if label == "Unlabeled" else label})  # fmt: skip
    return done({"results": [{"toObjectId": k, "associationTypes": v} for k, v in found.items()][:MAX_PAGE]})


def association_definitions(ctx: Ctx, a: AssocDefArgs) -> ToolOutcome:
    types = ASSOCIATION_TYPES.get((a.fromObjectType, a.toObjectType), {})
    return done({"results": [{"category": "HUBSPOT_DEFINED", "typeId": k, "label": None if v == "Unlabeled" else v}
                             for k, v in types.items()]})  # fmt: skip


ENGAGEMENT_TABLE = {"NOTE": "notes", "TASK": "tasks", "MEETING": "meetings"}


def create_engagement(ctx: Ctx, a: EngagementArgs) -> ToolOutcome:
    m, obj = a.metadata, ENGAGEMENT_TABLE[a.type]
    owner = str(a.ownerId)
    if owner not in rows(ctx, "crm.owners"):
        raise ToolError(f"400 Bad Request: {owner} is not an owner id (see hubspot-list-owners)")
    if parse_iso(m.timestamp) is None:
        raise ToolError("400 Bad Request: metadata.timestamp must be an ISO 8601 time")
    targets = [("contacts", str(i)) for i in a.associations.contactIds] + \
              [("companies", str(i)) for i in a.associations.companyIds] + \
              [("deals", str(i)) for i in a.associations.dealIds]  # fmt: skip
    if not targets:
        raise ToolError("400 Bad Request: an engagement must be associated to at least one contact, company or deal")
    for to_type, to_id in targets:
        _check_association(ctx, obj, to_type, to_id, DEFAULT_TYPE[(obj, to_type)])
    props: dict[str, str] = {"hs_timestamp": _normal(m.timestamp), "hubspot_owner_id": owner}
    if a.type == "NOTE":
        if not m.body:
            raise ToolError("400 Bad Request: a NOTE needs metadata.body")
        props["hs_note_body"] = m.body
    elif a.type == "TASK":
        if not m.subject:
            raise ToolError("400 Bad Request: a TASK needs metadata.subject")
        props.update({"hs_task_subject": m.subject, "hs_task_body": m.body or "",
                      "hs_task_status": m.status or "NOT_STARTED", "hs_task_type": m.taskType or "TODO",
                      "hs_task_priority": m.priority or "MEDIUM"})  # fmt: skip
    else:
        start, end = parse_iso(m.startTime or ""), parse_iso(m.endTime or "")
        if not m.title or start is None or end is None or end <= start:
            raise ToolError("400 Bad Request: a MEETING needs metadata.title and ISO startTime < endTime")
        props.update({"hs_meeting_title": m.title, "hs_meeting_body": m.body or "", "hs_meeting_start_time":
                      _normal(m.startTime or ""), "hs_meeting_end_time": _normal(m.endTime or ""),
                      "hs_meeting_outcome": m.outcome or "SCHEDULED"})  # fmt: skip
    table = _table(obj)
    key, n = next_key(ctx, table)
    record = create(ctx, table, key, crm_object(key, props, now_iso(ctx)), n)
    for to_type, to_id in targets:
        _associate(ctx, obj, key, to_type, to_id, DEFAULT_TYPE[(obj, to_type)])
    return done({"engagement": {"id": int(key), "type": a.type, "ownerId": a.ownerId},
                 "associations": a.associations.model_dump(), "metadata": m.model_dump(exclude_none=True),
                 "object": _view(record, None)})  # fmt: skip


def _normal(text: str) -> str:
    moment = parse_iso(text)
    return text if moment is None else iso(moment)


def list_pipelines(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"results": list(rows(ctx, "crm.pipelines").values())})


def list_owners(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"results": list(rows(ctx, "crm.owners").values())})


def list_properties(ctx: Ctx, a: TypeArgs) -> ToolOutcome:
    out = []
    for name, (kind, options) in PROPERTIES[a.objectType].items():
        item: dict[str, Any] = {"name": name, "type": kind}
        if options is not None:
            item["options"] = [{"label": o.replace("_", " ").title(), "value": o} for o in options]
        out.append(item)
    return done({"results": out})


def user_details(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"hubId": 4_410_000 + ctx.world.seed % 1000, "portalType": "SANDBOX", "user": "sales-ops@sandbox",
                 "scopes": ["crm.objects.contacts.read", "crm.objects.contacts.write", "crm.objects.companies.write",
                            "crm.objects.deals.write", "crm.objects.owners.read"]})  # fmt: skip


def _spec(name: str, description: str, args: type[ToolArgs], handler: Any, writes: bool,
          failures: tuple[str, ...] = (), *, output: type[BaseModel]) -> ToolSpec[Any, Ctx]:  # fmt: skip
    return ToolSpec(name, description, args, handler, "1 minute", writes=writes, failure_modes=failures,
                    output=output)


TOOLS: list[ToolSpec[Any, Ctx]] = [
    _spec("hubspot-get-user-details", "The CRM account and token scopes this session acts with.", NoArgs,
          user_details, False, output=outputs.UserDetails),
    _spec("hubspot-list-objects", "List CRM records of one object type (contacts, companies, deals, notes, tasks, "
          "meetings), in creation order, with paging.", ListArgs, list_objects, False, output=outputs.ListedObjects),
    _spec("hubspot-search-objects", "Search CRM records with filterGroups (OR between groups, AND inside one; "
          "operators EQ, NEQ, LT, LTE, GT, GTE, HAS_PROPERTY, NOT_HAS_PROPERTY, CONTAINS_TOKEN, IN, NOT_IN; EQ is "
          "case-insensitive), sorts and paging.", SearchArgs, search_objects, False,
          ("unknown property", "more than 25 filters"), output=outputs.FoundObjects),
    _spec("hubspot-batch-read-objects", "Read CRM records by id; unknown ids come back under errors.", ReadArgs,
          batch_read, False, output=outputs.BatchRead),
    _spec("hubspot-batch-create-objects", "Create contacts, companies or deals with properties and associations; "
          "the batch is created in full or not at all.", CreateArgs, batch_create, True,
          ("409 duplicate contact email", "deal stage not in its pipeline", "invalid option", "unknown owner",
           "association type not defined for the pair"), output=outputs.Batch),
    _spec("hubspot-batch-update-objects", "Update properties of contacts, companies or deals by id; the platform's "
          "rules apply (a lifecycle stage never moves backwards unless cleared first with '').", UpdateArgs,
          batch_update, True, ("409 email in use", "deal stage not in its pipeline", "closed-won without closedate"),
          output=outputs.Batch),
    _spec("hubspot-batch-create-associations", "Associate records (v4, HUBSPOT_DEFINED type ids); the inverse "
          "association appears on the other record.", AssocCreateArgs, create_associations, True,
          ("association type not defined for the pair", "unknown record"), output=outputs.AssociationsCreated),
    _spec("hubspot-list-associations", "The records one record is associated to, with type ids and labels.",
          AssocListArgs, list_associations, False, output=outputs.Associations),
    _spec("hubspot-get-association-definitions", "The association type ids defined from one object type to "
          "another.", AssocDefArgs, association_definitions, False, output=outputs.AssociationDefinitions),
    _spec("hubspot-create-engagement", "Log a NOTE, TASK or MEETING owned by an owner and associated to contacts, "
          "companies or deals (metadata.timestamp is required).", EngagementArgs, create_engagement, True,
          ("no association", "unknown owner", "missing body, subject or meeting times"),
          output=outputs.EngagementCreated),
    _spec("hubspot-list-pipelines", "Deal pipelines with their stages' internal ids, labels, probability and "
          "isClosed.", NoArgs, list_pipelines, False, output=outputs.Results),
    _spec("hubspot-list-owners", "CRM owners (use 'id' to assign an owner), with their teams.", NoArgs,
          list_owners, False, output=outputs.Results),
    _spec("hubspot-list-properties", "The properties of an object type, with types and enumeration options.",
          TypeArgs, list_properties, False, output=outputs.Results),
]  # fmt: skip
TABLES = ("crm.contacts", "crm.companies", "crm.deals", "crm.notes", "crm.tasks", "crm.meetings",
          "crm.associations", "crm.pipelines", "crm.owners")  # fmt: skip
