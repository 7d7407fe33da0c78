"""``salesgym mcp --record F``: every attempt is recorded when its connection ends, finished or not, on both
transports: an HTTP session the client closes, the sessions still open when the server is stopped with SIGTERM,
and a stdio server stopped with SIGTERM in the middle of its episode. The record is the operator's copy of a
benchmark task's attempts: one lost is an attempt that silently does not count."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_helpers import AGENT_A, DEBUG, VERIFIER_KEY, free_port

ENV = {**os.environ, "SALESGYM_VERIFIER_KEY": VERIFIER_KEY, "SALESGYM_AGENT_TOKENS": AGENT_A}
WAIT = {"hours": 4, "until": None}


def _lines(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def _wait_for(predicate: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _start(record: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "salesgym.cli", "mcp", DEBUG, "--seed", "3", "--record",
                             str(record), *extra], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@asynccontextmanager
async def _session(url: str) -> AsyncIterator[Client]:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=30) as http_client,
                Client(streamable_http_client(url, http_client=http_client)) as client):
        yield client


def test_http_records_each_session_when_it_ends_and_the_open_ones_at_sigterm(tmp_path: Path) -> None:
    record, port = tmp_path / "record.jsonl", free_port()
    server = _start(record, "--transport", "http", "--port", str(port))
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(lambda: _answers(url), "the server")

        async def main() -> None:
            async with _session(url) as stepped:  # a session that took one step, then closed by its client
                await stepped.call_tool("wait", WAIT)
            await anyio.to_thread.run_sync(lambda: _wait_for(lambda: len(_lines(record)) == 1, "the first record"))
            first = _lines(record)[0]
            assert first["steps"] == 1 and first["actions"] == [{"tool": "wait", "args": WAIT}]
            assert first["finished"] is False
            async with _session(url) as looking, _session(url) as stepping:  # open when the server is stopped
                await looking.read_resource("salesgym://observation")
                await stepping.call_tool("wait", WAIT)
                await stepping.call_tool("wait", WAIT)
                server.send_signal(signal.SIGTERM)
                await anyio.to_thread.run_sync(lambda: server.wait(60))

        anyio.run(main)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(10)
    lines = _lines(record)
    assert sorted(line["steps"] for line in lines) == [0, 1, 2], server.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    assert all(line["finished"] is False and line["env_id"] == DEBUG for line in lines)


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:
        return False
    return True


def _rpc(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any] | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:  # skip notifications the server may send first
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == message["id"]:
            return answer  # type: ignore[no-any-return]


def test_stdio_records_the_attempt_when_the_server_is_stopped_with_sigterm(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    server = _start(record)
    try:
        hello = _rpc(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})
        assert hello is not None and "result" in hello, hello
        _rpc(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = _rpc(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "wait", "arguments": WAIT}})
        assert answer is not None and answer["result"]["isError"] is False, answer
        server.send_signal(signal.SIGTERM)  # the client is still connected: stdin stays open
        server.wait(60)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(10)
    log = server.stderr.read().decode()  # type: ignore[union-attr]
    lines = _lines(record)
    assert len(lines) == 1, log[-2000:]
    assert lines[0]["steps"] == 1 and lines[0]["finished"] is False
    assert "Traceback" not in log
