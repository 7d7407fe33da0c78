"""Verifier runs: the HTTP verifier API's state (``verifier_api.py`` routes it), shared by every app of a task.

A run is one task instance (a registered environment, its keyword arguments and a seed), built through the
registry like a session. It holds the instance's start tables, the end state each app stores (per app: a
cross-app task has one run and each app stores its own tables under it), the trajectory of calls the agent
made, and, once judged, the verdict. What a table, an assertion and a verdict are is the family's: a family
that offers the API names a module in its ``verifier_api`` (the workflows family: ``envs/workflows/remote.py``,
whose verdict is the in-process verifier's), so nothing here knows a family. Where the task's simulated people act
on the apps, the family keeps them with the run (``people``): they act on the calls the run records, and the
family keeps who changed what from the tables each app stores.

Runs that count and runs that do not: a run opened from a split's task id (``POST /runs {"task": {split, id}}``)
gets its world and seed from the service (``tasks.py``, as a task session does) and never shows an agent the
seed; a run opened with the caller's own seed is **practice**: a caller who picks the seed can rebuild the
instance and its hidden values from the public code, so every answer about it says ``"practice": true`` and it
never appears in ``GET /benchmark/{split}/runs``, the operator's collection of a split's runs.

Who may do what: any caller creates runs and reads, stores and asserts over its own runs' state (ad-hoc
assertions see the state only, not the instance's parameters, and run in the sandbox: ``sandbox.py``); only the
operator runs the task's own assertions and asks for the verdict, which is given once (the run is closed after
it). Runs live in memory, at most ``MAX_RUNS`` at a time (the oldest judged, else the oldest, is dropped first).
"""

from __future__ import annotations

import importlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import salesgym
from salesgym.serve.auth import Principal
from salesgym.serve.sandbox import Sandbox, SandboxError, SandboxLimits
from salesgym.serve.sessions import ServiceError
from salesgym.serve.sessions import _make as make_env  # the sessions' rules for env ids and kwargs
from salesgym.serve.tasks import Task

MAX_RUNS = 512
MAX_CALLS = 2000  # calls recorded per run
MAX_ASSERTIONS = 200  # per request


def default_env_id() -> str:
    """The id a practice run without one plays: the first registered id whose family offers the verifier API."""
    for env_id in salesgym.registry():
        if salesgym.family(env_id).verifier_api is not None:
            return env_id
    raise ServiceError(422, "no_verifier_api", "no registered family offers a verifier API")


@dataclass
class Run:
    run_id: str
    owner: str
    env_id: str
    seed: int
    family: Any  # the family's verifier-API module
    world: Any
    judge: Any  # the environment's optional language-model judge (None: the rules)
    end: dict[str, dict[str, dict[str, Any]]]  # the stored tables (the start until an app stores its own)
    stored: set[str] = field(default_factory=set)  # apps that have stored their state
    calls: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)
    benchmark: Task | None = None  # the split's task this run is (None: practice, the caller chose the seed)
    people: Any = None  # the family's simulated people who act, with who changed what (None: no one acts)

    def label(self) -> dict[str, Any]:
        """What every answer about the run says: whether it is practice, and which benchmark task it is."""
        return {"run_id": self.run_id, "practice": self.benchmark is None,
                "benchmark_task": None if self.benchmark is None else self.benchmark.ref}

    def view(self, operator: bool) -> dict[str, Any]:
        out = {**self.label(), "env_id": self.env_id, "task": self.family.public(self.world),
               "seed": self.seed if self.benchmark is None or operator else None,  # a task's seed is the operator's
               "status": "judged" if self.verdict is not None else "open", "stored": sorted(self.stored),
               "calls": len(self.calls)}  # fmt: skip
        if operator and self.verdict is not None:
            out["verdict"] = self.verdict
        return out


def _refused(err: Exception, error: str) -> ServiceError:
    if isinstance(err, LookupError):
        return ServiceError(404, f"unknown_{error}", str(err).strip("'\""))
    return ServiceError(422, f"invalid_{error}", str(err))


