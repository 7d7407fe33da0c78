"""Verifier runs: the HTTP verifier API's state (``verifier_api.py`` routes it), shared by every app of a task.

A run is one task instance (a registered environment, its keyword arguments and a seed), built through the
registry like a session. It holds the instance's start tables, the end state each app stores (per app: a
cross-app task has one run and each app stores its own tables under it), the trajectory of calls the agent
made, and, once judged, the verdict. What a table, an assertion and a verdict are is the family's: a family
that offers the API names a module in its ``verifier_api`` (the workflows family: ``envs/workflows/remote.py``,
whose verdict is the in-process verifier's), so nothing here knows a family.

Who may do what: any caller creates runs and reads, stores and asserts over its own runs' state (ad-hoc
assertions see the state only, not the instance's parameters); only the operator runs the task's own
assertions and asks for the verdict, which is given once (the run is closed after it). Runs live in memory, at
most ``MAX_RUNS`` at a time (the oldest judged, else the oldest, is dropped first).
"""

from __future__ import annotations

import importlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from salesgym.serve.auth import Principal
from salesgym.serve.sessions import ServiceError
from salesgym.serve.sessions import _make as make_env  # the sessions' rules for env ids and kwargs

MAX_RUNS = 512
MAX_CALLS = 2000  # calls recorded per run
MAX_ASSERTIONS = 200  # per request


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

    def view(self, operator: bool) -> dict[str, Any]:
        out = {"run_id": self.run_id, "env_id": self.env_id, "seed": self.seed, "task": self.family.public(self.world),
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
    """Every run of the service, by id."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.runs: OrderedDict[str, Run] = OrderedDict()
        self.max_runs = max_runs

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def create(self, caller: Principal, env_id: str, kwargs: Mapping[str, Any], seed: int) -> Run:
        env = make_env(env_id, dict(kwargs), seed)
        name = getattr(env.family, "verifier_api", None)
        if name is None:
            raise ServiceError(422, "no_verifier_api", f"{env_id}'s family offers no verifier API (the workflows "
                               "family does)")  # fmt: skip
        family = importlib.import_module(name)
        run = Run("r-" + secrets.token_hex(8), caller.name, env_id, seed, family, env._world,
                  getattr(env.family, "judge", None), family.start(env._world))  # fmt: skip
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

    def delete(self, caller: Principal, run_id: str) -> None:
        self.get(caller, run_id)
        del self.runs[run_id]

    @staticmethod
    def _open(run: Run) -> None:
        if run.verdict is not None:
            raise ServiceError(409, "already_judged", f"run {run.run_id} has been judged; start a new run")

    # -- state and calls ---------------------------------------------------------------------------------------
    def state(self, caller: Principal, run_id: str, app: str | None) -> dict[str, Any]:
        run = self.get(caller, run_id)
        try:
            return dict(run.family.state(run.world, run.end, app))
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
        run.end.update(checked)
        run.stored.add(app)
        return run

    def record_calls(self, caller: Principal, run_id: str, calls: Sequence[Mapping[str, Any]]) -> Run:
        """Append calls ``{tool, args, status: ok | error}`` to the run's trajectory."""
        run = self.get(caller, run_id)
        self._open(run)
        if len(run.calls) + len(calls) > MAX_CALLS:
            raise ServiceError(413, "too_many_calls", f"a run records at most {MAX_CALLS} calls")
        try:
            run.calls.extend(run.family.checked_calls(calls, len(run.calls)))
        except ValueError as err:
            raise _refused(err, "call") from None
        return run

    # -- judging -----------------------------------------------------------------------------------------------
    def assertions(self, caller: Principal, run_id: str, specs: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
        """Run ``specs`` (or, with None, the task's own assertions: operator only) over the stored state."""
        run = self.get(caller, run_id)
        if specs is None:
            if not caller.operator:
                raise ServiceError(403, "forbidden", "the task's own assertions hold expected values: this needs "
                                   "the operator token")  # fmt: skip
            specs = run.family.task_assertions(run.world)
        if len(specs) > MAX_ASSERTIONS:
            raise ServiceError(413, "too_many_assertions", f"at most {MAX_ASSERTIONS} assertions a request")
        try:
            results = run.family.assertions(run.world, run.end, specs, caller.operator)
        except ValueError as err:
            raise _refused(err, "assertion") from None
        return {"run_id": run.run_id, "passed": sum(r["passed"] for r in results), "total": len(results),
                "results": results}  # fmt: skip

    def judge(self, caller: Principal, run_id: str) -> dict[str, Any]:
        run = self.get(caller, run_id)
        if not caller.operator:
            raise ServiceError(403, "forbidden", "the verdict holds expected values: this needs the operator token")
        self._open(run)
        run.verdict = {**run.family.verdict(run.world, run.end, run.calls, run.judge), "stored": sorted(run.stored)}
        return {"run_id": run.run_id, **run.verdict}
