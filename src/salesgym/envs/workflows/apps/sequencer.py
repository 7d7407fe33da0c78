"""The sequencer replica, shaped like Outreach's REST API v2 (JSON:API resources: ``type``, ``id``,
``attributes``, ``relationships``), with the tool names of Outreach's official MCP server where it has one.

An independent implementation for offline evaluation: no Outreach code or data. Rules enforced here:

- a prospect's email is unique (422, as Outreach answers "email has already been taken"); there is no upsert;
- a prospect is never re-added to a sequence it has already been in (any state, finished included) unless
  the sequence's ruleset permits duplicates;
- a prospect opted out of email is refused by a sequence with email steps unless the ruleset allows it;
- a prospect active in an exclusive sequence joins no other, and an exclusive sequence takes no prospect
  active elsewhere;
- the sequence must be enabled; the mailbox's user must be unlocked and allowed to use the sequence;
- finishing a sequence state keeps it (it is not a delete) and is idempotent.

``sequence_add_prospects`` answers like the MCP batch tools: ``{batch: {state, total, failures}}``, adding the
eligible prospects; a batch in which no prospect can be added is refused as a whole.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows import outputs
from salesgym.envs.workflows.apps.common import Ctx, create, done, get, next_key, now_iso, rows, update
from salesgym.envs.workflows.contract import MAX_BATCH, MAX_PAGE, MAX_TEXT, parse_iso
from salesgym.envs.workflows.state import Record

Text = Annotated[str, StringConstraints(max_length=200)]


# --- records and lookups ----------------------------------------------------------------------------------------
def ref(kind: str, n: int | None) -> dict[str, Any]:
    return {"data": None if n is None else {"type": kind, "id": n}}


def resource(kind: str, n: int, attributes: dict[str, Any], **relationships: dict[str, Any]) -> Record:
    out: Record = {"type": kind, "id": n, "attributes": attributes}
    if relationships:
        out["relationships"] = relationships
    return out


def _rel(record: Record, name: str) -> int | None:
    data = record.get("relationships", {}).get(name, {}).get("data")
    return None if data is None else int(data["id"])


def _prospect_by_email(ctx: Ctx, email: str) -> Record | None:
    low = email.lower()
    return next((p for p in rows(ctx, "sequencer.prospects").values()
                 if low in (e.lower() for e in p["attributes"]["emails"])), None)  # fmt: skip


def _states(ctx: Ctx) -> list[Record]:
    return list(rows(ctx, "sequencer.sequence_states").values())


# --- argument models --------------------------------------------------------------------------------------------
class NoArgs(ToolArgs):
    pass


class MailboxSearchArgs(ToolArgs):
    email: Text | None = None
    userId: int | None = Field(None, ge=1, le=10**9)


class ProspectSearchArgs(ToolArgs):
    email: Text | None = Field(None, description="exact email (case-insensitive)")
    tag: Text | None = Field(None, description="prospects carrying this tag")
    accountId: int | None = Field(None, ge=1, le=10**9)
    name: Text | None = Field(None, description="part of the first or last name")
    limit: int = Field(20, ge=1, le=MAX_PAGE)
    offset: int = Field(0, ge=0, le=10_000)


class IdArgs(ToolArgs):
    id: int = Field(ge=1, le=10**9)


class ProspectAttrs(ToolArgs):
    emails: list[Text] | None = Field(None, max_length=3)
    firstName: Text | None = None
    lastName: Text | None = None
    title: Text | None = None
    company: Text | None = None
    tags: list[Text] | None = Field(None, max_length=10)


class ProspectCreateArgs(ToolArgs):
    attrs: ProspectAttrs
    accountId: int | None = Field(None, ge=1, le=10**9, description="the prospect's account (a to-one relationship)")
    ownerId: int | None = Field(None, ge=1, le=10**9, description="the owning user's id")


class ProspectUpdateArgs(ToolArgs):
    id: int = Field(ge=1, le=10**9)
    attrs: ProspectAttrs
    accountId: int | None = Field(None, ge=1, le=10**9)


class AccountSearchArgs(ToolArgs):
    name: Text | None = None
    domain: Text | None = None


class AccountCreateArgs(ToolArgs):
    name: Text = Field(min_length=1)
    domain: Text | None = None
    industry: Text | None = None


class SequenceSearchArgs(ToolArgs):
    name: Text | None = Field(None, description="part of the sequence name")


class AddArgs(ToolArgs):
    sequenceId: int = Field(ge=1, le=10**9)
    prospectIds: list[int] = Field(min_length=1, max_length=MAX_BATCH)
    mailboxId: int = Field(ge=1, le=10**9, description="the sending mailbox (mailbox_search)")


class StateSearchArgs(ToolArgs):
    prospectId: int | None = Field(None, ge=1, le=10**9)
    sequenceId: int | None = Field(None, ge=1, le=10**9)
    state: Literal["active", "pending", "finished", "paused"] | None = None


class EmailsSearchArgs(ToolArgs):
    prospectId: int | None = Field(None, ge=1, le=10**9)
    state: Literal["delivered", "opened", "replied", "bounced"] | None = None


class TaskArgs(ToolArgs):
    prospectId: int = Field(ge=1, le=10**9)
    action: Literal["action_item", "call", "email", "in_person"]
    dueAt: Text = Field(description="ISO 8601")
    note: Annotated[str, StringConstraints(max_length=MAX_TEXT)] = ""


# --- handlers ---------------------------------------------------------------------------------------------------
def current_user(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    return done({"data": next(iter(rows(ctx, "sequencer.users").values()))})


def mailbox_search(ctx: Ctx, a: MailboxSearchArgs) -> ToolOutcome:
    found = [m for m in rows(ctx, "sequencer.mailboxes").values()
             if (a.email is None or m["attributes"]["email"].lower() == a.email.lower())
             and (a.userId is None or m["attributes"]["userId"] == a.userId)]  # fmt: skip
    return done({"data": found, "meta": {"count": len(found)}})


def prospect_search(ctx: Ctx, a: ProspectSearchArgs) -> ToolOutcome:
    found = []
    for p in rows(ctx, "sequencer.prospects").values():
        at = p["attributes"]
        if a.email is not None and a.email.lower() not in (e.lower() for e in at["emails"]):
            continue
        if a.tag is not None and a.tag not in at["tags"]:
            continue
        if a.accountId is not None and _rel(p, "account") != a.accountId:
            continue
        if a.name is not None and a.name.lower() not in f"{at['firstName']} {at['lastName']}".lower():
            continue
        found.append(p)
    return done({"data": found[a.offset : a.offset + a.limit], "meta": {"count": len(found)}})


def prospect_get(ctx: Ctx, a: IdArgs) -> ToolOutcome:
    return done({"data": get(ctx, "sequencer.prospects", str(a.id), "prospect")})


def _check_attrs(ctx: Ctx, attrs: ProspectAttrs, self_id: int | None) -> None:
    for email in attrs.emails or ():
        if "@" not in email:
            raise ToolError(f"422 Unprocessable Entity: {quote(email)} is not an email address")
        holder = _prospect_by_email(ctx, email)
        if holder is not None and holder["id"] != self_id:
            raise ToolError(f"422 Unprocessable Entity: email {quote(email)} has already been taken (prospect "
                            f"{holder['id']})")  # fmt: skip


def _check_relations(ctx: Ctx, account: int | None, owner: int | None) -> None:
    if account is not None:
        get(ctx, "sequencer.accounts", str(account), "account")
    if owner is not None:
        get(ctx, "sequencer.users", str(owner), "user")


def prospect_create(ctx: Ctx, a: ProspectCreateArgs) -> ToolOutcome:
    if not a.attrs.emails:
        raise ToolError("422 Unprocessable Entity: a prospect needs at least one email")
    _check_attrs(ctx, a.attrs, None)
    _check_relations(ctx, a.accountId, a.ownerId)
    key, n = next_key(ctx, "sequencer.prospects")
    at = now_iso(ctx)
    given = a.attrs.model_dump(exclude_none=True)
    attributes = {"emails": [], "firstName": "", "lastName": "", "title": "", "company": "", "tags": [],
                  **given, "optedOut": False, "createdAt": at, "updatedAt": at}  # fmt: skip
    record = resource("prospect", int(key), attributes, account=ref("account", a.accountId),
                      owner=ref("user", a.ownerId))
    return done({"data": create(ctx, "sequencer.prospects", key, record, n)})


def prospect_update(ctx: Ctx, a: ProspectUpdateArgs) -> ToolOutcome:
    p = get(ctx, "sequencer.prospects", str(a.id), "prospect")
    _check_attrs(ctx, a.attrs, a.id)
    _check_relations(ctx, a.accountId, None)
    given = a.attrs.model_dump(exclude_none=True)
    attributes = {**p["attributes"], **given}
    changed = sorted(k for k in given if given[k] != p["attributes"].get(k))
    relationships = dict(p.get("relationships", {}))
    if a.accountId is not None and _rel(p, "account") != a.accountId:
        relationships["account"] = ref("account", a.accountId)
        changed.append("account")
    if not changed:
        return done({"data": p})
    attributes["updatedAt"] = now_iso(ctx)
    return done({"data": update(ctx, "sequencer.prospects", str(a.id),
                                {**p, "attributes": attributes, "relationships": relationships}, changed)})


def account_search(ctx: Ctx, a: AccountSearchArgs) -> ToolOutcome:
    found = [r for r in rows(ctx, "sequencer.accounts").values()
             if (a.name is None or a.name.lower() in r["attributes"]["name"].lower())
             and (a.domain is None or (r["attributes"].get("domain") or "").lower() == a.domain.lower())]  # fmt: skip
    return done({"data": found[:MAX_PAGE], "meta": {"count": len(found)}})


def account_create(ctx: Ctx, a: AccountCreateArgs) -> ToolOutcome:
    if a.domain and any((r["attributes"].get("domain") or "").lower() == a.domain.lower()
                        for r in rows(ctx, "sequencer.accounts").values()):  # fmt: skip
        raise ToolError(f"422 Unprocessable Entity: an account with domain {quote(a.domain)} already exists")
    key, n = next_key(ctx, "sequencer.accounts")
    at = now_iso(ctx)
    record = resource("account", int(key), {"name": a.name, "domain": a.domain, "industry": a.industry,
                                     "numberOfEmployees": None, "createdAt": at, "updatedAt": at})  # fmt: skip
    return done({"data": create(ctx, "sequencer.accounts", key, record, n)})


def sequence_search(ctx: Ctx, a: SequenceSearchArgs) -> ToolOutcome:
    found = [s for s in rows(ctx, "sequencer.sequences").values()
             if a.name is None or a.name.lower() in s["attributes"]["name"].lower()]  # fmt: skip
    return done({"data": found, "meta": {"count": len(found)}})


def _refusal(ctx: Ctx, seq: Record, prospect: Record) -> str | None:
    rules, pid, sid = seq["attributes"]["ruleset"], prospect["id"], seq["id"]
    states = _states(ctx)
    mine = [s for s in states if _rel(s, "prospect") == pid]
    if rules["permitDuplicateProspects"] != "allow" and any(_rel(s, "sequence") == sid for s in mine):
        return "Prospect has already been in this sequence"
    if prospect["attributes"]["optedOut"] and "email" in seq["attributes"]["stepTypes"] \
            and rules["emailOptOutAction"] != "allow":  # fmt: skip
        return "Prospect has opted out of email"
    sequences = rows(ctx, "sequencer.sequences")
    active_elsewhere = [s for s in mine if s["attributes"]["state"] in ("active", "pending", "paused")
                        and _rel(s, "sequence") != sid]  # fmt: skip
    if active_elsewhere and rules["sequenceExclusivity"] == "all_sequences":
        return "Prospect is active in another sequence and this sequence is exclusive"
    for s in active_elsewhere:
        other = sequences[str(_rel(s, "sequence"))]
        if other["attributes"]["ruleset"]["sequenceExclusivity"] == "all_sequences":
            return f"Prospect is active in the exclusive sequence {other['attributes']['name']!r}"
    return None


def add_prospects(ctx: Ctx, a: AddArgs) -> ToolOutcome:
    seq = get(ctx, "sequencer.sequences", str(a.sequenceId), "sequence")
    mailbox = get(ctx, "sequencer.mailboxes", str(a.mailboxId), "mailbox")
    user = get(ctx, "sequencer.users", str(mailbox["attributes"]["userId"]), "user")
    if not seq["attributes"]["enabled"]:
        raise ToolError("422 Unprocessable Entity: the sequence is not active")
    if user["attributes"]["locked"]:
        raise ToolError("422 Unprocessable Entity: User is locked")
    if seq["attributes"]["shareType"] == "private" and _rel(seq, "owner") != user["id"]:
        raise ToolError("422 Unprocessable Entity: User not the owner of this private sequence")
    if len(set(a.prospectIds)) != len(a.prospectIds):
        raise ToolError("400 Bad Request: a prospect is listed twice")
    failures, eligible = [], []
    for pid in a.prospectIds:
        prospect = get(ctx, "sequencer.prospects", str(pid), "prospect")
        why = _refusal(ctx, seq, prospect)
        if why is None:
            eligible.append(pid)
        else:
            failures.append({"prospectId": pid, "error": why})
    if not eligible:
        raise ToolError("422 Unprocessable Entity: no prospect could be added: " +
                        "; ".join(f"{f['prospectId']}: {f['error']}" for f in failures))  # fmt: skip
    at = now_iso(ctx)
    created = []
    for pid in eligible:
        key, n = next_key(ctx, "sequencer.sequence_states")
        record = resource("sequenceState", int(key), {"state": "active", "createdAt": at, "activeAt": at,
                                               "finishedAt": None, "repliedAt": None, "pauseReason": None,
                                               "errorReason": None},
                          prospect=ref("prospect", pid), sequence=ref("sequence", seq["id"]),
                          mailbox=ref("mailbox", mailbox["id"]))
        created.append(create(ctx, "sequencer.sequence_states", key, record, n)["id"])
    return done({"batch": {"state": "finished", "total": len(a.prospectIds), "failures": failures},
                 "sequenceStateIds": created})  # fmt: skip


def state_search(ctx: Ctx, a: StateSearchArgs) -> ToolOutcome:
    found = [s for s in _states(ctx)
             if (a.prospectId is None or _rel(s, "prospect") == a.prospectId)
             and (a.sequenceId is None or _rel(s, "sequence") == a.sequenceId)
             and (a.state is None or s["attributes"]["state"] == a.state)]  # fmt: skip
    return done({"data": found[:MAX_PAGE], "meta": {"count": len(found)}})


def state_finish(ctx: Ctx, a: IdArgs) -> ToolOutcome:
    s = get(ctx, "sequencer.sequence_states", str(a.id), "sequence state")
    if s["attributes"]["state"] == "finished":
        return done({"data": s})  # idempotent
    at = now_iso(ctx)
    out = update(ctx, "sequencer.sequence_states", str(a.id),
                 {**s, "attributes": {**s["attributes"], "state": "finished", "finishedAt": at}}, ["state"])
    return done({"data": out})


def emails_search(ctx: Ctx, a: EmailsSearchArgs) -> ToolOutcome:
    found = [m for m in rows(ctx, "sequencer.mailings").values()
             if (a.prospectId is None or _rel(m, "prospect") == a.prospectId)
             and (a.state is None or m["attributes"]["state"] == a.state)]  # fmt: skip
    return done({"data": found[:MAX_PAGE], "meta": {"count": len(found)}})


def task_create(ctx: Ctx, a: TaskArgs) -> ToolOutcome:
    prospect = get(ctx, "sequencer.prospects", str(a.prospectId), "prospect")
    if parse_iso(a.dueAt) is None:
        raise ToolError("422 Unprocessable Entity: dueAt must be an ISO 8601 time")
    key, n = next_key(ctx, "sequencer.tasks")
    record = resource("task", int(key), {"action": a.action, "state": "incomplete", "dueAt": a.dueAt, "note": a.note,
                                  "taskType": "manual", "createdAt": now_iso(ctx)},
                      prospect=ref("prospect", prospect["id"]), owner=prospect["relationships"]["owner"])
    return done({"data": create(ctx, "sequencer.tasks", key, record, n)})


def _spec(name: str, description: str, args: type[ToolArgs], handler: Any, writes: bool,
          failures: tuple[str, ...] = (), *, output: type[BaseModel]) -> ToolSpec[Any, Ctx]:  # fmt: skip
    return ToolSpec(name, description, args, handler, "1 minute", writes=writes, failure_modes=failures,
                    output=output)


TOOLS: list[ToolSpec[Any, Ctx]] = [
    _spec("current_user", "The sequencer user this session acts as.", NoArgs, current_user, False, output=outputs.Data),
    _spec("mailbox_search", "Sending mailboxes, by email or user id.", MailboxSearchArgs, mailbox_search, False,
          output=outputs.DataList),
    _spec("prospect_search", "Prospects by exact email, tag, account or name.", ProspectSearchArgs, prospect_search,
          False, output=outputs.DataList),
    _spec("prospect_get_by_id", "One prospect by id, with its attributes and relationships.", IdArgs,
          prospect_get, False, output=outputs.Data),
    _spec("prospect_create", "Create a prospect (no upsert: search by email first), optionally on an account and "
          "owned by a user.", ProspectCreateArgs, prospect_create, True, ("422 email already taken",),
          output=outputs.Data),
    _spec("prospect_update", "Update a prospect's attributes or account.", ProspectUpdateArgs, prospect_update, True,
          output=outputs.Data),
    _spec("account_search", "Accounts by name (part) or domain (exact).", AccountSearchArgs, account_search, False,
          output=outputs.DataList),
    _spec("account_create", "Create an account (name, domain, industry); domains are unique.", AccountCreateArgs,
          account_create, True, ("422 domain already exists",), output=outputs.Data),
    _spec("sequence_search", "Sequences by name, with enabled, step types and ruleset.", SequenceSearchArgs,
          sequence_search, False, output=outputs.DataList),
    _spec("sequence_add_prospects", "Add prospects to a sequence from a mailbox; answers {batch: {state, total, "
          "failures}}. The sequence's ruleset decides who may join.", AddArgs, add_prospects, True,
          ("already in this sequence", "opted out", "exclusive sequence", "sequence disabled", "user locked"),
          output=outputs.Added),
    _spec("sequence_state_search", "Sequence states (enrolments) by prospect, sequence or state.", StateSearchArgs,
          state_search, False, output=outputs.DataList),
    _spec("sequence_state_finish", "Finish a sequence state (kept, with its history; idempotent).", IdArgs,
          state_finish, True, output=outputs.Data),
    _spec("emails_search", "Mailings (delivered, opened, replied, bounced), by prospect; replies carry their text.",
          EmailsSearchArgs, emails_search, False, output=outputs.DataList),
    _spec("task_create", "Create a manual task for a prospect.", TaskArgs, task_create, True, output=outputs.Data),
]  # fmt: skip
TABLES = ("sequencer.users", "sequencer.mailboxes", "sequencer.accounts", "sequencer.prospects",
          "sequencer.sequences", "sequencer.sequence_states", "sequencer.mailings", "sequencer.tasks")  # fmt: skip
