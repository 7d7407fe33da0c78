"""The HTTP service: a FastAPI app over a :class:`SessionManager` (``create_app``).

Handlers are ``async`` and do their (short, CPU-bound) work inline on the event loop: sessions are stepped one
request at a time, so no two requests race on one environment and no lock is needed around the state. What a
caller's program could make long (the verifier API's jq) runs in the sandbox (``sandbox.py``), off the loop.
Every body is read strictly before any handler sees it (``wire.py``: JSON, bounded, UTF-8, no lone surrogates,
``NaN``, duplicate keys or thousand-digit integers). Every refusal is a :class:`~salesgym.service_api.models.Problem`
with a 4xx status (503 when the service cannot serve); a 500 would mean a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from typing import Annotated, Any

import orjson
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

import salesgym
from salesgym.serve import tasks
from salesgym.serve.auth import Principal, Tokens
from salesgym.serve.runs import Runs
from salesgym.serve.sandbox import SandboxLimits
from salesgym.serve.secrets import Secrets
from salesgym.serve.sessions import Limits, Live, ServiceError, SessionManager
from salesgym.serve.store import Store
from salesgym.serve.verifier_api import router as verifier_router
from salesgym.serve.wire import WireError, read_json, replaying
from salesgym.service_api.models import (
    BenchmarkSplit,
    Closed,
    Created,
    CreateSession,
    EnvList,
    Health,
    Observation,
    Problem,
    ReplayReport,
    SessionList,
    SessionView,
    StepRequest,
    StepResult,
    ToolsView,
)

SessionId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
SplitName = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (400, 401, 403, 404, 408, 409, 410, 413, 415, 422, 429, 503)
}
JSON_BODY = "salesgym.json"  # where the body guard leaves a body it has read (the step's fast path takes it)
Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class FastJSON(Response):
    """JSON by orjson, without validating the body against the response model again: the manager builds
    these bodies itself, and the step path is the service's hot loop (the model still documents it)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content)
        except TypeError:  # an integer beyond 64 bits, say: the standard library writes anything JSON
            return json.dumps(content).encode()


def _problem(status: int, error: str, detail: str, state_version: int | None = None) -> JSONResponse:
    body = Problem(error=error, detail=" ".join(detail.split())[:500], state_version=state_version)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status)


def _invalid_problem(errors: Sequence[Any]) -> JSONResponse:
    """A request that failed validation: 400 when the body is not JSON, else 422 naming the first error."""
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    if first.get("type") == "json_invalid":
        return _problem(400, "malformed_json", f"the body is not JSON ({first.get('ctx', {}).get('error', '')})")
    return _problem(422, "invalid_request", f"{where}: {first.get('msg', 'invalid request')}")


STEP_PATH = re.compile(r"/sessions/([A-Za-z0-9_-]{1,64})/step")


class StepFastPath:
    """``POST /sessions/{id}/step`` without FastAPI's per-request machinery: its dependency solving, validation
    and response layers cost ~10x the step itself, and the step is the service's hot loop (64 sessions stepping
    on 2 cores queue behind each other). The same checks in FastAPI's order with the same answers: a body that
    is not JSON (400), the token (401), the body's shape (absent or wrong: 422), then the manager.
    Anything else (another route, a path FastAPI would refuse, a body that is not declared JSON) passes through
    to the app, whose declared route documents this one in the OpenAPI schema.
    ``tests/serve/test_serve_fast_step.py`` holds the two paths to the same answers."""

    def __init__(self, app: ASGIApp, manager: SessionManager, tokens: Tokens) -> None:
        self.app, self.manager, self.tokens = app, manager, tokens

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        match = STEP_PATH.fullmatch(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        headers = dict(scope["headers"]) if match else {}
        if match is None or headers.get(b"content-type") != b"application/json":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False) and message["type"] == "http.request"
        response = self.answer(match.group(1), headers.get(b"authorization"), body, scope.get(JSON_BODY))
        await response(scope, receive, send)

    def answer(self, session_id: str, authorization: bytes | None, body: bytes, data: Any = None) -> Response:
        if body and data is None:  # not read by the body guard (an app without it): read it here, as strictly
            try:
                data = read_json(body)
            except WireError as err:
                return _problem(400, "malformed_json", str(err))
        who = self.tokens.check(authorization.decode("latin-1") if authorization is not None else None)
        if who is None:
            return _problem(401, "unauthorized", "send Authorization: Bearer <token>")
        if not body:
            return _invalid_problem([{"type": "missing", "loc": ("body",), "msg": "Field required"}])
        try:
            request = StepRequest.model_validate(data, from_attributes=True)  # as FastAPI validates a body
        except ValidationError as err:
            return _invalid_problem([{**e, "loc": ("body", *e["loc"])} for e in err.errors()])
        try:
            return FastJSON(self.manager.step(who, session_id, request.state_version, request.action))
        except ServiceError as err:
            return _problem(err.status, err.error, err.detail, err.state_version)


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, by the declared length or by counting the stream
    (a chunked body has no length to trust); then any body that is not declared ``application/json`` (415) or
    that ``wire.read_json`` refuses (400), before any handler or the step's fast path sees it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        # read the whole (bounded) body first, so an oversized chunked body is refused before any handler runs
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body:
            refused = _refuse_body(dict(scope.get("headers") or ()).get(b"content-type"), body, scope)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, replaying(body, receive), send)

    async def _refuse(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                      send: Callable[[Any], Awaitable[None]]) -> None:
        response = _problem(413, "too_large", f"request bodies are limited to {self.limit} bytes")
        await response(scope, receive, send)


