"""What reaches the MCP server's SDK: only messages that ``wire.read_json`` reads and that are JSON-RPC.

The SDK's transports hand a message they cannot parse to the session as an exception, which answers nothing:
a client that sent arguments nested 2,000 deep, a lone surrogate or a 5,000-digit integer waited forever. Here
every message is read strictly first (``wire.py``) and checked as JSON-RPC; one that is refused is answered at
once with a JSON-RPC error for its ``id`` (found by a shallow look at its top level, ``wire.envelope``; ``null``
when it has none; over stdio a notification gets no answer, as JSON-RPC says). Over stdio (:func:`stdio`) the SDK's own
transport is fed the accepted lines and writes the refusals; over streamable HTTP (:func:`guard`) a refused
body gets a 4xx whose body is that error.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from salesgym.serve.wire import WireError, envelope, read_json, replaying

MAX_MESSAGE_BYTES = 4 << 20


def check(data: bytes) -> types.JSONRPCError | None:
    """None if ``data`` may reach the SDK, else the JSON-RPC error that answers it."""
    if len(data) > MAX_MESSAGE_BYTES:
        return refusal(data, types.INVALID_REQUEST, f"a message is at most {MAX_MESSAGE_BYTES} bytes")
    try:
        value = read_json(data)
    except WireError as err:
        return refusal(data, types.PARSE_ERROR, f"parse error: {err}")
    try:
        types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])[:80]
        return refusal(data, types.INVALID_REQUEST, f"not a JSON-RPC message ({where}: {first['msg']})")
    return None


def refusal(data: bytes, code: int, reason: str) -> types.JSONRPCError:
    """The error answering ``data``: for its ``id`` when a shallow look finds one, else for ``null``."""
    found = envelope(data)
    return types.JSONRPCError(jsonrpc="2.0", id=found.id if found.has_id else None,
                              error=types.ErrorData(code=code, message=" ".join(reason.split())[:500]))


def is_notification(data: bytes) -> bool:
    """A message with a method and no id: JSON-RPC answers it with nothing, even an error."""
    found = envelope(data)
    return found.has_method and not found.has_id


# -- stdio --------------------------------------------------------------------------------------------------------
class _Lines:
    """The process's stdin as the SDK's transport iterates it: accepted lines only. Refused ones are answered
    on the transport's write stream, once it is known (:meth:`answer_on`)."""

    def __init__(self, wire: BinaryIO) -> None:
        self.wire = wire
        self.write: Any = None
        self.ready = anyio.Event()

    def answer_on(self, write: Any) -> None:
        self.write = write
        self.ready.set()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anyio.to_thread.run_sync(self._read_line)
            if line is None:
                raise StopAsyncIteration
            if not line.strip():
                continue
            answer = check(line)
            if answer is None:
                return line.decode("utf-8")
            if not is_notification(line):
                await self.ready.wait()
                await self.write.send(SessionMessage(answer))

    def _read_line(self) -> bytes | None:
        """One line (without its newline), its first ``MAX_MESSAGE_BYTES + 1`` bytes if longer; None at the end."""
        line = self.wire.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            rest = line
            while rest and not rest.endswith(b"\n"):  # skip the rest of an oversized line
                rest = self.wire.readline(1 << 20)
        return line.rstrip(b"\r\n")


@asynccontextmanager
async def stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, fed through :class:`_Lines`: read and write streams for ``Server.run``."""
    from mcp.server.stdio import stdio_server

    wire = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # a handler that reads stdin reads nothing, and never a client's message
    os.close(null)
    lines = _Lines(wire)
    try:
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            lines.answer_on(write)
            yield read, write
    finally:
        wire.close()


# -- streamable HTTP ----------------------------------------------------------------------------------------------
ASGI = Callable[[Any, Any, Any], Awaitable[None]]


def guard(app: ASGI) -> ASGI:
    """``app`` behind the same reading: a POST body that is not JSON declared as such (415), larger than
    ``MAX_MESSAGE_BYTES`` (413) or refused by :func:`check` (400) is answered with its JSON-RPC error."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False) and size <= MAX_MESSAGE_BYTES
        body = b"".join(chunks)
        content_type = dict(scope.get("headers") or ()).get(b"content-type", b"").decode("latin-1").lower()
        kind, _, params = content_type.partition(";")
        answer: types.JSONRPCError | None
        if kind.strip() != "application/json" or params.strip() not in ("", "charset=utf-8", 'charset="utf-8"'):
            status, answer = 415, refusal(body, types.INVALID_REQUEST, "messages are JSON: send Content-Type: "
                                          "application/json (UTF-8)")
        elif size > MAX_MESSAGE_BYTES:
            status, answer = 413, refusal(body, types.INVALID_REQUEST, f"a message is at most {MAX_MESSAGE_BYTES} "
                                          "bytes")
        else:
            answer = check(body)
            status = 200 if answer is None else 400
        if answer is not None:
            await _answer(send, status, answer)
            return
        await app(scope, replaying(body, receive), send)

    return guarded


async def _answer(send: Any, status: int, error: types.JSONRPCError) -> None:
    body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
