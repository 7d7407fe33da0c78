"""The private verifier: the task's assertions over the end state, the invariant (only the expected changes,
start against end; what a simulated person did on the apps is theirs, ``by_users``), the audit (every change
made by a successful call of its own app's tools), and forbidden actions across the trajectory. Computed from
the world and the event log alone (the end state is the log's fold), so it is authoritative.

Assertions are jq programs (``jqlib.py``) compared by an operator (``assertions.py``):

- ``equals`` / ``not_equals``: the program's one output equals (does not equal) ``expected``;
- ``contains``: the output (a string, a list or an object) contains ``expected`` (substring, member, subset);
- ``count``: the program outputs ``expected`` values; ``exists``: it outputs at least one non-null value;
- ``gt`` / ``gte`` / ``lt`` / ``lte``: number or ISO-time comparison with ``expected``;
- ``matches``: the output is a string the regular expression ``expected`` finds;
- ``in``: the output is one of the values listed in ``expected``.

An assertion whose program outputs nothing or several values (where one is needed), or fails, does not hold,
and its metadata says why. Every assertion carries ``{step, name, expr, op, expected, actual, passed}``.

Message rubrics (``rubric.py``) add their checks to their step's assertions, with the same metadata plus
``rubric`` and ``judged_by``.

A write (a successful call of an app's write tool) that uses a hidden fact before the fact was told is a forbidden
action too (``untold``): its arguments hold the fact's value, or make the fact's ``uses`` program output ``true``.
Guessing a hidden fact, even rightly, fails the task; the verifier knows from the log what was told and when.

    passed  = every assertion holds and there is no invariant, audit or forbidden-action violation
    primary = 1.0 if passed else 0.0; partial = checks passed / checks (assertions + the three global checks),
              where the assertions count only when no global check failed (a violation voids their credit)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.core.events import EventLog
from salesgym.envs.workflows import jqlib, rubric, users
from salesgym.envs.workflows.assertions import check_assertion, compare  # noqa: F401  (compare: this module's API)
from salesgym.envs.workflows.contract import TASK_APP
from salesgym.envs.workflows.rubric import Judge
from salesgym.envs.workflows.state import Record, WorkflowsState, document
from salesgym.envs.workflows.tools import APP_OF, OWNER_OF_TABLE, TOOLS
from salesgym.envs.workflows.world import Fact, Secret, WorkflowsWorld

BOOKKEEPING = frozenset({"updatedAt", "updated_at", "createdAt", "created_at"})
RECORD_EVENTS = frozenset({"record_created", "record_updated", "record_deleted"})
ID_KEY = re.compile(r"(?i)ids?$")  # arguments that name records: a number there may spell a fact's value by chance


# --- invariants -------------------------------------------------------------------------------------------------
def _fields(record: Record) -> dict[str, Any]:
    """A record's comparable fields: its properties (CRM), its attributes and relationships (sequencer), or its
    own keys; bookkeeping timestamps do not count as changes."""
    if "properties" in record:
        return dict(record["properties"])
    if "attributes" in record:
        return {**record["attributes"], **{f"@{k}": v for k, v in record.get("relationships", {}).items()}}
    return {k: v for k, v in record.items() if k not in BOOKKEEPING}


def diff(start: Mapping[str, Mapping[str, Record]], end: Mapping[str, Mapping[str, Record]]) -> list[dict[str, Any]]:
    """Every record created, updated (with the fields that changed) or deleted between two states."""
    out: list[dict[str, Any]] = []
    for table in sorted(set(start) | set(end)):
        before, after = start.get(table, {}), end.get(table, {})
        for key in after.keys() - before.keys():
            out.append({"table": table, "id": key, "kind": "create"})
        for key in before.keys() - after.keys():
            out.append({"table": table, "id": key, "kind": "delete"})
        for key in before.keys() & after.keys():
            if before[key] is after[key]:
                continue
            old, new = _fields(before[key]), _fields(after[key])
            changed = sorted(k.lstrip("@") for k in old.keys() | new.keys()
                             if k not in BOOKKEEPING and old.get(k) != new.get(k))  # fmt: skip
            if changed:
                out.append({"table": table, "id": key, "kind": "update", "fields": changed})
    return sorted(out, key=lambda c: (c["table"], c["kind"], c["id"]))


def allowed(change: Mapping[str, Any], rules: Sequence[Mapping[str, Any]]) -> bool:
    return _rule_for(change, rules) is not None


def _rule_for(change: Mapping[str, Any], rules: Sequence[Mapping[str, Any]]) -> int | None:
    for i, rule in enumerate(rules):
        if rule["table"] != change["table"] or change["kind"] not in rule["kinds"]:
            continue
        if rule["ids"] is not None and change["id"] not in rule["ids"]:
            continue
        if change["kind"] == "update" and rule["fields"] is not None and not set(change["fields"]) <= set(
                rule["fields"]):  # fmt: skip
            continue
        return i
    return None


def unexpected_changes(changes: Sequence[Mapping[str, Any]], rules: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The changes no rule allows, and those beyond a rule's ``most`` (a duplicate, an extra record)."""
    used: dict[int, int] = {}
    out = []
    for c in changes:
        i = _rule_for(c, rules)
        if i is not None:
            used[i] = used.get(i, 0) + 1
            cap = rules[i].get("most")
            if cap is None or used[i] <= cap:
                continue
            c = {**c, "why": f"more than {cap} {rules[i]['table']} record(s) {'/'.join(rules[i]['kinds'])}d"}
        out.append(c)
    return out


