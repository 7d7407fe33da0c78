"""OpenEnv: any registered salesgym environment as an OpenEnv ``Environment``, served by OpenEnv's own app
factory (``pip install 'salesgym[openenv]'``; written against openenv 0.10.0).

The actions are OpenEnv's own tool actions: ``ListToolsAction`` (answered with the environment's MCP tool
schemas, as they are) and ``CallToolAction(tool_name, arguments)``, which steps the call. The observation
(:class:`SalesgymObservation`, a ``CallToolObservation``) carries the observation text, the tool result
(``result``), ``reward`` (the step's reward) and ``done`` (terminated or truncated); its ``metadata`` says
which, and on the last step carries the operator-side report (the return, the event-log hash, the verifier's
score) under ``"salesgym"``. So OpenEnv's MCP JSON-RPC (``tools/list``, ``tools/call``) works too, inside a
WebSocket session (an ``{"type": "mcp"}`` message) for a whole episode.

OpenEnv's HTTP ``/reset`` and ``/step`` build a fresh environment for each request, so an episode of more
than one call needs the WebSocket session (``/ws``), which :class:`SalesgymClient` (an OpenEnv
``EnvClient``) uses::

    from salesgym.adapters.openenv import SalesgymClient, serve
    with serve("territory-debug-v0") as url, SalesgymClient(base_url=url).sync() as client:
        result = client.reset(seed=3)
        result = client.step(CallToolAction(tool_name="view_opportunity", arguments={}))

``make_app(env_id)`` is the FastAPI app for ``uvicorn`` (``uvicorn.run(make_app("territory-v0"), ...)``).
``reset`` takes ``seed`` and ``options`` (the environment's reset options), or ``split`` and ``index``: the
``index``-th world of a split manifest (``splits/``), made as ``salesgym bench`` makes it; OpenEnv's task API
(``list_splits``, ``num_tasks``, ``get_task``...) lists those worlds.

Nothing here is imported by ``import salesgym``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import uvicorn
from fastapi import Request
from fastapi.responses import JSONResponse
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
)
from openenv.core.env_server.types import Observation, State
from pydantic import Field

import salesgym
from salesgym.adapters.tool_episode import ToolEpisode, split_tasks

__all__ = ["SalesgymClient", "SalesgymEnvironment", "SalesgymObservation", "SalesgymState", "make_app", "serve"]

START_TIMEOUT_S = 20.0


class SalesgymObservation(CallToolObservation):
    """One step's answer: the observation text and, as ``result``, the environment's tool result (a refused
    call is a result with ``status: "error"``, as OpenEnv has tool errors); ``reward`` and ``done`` as OpenEnv
    has them. At reset: the task card (``instructions``) and the tools' MCP schemas (``tools``). Being
    OpenEnv's ``CallToolObservation``, it also answers ``tools/call`` on OpenEnv's MCP routes."""

    tool_name: str = Field(default="", description="the tool called (empty at reset)")
    text: str = Field(default="", description="the environment's observation text")
    instructions: str | None = Field(default=None, description="the task card (reset only)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="MCP tool schemas (reset only)")


class SalesgymState(State):
    """Operator side: which world, how far, the return so far and the event-log hash."""

    env_id: str = ""
    seed: int | None = None
    done: bool = False
    episode_return: float = 0.0
    event_log_hash: str | None = None


class Refused(ValueError):
    """A request this environment cannot serve (a bad world index, an action of another kind): HTTP 400."""


class NotReset(RuntimeError):
    """A step before any reset: HTTP 409. OpenEnv's plain HTTP ``/step`` builds a fresh environment for every
    request, so it always lands here; a multi-step episode needs a session (``/ws`` or ``/mcp``)."""


NOT_RESET = (
    "call reset() before step(): this environment has no episode. OpenEnv's HTTP /reset and /step each build a "
    "fresh environment, so an episode over HTTP needs a session: the /ws WebSocket (EnvClient, SalesgymClient) "
    "or MCP's /mcp"
)


class SalesgymEnvironment(Environment[CallToolAction, SalesgymObservation, SalesgymState]):
    """``env_id`` (any registered id, made with ``make_kwargs``) behind OpenEnv's ``Environment``. One
    instance per session, nothing shared, so concurrent sessions are safe."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, make_kwargs: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        salesgym.env_class(env_id)  # an unknown id fails here, when the server starts
        self.env_id = env_id
        self.make_kwargs = dict(make_kwargs or {})
        self._episode: ToolEpisode | None = None
        self._state = SalesgymState(env_id=env_id)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: Mapping[str, Any] | None = None,
        split: str | None = None,
        index: int | None = None,
        **_: Any,
    ) -> SalesgymObservation:
        if split is not None:
            tasks = split_tasks(split)
            if not isinstance(index, int) or not 0 <= index < len(tasks):
                raise Refused(f"split {split!r} has {len(tasks)} worlds; index must be in [0, {len(tasks)})")
            self._episode = tasks[index].start()
        else:
            if seed is None:
                seed = int.from_bytes(os.urandom(4), "big")
            self._episode = ToolEpisode.start(self.env_id, seed, make_kwargs=self.make_kwargs, options=options)
        episode = self._episode
        self._state = SalesgymState(episode_id=episode_id, env_id=episode.env_id, seed=episode.seed,
                                    event_log_hash=episode.env.event_log_hash())  # fmt: skip
        return SalesgymObservation(text=episode.first_text, instructions=episode.instructions,
                                   tools=episode.env.mcp_tools(), done=False, reward=0.0,
                                   metadata={"env_id": episode.env_id, "seed": episode.seed})  # fmt: skip

    def step(self, action: Any, timeout_s: float | None = None, **_: Any) -> Observation:
        if isinstance(action, ListToolsAction):
            tools = self._tools()
            return ListToolsObservation(tools=tools, done=self._state.done, reward=None)
        if not isinstance(action, CallToolAction):
            raise Refused(f"salesgym takes ListToolsAction or CallToolAction, got {type(action).__name__}")
        episode = self._episode
        if episode is None:
            raise NotReset(NOT_RESET)
        step = episode.call(action.tool_name, action.arguments)
        metadata: dict[str, Any] = {"terminated": step.terminated, "truncated": step.truncated,
                                    "state_version": episode.env.state_version}  # fmt: skip
        if step.done:
            metadata["salesgym"] = episode.report()
        state = self._state
        state.step_count += 1
        state.done = step.done
        state.episode_return = episode.episode_return
        state.event_log_hash = episode.env.event_log_hash()
        return SalesgymObservation(text=step.text, tool_name=action.tool_name, result=step.tool_result,
                                   done=step.done, reward=step.reward, metadata=metadata)  # fmt: skip

    @property
    def state(self) -> SalesgymState:
        return self._state

    # -- OpenEnv's task API (``/<env_name>/splits``, ``/tasks``, ``/task``...): the split manifests --------
    def list_splits(self) -> list[dict[str, str]]:
        """The split manifests of this environment's family (``splits/``); pass one to ``reset(split=...)``."""
        from salesgym.bench.splits import available, load, resolve_splits_dir

        family = salesgym.family(self.env_id).name
        names = [n for n in available(resolve_splits_dir()) if salesgym.family(load(n).env_id).name == family]
        return [{"name": n, "type": "train" if "train" in n else "test"} for n in names]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [{"id": t.id, "index": i, "env_id": t.env_id, **t.territory} for i, t in enumerate(split_tasks(split))]

    def num_tasks(self, split: str) -> int:
        return len(split_tasks(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        tasks = self.list_tasks(split)
        if not 0 <= index < len(tasks):
            raise IndexError(index)  # OpenEnv answers 400
        return tasks[index]

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return self.list_tasks(split)[start:stop]

    def _tools(self) -> list[Tool]:
        env = self._episode.env if self._episode is not None else salesgym.make(self.env_id, **self.make_kwargs)
        return [Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
                for t in env.mcp_tools()]  # fmt: skip


def make_app(env_id: str, *, max_concurrent_envs: int = 64, **make_kwargs: Any) -> Any:
    """OpenEnv's FastAPI app (``create_app``) serving ``env_id``: ``/ws`` sessions, ``/reset``, ``/step``,
    ``/state``, ``/schema``, ``/health``. A request the environment refuses is a 400, a step without an
    episode (every plain HTTP ``/step``) a 409, each with its reason."""
    salesgym.env_class(env_id)  # refuse an unknown id now, not in the first session
    factory = functools.partial(SalesgymEnvironment, env_id, make_kwargs)
    app = create_app(factory, CallToolAction, SalesgymObservation, env_name=env_id,
                     max_concurrent_envs=max_concurrent_envs, state_cls=SalesgymState)  # fmt: skip

    async def refused(request: Request, exc: Exception) -> JSONResponse:  # a 4xx with the reason, no traceback
        return JSONResponse({"detail": str(exc)}, status_code=409 if isinstance(exc, NotReset) else 400)

    app.add_exception_handler(NotReset, refused)
    app.add_exception_handler(Refused, refused)
    return app


@contextlib.contextmanager
def serve(env_id: str, *, host: str = "127.0.0.1", port: int = 0, **app_kwargs: Any) -> Iterator[str]:
    """Serve :func:`make_app` with uvicorn from a background thread; yields the base URL (``http://host:port``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(env_id, **app_kwargs), log_level="warning",
                                           timeout_graceful_shutdown=1))  # fmt: skip
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"openenv-{bound}")
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the OpenEnv server for {env_id!r} did not start")
            time.sleep(0.01)
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


class SalesgymClient(EnvClient[Any, Observation, SalesgymState]):
    """OpenEnv's WebSocket client for a salesgym server: ``step`` takes ``CallToolAction`` or
    ``ListToolsAction`` and answers :class:`SalesgymObservation` (``ListToolsObservation`` for a listing)."""

    def _step_payload(self, action: Any) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump()
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        data = dict(payload.get("observation", {}))
        data.update(reward=payload.get("reward"), done=bool(payload.get("done", False)))
        observation: Observation
        if "text" in data:
            observation = SalesgymObservation.model_validate(data)
        else:
            observation = ListToolsObservation.model_validate(data)
        return StepResult(observation=observation, reward=payload.get("reward"), done=bool(payload.get("done")),
                          metadata=payload.get("metadata"))  # fmt: skip

    def _parse_state(self, payload: dict[str, Any]) -> SalesgymState:
        state: SalesgymState = SalesgymState.model_validate(payload)
        return state
