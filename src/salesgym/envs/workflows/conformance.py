"""The workflows family's hooks for the conformance kit (``salesgym.testing``), loaded only by the kit.

- ``random_call(env, rng)``: a random, mostly well-formed call, most of them to the task's own apps, with ids
  from the live tables (so many succeed, some break a platform rule, some hit a forbidden app); it never calls
  ``finish_task``, so episodes run to the call budget (a driver, not a policy: it reads operator-side state);
- ``hidden_variant(world, k)`` / ``neutral_variant(world)``: twin worlds with the same apps and request and other
  hidden facts (the requester's answers, hence the expected values) / another persona only;
- ``told(observation)``: what an observation tells the agent;
- ``reference_calls(env)`` / ``solved(env)``: the instance's reference solution played on ``env``, as the calls it
  sent (the blind-replay check sends them to other instances), and whether the verifier passes an episode;
- ``LeakScanner``: what the agent must never see: the requester's hidden facts before it tells them, its
  persona, the verifier's assertions, parameters and reference solution, provenance, the verifier key.
"""

from __future__ import annotations

import dataclasses
import json
import random
from datetime import timedelta
from typing import Any

from salesgym.core.rng import stream
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.apps.crm import LEAD_STATUS, LIFECYCLE
from salesgym.envs.workflows.contract import iso, sandbox_now
from salesgym.envs.workflows.packs import catalogue
from salesgym.envs.workflows.tasks.fixtures import TIMEZONES
from salesgym.envs.workflows.tasks.model import CONTEXT, PERSONAS, build_secret, resolve
from salesgym.envs.workflows.tools import APP_OF, TOOLS
from salesgym.envs.workflows.world import WorkflowsWorld

FORBIDDEN_KEYS = frozenset({"expected", "assertions", "solution", "params", "persona", "keywords", "_provenance",
                            "provenance", "secret", "proof_ref"})  # fmt: skip
RANDOM_TIMEZONES = ("UTC", "Australia/Sydney", "America/Chicago")  # never a hidden fact's value


# --- twins ------------------------------------------------------------------------------------------------------
def _redraw(fact_param: str, value: str, seed: int) -> str:
    rng = stream(seed, "variant", fact_param)
    if fact_param == "tz":
        return rng.choice([t for t in TIMEZONES if t != value])
    if fact_param == "context":
        return rng.choice([c for c in CONTEXT if c != value])
    if value.isdigit():
        return str(int(value) + 1 + rng.randint(0, 999) * 10)
    return value + " (twin)"


def hidden_variant(world: WorkflowsWorld, k: int) -> WorkflowsWorld:
    """The ``k``-th twin: the same tables and request; the requester's hidden facts (and so the expected values
    that rest on them) and persona redrawn."""
    secret = world.secret
    seed = world.seed * 1000 + k + 1
    params = dict(secret.params)
    for fact in secret.facts:
        params[fact.param] = _redraw(fact.param, str(params[fact.param]), seed)
    persona = PERSONAS[(PERSONAS.index(secret.persona) + k + 1) % len(PERSONAS)]
    template = catalogue(world.pack or None)[secret.template]
    return dataclasses.replace(world, secret=build_secret(template, params, persona))


def neutral_variant(world: WorkflowsWorld) -> WorkflowsWorld:
    """A twin differing only in the requester's persona, which only an optional voice would read."""
    return dataclasses.replace(world, secret=dataclasses.replace(world.secret, persona=world.secret.persona + "!"))


def told(obs: dict[str, Any]) -> Any:
    data = obs["data"]
    last = data["last_result"]
    result = None if last is None else (last["status"], last["output"])
    return result, data["told"], data["inbox"], data["episode"]["verdict"]


# --- blind replay -----------------------------------------------------------------------------------------------
def reference_calls(env: Any) -> list[dict[str, Any]]:
    """Play the instance's reference solution on ``env`` (just reset) and return the calls exactly as sent, with
    the closing ``finish_task``: what an agent that memorised one instance would replay on another."""
    secret = env._world.secret
    outputs: list[Any] = []
    calls: list[dict[str, Any]] = []
    for action in secret.solution:
        call = resolve(action, secret.params, outputs)
        calls.append(call)
        outputs.append(env.step(call)[4]["tool_result"]["output"])
    finish = {"tool": "finish_task", "args": {"summary": "done"}}
    env.step(finish)
    return [*calls, finish]