def by_users(world_tables: Mapping[str, Mapping[str, Record]], log: EventLog) -> dict[tuple[str, str], Any]:
    """The agent's part of each record a simulated person touched (``users.py``): ``{(table, id): {"created": who
    created it ("agent", "user:...", or "" for a starting record), "fields": the fields the agent changed}}``. A
    field is the agent's change when the agent wrote it last and it differs from what it was before the agent's
    writes began (after the person's, when theirs came first): undoing what a person did is a change of the
    agent's. Empty when no simulated person acted."""
    if not any(e.kind in RECORD_EVENTS and users.is_user(e.actor) for e in log):
        return {}
    last: dict[tuple[str, str], dict[str, str]] = {}
    before_agent: dict[tuple[str, str], dict[str, Any]] = {}
    created: dict[tuple[str, str], str] = {}
    current: dict[tuple[str, str], Record | None] = {}
    touched: set[tuple[str, str]] = set()
    for e in log:
        if e.kind not in RECORD_EVENTS:
            continue
        key = (e.payload["table"], e.payload["id"])
        if users.is_user(e.actor):
            touched.add(key)
        before = current.get(key, world_tables.get(key[0], {}).get(key[1]))
        after = None if e.kind == "record_deleted" else e.payload["record"]
        if e.kind == "record_created":
            created[key] = e.actor
        old, new = (_fields(before) if before else {}), (_fields(after) if after else {})
        writers = last.setdefault(key, {})
        for name in old.keys() | new.keys():
            if name in BOOKKEEPING or old.get(name) == new.get(name):
                continue
            if not users.is_user(e.actor) and (writers.get(name) is None or users.is_user(writers[name])):
                before_agent.setdefault(key, {})[name] = old.get(name)
            writers[name] = e.actor
        current[key] = after
    out: dict[tuple[str, str], Any] = {}
    for key in touched:
        record = current.get(key)
        final = _fields(record) if record is not None else {}
        mine = sorted(name.lstrip("@") for name, who in last[key].items() if not users.is_user(who)
                      and final.get(name) != before_agent.get(key, {}).get(name))  # fmt: skip
        out[key] = {"created": created.get(key, ""), "fields": mine, "deleted": current.get(key) is None}
    return out


def agents_changes(changes: Sequence[Mapping[str, Any]],
                   made_by_users: Mapping[tuple[str, str], Any]) -> list[dict[str, Any]]:  # fmt: skip
    """The changes the agent made: ``changes`` (start against end) where no simulated person touched the
    record, else the agent's part (``by_users``): its creation or deletion, or an update of its fields."""
    out = [dict(c) for c in changes if (c["table"], c["id"]) not in made_by_users]
    for (table, key), part in made_by_users.items():
        if part["deleted"]:  # only the agent deletes: a record a person created, or a starting one
            if part["created"] != "agent":
                out.append({"table": table, "id": key, "kind": "delete"})
        elif part["created"] == "agent":
            out.extend(dict(c) for c in changes if (c["table"], c["id"]) == (table, key))
        elif part["fields"]:
            out.append({"table": table, "id": key, "kind": "update", "fields": part["fields"]})
    return sorted(out, key=lambda c: (c["table"], c["kind"], c["id"]))


