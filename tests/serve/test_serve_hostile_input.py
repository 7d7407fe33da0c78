"""The hostile-input corpus (``salesgym.testing.hostile_input``) against every boundary of the service that reads
a body or a message: every HTTP endpoint that takes a body (and those that take none), and the MCP server over
stdio and over streamable HTTP. Every item gets a 4xx or a JSON-RPC error with a reason, the server keeps
serving (the next good request is answered, nothing was applied) and no traceback reaches its log."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_helpers import AGENT_A, DEBUG, OPERATOR, Server, free_port, running

from salesgym.testing.hostile_input import WIRE, Hostile

pytest.importorskip("jq")

WAIT = b'{"tool": "wait", "args": {"hours": 1, "until": null}}'
MCP_ENV = {**os.environ, "SALESGYM_AGENT_TOKENS": AGENT_A}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("hostile")) as s:
        yield s


def _send(server: Server, method: str, path: str, item: Hostile, before: bytes, after: bytes,
          token: str | None = AGENT_A) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if item.content_type is not None:
        headers["Content-Type"] = item.content_type
    return httpx.request(method, server.url + path, content=item.inside(before, after), headers=headers, timeout=60)


def _refused(r: httpx.Response, item: Hostile, where: str) -> None:
    assert 400 <= r.status_code < 500, f"{where}, {item}: {r.status_code} {r.text[:300]}"
    body = r.json()
    assert body["error"] and body["detail"] and len(body["detail"]) <= 500, f"{where}, {item}: {body}"


def test_every_endpoint_refuses_every_item_with_a_4xx_and_keeps_serving(server: Server) -> None:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=60) as client:
        sid = client.post("/sessions", json={"env_id": DEBUG, "seed": 1}).json()["session_id"]
        run_id = client.post("/runs", json={"kwargs": {"template": "crm-closed-won"}, "seed": 4}).json()["run_id"]
        version = client.get(f"/sessions/{sid}").json()["state_version"]
        state = client.get(f"/runs/{run_id}/state").json()
    endpoints: list[tuple[str, str, bytes, bytes]] = [
        ("POST", "/sessions", b'{"env_id": "territory-debug-v0", "seed": 1, "kwargs": {"x": ', b"}}"),
        ("POST", f"/sessions/{sid}/step", b'{"state_version": %d, "action": ' % version, b"}"),
        ("POST", f"/sessions/{sid}/step", b'{"state_version": %d, "action": {"tool": "wait", "args": ' % version,
         b"}}"),
        ("POST", f"/sessions/{sid}/clone", b"", b""),
        ("POST", "/runs", b'{"seed": 1, "kwargs": {"template": ', b"}}"),
        ("PUT", f"/runs/{run_id}/state", b'{"app": "crm", "tables": {"deals": {"1": {"x": ', b"}}}}"),
        ("POST", f"/runs/{run_id}/calls", b'{"calls": [{"tool": "finish_task", "args": {"summary": ', b"}}]}"),
        ("POST", f"/runs/{run_id}/assertions", b'{"assertions": [{"expr": ".", "op": "equals", "expected": ', b"}]}"),
        ("POST", f"/runs/{run_id}/verdict", b"", b""),
    ]
    for item in WIRE:
        for method, path, before, after in endpoints:
            _refused(_send(server, method, path, item, before, after), item, f"{method} {path}")
        _refused(_send(server, "POST", f"/sessions/{sid}/step", item, endpoints[1][2], b"}", token=None), item,
                 "a step without a token")
        assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=60) as client:
        assert client.get(f"/sessions/{sid}").json()["steps"] == 0  # nothing was applied
        assert client.get(f"/runs/{run_id}/state").json() == state
        assert client.get(f"/runs/{run_id}").json()["calls"] == 0
        good = client.post(f"/sessions/{sid}/step", json={"state_version": version, "action": json.loads(WAIT)})
        assert good.status_code == 200 and good.json()["step"] == 1
    text = server.log.read_text()
    assert "Traceback" not in text and " 500 " not in text


# -- MCP -------------------------------------------------------------------------------------------------------
def _call(item: Hostile, request_id: int) -> bytes:
    before = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "wait", "arguments": '
    return item.inside(before % request_id, b"}}")


def _is_error_answer(message: dict[str, Any], request_id: int, item: Hostile) -> None:
    """An error for the request (a whole message carries its own id; one without a readable id gets null)."""
    assert item.whole or message.get("id") == request_id, (item.name, message)
    error = message.get("error")
    if error is None:  # a tool call the environment refused as data is a refusal with a reason too
        result = message["result"]
        assert result["isError"] and result["content"][0]["text"], (item.name, message)
        return
    assert isinstance(error["code"], int) and error["message"], (item.name, message)


class StdioPeer:
    """``salesgym mcp`` over stdio, spoken to in raw JSON lines (an SDK client cannot send most of the corpus)."""

    def __init__(self, stderr: Path) -> None:
        self.err = stderr.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "salesgym.cli", "mcp", DEBUG], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, env=MCP_ENV)
        self.buffer = b""

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "no answer: the client would wait forever"
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the server closed its output"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.err.close()


def test_mcp_stdio_answers_every_item_and_keeps_serving(tmp_path: Path) -> None:
    peer = StdioPeer(tmp_path / "stderr.log")
    try:
        peer.send(json.dumps(INIT).encode())
        assert "result" in peer.receive()
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for n, item in enumerate((h for h in WIRE if not h.over_http_only), 1):
            peer.send(_call(item, n))
            _is_error_answer(peer.receive(), n, item)
        peer.send(_call(Hostile("good", "none", b'{"hours": 1, "until": null}'), 9999))
        answer = peer.receive()
        assert answer["id"] == 9999 and not answer["result"]["isError"]
        assert answer["result"]["structuredContent"]["state_version"] >= 1
    finally:
        peer.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def mcp_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("mcp-hostile")
    port, log_path = free_port(), tmp / "mcp.log"
    log = log_path.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "salesgym.cli", "mcp", DEBUG, "--transport", "http", "--port",
                             str(port)], stdout=log, stderr=subprocess.STDOUT, env=MCP_ENV)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        yield url, log_path
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _answer(r: httpx.Response) -> dict[str, Any] | None:
    """The JSON-RPC message of an answer, plain JSON or one server-sent event; None when the body has none."""
    if "text/event-stream" in r.headers.get("content-type", ""):
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return json.loads(data[-1]) if data else None
    try:
        return r.json()  # type: ignore[no-any-return]
    except ValueError:
        return None


def test_mcp_streamable_http_answers_every_item_and_keeps_serving(mcp_http: tuple[str, Path]) -> None:
    url, log = mcp_http
    headers = {"Authorization": f"Bearer {AGENT_A}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=60) as http:
        init = http.post(url, json=INIT)
        assert init.status_code == 200, init.text
        session = {"mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        for n, item in enumerate(WIRE, 1):
            extra = {**session, **({"Content-Type": item.content_type} if item.content_type else {})}
            r = http.post(url, content=_call(item, n), headers=extra)
            message = _answer(r)
            if 400 <= r.status_code < 500 and (message is None or "error" in message):
                assert message is None or message["error"]["message"], (item.name, r.text[:300])
                if message is None:
                    assert r.text.strip(), (item.name, r.status_code)
                continue
            assert r.status_code == 200 and message is not None, (item.name, r.status_code, r.text[:300])
            _is_error_answer(message, n, item)

    async def still_serving() -> None:  # the SDK's own client, in a new session
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=60) as client,
                    Client(streamable_http_client(url, http_client=client)) as mcp):
            result = await mcp.call_tool("wait", {"hours": 1, "until": None})
            assert not result.is_error

    anyio.run(still_serving)
    assert "Traceback" not in log.read_text(errors="replace")


def test_operator_endpoints_refuse_the_corpus_too(server: Server) -> None:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=60) as client:
        run_id = client.post("/runs", json={"kwargs": {"template": "crm-closed-won"}, "seed": 4}).json()["run_id"]
    for item in WIRE:
        r = _send(server, "POST", f"/runs/{run_id}/assertions", item, b'{"task": ', b"}", token=OPERATOR)
        _refused(r, item, "task assertions")