def solved(env: Any) -> bool:
    return bool(env.score()["passed"])


# --- the leak scanner -------------------------------------------------------------------------------------------
class LeakScanner:
    def __init__(self, env: Any) -> None:
        secret = env._world.secret
        self.facts = {f.key: f.value for f in secret.facts}
        self.revealed: set[str] = set()
        self.strings = [env._secret.decode(), secret.persona]
        self.strings += [a["expr"] for s in secret.steps for a in s["assertions"] if len(a["expr"]) >= 24]

    def learn(self, events: list[dict[str, Any]]) -> None:
        for e in events:
            if e["kind"] == "fact_revealed":
                self.revealed.add(e["payload"]["fact"])

    def scan(self, obs: dict[str, Any], output: dict[str, Any]) -> None:
        blob = obs["text"] + "\n" + json.dumps(obs["data"]) + "\n" + json.dumps(output)
        for secret in self.strings:
            assert secret not in blob, f"hidden string {secret[:40]!r} leaked"
        for key, value in self.facts.items():
            if key not in self.revealed:
                assert value not in blob, f"hidden fact {key!r} shown before the requester told it"
        self._keys(obs["data"], "data")
        self._keys(output, "output")

    def _keys(self, node: Any, where: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                assert k not in FORBIDDEN_KEYS, f"hidden key {k!r} at {where}"
                self._keys(v, f"{where}.{k}")
        elif isinstance(node, list):
            for v in node:
                self._keys(v, where)


# --- the random driver ------------------------------------------------------------------------------------------
def _ids(env: Any, table: str) -> list[str]:
    return sorted(env._state.rows(table))


def _pick(rng: random.Random, items: list[Any], default: Any) -> Any:
    return rng.choice(items) if items else default


def random_call(env: Any, rng: random.Random) -> dict[str, Any]:
    """A random call: reads and writes of the task's apps with live ids (see the module docstring)."""
    world = env._world
    apps = list(world.task.apps)
    app = rng.choice(apps) if rng.random() < 0.85 else rng.choice(("crm", "prospecting", "sequencer", "scheduler"))
    if rng.random() < 0.06:
        words = rng.choice(("amount", "time zone", "why is this needed", "the weather", "budget"))
        return complete({"tool": "ask_requester", "args": {"question": f"What about {words}?"}})
    inbox = env._state.inbox
    if inbox and rng.random() < 0.1:
        words = rng.choice(("which day works?", "what time suits you?", "who should I contact?", "thanks!"))
        return complete({"tool": "reply_message", "args": {"message_id": rng.choice(inbox)["id"], "text": words}})
    maker = {"crm": _crm, "prospecting": _prospecting, "sequencer": _sequencer, "scheduler": _scheduler}[app]
    call = maker(env, rng)
    assert APP_OF[call["tool"]] == app
    return complete(call)


def complete(call: dict[str, Any]) -> dict[str, Any]:
    """The call with every field spelled out (defaults included), as the strict schemas list them all."""
    spec = TOOLS.specs[call["tool"]]
    try:
        args = spec.args.model_validate(call["args"])
    except ValueError:
        return call  # a call the sandbox will refuse anyway
    return {"tool": call["tool"], "args": args.model_dump(mode="json", by_alias=True)}


def _crm(env: Any, rng: random.Random) -> dict[str, Any]:
    contacts, owners = _ids(env, "crm.contacts"), _ids(env, "crm.owners")
    contact, owner = _pick(rng, contacts, "101"), _pick(rng, owners, "61000001")
    kind = rng.choice(("search", "list", "read", "pipelines", "owners", "update", "update", "create", "note",
                       "assoc", "deal"))  # fmt: skip
    if kind == "search":
        value = rng.choice(LIFECYCLE)
        return {"tool": "hubspot-search-objects", "args": {"objectType": "contacts", "filterGroups": [
            {"filters": [{"propertyName": "lifecyclestage", "operator": "EQ", "value": value}]}], "limit": 5}}
    if kind == "list":
        return {"tool": "hubspot-list-objects", "args": {"objectType": rng.choice(("contacts", "deals", "companies")),
                                                         "limit": 5}}  # fmt: skip
    if kind == "read":
        return {"tool": "hubspot-batch-read-objects", "args": {"objectType": "contacts", "inputs": [{"id": contact}]}}
    if kind == "pipelines":
        return {"tool": "hubspot-list-pipelines", "args": {}}
    if kind == "owners":
        return {"tool": "hubspot-list-owners", "args": {}}
    if kind == "update":
        props = rng.choice(({"hs_lead_status": rng.choice(LEAD_STATUS)}, {"lifecyclestage": rng.choice(LIFECYCLE)},
                            {"lifecyclestage": ""}, {"hubspot_owner_id": owner}, {"jobtitle": "Analyst"}))
        return {"tool": "hubspot-batch-update-objects", "args": {"objectType": "contacts",
                                                                 "inputs": [{"id": contact, "properties": props}]}}
    if kind == "create":
        email = rng.choice((f"new{rng.randint(0, 40)}@example.net",
                            env._state.rows("crm.contacts").get(contact, {}).get("properties", {}).get("email",
                                                                                                      "x@y.z")))
        return {"tool": "hubspot-batch-create-objects", "args": {"objectType": "contacts",
                                                                 "inputs": [{"properties": {"email": email}}]}}
    if kind == "note":
        return {"tool": "hubspot-create-engagement", "args": {"type": "NOTE", "ownerId": int(owner),
                "associations": {"contactIds": [int(contact)]}, "metadata": {"timestamp": "2026-05-01T10:00:00Z",
                                                                            "body": "called"}}}  # fmt: skip
    if kind == "assoc":
        company = _pick(rng, _ids(env, "crm.companies"), "5001")
        return {"tool": "hubspot-batch-create-associations", "args": {"fromObjectType": "contacts",
                "toObjectType": "companies", "inputs": [{"from": {"id": contact}, "to": {"id": company},
                                                         "types": [{"associationTypeId": rng.choice((279, 1, 3))}]}]}}
    deal = _pick(rng, _ids(env, "crm.deals"), "9001")
    pipelines = env._state.rows("crm.pipelines").values()
    renewal = [st["id"] for p in pipelines if p["id"] != "default" for st in p["stages"]]
    stage = rng.choice(("qualifiedtobuy", "closedwon", "Negotiation", *renewal[:2]))
    inputs = [{"id": deal, "properties": {"dealstage": stage}}]
    return {"tool": "hubspot-batch-update-objects", "args": {"objectType": "deals", "inputs": inputs}}


def _prospecting(env: Any, rng: random.Random) -> dict[str, Any]:
    leads, lists = _ids(env, "prospecting.leads"), _ids(env, "prospecting.lists")
    lead = _pick(rng, leads, "L0001")
    kind = rng.choice(("search", "search", "profile", "lists", "members", "save", "credits", "inmail"))
    if kind == "search":
        return {"tool": "sales_search_leads", "args": {"seniority_level": [rng.choice(("VP", "CXO", "Director"))],
                                                       "changed_jobs": rng.choice((True, None)), "count": 5}}
    if kind == "profile":
        return {"tool": "get_sales_profile", "args": {"lead_id": lead}}
    if kind == "lists":
        return {"tool": "get_lead_lists", "args": {}}
    if kind == "members":
        return {"tool": "get_lead_list_members", "args": {"list_id": _pick(rng, lists, "LL001")}}
    if kind == "save":
        return {"tool": "save_lead", "args": {"lead_id": lead, "list_id": _pick(rng, lists, "LL001")}}
    if kind == "credits":
        return {"tool": "get_inmail_credits", "args": {}}
    return {"tool": "send_inmail", "args": {"recipient_urn": f"urn:li:fs_salesProfile:{lead}", "subject": "Hello",
                                            "body": "Quick question about your team."}}  # fmt: skip


def _sequencer(env: Any, rng: random.Random) -> dict[str, Any]:
    prospects = [int(p) for p in _ids(env, "sequencer.prospects")]
    kind = rng.choice(("search", "sequences", "mailboxes", "states", "add", "add", "finish", "create", "task"))
    if kind == "search":
        return {"tool": "prospect_search", "args": {"limit": 5}}
    if kind == "sequences":
        return {"tool": "sequence_search", "args": {}}
    if kind == "mailboxes":
        return {"tool": "mailbox_search", "args": {}}
    if kind == "states":
        return {"tool": "sequence_state_search", "args": {}}
    if kind == "add":
        chosen = sorted(set(rng.sample(prospects, min(len(prospects), 2)))) if prospects else [1]
        sequences, mailboxes = _ids(env, "sequencer.sequences"), _ids(env, "sequencer.mailboxes")
        return {"tool": "sequence_add_prospects", "args": {"sequenceId": int(_pick(rng, sequences, 1)),
                "prospectIds": chosen, "mailboxId": int(_pick(rng, mailboxes, 1))}}  # fmt: skip
    if kind == "finish":
        states = [int(s) for s in _ids(env, "sequencer.sequence_states")]
        return {"tool": "sequence_state_finish", "args": {"id": _pick(rng, states, 1)}}
    if kind == "create":
        account = int(_pick(rng, _ids(env, "sequencer.accounts"), 1))
        return {"tool": "prospect_create", "args": {"attrs": {"emails": [f"p{rng.randint(0, 30)}@example.net"]},
                                                    "accountId": rng.choice((None, account))}}  # fmt: skip
    return {"tool": "task_create", "args": {"prospectId": _pick(rng, prospects, 1), "action": "call",
                                            "dueAt": "2026-06-01T09:00:00Z", "note": "call back"}}  # fmt: skip


def _scheduler(env: Any, rng: random.Random) -> dict[str, Any]:
    world, state = env._world, env._state
    et_key = rng.choice(_ids(env, "scheduler.event_types"))
    et = state.rows("scheduler.event_types")[et_key]
    now = sandbox_now(world.anchor, state.now)
    start = (now + timedelta(days=rng.randint(1, 10))).replace(minute=0, second=0)
    kind = rng.choice(("types", "available", "busy", "events", "book", "book", "cancel", "link", "no_show"))
    if kind == "types":
        return {"tool": "event_types-list_event_types", "args": {}}
    if kind == "available":
        return {"tool": "event_types-list_event_type_available_times", "args": {"event_type": et["uri"],
                "start_time": iso(start), "end_time": iso(start + timedelta(days=rng.choice((1, 3, 9))))}}
    if kind == "busy":
        user = next(iter(state.rows("scheduler.users").values()))["uri"]
        return {"tool": "availability-list_user_busy_times", "args": {"user": user, "start_time": iso(start),
                                                                      "end_time": iso(start + timedelta(days=2))}}
    if kind == "events":
        return {"tool": "meetings-list_events", "args": {"count": 5}}
    events = [k for k, e in state.rows("scheduler.scheduled_events").items() if e["status"] == "active"]
    if kind == "cancel":
        return {"tool": "meetings-cancel_event", "args": {"uuid": _pick(rng, events, "EV00001"), "reason": "moved"}}
    if kind == "link":
        return {"tool": "scheduling_links-create_single_use_scheduling_link", "args": {"owner": et["uri"]}}
    if kind == "no_show":
        invitees = [i["uri"] for i in state.rows("scheduler.invitees").values()]
        return {"tool": "invitee_no_shows-create", "args": {"invitee": _pick(rng, invitees, "x")}}
    slot = start
    free = scheduler.open_slots(_busy(state), et["duration"], start, start + timedelta(days=2), now)
    if free and rng.random() < 0.8:
        slot = rng.choice(free)
    return {"tool": "meetings-create_invitee", "args": {"event_type": et["uri"], "start_time": iso(slot),
            "invitee": {"name": "Pat Doe", "email": f"pat{rng.randint(0, 9)}@example.net",
                        "timezone": rng.choice(RANDOM_TIMEZONES)}}}  # fmt: skip


def _busy(state: Any) -> list[Any]:
    from salesgym.envs.workflows.contract import parse_iso

    out = []
    for table in ("scheduler.busy_times", "scheduler.scheduled_events"):
        for r in state.rows(table).values():
            if r.get("status", "active") == "active":
                out.append((parse_iso(r["start_time"]), parse_iso(r["end_time"])))
    return out
