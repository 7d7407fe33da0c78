"""An MCP server for any registered environment (``salesgym mcp``), on the ``mcp`` SDK 2.x.

Each connection plays one episode: the tools are exactly ``env.mcp_tools()`` (names, descriptions, input and
output schemas), a call is ``env.step({"tool": name, "args": arguments})``, and the observation is the resource
``salesgym://observation`` (the task card is ``salesgym://instructions`` and the server's instructions). The
SDK's low-level ``Server`` is used rather than ``MCPServer``, which derives schemas from Python signatures:
here the environment's exported schemas are the one source of truth.

Only the agent side is served: no tool or resource reaches score, hidden truth or the event log. What an
operator needs is written to ``--record`` (one JSON line per attempt: the calls, the event-log hash, the
verifier's score), outside the connection: when the episode ends, or else when its connection does (the
client closes it, it idles out, or the server stops, SIGTERM included), so no attempt goes unrecorded.

Transports: stdio (the process is the connection) and streamable HTTP, where an episode belongs to an MCP
session (``Mcp-Session-Id``); on both, a message reaches the SDK only once ``mcp_wire.py`` has read it strictly,
and one it refuses is answered with a JSON-RPC error. The 2026-07-28 protocol era has no sessions (every request
stands alone), so the HTTP server declines ``server/discover`` and clients fall back to the handshake era, which
has them.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

import salesgym

OBSERVATION_URI = "salesgym://observation"
INSTRUCTIONS_URI = "salesgym://instructions"
SINGLE = "-"  # the key of the one episode a stdio connection plays


@dataclass
class Episode:
    env: Any
    actions: list[Any] = field(default_factory=list)
    done: bool = False
    last_used: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.time)  # a task's trials are counted in the order they started


@dataclass(frozen=True)
class EpisodeSpec:
    env_id: str
    seed: int
    kwargs: dict[str, Any] = field(default_factory=dict)
    task: str | None = None  # "split/task id" when the episodes are a benchmark task's (serve/tasks.py)
    split_sha256: str | None = None
    verifier_key: bytes | None = field(default=None, repr=False)  # the server's proof key (secrets.take)

    def make(self) -> Any:
        key = {} if self.verifier_key is None else {"verifier_key": self.verifier_key}
        env = salesgym.make(self.env_id, **self.kwargs, **key)
        env.reset(seed=self.seed)
        return env


class Episodes:
    """The live episodes of a server, by connection; idle ones are dropped, finished ones recorded."""

    def __init__(self, spec: EpisodeSpec, record: Path | None = None, idle_s: float = 3600.0,
                 max_episodes: int = 256) -> None:
        self.spec, self.record, self.idle_s, self.max_episodes = spec, record, idle_s, max_episodes
        self.live: dict[str, Episode] = {}

    def get(self, key: str) -> Episode:
        episode = self.live.get(key)
        if episode is None:
            self.sweep()
            if len(self.live) >= self.max_episodes:
                raise MCPError(types.INVALID_REQUEST, "the server has no room for another episode")
            episode = self.live[key] = Episode(self.spec.make())
        episode.last_used = time.monotonic()
        return episode

    def step(self, key: str, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        episode = self.get(key)
        action = {"tool": name, "args": arguments or {}}
        obs, reward, terminated, truncated, info = episode.env.step(action)
        if not episode.done:
            episode.actions.append(action)
        result = info["tool_result"]
        body = {"tool_result": result, "reward": reward, "terminated": terminated, "truncated": truncated,
                "state_version": info["state_version"]}
        if (terminated or truncated) and not episode.done:
            episode.done = True
            self._write(episode)
        return types.CallToolResult(content=[types.TextContent(type="text", text=obs["text"])],
                                    structured_content=body, is_error=result["status"] == "error")

    def sweep(self) -> None:
        """Record and drop the episodes untouched for ``idle_s`` (a client that went away without a word)."""
        clock = time.monotonic()
        for k in [k for k, e in self.live.items() if clock - e.last_used > self.idle_s]:
            self._drop(k)

    def end(self, key: str) -> None:
        """The connection of ``key`` ended: record its episode if it is still open, and drop it."""
        if key in self.live:
            self._drop(key)

    def flush(self) -> None:
        """Record every episode still open (a connection that ended before its episode did) and drop it: an
        attempt at a benchmark task counts whether or not the agent finished it."""
        for key in list(self.live):
            self._drop(key)

    def _drop(self, key: str) -> None:
        episode = self.live.pop(key)
        if not episode.done:
            self._write(episode)

    def _write(self, episode: Episode) -> None:
        if self.record is None:
            return
        env, spec = episode.env, self.spec
        line = {"env_id": spec.env_id, "seed": spec.seed, "kwargs": spec.kwargs, "steps": len(episode.actions),
                "finished": episode.done, "started": episode.started, "actions": episode.actions,
                "event_log_hash": env.event_log_hash(), "score": env.score()}
        if spec.task is not None:
            from salesgym.serve.tasks import code

            line |= {"task": spec.task, "split_sha256": spec.split_sha256, "code": code()}
        with self.record.open("a") as out:  # one locked append: several stdio servers may share the file
            fcntl.flock(out, fcntl.LOCK_EX)
            out.write(json.dumps(line) + "\n")


def build_server(episodes: Episodes, key_of: Callable[[Any], str]) -> Server[Any]:
    """The MCP server; ``key_of(request_context)`` names the episode a request belongs to."""
    probe = episodes.spec.make()
    tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"],
                        output_schema=t["outputSchema"]) for t in probe.mcp_tools()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return episodes.step(key_of(ctx), params.name, params.arguments)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=OBSERVATION_URI, name="observation", mime_type="application/json",
                           description="the current observation: {text, data}"),
            types.Resource(uri=INSTRUCTIONS_URI, name="instructions", mime_type="text/markdown",
                           description="the task card: goal, rules, how the episode ends"),
        ])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        env = episodes.get(key_of(ctx)).env
        uri = str(params.uri)
        if uri == OBSERVATION_URI:
            text, mime = json.dumps(env.observe()), "application/json"
        elif uri == INSTRUCTIONS_URI:
            text, mime = env.instructions(), "text/markdown"
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri[:100]!r}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=text, mime_type=mime)])

    return Server(f"salesgym {episodes.spec.env_id}", version=salesgym.__version__,
                  instructions=probe.instructions(), on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


def _single(ctx: Any) -> str:
    return SINGLE


def _http_session(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    session = request.headers.get("mcp-session-id") if request is not None else None
    if not session:
        raise MCPError(types.INVALID_REQUEST, "this server plays one episode per MCP session: connect with the "
                       "initialize handshake (the 2025 protocol era), which gives the connection a session")
    return str(session)


async def serve_stdio(episodes: Episodes) -> None:
    """Serve one connection on stdin/stdout until it closes; its episode is recorded then, or at SIGTERM."""
    from salesgym.serve import mcp_wire

    server = build_server(episodes, _single)

    async def record_on_sigterm() -> None:
        # Cancelling the server would wait for the transport's blocked read of stdin (a thread): record the
        # attempt here, in the event loop between two calls, and end the process.
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                episodes.flush()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(143)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(record_on_sigterm)
            async with mcp_wire.stdio() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        episodes.flush()


def http_app(episodes: Episodes, host: str, agent_check: Callable[[str | None], bool] | None = None) -> Any:
    """The streamable HTTP app at ``/mcp``; ``agent_check(authorization header)`` guards it when set.

    An MCP session's episode is recorded when the session ends: the client's ``DELETE`` of it, ``idle_s``
    without a request (the SDK forgets the session then too), or the server's shutdown (SIGTERM: uvicorn
    stops the app, whose lifespan records every episode still open)."""
    server = build_server(episodes, _http_session)

    async def no_discover(ctx: Any, params: Any) -> Any:
        raise MCPError(types.METHOD_NOT_FOUND, "server/discover is not served: use the initialize handshake")

    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    from salesgym.serve.mcp_wire import guard

    starlette_app = server.streamable_http_app(host=host, session_idle_timeout=episodes.idle_s)
    _record_on_shutdown(starlette_app, episodes)
    app = guard(starlette_app)  # every message read strictly first (mcp_wire.py)

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        if agent_check is not None:
            header = headers.get(b"authorization")
            if not agent_check(header.decode("latin-1") if header is not None else None):
                from starlette.responses import JSONResponse

                response = JSONResponse({"error": "unauthorized", "detail": "send Authorization: Bearer <token>"},
                                        status_code=401)
                await response(scope, receive, send)
                return
        session = headers.get(b"mcp-session-id")
        if scope["method"] != "DELETE" or session is None:
            await app(scope, receive, send)
            return
        status = 0

        async def watch(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await app(scope, receive, watch)
        if 200 <= status < 300:  # the client ended its session: its attempt is over
            episodes.end(session.decode("latin-1"))

    return asgi


def _record_on_shutdown(app: Any, episodes: Episodes) -> None:
    """Wrap the Starlette app's lifespan: sweep idle episodes while it runs, record the open ones at its end
    (after the SDK has stopped every session)."""
    inner = app.router.lifespan_context

    async def sweep() -> None:
        while True:
            await anyio.sleep(min(60.0, episodes.idle_s))
            episodes.sweep()

    @asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        try:
            async with inner(target) as state, anyio.create_task_group() as tg:
                tg.start_soon(sweep)
                yield state
                tg.cancel_scope.cancel()
        finally:
            episodes.flush()

    app.router.lifespan_context = lifespan