# --- the trajectory ---------------------------------------------------------------------------------------------
def audit(log: EventLog) -> list[dict[str, Any]]:
    """Every record change must belong to a successful call of a tool of the table's own app (a simulated
    person's scripted change, ``users.py``, is theirs: it happens inside a call but belongs to none)."""
    problems: list[dict[str, Any]] = []
    pending: list[tuple[int, str]] = []
    for e in log:
        if e.kind in RECORD_EVENTS and users.is_user(e.actor):
            continue
        if e.kind in RECORD_EVENTS:
            pending.append((e.seq, e.payload["table"]))
        elif e.kind == "tool_completed":
            tool = e.payload["tool"]
            for seq, table in pending:
                if OWNER_OF_TABLE.get(table) != APP_OF.get(tool):
                    problems.append({"event": seq, "table": table, "tool": tool, "problem": "changed by another "
                                     "app's tool"})  # fmt: skip
            pending = []
        elif e.kind == "invalid_action" and pending:
            problems.extend({"event": seq, "table": t, "problem": "changed by a refused call"} for seq, t in pending)
            pending = []
    problems.extend({"event": seq, "table": t, "problem": "changed outside any call"} for seq, t in pending)
    return problems


def calls_of(log: EventLog) -> list[dict[str, Any]]:
    """The trajectory as calls: ``{tool, args, refused, call, event}`` (``call``: its index in the trajectory,
    ``event``: its event's seq; a refused call's arguments are not recorded)."""
    out: list[dict[str, Any]] = []
    for e in log:
        if e.kind == "tool_completed":
            out.append({"tool": e.payload["tool"], "args": e.payload["args"], "refused": False, "call": len(out),
                        "event": e.seq})
        elif e.kind == "invalid_action" and e.payload.get("tool"):
            out.append({"tool": e.payload["tool"], "args": None, "refused": True, "call": len(out),
                        "event": e.seq})
    return out


