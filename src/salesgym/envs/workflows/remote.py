"""The workflows family's side of the HTTP verifier API (``serve/runs.py`` loads it by the family's
``verifier_api`` name, so the service knows no family): a run's state per app, its calls, ad-hoc and task
assertions, and the verdict, judged by the same function as the in-process verifier. Where simulated people act
(``users.py``), the run plays them and keeps who changed what (``run_people.py``).

A caller's ad-hoc assertions are jq the caller wrote: the service runs them in its sandbox (``serve/sandbox.py``)
with :data:`SANDBOXED` on :func:`caller_payload`, never here. The task's own assertions and the verdict run the
templates' programs in process.

Every function checks everything before it returns anything to store: ``LookupError`` names what does not exist
(an app the task does not use: 404), ``ValueError`` what is malformed (a table, a record, a tool, an operator: 422).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.envs.workflows import run_people
from salesgym.envs.workflows.assertions import check_assertion
from salesgym.envs.workflows.run_people import RunPeople
from salesgym.envs.workflows.state import document
from salesgym.envs.workflows.tasks.model import OPERATORS
from salesgym.envs.workflows.tools import OWNER_OF_TABLE, TOOLS
from salesgym.envs.workflows.verifier import judge_states
from salesgym.envs.workflows.world import WorkflowsWorld

Tables = dict[str, dict[str, dict[str, Any]]]
MAX_EXPR_CHARS = 4000
NESTED = ("properties", "attributes", "relationships")  # a record's parts whose fields the invariant compares
SANDBOXED = "salesgym.envs.workflows.assertions:evaluate_for_caller"  # what the sandbox runs on caller_payload


def start(world: WorkflowsWorld) -> Tables:
    """The run's start tables."""
    return {name: dict(rows) for name, rows in world.tables.items()}


def people(world: WorkflowsWorld, tables: Tables) -> RunPeople | None:
    """The run's simulated people (``run_people.py``), whose state is the run's ``tables``; None when no one
    acts."""
    found = run_people.people(world)
    if found is not None:
        found.state.tables = tables
    return found


def called(found: RunPeople | None, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """What the people did for these recorded calls (None: no one acts in this task)."""
    return None if found is None else found.called(calls)


def stored(found: RunPeople | None, tables: Mapping[str, Mapping[str, Any]]) -> None:
    """An app's checked tables about to be stored: the agent's changes, on the people's tape."""
    if found is not None:
        found.store(tables)


def apps(world: WorkflowsWorld) -> tuple[str, ...]:
    return tuple(world.task.apps)


def public(world: WorkflowsWorld) -> dict[str, Any]:
    return world.task.public()


def _app(world: WorkflowsWorld, app: str) -> str:
    if app not in world.task.apps:
        raise LookupError(f"this task's apps are {', '.join(world.task.apps)}; got {app!r}")
    return app


def state(world: WorkflowsWorld, tables: Tables, app: str | None) -> dict[str, Any]:
    """``{app: {object: {id: record}}}`` for ``app`` (or every app of the task)."""
    chosen = [_app(world, app)] if app is not None else list(world.task.apps)
    return {a: {name.split(".", 1)[1]: rows for name, rows in tables.items() if OWNER_OF_TABLE.get(name) == a}
            for a in chosen}  # fmt: skip


def checked_tables(world: WorkflowsWorld, app: str, given: Mapping[str, Any]) -> Tables:
    """``app``'s tables as stored (``{object: {id: record}}`` -> ``{"app.object": {id: record}}``)."""
    _app(world, app)
    known = sorted(name.split(".", 1)[1] for name, a in OWNER_OF_TABLE.items() if a == app)
    out: Tables = {}
    for obj, rows in given.items():
        name = f"{app}.{obj}"
        if OWNER_OF_TABLE.get(name) != app:
            raise ValueError(f"{app} has no table {obj!r} (its tables: {', '.join(known)})")
        if not isinstance(rows, dict) or not all(isinstance(r, dict) for r in rows.values()):
            raise ValueError(f"{obj}: a table is an object of records by id ({{id: {{...}}}})")
        for key, record in rows.items():
            shaped = next((part for part in NESTED if part in record and not isinstance(record[part], dict)), None)
            if shaped is not None:  # the verifier compares these parts field by field
                raise ValueError(f"{obj}[{key!r}]: {shaped} must be an object of fields")
        out[name] = {str(k): r for k, r in rows.items()}
    return out


def checked_calls(calls: Sequence[Mapping[str, Any]], first: int) -> list[dict[str, Any]]:
    """Calls ``{tool, args, status}`` as the verifier reads a trajectory (``call``: the index from ``first``)."""
    out = []
    for i, c in enumerate(calls):
        if c["tool"] not in TOOLS.specs:
            raise ValueError(f"calls[{i}]: no tool {c['tool']!r}")
        refused = c["status"] == "error"
        out.append({"tool": c["tool"], "args": None if refused else dict(c["args"]), "refused": refused,
                    "call": first + i})  # fmt: skip
    return out


def task_assertions(world: WorkflowsWorld) -> list[dict[str, Any]]:
    return [{**a, "step": s["step"]} for s in world.secret.steps for a in s["assertions"]]


def assertions(world: WorkflowsWorld, tables: Tables, specs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The task's own assertions (:func:`task_assertions`, the templates' programs) over the stored state."""
    doc, params = document(tables, OWNER_OF_TABLE), dict(world.secret.params)
    return [check_assertion(spec["step"], spec, doc, params) for spec in specs]


def caller_payload(world: WorkflowsWorld, tables: Tables, specs: Sequence[Mapping[str, Any]],
                   with_params: bool) -> dict[str, Any]:  # fmt: skip
    """What the sandbox needs to run a caller's assertions (``assertions.evaluate_for_caller``): the state
    document, the specs, and the instance's parameters as ``$name`` only ``with_params`` (the operator), so an
    agent's probe cannot test a hidden value. Operators and lengths are checked here."""
    for i, spec in enumerate(specs):
        label = f"assertions[{i}] ({spec.get('name') or spec['expr'][:40]!r})"
        if spec["op"] not in OPERATORS:
            raise ValueError(f"{label}: unknown operator {spec['op']!r}; use one of {', '.join(OPERATORS)}")
        if len(spec["expr"]) > MAX_EXPR_CHARS:
            raise ValueError(f"{label}: expressions are limited to {MAX_EXPR_CHARS} characters")
    params = dict(world.secret.params) if with_params else {}
    return {"doc": document(tables, OWNER_OF_TABLE), "params": params, "specs": [dict(s) for s in specs]}


def verdict(world: WorkflowsWorld, tables: Tables, calls: Sequence[Mapping[str, Any]], judge: Any,
            found: RunPeople | None = None) -> dict[str, Any]:  # fmt: skip
    """The in-process verifier's verdict over the stored state and calls; what the people did is theirs (their
    tape, ``run_people.py``). The audit (every change made by its own app's tools) holds by construction: an app
    stores only its own tables."""
    summary = next((c["args"].get("summary", "") for c in reversed(calls)
                    if c["tool"] == "finish_task" and c["args"] is not None), "")  # fmt: skip
    made = None if found is None else found.made_by_users()
    out = judge_states(world.secret, world.tables, tables, calls, summary, (), judge, made_by_users=made)
    out["apps"] = list(world.task.apps)
    out["audit"]["how"] = "each app stores only its own tables"
    return out
