"""The MCP server through the MCP SDK's own client, over stdio and streamable HTTP: the tools are exactly
``env.mcp_tools()`` (input and output schemas), every call's structured content (refused calls and calls after
the end included) validates against its tool's output schema, the observation is a resource, a debug episode
plays to the end, and the event-log hash (from the operator's record file) equals the same calls made
in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from serve_helpers import AGENT_A, DEBUG, VERIFIER_KEY, free_port, in_process

import salesgym
from salesgym.agents.territory import ExpectedValue

SEED = 3
ENV = {**os.environ, "SALESGYM_VERIFIER_KEY": VERIFIER_KEY, "SALESGYM_AGENT_TOKENS": AGENT_A}


def _cmd(record: Path, *extra: str) -> list[str]:
    return ["-m", "salesgym.cli", "mcp", DEBUG, "--seed", str(SEED), "--record", str(record), *extra]


@asynccontextmanager
async def stdio(record: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=_cmd(record), env=ENV)
    async with Client(params) as client:
        yield client


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("mcp")
    port, record = free_port(), tmp / "record.jsonl"
    log = (tmp / "mcp.log").open("wb")
    proc = subprocess.Popen([sys.executable, *_cmd(record, "--transport", "http", "--port", str(port))],
                            stdout=log, stderr=subprocess.STDOUT, env=ENV)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120  # a loaded 2-core machine takes tens of seconds to import the server
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            assert proc.poll() is None, f"the MCP server exited: {(tmp / 'mcp.log').read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the MCP server did not answer in 120 s"
            time.sleep(0.05)
    try:
        yield url, record
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@asynccontextmanager
async def http(url: str, token: str = AGENT_A) -> AsyncIterator[Client]:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http_client,
                Client(streamable_http_client(url, http_client=http_client)) as client):
        yield client


async def play(client: Client) -> list[dict[str, Any]]:
    """A baseline policy picks each call from what the MCP client shows it: the observation resource."""
    policy = ExpectedValue(seed=1)
    listed = (await client.list_tools()).tools
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                "parameters": t.input_schema}} for t in listed]
    obs = json.loads((await client.read_resource("salesgym://observation")).contents[0].text)  # type: ignore[union-attr]
    policy.reset(obs, tools, "")
    schemas = {t.name: t.output_schema for t in listed}
    refused = {"tool": "view_opportunity", "args": {"opportunity_id": "o999"}}  # a refused call of a listed tool
    actions: list[dict[str, Any]] = []
    for i in range(1000):
        action = refused if i == 1 else policy.act(obs)
        actions.append(action)
        result = await client.call_tool(action["tool"], action["args"])
        body = result.structured_content
        assert body is not None and result.is_error == (body["tool_result"]["status"] == "error")
        jsonschema.validate(body, schemas[action["tool"]])  # what the tool advertised, whatever the call's outcome
        assert action is not refused or body["tool_result"]["status"] == "error"
        policy.observe_result(body["tool_result"])
        resource = await client.read_resource("salesgym://observation")
        obs = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
        assert obs["text"] == result.content[0].text  # type: ignore[union-attr]
        if body["terminated"] or body["truncated"]:
            over = await client.call_tool("wait", {"hours": 1})  # after the end: refused, still as advertised
            assert over.is_error and over.structured_content is not None
            jsonschema.validate(over.structured_content, schemas["wait"])
            return actions  # (the record holds the calls of the episode only)
    raise AssertionError("the episode did not end")


def _check(client: Client, actions: list[dict[str, Any]], record: Path) -> None:
    reference = in_process(DEBUG, SEED, actions)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    mine = [line for line in lines if line["actions"] == actions]
    assert len(mine) == 1 and mine[0]["event_log_hash"] == reference.event_log_hash()
    assert mine[0]["score"] == json.loads(json.dumps(reference.score()))


async def _tools_match(client: Client) -> None:
    listed = (await client.list_tools()).tools
    expected = salesgym.make(DEBUG).mcp_tools()
    assert [{"name": t.name, "description": t.description, "inputSchema": t.input_schema,
             "outputSchema": t.output_schema} for t in listed] == expected
    assert all(t.output_schema is not None and t.output_schema["type"] == "object" for t in listed)
    names = {t.name for t in listed}
    assert not names & {"score", "hidden_truth", "event_log", "reset"}
    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert resources == {"salesgym://observation", "salesgym://instructions"}
    card = (await client.read_resource("salesgym://instructions")).contents[0].text  # type: ignore[union-attr]
    env = salesgym.make(DEBUG)
    env.reset(seed=SEED)
    assert card == env.instructions()


def test_stdio_episode_to_the_end(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"

    async def main() -> None:
        async with stdio(record) as client:
            await _tools_match(client)
            bad = await client.call_tool("no_such_tool", {"x": 1})
            assert bad.is_error and "unknown tool" in bad.content[0].text  # type: ignore[union-attr]
            actions = await play(client)
        _check(client, [{"tool": "no_such_tool", "args": {"x": 1}}, *actions], record)

    anyio.run(main)


def test_http_episodes_one_per_session(http_server: tuple[str, Path]) -> None:
    url, record = http_server

    async def main() -> None:
        async with http(url) as first, http(url) as second:
            await _tools_match(first)
            await first.call_tool("wait", {"hours": 4, "until": None})  # the second session does not see it
            one = json.loads((await first.read_resource("salesgym://observation")).contents[0].text)  # type: ignore[union-attr]
            two = json.loads((await second.read_resource("salesgym://observation")).contents[0].text)  # type: ignore[union-attr]
            assert one != two
            actions = await play(second)
        _check(second, actions, record)

    anyio.run(main)


def test_http_refuses_a_caller_without_a_token(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    r = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   headers={"accept": "application/json, text/event-stream"})
    assert r.status_code == 401
