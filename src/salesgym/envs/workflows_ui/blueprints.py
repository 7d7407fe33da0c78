"""UI-level blueprints: each tool call of a template's reference solution as the actions a person takes on the
apps' pages (one macro per tool), so every template's steps name their UI actions without editing a template.

A macro turns one resolved tool call into :class:`UIWrite` units: the browser actions that submit one form
(``goto`` a page, ``fill`` and ``select`` fields, ``check`` boxes, ``click`` a button, each naming an element by
its HTML id) and the tool call that form makes. A batch call becomes one form per record (a person edits one
contact at a time); a read becomes a page visit and no call. ``ui_steps(template)`` shows a template's steps in
words (``salesgym.envs.workflows_ui.blueprints.describe``); the reference UI agent
(``agents/workflows_ui/reference.py``) plays them through the browser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal
from urllib.parse import urlencode

from salesgym.envs.workflows.apps.crm import DEFAULT_TYPE
from salesgym.envs.workflows.contract import parse_iso
from salesgym.webapps.origins import TEST_DOMAIN

Kind = Literal["goto", "fill", "select", "check", "click"]
Lookup = Callable[[str, Mapping[str, Any]], dict[str, Any]]  # a read tool's output, now (operator side)


@dataclass(frozen=True)
class UIAction:
    """One thing a person does: open a page, type in a field, choose an option, tick a box, press a button."""

    kind: Kind
    target: str  # a URL for goto, else the element's HTML id
    value: Any = ""
    note: str = ""

    def words(self) -> str:
        if self.note:
            return self.note
        return {"goto": f"open {self.target}", "fill": f"type {self.value!r} in {self.target}",
                "select": f"choose {self.value!r} in {self.target}", "check": f"tick {self.target}",
                "click": f"press {self.target}"}[self.kind]  # fmt: skip


@dataclass(frozen=True)
class UIWrite:
    """The actions of one form and the tool call it submits (None: a page visited to read it)."""

    actions: tuple[UIAction, ...]
    call: dict[str, Any] | None = None
    merge: str = ""  # how the tool's output is made from this form's and the batch's others: "results", ""


@dataclass
class Macro:
    app: str
    build: Callable[[Mapping[str, Any], Lookup], list[UIWrite]]
    reads: bool = False


def url(app: str, path: str) -> str:
    return f"http://{app}.{TEST_DOMAIN}{path}"


def go(app: str, path: str, note: str = "") -> UIAction:
    return UIAction("goto", url(app, path), note=note)


def _form(fields: Mapping[str, Any], selects: Sequence[str] = ()) -> list[UIAction]:
    out = []
    for name, value in fields.items():
        if value is None:
            continue
        kind: Kind = "select" if name in selects else "fill"
        out.append(UIAction(kind, f"f-{name}", str(value)))
    return out


# --- crm ----------------------------------------------------------------------------------------------------------
CRM_SELECTS = ("lifecyclestage", "hs_lead_status", "hubspot_owner_id", "industry", "dealstage", "pipeline",
               "ownerId", "status", "taskType", "priority", "outcome", "toId", "associationTypeId", "toObjectType",
               "assoc_companies", "assoc_contacts", "assoc_deals")  # fmt: skip
RELATED = {"contacts": ("companies", "deals"), "companies": ("contacts", "deals"), "deals": ("contacts", "companies")}


def crm_update(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    kind = a["objectType"]
    return [UIWrite((go("crm", f"/{kind}/{i['id']}/edit", f"open the {kind[:-1]} {i['id']} and press Edit"),
                     *_form(i["properties"], CRM_SELECTS), UIAction("click", "btn-save", note="press Save")),
                    _edit_call(kind, i, look), "results")
            for i in a["inputs"]]  # fmt: skip


def _edit_call(kind: str, update: Mapping[str, Any], look: Lookup) -> dict[str, Any] | None:
    """The call the edit form makes: like the product's, it sends only the properties the person changed (a value
    set to what the record holds is no edit), and none at all when nothing changed ("Nothing changed.")."""
    props = dict(update["properties"])
    found = look("hubspot-batch-read-objects", {"objectType": kind, "inputs": [{"id": update["id"]}],
                                                "properties": sorted(props)}).get("results") or []  # fmt: skip
    now = found[0]["properties"] if found else {}
    changed = {k: v for k, v in props.items() if v is not None and str(v) != str(now.get(k) or "")}
    if not changed:
        return None
    return {"tool": "hubspot-batch-update-objects",
            "args": {"objectType": kind, "inputs": [{**update, "properties": changed}]}}


def crm_create(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    kind = a["objectType"]
    out = []
    for item in a["inputs"]:
        actions = [go("crm", f"/{kind}/new", f"open {kind} and press Create"), *_form(item["properties"],
                                                                                     CRM_SELECTS)]
        for assoc in item.get("associations", []):
            to_id, type_id = assoc["to"]["id"], assoc["types"][0]["associationTypeId"]
            to_type = next(t for t in RELATED[kind] if DEFAULT_TYPE[(kind, t)] == type_id)
            actions.append(UIAction("select", f"f-assoc_{to_type}", str(to_id),
                                    f"associate the {to_type[:-1]} {to_id}"))  # fmt: skip
        actions.append(UIAction("click", "btn-save", note="press Save"))
        out.append(UIWrite(tuple(actions), {"tool": "hubspot-batch-create-objects",
                                            "args": {"objectType": kind, "inputs": [item]}}, "results"))
    return out


ENGAGEMENT_PAGE = {"NOTE": "note", "TASK": "task", "MEETING": "meeting"}
ID_LISTS = {"contacts": "contactIds", "companies": "companyIds", "deals": "dealIds"}


def _listed(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, list | tuple) else [value]
METADATA_FIELDS = ("timestamp", "body", "subject", "status", "taskType", "priority", "title", "startTime",
                   "endTime", "outcome")  # fmt: skip


def crm_engagement(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    linked = {t: [str(i) for i in _listed(a["associations"].get(key))] for t, key in ID_LISTS.items()}
    home = next((t, ids[0]) for t, ids in linked.items() if ids)
    actions = [go("crm", f"/{home[0]}/{home[1]}/{ENGAGEMENT_PAGE[a['type']]}",
                  f"open the {home[0][:-1]} {home[1]} and log a {a['type'].lower()}"),
               UIAction("select", "f-ownerId", str(a["ownerId"]))]  # fmt: skip
    actions += _form({k: a["metadata"].get(k) for k in METADATA_FIELDS}, CRM_SELECTS)
    for t, ids in linked.items():
        actions += [UIAction("check", f"f-{t}-{i}", note=f"associate the {t[:-1]} {i}") for i in ids
                    if (t, i) != home]  # fmt: skip
    actions.append(UIAction("click", "btn-save", note="press Save"))
    return [UIWrite(tuple(actions), {"tool": "hubspot-create-engagement", "args": dict(a)})]


def crm_associate(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    src, dst = a["fromObjectType"], a["toObjectType"]
    out = []
    for item in a["inputs"]:
        actions = (go("crm", f"/{src}/{item['from']['id']}/associate?to={dst}", f"open the {src[:-1]} and press "
                      "Associate"), UIAction("select", "f-toId", str(item["to"]["id"])),
                   UIAction("select", "f-associationTypeId", str(item["types"][0]["associationTypeId"])),
                   UIAction("click", "btn-save", note="press Save"))  # fmt: skip
        out.append(UIWrite(actions, {"tool": "hubspot-batch-create-associations", "args": {
            "fromObjectType": src, "toObjectType": dst, "inputs": [item]}}, "results"))
    return out


def crm_read(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    kind = a.get("objectType", "contacts")
    filters = [f for g in a.get("filterGroups", []) for f in g.get("filters", [])]
    query = next((str(f.get("value", "")) for f in filters if f.get("value")), "")
    path = f"/{kind}" + ("?" + urlencode({"q": query}) if query and kind in ("contacts", "companies", "deals") else "")
    if kind not in ("contacts", "companies", "deals"):
        path = "/contacts"
    return [UIWrite((go("crm", path, f"look through {kind}"),))]


# --- sequencer ----------------------------------------------------------------------------------------------------
SEQ_SELECTS = ("accountId", "ownerId", "mailboxId", "action")


def _prospect_fields(attrs: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in attrs.items() if k not in ("emails", "tags")}
    for name in ("emails", "tags"):
        if name in attrs:
            out[name] = ", ".join(attrs[name])
    return out


def prospect_create(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    fields = {**_prospect_fields(a["attrs"]), "accountId": a.get("accountId"), "ownerId": a.get("ownerId")}
    return [UIWrite((go("sequencer", "/prospects/new", "open Prospects and press Create"), *_form(fields, SEQ_SELECTS),
                     UIAction("click", "btn-save", note="press Save")), {"tool": "prospect_create", "args": dict(a)})]


def prospect_update(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    fields = {**_prospect_fields(a.get("attrs", {})), "accountId": a.get("accountId")}
    return [UIWrite((go("sequencer", f"/prospects/{a['id']}/edit", "open the prospect and press Edit"),
                     *_form(fields, SEQ_SELECTS), UIAction("click", "btn-save", note="press Save")),
                    {"tool": "prospect_update", "args": dict(a)})]  # fmt: skip


def account_create(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    return [UIWrite((go("sequencer", "/accounts/new", "open Accounts and press Create"), *_form(a),
                     UIAction("click", "btn-save", note="press Save")), {"tool": "account_create", "args": dict(a)})]


def enrol(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    actions = [go("sequencer", f"/sequences/{a['sequenceId']}/add", "open the sequence and press Add prospects")]
    actions += [UIAction("check", f"sel-{p}", note=f"tick prospect {p}") for p in _listed(a["prospectIds"])]
    actions += [UIAction("select", "f-mailboxId", str(a["mailboxId"]), "choose the mailbox"),
                UIAction("click", "btn-enroll", note="press Add to sequence")]
    return [UIWrite(tuple(actions), {"tool": "sequence_add_prospects", "args": dict(a)})]


def finish_state(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    states = look("sequence_state_search", {})["data"]
    state = next((s for s in states if str(s["id"]) == str(a["id"])), None)
    sequence = state["relationships"]["sequence"]["data"]["id"] if state else "{sequence}"
    visit = go("sequencer", f"/sequences/{sequence}", "open the sequence")
    if state is not None and state["attributes"]["state"] == "finished":  # finished already: no button, nothing to do
        return [UIWrite((visit,))]
    return [UIWrite((visit, UIAction("click", f"finish-{a['id']}", note="press Finish on the prospect's state")),
                    {"tool": "sequence_state_finish", "args": dict(a)})]  # fmt: skip


def seq_task(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    fields = {"action": a["action"], "dueAt": a["dueAt"], "note": a.get("note", "")}
    return [UIWrite((go("sequencer", f"/prospects/{a['prospectId']}/task", "open the prospect and press New task"),
                     *_form(fields, SEQ_SELECTS), UIAction("click", "btn-save", note="press Save")),
                    {"tool": "task_create", "args": dict(a)})]  # fmt: skip


def seq_read(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    if a.get("prospectId"):
        return [UIWrite((go("sequencer", f"/prospects/{a['prospectId']}", "open the prospect"),))]
    if a.get("email"):
        search = "/prospects?" + urlencode({"email": a["email"]})
        return [UIWrite((go("sequencer", search, "search prospects by email"),))]
    return [UIWrite((go("sequencer", "/sequences", "look through the sequences"),))]


# --- scheduler ----------------------------------------------------------------------------------------------------
def _uuid(uri: Any) -> str:
    return str(uri).rstrip("/").rsplit("/", 1)[-1]


def book(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    key, start = _uuid(a["event_type"]), str(a["start_time"])
    moment = parse_iso(start)
    monday = (moment - timedelta(days=moment.weekday())).date().isoformat() if moment else "{week}"
    slot = moment.strftime("%Y%m%dT%H%M") if moment else "{slot}"
    fields = {"name": a["invitee"]["name"], "email": a["invitee"]["email"], "timezone": a["invitee"]["timezone"]}
    if a.get("location"):
        fields["location"] = a["location"]["kind"]
    actions = (go("scheduler", f"/event-types/{key}?week={monday}", "open the event type at the week"),
               UIAction("click", f"slot-{slot}", note=f"pick the slot {start}"), *_form(fields, ("location",)),
               UIAction("click", "btn-book", note="press Schedule event"))  # fmt: skip
    return [UIWrite(actions, {"tool": "meetings-create_invitee", "args": dict(a)})]


def cancel(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    key = _uuid(a["uuid"])
    return [UIWrite((go("scheduler", f"/events/{key}", "open the event"), UIAction("fill", "f-reason", a["reason"]),
                     UIAction("click", "btn-cancel", note="press Cancel event")),
                    {"tool": "meetings-cancel_event", "args": dict(a)})]  # fmt: skip


def single_use_link(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    key = _uuid(a["owner"])
    return [UIWrite((go("scheduler", f"/event-types/{key}", "open the event type"),
                     UIAction("click", "btn-single-use-link", note="press Create single-use link")),
                    {"tool": "scheduling_links-create_single_use_scheduling_link", "args": dict(a)})]  # fmt: skip


def no_show(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    parts = str(a["invitee"]).rstrip("/").split("/")
    event, invitee = (parts[-3], parts[-1]) if len(parts) >= 3 else ("{event}", "{invitee}")
    return [UIWrite((go("scheduler", f"/events/{event}", "open the event"),
                     UIAction("click", f"no-show-{invitee}", note="press Mark as no-show")),
                    {"tool": "invitee_no_shows-create", "args": dict(a)})]  # fmt: skip


def sched_read(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    if a.get("event_type"):
        return [UIWrite((go("scheduler", f"/event-types/{_uuid(a['event_type'])}", "open the event type"),))]
    if a.get("uuid"):
        return [UIWrite((go("scheduler", f"/events/{_uuid(a['uuid'])}", "open the event"),))]
    tab = "canceled" if a.get("status") == "canceled" else "upcoming"
    return [UIWrite((go("scheduler", f"/events?tab={tab}", "look through the scheduled events"),))]


# --- prospecting --------------------------------------------------------------------------------------------------
def save_lead(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    return [UIWrite((go("prospecting", f"/leads/{a['lead_id']}", "open the lead's profile"),
                     UIAction("select", "f-list_id", str(a["list_id"])),
                     UIAction("click", "btn-save_lead", note="press Save to list")),
                    {"tool": "save_lead", "args": dict(a)})]  # fmt: skip


def inmail(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    lead = str(a["recipient_urn"]).rsplit(":", 1)[-1]
    return [UIWrite((go("prospecting", f"/leads/{lead}/inmail", "open the lead and press Message"),
                     UIAction("fill", "f-subject", a["subject"]), UIAction("fill", "f-body", a["body"]),
                     UIAction("click", "btn-send", note="press Send")), {"tool": "send_inmail", "args": dict(a)})]


def lead_search(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    params: list[tuple[str, str]] = []
    for name in ("keywords", "title"):
        if a.get(name):
            params.append((name, str(a[name])))
    for name in ("company", "geography"):
        if a.get(name):
            params.append((name, ", ".join(a[name])))
    for name, key in (("industry", "industry"), ("seniority_level", "seniority"), ("function_area", "function")):
        params += [(key, v) for v in a.get(name) or []]
    if a.get("changed_jobs"):
        params.append(("changed_jobs", "1"))
    return [UIWrite((go("prospecting", "/leads?" + urlencode(params), "search leads with the filters"),))]


def pros_read(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    if a.get("lead_id"):
        return [UIWrite((go("prospecting", f"/leads/{a['lead_id']}", "open the lead's profile"),))]
    if a.get("list_id"):
        return [UIWrite((go("prospecting", f"/lists/{a['list_id']}", "open the lead list"),))]
    if (a.get("keywords") is not None and "headcount" in a) or a.get("account_id"):
        return [UIWrite((go("prospecting", f"/accounts/{a.get('account_id', '')}", "open the account"),))]
    if a.get("keywords"):
        return [UIWrite((go("prospecting", "/accounts?" + urlencode({"keywords": a["keywords"]}), "search accounts"),))]
    return [UIWrite((go("prospecting", "/messages", "open Sent InMails"),))]


# --- task desk ----------------------------------------------------------------------------------------------------
def ask(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    return [UIWrite((go("task", "/", "open the task desk"), UIAction("fill", "f-question", a["question"]),
                     UIAction("click", "btn-ask", note="press Ask")), {"tool": "ask_requester", "args": dict(a)})]


def reply(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    m = a["message_id"]
    return [UIWrite((go("task", "/", "open the task desk's inbox"), UIAction("fill", f"f-text-{m}", a["text"]),
                     UIAction("click", f"btn-reply-{m}", note="press Reply")),
                    {"tool": "reply_message", "args": dict(a)})]  # fmt: skip


def finish(a: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    return [UIWrite((go("task", "/", "open the task desk"), UIAction("fill", "f-summary", a.get("summary", "")),
                     UIAction("click", "btn-finish_task", note="press Mark the task done")),
                    {"tool": "finish_task", "args": dict(a)})]  # fmt: skip


MACROS: dict[str, Macro] = {
    "hubspot-batch-update-objects": Macro("crm", crm_update),
    "hubspot-batch-create-objects": Macro("crm", crm_create),
    "hubspot-create-engagement": Macro("crm", crm_engagement),
    "hubspot-batch-create-associations": Macro("crm", crm_associate),
    "prospect_create": Macro("sequencer", prospect_create),
    "prospect_update": Macro("sequencer", prospect_update),
    "account_create": Macro("sequencer", account_create),
    "sequence_add_prospects": Macro("sequencer", enrol),
    "sequence_state_finish": Macro("sequencer", finish_state),
    "task_create": Macro("sequencer", seq_task),
    "meetings-create_invitee": Macro("scheduler", book),
    "meetings-cancel_event": Macro("scheduler", cancel),
    "scheduling_links-create_single_use_scheduling_link": Macro("scheduler", single_use_link),
    "invitee_no_shows-create": Macro("scheduler", no_show),
    "save_lead": Macro("prospecting", save_lead),
    "send_inmail": Macro("prospecting", inmail),
    "ask_requester": Macro("task", ask),
    "reply_message": Macro("task", reply),
    "finish_task": Macro("task", finish),
}
READS: dict[str, Macro] = {
    **{t: Macro("crm", crm_read, True) for t in (
        "hubspot-get-user-details", "hubspot-list-objects", "hubspot-search-objects", "hubspot-batch-read-objects",
        "hubspot-list-associations", "hubspot-get-association-definitions", "hubspot-list-pipelines",
        "hubspot-list-owners", "hubspot-list-properties")},
    **{t: Macro("sequencer", seq_read, True) for t in (
        "current_user", "mailbox_search", "prospect_search", "prospect_get_by_id", "account_search", "sequence_search",
        "sequence_state_search", "emails_search")},
    **{t: Macro("scheduler", sched_read, True) for t in (
        "users-get_current_user", "event_types-list_event_types", "event_types-get_event_type",
        "event_types-list_event_type_available_times", "availability-list_user_busy_times", "meetings-list_events",
        "meetings-get_event", "meetings-list_event_invitees")},
    "sales_search_leads": Macro("prospecting", lead_search, True),
    **{t: Macro("prospecting", pros_read, True) for t in (
        "sales_search_accounts", "get_sales_profile", "get_account", "get_lead_lists", "get_lead_list_members",
        "get_inmail_credits", "get_conversations")},
}  # fmt: skip


def writes_of(call: Mapping[str, Any], look: Lookup) -> list[UIWrite]:
    """The forms (and page visits) of one resolved tool call."""
    tool = call["tool"]
    macro = MACROS.get(tool) or READS.get(tool)
    if macro is None:
        raise KeyError(f"no UI macro for {tool!r}")
    return macro.build(call.get("args", {}), look)


def merged(call: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]], parts: Sequence[UIWrite]) -> dict[str, Any]:
    """The tool's output for ``call`` made from its forms' outputs (a batch's results, in order)."""
    if not outputs:
        return {}
    if len(outputs) == 1:
        return dict(outputs[0])
    if parts and all(p.merge == "results" for p in parts):
        results = [r for out in outputs for r in out.get("results", [])]
        return {**dict(outputs[0]), "results": results}
    return dict(outputs[-1]) if outputs else {}


@dataclass
class Placeholders:
    """Stands in for an instance when a template's steps are shown in words (``describe``)."""

    seen: list[str] = field(default_factory=list)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"$p"}:
                return "{" + value["$p"] + "}"
            if set(value) == {"$f"}:
                return value["$f"]
            if set(value) == {"$out"}:
                return "{output of call " + str(value["$out"][0] + 1) + "}"
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.resolve(v) for v in value]
        return value


def describe(template: Any) -> list[str]:
    """A template's UI steps in words: each reference-solution call, then the actions a person takes for it."""
    marks = Placeholders()
    lines = []
    for n, call in enumerate(template.solution, 1):
        resolved = marks.resolve(dict(call))
        if isinstance(resolved.get("args", {}).get("inputs"), str):  # a whole batch given as one parameter
            resolved["args"]["inputs"] = [{"id": "{each record}", "properties": {"...": "{its new values}"}}]
        if isinstance(resolved.get("args", {}).get("prospectIds"), str):
            resolved["args"]["prospectIds"] = [resolved["args"]["prospectIds"]]
        lines.append(f"{n}. {call['tool']}")
        for part in writes_of(resolved, lambda tool, args: {"data": []}):
            lines += [f"   - {a.words()}" for a in part.actions]
    return lines