def _refuse_body(content_type: bytes | None, body: bytes, scope: Scope) -> Response | None:
    """The answer refusing ``body``, or None after leaving its value in ``scope`` for the step's fast path."""
    kind, _, params = (content_type or b"").decode("latin-1").partition(";")
    charset = params.strip().lower().removeprefix("charset=").strip('"') if params.strip() else "utf-8"
    if kind.strip().lower() != "application/json" or charset not in ("utf-8", "utf8"):
        return _problem(415, "unsupported_media_type", "bodies are JSON: send Content-Type: application/json "
                        f"(UTF-8), not {(content_type or b'none').decode('latin-1')[:60]!r}")
    try:
        scope[JSON_BODY] = read_json(body)
    except WireError as err:
        return _problem(400, "malformed_json", f"the body is refused: {err}")
    return None


# async, though they never wait: FastAPI runs a plain ``def`` dependency in its thread pool, a thread hop per request
async def caller(request: Request,
                 authorization: Annotated[str | None, Header(include_in_schema=False)] = None) -> Principal:
    found = request.app.state.tokens.check(authorization)
    if found is None:
        raise ServiceError(401, "unauthorized", "send Authorization: Bearer <token>")
    return found  # type: ignore[no-any-return]


async def operator(who: Annotated[Principal, Depends(caller)]) -> Principal:
    if not who.operator:
        raise ServiceError(403, "forbidden", "this needs the operator token")
    return who


Caller = Annotated[Principal, Depends(caller)]
Operator = Annotated[Principal, Depends(operator)]


