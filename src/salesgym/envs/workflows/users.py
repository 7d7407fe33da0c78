"""Simulated people who act: scripted actions of a prospect, customer or colleague on the shared apps
(``tasks.model.Act``), so a task may need the agent to react to what someone else did.

**Triggers.** An action is done once: after the first successful call of one of its ``after`` tools whose end
state makes its ``when`` program (jq over the whole state document, the parameters as variables) output
``true``, or, with ``at``, when the sandbox clock reaches ``at`` minutes (an item on the world's tape, fired
by the engine inside whichever call spans that minute). A verb that finds nothing to act on (no link of the
agent's in the call it answers, no active booking to move) does nothing, and the action stays pending.

**Verbs** (``VERBS``; each its platform's way, through the replica's records):

- ``book_from_link`` {name, email, timezone, after}: the person books, through a single-use link whose URL is in
  the triggering call's arguments (the message the agent sent), the earliest open slot of the link's event
  type at or after ``after``; the link is used up;
- ``reassign_owner`` {object, id, owner_id}: a colleague makes ``owner_id`` the owner of a CRM record;
- ``reschedule`` {email, after}: the invitee moves their active booking (canceled as rescheduled by the
  invitee) to the earliest open slot of the same event type at or after ``after``.

**The tape.** Each action is its record events, whose actor is ``user:<actor_key>``, then one ``user_acted``
event (its key, verb and what it did), then its optional message (``message_received``). All of it is
emitted inside the agent's call, so it is in that step's observation, a replay folds it, and a clone (whose
state and log are forked) carries on from it. The verifier does not count a simulated person's changes as the
agent's (``verifier.by_users``), and the audit does not ask a call of the table's app for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.events import strings_in
from salesgym.envs.workflows import jqlib
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.apps.common import Ctx, create, next_key, now_iso, rows, update
from salesgym.envs.workflows.contract import AVAILABLE_RANGE_DAYS, parse_iso
from salesgym.envs.workflows.simulator import APP_OF_TABLE, APP_OF_TOOL
from salesgym.envs.workflows.state import Record, document

USER = "user:"  # the prefix of a simulated person's actor name on the event tape


def is_user(actor: str) -> bool:
    return actor.startswith(USER)




def _earliest(ctx: Ctx, event_type: Record, after: str) -> Any:
    start = parse_iso(after)
    if start is None:
        return None
    found = scheduler.slots(ctx, event_type, start, start + timedelta(days=AVAILABLE_RANGE_DAYS))
    return found[0] if found else None


def _book(ctx: Ctx, actor: str, event_type: Record, start: Any, name: str, email: str,
          tz: str) -> dict[str, Any]:  # fmt: skip
    at = now_iso(ctx)
    key, n = next_key(ctx, "scheduler.scheduled_events")
    event = create(ctx, "scheduler.scheduled_events", key,
                   scheduler.scheduled_event_record(key, event_type, start, scheduler.host(ctx)["uri"], at), n, actor)
    ikey, m = next_key(ctx, "scheduler.invitees")
    create(ctx, "scheduler.invitees", ikey, scheduler.invitee_record(ikey, event, name, email, tz, at), m, actor)
    return event


def book_from_link(ctx: Ctx, actor: str, args: Mapping[str, Any], call: Any) -> str | None:
    sent = " ".join(strings_in(call))
    link = next(((k, r) for k, r in rows(ctx, "scheduler.scheduling_links").items()
                 if r["booking_url"] in sent and not r.get("used_by")), None)  # fmt: skip
    if link is None:
        return None
    event_type = rows(ctx, "scheduler.event_types").get(scheduler.uuid_of(link[1]["owner"]))
    start = None if event_type is None else _earliest(ctx, event_type, args["after"])
    if event_type is None or start is None:
        return None
    event = _book(ctx, actor, event_type, start, args["name"], args["email"], args["timezone"])
    update(ctx, "scheduler.scheduling_links", link[0], {**link[1], "used_by": event["uri"]}, ["used_by"], actor)
    return f"booked {event['start_time']} through {link[1]['booking_url']}"


def reassign_owner(ctx: Ctx, actor: str, args: Mapping[str, Any], call: Any) -> str | None:
    table = f"crm.{args['object']}"
    record = rows(ctx, table).get(str(args["id"]))
    owner = str(args["owner_id"])
    if record is None or record["properties"].get("hubspot_owner_id") == owner:
        return None
    props = {**record["properties"], "hubspot_owner_id": owner}
    update(ctx, table, str(args["id"]), {**record, "properties": props, "updatedAt": now_iso(ctx)},
           ["hubspot_owner_id"], actor)  # fmt: skip
    return f"made owner {owner} the owner of {table} {args['id']}"


def reschedule(ctx: Ctx, actor: str, args: Mapping[str, Any], call: Any) -> str | None:
    email = str(args["email"]).lower()
    invitee = next(((k, i) for k, i in rows(ctx, "scheduler.invitees").items()
                    if i["email"].lower() == email and i["status"] == "active"), None)  # fmt: skip
    if invitee is None:
        return None
    ikey, inv = invitee
    ekey = scheduler.uuid_of(inv["event"])
    event = rows(ctx, "scheduler.scheduled_events")[ekey]
    event_type = rows(ctx, "scheduler.event_types").get(scheduler.uuid_of(event["event_type"]))
    start = None if event_type is None else _earliest(ctx, event_type, args["after"])
    if event_type is None or start is None:
        return None
    at = now_iso(ctx)
    cancellation = {"canceled_by": inv["name"], "reason": "Rescheduled by the invitee", "canceler_type": "invitee",
                    "created_at": at}  # fmt: skip
    update(ctx, "scheduler.scheduled_events", ekey, {**event, "status": "canceled", "cancellation": cancellation,
                                                     "updated_at": at, "invitees_counter": {
                                                         **event["invitees_counter"], "active": 0}},
           ["status", "cancellation"], actor)  # fmt: skip
    new = _book(ctx, actor, event_type, start, inv["name"], inv["email"], inv["timezone"])
    moved = {**inv, "status": "canceled", "rescheduled": True, "new_invitee": new["uri"], "updated_at": at}
    update(ctx, "scheduler.invitees", ikey, moved, ["status", "rescheduled", "new_invitee"], actor)
    return f"moved {event['start_time']} to {new['start_time']}"


VERBS = {"book_from_link": (book_from_link, ("name", "email", "timezone", "after")),
         "reassign_owner": (reassign_owner, ("object", "id", "owner_id")),
         "reschedule": (reschedule, ("email", "after"))}  # fmt: skip


def check(template: str, act: Any) -> None:
    """Raise ``ValueError`` if a template's action (``tasks.model.Act``) is malformed."""
    if act.verb not in VERBS:
        raise ValueError(f"{template}: action {act.key!r}: unknown verb {act.verb!r}; use one of {sorted(VERBS)}")
    missing = sorted(set(VERBS[act.verb][1]) - set(act.args))
    if missing:
        raise ValueError(f"{template}: action {act.key!r} ({act.verb}) needs {missing}")
    if (act.at is None) == (not act.after):
        raise ValueError(f"{template}: action {act.key!r} needs either 'after' tools or an 'at' minute, not both")
    unknown = sorted(set(act.after) - set(APP_OF_TOOL))
    if unknown:
        raise ValueError(f"{template}: action {act.key!r}: 'after' names no replica tool: {', '.join(unknown)}")


