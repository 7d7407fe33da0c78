"""The HTTP verifier API, shared by every app replica, mounted in ``salesgym serve`` (``docs/serve.md``):

    POST   /runs                      a run of a benchmark task, or a practice run    -> run_id
    GET    /runs/{id}                 the run (operator: with its verdict once judged)
    GET    /runs/{id}/state[?app=]    the stored state, per app ({app: {object: {id: record}}})
    PUT    /runs/{id}/state           store one app's tables (a cross-app task: each app under the same run)
    POST   /runs/{id}/calls           append the agent's calls (forbidden actions, rubrics over call text); where
                                      simulated people act, what they did (the apps read their tables back)
    POST   /runs/{id}/assertions      run jq assertions (ad hoc, or the task's own: operator)
    POST   /runs/{id}/verdict         judge once: pass/fail, partial, per-assertion metadata (operator)
    DELETE /runs/{id}

Every refusal is a ``Problem`` with a 4xx status (an unknown run, app, table, tool or operator; jq that does not
compile, reaches beyond the document or exceeds its limits; a second verdict) and changes nothing. The logic is
in ``runs.py``; the operator's ``GET /benchmark/{split}/runs`` is in ``app.py``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from salesgym.serve import tasks
from salesgym.serve.auth import Principal
from salesgym.serve.runs import Runs, default_env_id
from salesgym.serve.sessions import ServiceError
from salesgym.serve.verifier_models import CreateRun, RecordCalls, RunAssertions, StoreState

RunId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


def _caller(request: Request) -> Principal:  # app.caller's rule, here to keep this module free of app.py
    found = request.app.state.tokens.check(request.headers.get("authorization"))
    if found is None:
        raise ServiceError(401, "unauthorized", "send Authorization: Bearer <token>")
    return found  # type: ignore[no-any-return]


Caller = Annotated[Principal, Depends(_caller)]


def router(runs: Runs) -> APIRouter:
    api = APIRouter(prefix="/runs", tags=["verifier"])

    @api.post("", status_code=201)
    async def create(request: Request, body: CreateRun, who: Caller) -> dict[str, Any]:
        if body.task is not None:
            task = tasks.resolve(body.task.split, body.task.id, request.app.state.split_key)
            return runs.create(who, task.env_id, task.kwargs, task.seed, task).view(who.operator)
        assert body.seed is not None  # the model checked it
        return runs.create(who, body.env_id or default_env_id(), body.kwargs, body.seed).view(who.operator)

    @api.get("/{run_id}")
    async def view(run_id: RunId, who: Caller) -> dict[str, Any]:
        return runs.get(who, run_id).view(who.operator)

    @api.get("/{run_id}/state")
    async def state(run_id: RunId, who: Caller,
                    app: Annotated[str | None, Query(max_length=40)] = None) -> dict[str, Any]:  # fmt: skip
        return runs.state(who, run_id, app)

    @api.put("/{run_id}/state")
    async def store(run_id: RunId, body: StoreState, who: Caller) -> dict[str, Any]:
        return runs.store(who, run_id, body.app, body.tables).view(who.operator)

    @api.post("/{run_id}/calls")
    async def calls(run_id: RunId, body: RecordCalls, who: Caller) -> dict[str, Any]:
        run, people = runs.record_calls(who, run_id, [c.model_dump() for c in body.calls])
        return run.view(who.operator) if people is None else {**run.view(who.operator), "people": people}

    @api.post("/{run_id}/assertions")
    async def assertions(run_id: RunId, body: RunAssertions, who: Caller) -> dict[str, Any]:
        if body.task == (body.assertions is not None):
            raise ServiceError(422, "invalid_request", "give either assertions or task: true")
        specs = None if body.task else [a.model_dump() for a in body.assertions or []]
        return await runs.assertions(who, run_id, specs)

    @api.post("/{run_id}/verdict")
    async def verdict(run_id: RunId, who: Caller) -> dict[str, Any]:
        return runs.judge(who, run_id)

    @api.delete("/{run_id}")
    async def delete(run_id: RunId, who: Caller) -> dict[str, Any]:
        return {**runs.delete(who, run_id).label(), "status": "deleted"}

    return api