class Runs:
    """Every run of the service, by id; callers' programs run in one sandbox per family (``sandbox.py``)."""

    def __init__(self, max_runs: int = MAX_RUNS, sandbox: SandboxLimits | None = None,
                 verifier_key: bytes | None = None) -> None:
        self.runs: OrderedDict[str, Run] = OrderedDict()
        self.max_runs = max_runs
        self.sandbox_limits = sandbox or SandboxLimits()
        self.sandboxes: dict[str, Sandbox] = {}
        self.verifier_key = verifier_key

    def close(self) -> None:
        for sandbox in self.sandboxes.values():
            sandbox.close()

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def create(self, caller: Principal, env_id: str, kwargs: Mapping[str, Any], seed: int,
               task: Task | None = None) -> Run:
        """A run of one instance; with ``task`` (the service resolved it from a split) it counts, else practice."""
        env = make_env(env_id, dict(kwargs), seed, self.verifier_key)
        name = salesgym.family(env_id).verifier_api
        if name is None:
            raise ServiceError(422, "no_verifier_api", f"{env_id}'s family offers no verifier API (the workflows "
                               "family does)")  # fmt: skip
        family = importlib.import_module(name)
        tables = family.start(env._world)
        run = Run("r-" + secrets.token_hex(8), caller.name, env_id, seed, family, env._world,
                  getattr(env.family, "judge", None), tables, benchmark=task,
                  people=family.people(env._world, tables))  # fmt: skip
        while len(self.runs) >= self.max_runs:
            judged = next((k for k, r in self.runs.items() if r.verdict is not None), None)
            self.runs.pop(judged if judged is not None else next(iter(self.runs)))
        self.runs[run.run_id] = run
        return run

    def get(self, caller: Principal, run_id: str) -> Run:
        """The caller's run (any run for the operator); someone else's is "not found", like one never made."""
        run = self.runs.get(run_id)
        if run is None or not (caller.operator or run.owner == caller.name):
            raise ServiceError(404, "not_found", f"no run {run_id!r}")
        return run

    def delete(self, caller: Principal, run_id: str) -> Run:
        run = self.get(caller, run_id)
        del self.runs[run_id]
        return run

    def of_split(self, split: str) -> list[dict[str, Any]]:
        """Every run opened for a task of ``split``, oldest first, with its verdict once judged (practice runs never
        are: they name no task)."""
        return [{"run_id": r.run_id, "task": r.benchmark.id, "owner": r.owner, "created": r.created,
                 "status": "judged" if r.verdict is not None else "open", "verdict": r.verdict}
                for r in sorted(self.runs.values(), key=lambda r: r.created)
                if r.benchmark is not None and r.benchmark.split == split]  # fmt: skip

    @staticmethod
    def _open(run: Run) -> None:
        if run.verdict is not None:
            raise ServiceError(409, "already_judged", f"run {run.run_id} has been judged; start a new run")

    # -- state and calls ---------------------------------------------------------------------------------------
    def state(self, caller: Principal, run_id: str, app: str | None) -> dict[str, Any]:
        run = self.get(caller, run_id)
        try:
            return {**run.label(), "state": dict(run.family.state(run.world, run.end, app))}
        except LookupError as err:
            raise _refused(err, "app") from None

    def store(self, caller: Principal, run_id: str, app: str, tables: Mapping[str, Any]) -> Run:
        """Store ``app``'s tables (objects not named keep what they hold); all checked before any is stored."""
        run = self.get(caller, run_id)
        self._open(run)
        try:
            checked = run.family.checked_tables(run.world, app, tables)
        except (LookupError, ValueError) as err:
            raise _refused(err, "app" if isinstance(err, LookupError) else "table") from None
        run.family.stored(run.people, checked)  # the agent's changes, before the tables are replaced
        run.end.update(checked)
        run.stored.add(app)
        return run

    def record_calls(self, caller: Principal, run_id: str,
                     calls: Sequence[Mapping[str, Any]]) -> tuple[Run, list[dict[str, Any]] | None]:  # fmt: skip
        """Append calls ``{tool, args, status: ok | error}`` to the run's trajectory; with what the task's simulated
        people did for them (None where no one acts)."""
        run = self.get(caller, run_id)
        self._open(run)
        if len(run.calls) + len(calls) > MAX_CALLS:
            raise ServiceError(413, "too_many_calls", f"a run records at most {MAX_CALLS} calls")
        try:
            checked = run.family.checked_calls(calls, len(run.calls))
        except ValueError as err:
            raise _refused(err, "call") from None
        run.calls.extend(checked)
        return run, run.family.called(run.people, checked)

    # -- judging -----------------------------------------------------------------------------------------------
    async def assertions(self, caller: Principal, run_id: str,
                         specs: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:  # fmt: skip
        """Run ``specs`` in the sandbox (a caller's programs), or with None the task's own assertions (operator
        only, the templates' programs: in process) over the stored state."""
        run = self.get(caller, run_id)
        if specs is None:
            if not caller.operator:
                raise ServiceError(403, "forbidden", "the task's own assertions hold expected values: this needs "
                                   "the operator token")  # fmt: skip
            results = run.family.assertions(run.world, run.end, run.family.task_assertions(run.world))
        else:
            if len(specs) > MAX_ASSERTIONS:
                raise ServiceError(413, "too_many_assertions", f"at most {MAX_ASSERTIONS} assertions a request")
            try:
                payload = run.family.caller_payload(run.world, run.end, specs, caller.operator)
            except ValueError as err:
                raise _refused(err, "assertion") from None
            try:
                results = await self._sandbox(run.family.SANDBOXED).run(payload)
            except SandboxError as err:
                raise ServiceError(err.status, err.error, err.detail) from None
        return {**run.label(), "passed": sum(r["passed"] for r in results), "total": len(results),
                "results": results}  # fmt: skip

    def _sandbox(self, target: str) -> Sandbox:
        if target not in self.sandboxes:
            self.sandboxes[target] = Sandbox(target, self.sandbox_limits)
        return self.sandboxes[target]

    def judge(self, caller: Principal, run_id: str) -> dict[str, Any]:
        run = self.get(caller, run_id)
        if not caller.operator:
            raise ServiceError(403, "forbidden", "the verdict holds expected values: this needs the operator token")
        self._open(run)
        run.verdict = {**run.family.verdict(run.world, run.end, run.calls, run.judge, run.people),
                       "stored": sorted(run.stored),
                       **run.label()}  # fmt: skip
        return {**run.label(), **run.verdict}