def _do(ctx: Ctx, action: Mapping[str, Any], call: Any) -> None:
    if action["key"] in ctx.state.acted:
        return
    verb, _ = VERBS[action["verb"]]
    actor = USER + action["actor_key"]
    what = verb(ctx, actor, action["args"], call)  # checks first, then writes (None: nothing to act on)
    if what is None:
        return
    ctx.emit("user_acted", actor, {"action": action["key"], "verb": action["verb"], "by": action["actor"],
                                   "did": what})  # fmt: skip
    if action["says"]:
        ctx.emit("message_received", action["actor_key"], {
            "id": f"MSG{len(ctx.state.inbox) + 1}", "turn": action["key"], "from": action["actor"],
            "sender_key": action["actor_key"], "text": action["says"], "at": now_iso(ctx)})  # fmt: skip


def after_call(ctx: Ctx, tool: str, args: Any) -> None:
    """Do every pending action that this successful call of ``tool`` triggers (see the module docstring)."""
    actions = ctx.world.secret.actions
    if not actions:
        return
    call = args.model_dump(mode="json") if hasattr(args, "model_dump") else args
    params = dict(ctx.world.secret.params)
    for action in actions:
        if tool not in action["after"] or action["key"] in ctx.state.acted:
            continue
        if action["when"] is not None:
            doc = document(ctx.state.tables, APP_OF_TABLE)
            try:
                if jqlib.run(action["when"], doc, params) != [True]:
                    continue
            except ValueError:
                continue
        _do(ctx, action, call)


def fire(ctx: Ctx, item: Scheduled) -> None:
    """A time-triggered action falls due (the engine fires the world's tape item)."""
    action = next((a for a in ctx.world.secret.actions if a["key"] == item.data["key"]), None)
    if action is not None:
        _do(ctx, action, None)

