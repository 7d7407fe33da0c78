"""Every family over MCP, through the SDK's own client: each call's structured content, ok or refused, is what
the tool's ``outputSchema`` says. The client checks it itself (it refuses content that does not fit), and so does
this test. Calls come from the conformance kit's driver on an in-process twin, which sees what the server sees."""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from serve_helpers import VERIFIER_KEY

import salesgym
from salesgym.testing import Case

SEED = 2
CALLS = 40
ENV = {**os.environ, "SALESGYM_VERIFIER_KEY": VERIFIER_KEY}


@pytest.mark.parametrize("env_id", ["territory-debug-v0", "desk-debug-v0", "workflows-debug-v0"])
def test_structured_content_fits_the_output_schema_of_every_call(env_id: str) -> None:
    twin = salesgym.make(env_id)
    twin.reset(seed=SEED)
    drive, rng = Case(env_id).driver(twin), random.Random(SEED)
    params = StdioServerParameters(command=sys.executable, env=ENV,
                                   args=["-m", "salesgym.cli", "mcp", env_id, "--seed", str(SEED)])
    seen: set[str] = set()

    async def main() -> None:
        async with Client(params) as client:
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            assert all(s is not None and s["type"] == "object" for s in schemas.values())
            for _ in range(CALLS):
                action: Any = drive(twin, rng)
                callable_over_mcp = type(action) is dict and type(action.get("args")) is dict
                if not callable_over_mcp or action.get("tool") not in schemas:
                    continue  # not expressible as an MCP call of a listed tool (neither side steps)
                _, _, terminated, truncated, info = twin.step(action)
                result = await client.call_tool(action["tool"], action["args"])
                body = result.structured_content
                assert body is not None and body["tool_result"] == json.loads(json.dumps(info["tool_result"]))
                jsonschema.validate(body, schemas[action["tool"]])
                seen.add(body["tool_result"]["status"])
                if terminated or truncated:
                    break

    anyio.run(main)
    assert seen == {"ok", "error"}, f"the calls should include accepted and refused ones, got {seen}"
