"""Verifier runs: the HTTP verifier API's state (``verifier_api.py`` routes it), shared by every app replica.

A run is one task instance (a registered workflows environment, its keyword arguments and a seed), built
through the registry like a session. It holds the instance's start tables, the end state each app stores (per
app: a cross-app task has one run and each app stores its own tables under it), the trajectory of calls the
agent made, and, once judged, the verdict. The verdict is computed by the same function as the in-process
verifier (``envs.workflows.verifier.judge_states``), so a run whose apps store the end state of an episode, with
its calls, gets that episode's verdict.

Who may do what: any caller creates runs and reads, stores and asserts over its own runs' state (ad-hoc
assertions see the state document only, not the instance's parameters); only the operator runs the task's own
assertions, reads expected values and asks for the verdict, which is given once (a run is closed after it).
The audit check of the in-process verifier (every change made by its own app's tools) holds by construction
here: an app can store only its own tables. Runs live in memory, at most ``MAX_RUNS`` at a time (the oldest
judged, else the oldest, is dropped first).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import salesgym
from salesgym.serve.auth import Principal
from salesgym.serve.sessions import RESERVED_KWARGS, ServiceError

MAX_RUNS = 512
MAX_CALLS = 2000  # calls recorded per run
MAX_ASSERTIONS = 200  # per request
MAX_EXPR_CHARS = 4000


@dataclass
class Run:
    run_id: str
    owner: str
    env_id: str
    seed: int
    world: Any  # a WorkflowsWorld
    judge: Any  # the environment's optional language-model judge (None: the rubric's rules)
    end: dict[str, dict[str, dict[str, Any]]]  # the stored tables, per table (the start until an app stores)
    stored: set[str] = field(default_factory=set)  # apps that have stored their state
    calls: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)

    def view(self, operator: bool) -> dict[str, Any]:
        task = self.world.task
        out = {"run_id": self.run_id, "env_id": self.env_id, "seed": self.seed, "task": task.public(),
               "status": "judged" if self.verdict is not None else "open", "stored": sorted(self.stored),
               "calls": len(self.calls)}  # fmt: skip
        if operator and self.verdict is not None:
            out["verdict"] = self.verdict
        return out


def _owner_of_table() -> Mapping[str, str]:
    from salesgym.envs.workflows.tools import OWNER_OF_TABLE

    return OWNER_OF_TABLE


class Runs:
    """Every run of the service, by id."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.runs: OrderedDict[str, Run] = OrderedDict()
        self.max_runs = max_runs

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def create(self, caller: Principal, env_id: str, kwargs: Mapping[str, Any], seed: int) -> Run:
        if env_id not in salesgym.registry():
            raise ServiceError(404, "unknown_env", f"no environment {env_id!r}")
        reserved = sorted(RESERVED_KWARGS & set(kwargs))
        if reserved:
            raise ServiceError(422, "reserved_kwargs", f"{', '.join(reserved)} is set by the service, not a caller")
        try:
            env = salesgym.make(env_id, **kwargs)
            env.reset(seed=seed)
        except Exception as err:  # any refusal of the constructor or reset is the caller's arguments
            raise ServiceError(422, "invalid_kwargs", f"cannot build {env_id}: {type(err).__name__}: {err}") from None
        world = env._world
        if not hasattr(world, "secret") or not hasattr(world, "tables"):
            raise ServiceError(422, "not_a_workflow", f"{env_id} is not a workflows environment; the verifier API "
                               "judges workflows tasks")  # fmt: skip
        run = Run("r-" + secrets.token_hex(8), caller.name, env_id, seed, world, getattr(env.family, "judge", None),
                  {name: dict(rows) for name, rows in world.tables.items()})  # fmt: skip
        self._make_room()
        self.runs[run.run_id] = run
        return run

    def _make_room(self) -> None:
        while len(self.runs) >= self.max_runs:
            judged = next((k for k, r in self.runs.items() if r.verdict is not None), None)
            self.runs.pop(judged if judged is not None else next(iter(self.runs)))

    def get(self, caller: Principal, run_id: str) -> Run:
        """The caller's run (any run for the operator); someone else's is "not found", like one never made."""
        run = self.runs.get(run_id)
        if run is None or not (caller.operator or run.owner == caller.name):
            raise ServiceError(404, "not_found", f"no run {run_id!r}")
        return run

    def delete(self, caller: Principal, run_id: str) -> None:
        self.get(caller, run_id)
        del self.runs[run_id]

    @staticmethod
    def _open(run: Run) -> None:
        if run.verdict is not None:
            raise ServiceError(409, "already_judged", f"run {run.run_id} has been judged; start a new run")

    # -- state -------------------------------------------------------------------------------------------------
    @staticmethod
    def _app(run: Run, app: str) -> str:
        apps = run.world.task.apps
        if app not in apps:
            raise ServiceError(404, "unknown_app", f"this task's apps are {', '.join(apps)}; got {app!r}")
        return app

    def state(self, caller: Principal, run_id: str, app: str | None) -> dict[str, Any]:
        run = self.get(caller, run_id)
        apps = [self._app(run, app)] if app is not None else list(run.world.task.apps)
        owner = _owner_of_table()
        return {app_: {name.split(".", 1)[1]: rows for name, rows in run.end.items() if owner.get(name) == app_}
                for app_ in apps}  # fmt: skip

    def store(self, caller: Principal, run_id: str, app: str, tables: Mapping[str, Any]) -> Run:
        """Store ``app``'s tables (``{object: {id: record}}``; objects not named keep what they hold). Everything
        is checked before anything is stored."""
        run = self.get(caller, run_id)
        self._open(run)
        self._app(run, app)
        owner = _owner_of_table()
        known = sorted(name.split(".", 1)[1] for name, a in owner.items() if a == app)
        checked: dict[str, dict[str, dict[str, Any]]] = {}
        for obj, rows in tables.items():
            name = f"{app}.{obj}"
            if owner.get(name) != app:
                raise ServiceError(422, "unknown_table", f"{app} has no table {obj!r} (its tables: "
                                   f"{', '.join(known)})")  # fmt: skip
            if not isinstance(rows, dict) or not all(isinstance(r, dict) for r in rows.values()):
                raise ServiceError(422, "invalid_table", f"{obj}: a table is an object of records by id "
                                   "({id: {...}})")  # fmt: skip
            checked[name] = {str(k): r for k, r in rows.items()}
        run.end.update(checked)
        run.stored.add(app)
        return run

    def record_calls(self, caller: Principal, run_id: str, calls: Sequence[Mapping[str, Any]]) -> Run:
        """Append calls to the run's trajectory: ``{tool, args, status: ok | error}``."""
        from salesgym.envs.workflows.tools import TOOLS

        run = self.get(caller, run_id)
        self._open(run)
        if len(run.calls) + len(calls) > MAX_CALLS:
            raise ServiceError(413, "too_many_calls", f"a run records at most {MAX_CALLS} calls")
        added: list[dict[str, Any]] = []
        for i, c in enumerate(calls):
            if c["tool"] not in TOOLS.specs:
                raise ServiceError(422, "unknown_tool", f"calls[{i}]: no tool {c['tool']!r}")
            refused = c["status"] == "error"
            added.append({"tool": c["tool"], "args": None if refused else dict(c["args"]), "refused": refused,
                          "call": len(run.calls) + len(added)})  # fmt: skip
        run.calls.extend(added)
        return run

    # -- judging -----------------------------------------------------------------------------------------------
    def assertions(self, caller: Principal, run_id: str, specs: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
        """Run ``specs`` (or, with None, the task's own assertions: operator only) over the stored state."""
        from salesgym.envs.workflows.state import document
        from salesgym.envs.workflows.tasks import jqlib
        from salesgym.envs.workflows.tasks.model import OPERATORS
        from salesgym.envs.workflows.verifier import check_assertion

        run = self.get(caller, run_id)
        secret = run.world.secret
        if specs is None:
            if not caller.operator:
                raise ServiceError(403, "forbidden", "the task's own assertions hold expected values: this needs "
                                   "the operator token")  # fmt: skip
            specs = [{**a, "step": s["step"]} for s in secret.steps for a in s["assertions"]]
        params = dict(secret.params) if caller.operator else {}  # an agent's probe sees no hidden parameter
        if len(specs) > MAX_ASSERTIONS:
            raise ServiceError(413, "too_many_assertions", f"at most {MAX_ASSERTIONS} assertions a request")
        for i, spec in enumerate(specs):
            label = f"assertions[{i}] ({spec.get('name') or spec['expr'][:40]!r})"
            if spec["op"] not in OPERATORS:
                raise ServiceError(422, "bad_operator", f"{label}: unknown operator {spec['op']!r}; use one of "
                                   f"{', '.join(OPERATORS)}")  # fmt: skip
            if len(spec["expr"]) > MAX_EXPR_CHARS:
                raise ServiceError(422, "bad_expression", f"{label}: expressions are limited to {MAX_EXPR_CHARS} "
                                   "characters")  # fmt: skip
            try:
                jqlib.compile_only(spec["expr"], params)
            except ValueError as err:
                raise ServiceError(422, "bad_expression", f"{label}: jq cannot compile it ({str(err)[:300]})") from None
        doc = document(run.end, _owner_of_table())
        results = [check_assertion(spec.get("step") or 0, {"name": spec.get("name") or f"assertion {i}",
                                                           "expr": spec["expr"], "op": spec["op"],
                                                           "expected": spec["expected"]}, doc, params)
                   for i, spec in enumerate(specs)]  # fmt: skip
        return {"run_id": run.run_id, "passed": sum(r["passed"] for r in results), "total": len(results),
                "results": results}  # fmt: skip

    def judge(self, caller: Principal, run_id: str) -> dict[str, Any]:
        from salesgym.envs.workflows.verifier import judge_states

        run = self.get(caller, run_id)
        if not caller.operator:
            raise ServiceError(403, "forbidden", "the verdict holds expected values: this needs the operator token")
        self._open(run)
        summary = next((c["args"].get("summary", "") for c in reversed(run.calls)
                        if c["tool"] == "finish_task" and c["args"] is not None), "")  # fmt: skip
        verdict = judge_states(run.world.secret, run.world.tables, run.end, run.calls, summary, (), run.judge)
        verdict["apps"] = list(run.world.task.apps)
        verdict["stored"] = sorted(run.stored)
        verdict["audit"]["how"] = "each app stores only its own tables"
        run.verdict = verdict
        return {"run_id": run.run_id, **verdict}