def create_app(store: Store, tokens: Tokens | None = None, limits: Limits | None = None,
               sweep_every_s: float = 30.0, fast_step: bool = True, secrets: Secrets | None = None,
               sandbox: SandboxLimits | None = None) -> FastAPI:
    """The service over ``store``. Its secrets come as values (``secrets.take`` read them); ``tokens`` alone is
    enough for a service with no proof key or split key of its own."""
    secrets = secrets or Secrets(tokens or Tokens())
    tokens = secrets.tokens
    manager = SessionManager(store, limits, secrets.verifier_key)
    runs = Runs(sandbox=sandbox, verifier_key=secrets.verifier_key)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async def sweeper() -> None:
            while True:
                await asyncio.sleep(sweep_every_s)
                manager.sweep()

        manager.sweep()
        task = asyncio.create_task(sweeper())
        try:
            yield
        finally:
            task.cancel()
            runs.close()

    app = FastAPI(title="salesgym", version=salesgym.__version__, lifespan=lifespan, responses=PROBLEMS,
                  description="Sessions of registered salesgym environments for remote agents (docs/serve.md).")
    app.state.manager = manager
    app.state.tokens = tokens
    app.state.split_key = secrets.split_key
    if fast_step:  # inside the body guard, so the fast path only ever sees bounded bodies
        app.add_middleware(StepFastPath, manager=manager, tokens=tokens)
    app.add_middleware(BodyLimit, limit=manager.limits.max_request_bytes)

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, err: ServiceError) -> JSONResponse:
        return _problem(err.status, err.error, err.detail, err.state_version)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        return _invalid_problem(err.errors())

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, err: StarletteHTTPException) -> JSONResponse:
        code = "malformed_body" if err.status_code == 400 else "http_error"
        return _problem(err.status_code, code, str(err.detail))

    def created(live: Live) -> dict[str, Any]:
        return {**live.view(), "instructions": live.env.instructions(), "tools": live.env.tool_schemas()}

    @app.get("/healthz", response_model=Health, tags=["service"])
    async def health() -> dict[str, Any]:
        return {"status": "ok", "version": salesgym.__version__, "auth": tokens.enabled,
                "open_sessions": store.count_open()}

    @app.get("/envs", response_model=EnvList, tags=["service"])
    async def envs(who: Caller) -> dict[str, Any]:
        return {"envs": sorted(salesgym.registry())}

    @app.post("/sessions", response_model=Created, status_code=201, tags=["agent"])
    async def create(body: CreateSession, who: Caller) -> dict[str, Any]:
        if body.task is not None:
            task = tasks.resolve(body.task.split, body.task.id, secrets.split_key)
            return created(manager.create(who, task.env_id, task.kwargs, task.seed, task.ref))
        assert body.env_id is not None and body.seed is not None  # the model checked it
        return created(manager.create(who, body.env_id, body.kwargs, body.seed))

    @app.get("/benchmark/{split}", response_model=BenchmarkSplit, tags=["agent"])
    async def benchmark(split: SplitName, who: Caller) -> dict[str, Any]:
        return tasks.listing(split)

    @app.get("/benchmark/{split}/sessions", tags=["operator"])
    async def benchmark_sessions(split: SplitName, who: Operator) -> dict[str, Any]:
        tasks.manifest(split)
        return {"split": split, "code": tasks.code(), "sessions": manager.task_sessions(split)}

    @app.get("/benchmark/{split}/runs", tags=["operator"])
    async def benchmark_runs(split: SplitName, who: Operator) -> dict[str, Any]:
        """Every verifier run opened for a task of the split, oldest first, with its verdict once judged (a
        practice run, opened with the caller's own seed, is never among them)."""
        tasks.manifest(split)
        return {"split": split, "code": tasks.code(), "runs": runs.of_split(split)}

    @app.get("/sessions", response_model=SessionList, tags=["agent"])
    async def list_sessions(who: Caller) -> dict[str, Any]:
        return {"sessions": [s.view() for s in manager.sessions(who)]}

    @app.get("/sessions/{session_id}", response_model=SessionView, tags=["agent"])
    async def view(session_id: SessionId, who: Caller) -> Response:
        return FastJSON(manager.get(who, session_id).view())

    @app.get("/sessions/{session_id}/observation", response_model=Observation, tags=["agent"])
    async def observation(session_id: SessionId, who: Caller) -> Response:
        return FastJSON(manager.get(who, session_id).env.observe())

    @app.get("/sessions/{session_id}/tools", response_model=ToolsView, tags=["agent"])
    async def tools(session_id: SessionId, who: Caller) -> dict[str, Any]:
        env = manager.get(who, session_id).env
        return {"openai": env.tool_schemas(), "mcp": env.mcp_tools(), "instructions": env.instructions()}

    @app.post("/sessions/{session_id}/step", response_model=StepResult, tags=["agent"])
    async def step(session_id: SessionId, body: StepRequest, who: Caller) -> Response:
        return FastJSON(manager.step(who, session_id, body.state_version, body.action))

    @app.post("/sessions/{session_id}/clone", response_model=Created, status_code=201, tags=["agent"])
    async def clone(session_id: SessionId, who: Caller) -> dict[str, Any]:
        return created(manager.clone(who, session_id))

    @app.post("/sessions/{session_id}/replay", response_model=ReplayReport, tags=["agent"])
    async def replay(session_id: SessionId, who: Caller) -> dict[str, Any]:
        return manager.replay_check(who, session_id)

    @app.delete("/sessions/{session_id}", response_model=Closed, tags=["agent"])
    async def close(session_id: SessionId, who: Caller) -> dict[str, Any]:
        manager.close(who, session_id)
        return {"session_id": session_id, "status": "closed"}

    @app.get("/sessions/{session_id}/score", tags=["operator"])
    async def score(session_id: SessionId, who: Operator) -> dict[str, Any]:
        result: dict[str, Any] = manager.get(who, session_id).env.score()
        return result

    @app.get("/sessions/{session_id}/events", tags=["operator"])
    async def events(session_id: SessionId, who: Operator, offset: Annotated[int, Query(ge=0)] = 0,
                     limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000) -> dict[str, Any]:
        env = manager.get(who, session_id).env
        log = env.event_log()
        return {"total": len(log), "offset": offset, "events": log[offset:offset + limit],
                "event_log_hash": env.event_log_hash()}

    @app.get("/sessions/{session_id}/hidden", tags=["operator"])
    async def hidden(session_id: SessionId, who: Operator) -> dict[str, Any]:
        truth: dict[str, Any] = manager.get(who, session_id).env.hidden_truth()
        return truth

    app.state.runs = runs
    app.include_router(verifier_router(runs), responses=PROBLEMS)  # the verifier API (verifier_api.py)

    @app.exception_handler(Exception)
    async def _bug(request: Request, err: Exception) -> JSONResponse:  # never expected: say so, no traceback
        return _problem(500, "internal_error", f"{type(err).__name__} (a bug in the service; please report it)")

    return app