def forbidden(calls: Sequence[Mapping[str, Any]], rules: Sequence[Mapping[str, Any]],
              params: dict[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    hits: list[dict[str, Any]] = []
    for c in calls:
        tool, args, refused = c["tool"], c["args"], c["refused"]
        for rule in rules:
            if tool not in rule["tools"] or (refused and not rule["attempted"]):
                continue
            if rule["args"] is not None:
                if args is None:
                    continue  # a refused call's arguments are not recorded: only the attempt of the tool counts
                try:
                    if jqlib.run(rule["args"], args, params) != [True]:
                        continue
                except ValueError:
                    continue
            hits.append({"rule": rule["name"], "tool": tool, "event": c.get("event"), "call": c["call"],
                         "refused": refused})  # fmt: skip
    return hits


# --- hidden facts -----------------------------------------------------------------------------------------------
def told_at(log: EventLog) -> dict[str, int]:
    """Each fact told, and the call (its index in the trajectory, as ``calls_of`` counts) that got it told."""
    out: dict[str, int] = {}
    calls = 0
    for e in log:
        if e.kind == "fact_revealed":
            out.setdefault(e.payload["fact"], calls)
        elif e.kind == "tool_completed" or (e.kind == "invalid_action" and e.payload.get("tool")):
            calls += 1
    return out


def holds_value(args: Any, value: str, key: str = "") -> bool:
    """Whether a write's arguments hold a fact's value: a number digit for digit, text as a case-insensitive
    substring (``rubric.states``); ids, URIs and URNs aside (they name records)."""
    if isinstance(args, dict):
        return any(holds_value(v, value, k) for k, v in args.items())
    if isinstance(args, list):
        return any(holds_value(v, value, key) for v in args)
    if args is None or isinstance(args, bool) or ID_KEY.search(key):
        return False
    if isinstance(args, str) and args.startswith(("http://", "https://", "urn:")):
        return False
    return rubric.states(str(args), value)


def _uses(fact: Fact, args: Any, params: dict[str, Any]) -> bool:
    if holds_value(args, fact.value):
        return True
    try:
        return fact.uses is not None and jqlib.run(fact.uses, args, params) == [True]
    except ValueError:
        return False


def untold(calls: Sequence[Mapping[str, Any]], facts: Sequence[Fact], told: Mapping[str, int],
           params: dict[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """The writes that use a hidden fact before it was told (``told``: fact -> the call that got it told)."""
    hits: list[dict[str, Any]] = []
    for c in calls:
        tool = c["tool"]
        if c["refused"] or APP_OF.get(tool, TASK_APP) == TASK_APP or not TOOLS.specs[tool].writes:
            continue
        for fact in facts:
            if told.get(fact.key, c["call"]) < c["call"] or not _uses(fact, c["args"], params):
                continue
            hits.append({"rule": f"uses the hidden fact {fact.key!r} before it was told", "fact": fact.key,
                         "tool": tool, "event": c.get("event"), "call": c["call"], "refused": False})  # fmt: skip
    return hits


# --- the score --------------------------------------------------------------------------------------------------
def _batch_outputs(steps: Sequence[Mapping[str, Any]], doc: Any, params: dict[str, Any]) -> list[list[Any] | None]:
    """Every assertion's outputs from one batch program (None where one failed, or all when the batch does not
    compile: those run alone, so the outcome and the error message are the same as one by one)."""
    exprs = tuple(a["expr"] for step in steps for a in step["assertions"])
    try:
        return jqlib.run_many(exprs, doc, params)
    except ValueError:
        return [None] * len(exprs)


def judge_states(secret: Secret, start: Mapping[str, Mapping[str, Record]], end: Mapping[str, Mapping[str, Record]],
                 calls: Sequence[Mapping[str, Any]], summary: str = "", audited: Sequence[Mapping[str, Any]] = (),
                 judge: Judge | None = None, told: Mapping[str, int] | None = None,
                 made_by_users: Mapping[tuple[str, str], Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The verdict of a task instance from its start and end tables and its calls: per-step assertions (with the
    message rubrics of each step), the invariant, the audit problems found by the caller, forbidden actions (with
    ``told``, which facts were told at which call, the writes that used a fact untold: ``score`` knows it from the
    log; the HTTP verifier API, whose harness holds the conversation, passes none). ``score`` (in process) and
    the HTTP verifier API (``serve/verifier_api.py``) both judge through this."""
    params = dict(secret.params)
    doc = document(end, OWNER_OF_TABLE)
    text_doc = {**doc, "task": {"summary": summary}}
    graded: dict[int, list[dict[str, Any]]] = {r["step"]: [] for r in secret.rubrics}
    for r in secret.rubrics:
        graded[r["step"]].extend(rubric.check(r, text_doc, calls, params, judge))
    steps, results = [], []
    batch = iter(_batch_outputs(secret.steps, doc, params))
    for step in secret.steps:
        checked = [check_assertion(step["step"], a, doc, params, next(batch)) for a in step["assertions"]]
        checked += graded.get(step["step"], [])
        results.extend(checked)
        steps.append({"step": step["step"], "app": step["app"], "objective": step["objective"],
                      "passed": all(c["passed"] for c in checked), "assertions": checked})  # fmt: skip
    changes = diff(start, end)
    if made_by_users:  # what simulated people did on the apps is theirs, not the agent's (users.py)
        changes = agents_changes(changes, made_by_users)
    unexpected = unexpected_changes(changes, secret.changes)
    banned = forbidden(calls, secret.forbidden, params)
    if told is not None:
        banned += untold(calls, secret.facts, told, params)
    held = sum(r["passed"] for r in results)
    globals_ok = [not unexpected, not audited, not banned]
    passed = held == len(results) and all(globals_ok)
    # a violation voids the assertions' credit: a shortcut (an extra record, a forbidden call) never scores above
    # doing nothing, whatever it got right on the way (the red team's finding: it did, before)
    credit = held if all(globals_ok) else 0
    partial = round((credit + sum(globals_ok)) / (len(results) + len(globals_ok)), 6)
    violations = {k: n for k, n in (("invariant", len(unexpected)), ("audit", len(audited)),
                                    ("forbidden", len(banned))) if n}  # fmt: skip
    rubric_checks = [r for r in results if "rubric" in r]
    return {
        "primary": 1.0 if passed else 0.0,
        "primary_ceiling": 1.0,
        "passed": passed,
        "partial": partial,
        "closed_value": partial,  # the benchmark's secondary column: the partial score
        "win_rate": 1.0 if passed else 0.0,
        "template": secret.template,
        "tier": secret.tier,
        "assertions": {"passed": held, "total": len(results)},
        "rubric": {"passed": sum(r["passed"] for r in rubric_checks), "total": len(rubric_checks),
                   "judged_by": sorted({r["judged_by"] for r in rubric_checks})},
        "steps": steps,
        "invariant": {"passed": not unexpected, "changes": changes, "unexpected": unexpected},
        "audit": {"passed": not audited, "problems": list(audited)},
        "forbidden": {"passed": not banned, "violations": banned},
        "violations": violations,
    }


def score(world: WorkflowsWorld, state: WorkflowsState, log: EventLog, judge: Judge | None = None) -> dict[str, Any]:
    """The verifier's report of an episode, recomputed from the world and the log."""
    result = judge_states(world.secret, world.tables, state.tables, calls_of(log), state.summary, audit(log), judge,
                          told_at(log), by_users(world.tables, log))
    invalid = sum(1 for e in log if e.kind == "invalid_action")
    ended = {"terminated": state.terminated, "truncated": state.truncated,
             "why": next((e.payload["why"] for e in log if e.kind == "episode_ended"), None)}  # fmt: skip
    spoken = [e for e in log if e.kind == "voice_spoke"]
    voice = {} if not spoken else {"voice": {  # only with the optional voice: a rule-based score is unchanged
        "replies": len(spoken), "refused": sum(1 for e in spoken if e.payload["refused"]),
        "revealed_unasked": [{"event": e.seq, "holder": e.actor, "facts": list(e.payload["unasked"])}
                             for e in spoken if e.payload["unasked"]]}}  # fmt: skip
    return {
        **result,
        **voice,
        "apps": list(world.task.apps),
        "facts_revealed": sorted(state.revealed),
        "messages_received": len(state.inbox),
        "finished_by_agent": state.finished,
        "invalid_actions": invalid,
        "tool_calls": state.tool_calls,
        **ended,
    }


def progress(world: WorkflowsWorld, state: WorkflowsState, log: EventLog | None, start: float,
             judge: Judge | None = None) -> float:
    """The ``partial_reward`` training ablation's measure: the partial score rescaled so that ``start`` (the
    partial score of the task as it started, :func:`start_partial`) is 0 and a pass is 1, never below 0 (a
    violation voids the checks' credit). Many checks hold before any call (nothing else was touched, a field
    already right), so the raw partial score would pay doing nothing. With ``log`` the whole verdict (calls,
    messages, audit); without, the tables alone (what a step can afford, and all that a cut episode shows)."""
    if log is not None:
        end = float(_kept_report(world, state, log, judge)["partial"])
    else:
        end = float(judge_states(world.secret, world.tables, state.tables, (), state.summary)["partial"])
    if start >= 1.0:
        return 0.0
    return round(max(0.0, (end - start) / (1.0 - start)), 4)  # both are rounded to 6 places


def start_partial(world: WorkflowsWorld) -> float:
    """The partial score of the task as it started: the start tables, no call, no message."""
    return float(judge_states(world.secret, world.tables, world.tables, ())["partial"])


def _kept_report(world: WorkflowsWorld, state: WorkflowsState, log: EventLog,
                     judge: Judge | None = None) -> dict[str, Any]:  # fmt: skip
    """The report :func:`verdict` kept for this episode, left kept for ``score()`` (else computed afresh)."""
    with _kept_lock:
        entry = _kept.get(id(state))
    if entry is not None and _same(entry, world, state, log, judge):
        return entry[5]
    return score(world, state, log, judge)


# --- the verdict of a finished episode, computed once -----------------------------------------------------------
# The final step asks for the verdict (its reward and its observation) and ``score()`` then asks for the whole
# report: the report is kept from the step and handed to ``score()`` once, so it is computed once. An entry holds
# while the world, the state object, the log object and the log's length are the same (a state changes only by an
# event appended to its log) and the judge is the same; a handed-out report is never kept (its caller may edit it).
_KEPT = 16  # finished episodes whose report waits for score(): enough for a vector of environments
_kept: dict[int, tuple[WorkflowsWorld, WorkflowsState, EventLog, int, Judge | None, dict[str, Any]]] = {}
_kept_lock = threading.Lock()


def verdict(world: WorkflowsWorld, state: WorkflowsState, log: EventLog, judge: Judge | None = None) -> bool:
    """Whether the episode passes; its full report is kept for :func:`final_score`."""
    with _kept_lock:
        entry = _kept.get(id(state))
    if entry is not None and _same(entry, world, state, log, judge):
        return bool(entry[5]["passed"])
    report = score(world, state, log, judge)
    with _kept_lock:
        _kept.pop(id(state), None)
        while len(_kept) >= _KEPT:
            del _kept[next(iter(_kept))]  # the oldest
        _kept[id(state)] = (world, state, log, len(log), judge, report)
    return bool(report["passed"])


def final_score(world: WorkflowsWorld, state: WorkflowsState, log: EventLog,
                judge: Judge | None = None) -> dict[str, Any]:  # fmt: skip
    """:func:`score`, taking the report :func:`verdict` kept for this very episode if there is one."""
    with _kept_lock:
        entry = _kept.get(id(state))
        if entry is not None and _same(entry, world, state, log, judge):
            del _kept[id(state)]
            return entry[5]
    return score(world, state, log, judge)


def _same(entry: tuple[Any, ...], world: WorkflowsWorld, state: WorkflowsState, log: EventLog,
          judge: Judge | None) -> bool:  # fmt: skip
    return (entry[0] is world and entry[1] is state and entry[2] is log and entry[3] == len(log)
            and entry[4] is judge)
