"""A remote agent takes a benchmark split over MCP (``salesgym mcp --task SPLIT/ID``, the SDK's own client over
stdio) and the operator scores the record (``salesgym bench --from-record``): every metric of every territory
equals the same policy's in-process run; an attempt left unfinished still counts; bad input is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from serve_helpers import VERIFIER_KEY

from salesgym.agents import make_policy
from salesgym.bench import splits as sp
from salesgym.bench.runner import trial_seed
from salesgym.bench.store import Store

SPLIT = "debug"
ENV = {**os.environ, "SALESGYM_VERIFIER_KEY": VERIFIER_KEY}


def server(task: str, record: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, env=ENV,
                                 args=["-m", "salesgym.cli", "mcp", "--task", task, "--record", str(record)])


async def play(client: Client, policy: Any, max_calls: int = 5000) -> int:
    """The policy picks each call from what the MCP client shows it; returns the number of calls made."""
    listed = (await client.list_tools()).tools
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                "parameters": t.input_schema}} for t in listed]
    card = (await client.read_resource("salesgym://instructions")).contents[0].text  # type: ignore[union-attr]
    obs = json.loads((await client.read_resource("salesgym://observation")).contents[0].text)  # type: ignore[union-attr]
    policy.reset(obs, tools, card)
    for n in range(1, max_calls + 1):
        action = policy.act(obs)
        result = await client.call_tool(action["tool"], action["args"])
        body = result.structured_content
        assert body is not None
        policy.observe_result(body["tool_result"])
        obs = json.loads((await client.read_resource("salesgym://observation")).contents[0].text)  # type: ignore[union-attr]
        if body["terminated"] or body["truncated"]:
            return n
    return max_calls


def bench(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "salesgym.cli", "bench", "--split", SPLIT, "--workers", "1",
                           "--db", str(tmp / "runs.sqlite"), *args], capture_output=True, text=True, env=ENV,
                          cwd=tmp, timeout=600)


def metrics(db: Path, policy: str) -> dict[str, dict[str, Any]]:
    store = Store(db)
    try:
        (run,) = [r for r in store.runs() if r.split == SPLIT]
        return {r.territory_id: dict(r.metrics or {}) for r in store.episodes(run.id) if r.policy == policy}
    finally:
        store.close()


def test_a_split_taken_over_mcp_scores_as_in_process(tmp_path: Path) -> None:
    record, manifest = tmp_path / "record.jsonl", sp.load(SPLIT)
    first = manifest.territories[0]

    def trial(t: sp.Territory) -> int:
        return 1 if t is first else 0

    async def main() -> None:
        async with Client(server(f"{SPLIT}/{first.id}", record)) as early:  # an attempt abandoned after 3 calls
            assert await play(early, make_policy("expected-value", seed=1), max_calls=3) == 3
        for t in manifest.territories:  # the first task's full attempt is its trial 1, the others' their trial 0
            async with Client(server(f"{SPLIT}/{t.id}", record)) as client:
                await play(client, make_policy("expected-value", seed=trial_seed(t.seed, trial(t))))

    anyio.run(main)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["finished"] for line in lines] == [False] + [True] * len(manifest.territories)
    assert all(line["task"].startswith(f"{SPLIT}/") for line in lines)
    # trial 0 of the first task is the abandoned attempt (it started first); trial 1 is the full episode
    run = bench(tmp_path, "--from-record", str(record), "--name", "ev-mcp", "-p", "expected-value", "--trials", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.count("trial(s) without an attempt, scored as doing nothing") == len(manifest.territories) - 1
    scored, local = metrics(tmp_path / "runs.sqlite", "ev-mcp"), metrics(tmp_path / "runs.sqlite", "expected-value")
    store = Store(tmp_path / "runs.sqlite")
    try:
        (r,) = [r for r in store.runs() if r.split == SPLIT]
        by_trial = {(e.policy, e.territory_id, e.trial): e for e in store.episodes(r.id)}
    finally:
        store.close()
    for t in manifest.territories:
        assert by_trial[("ev-mcp", t.id, trial(t))].metrics == by_trial[("expected-value", t.id, trial(t))].metrics
    assert by_trial[("ev-mcp", first.id, 0)].steps == 3 and by_trial[("ev-mcp", first.id, 0)].status == "stopped"
    assert set(scored) == set(local) == {t.id for t in manifest.territories}


def test_bad_tasks_and_records_are_refused(tmp_path: Path) -> None:
    def mcp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "salesgym.cli", "mcp", *args], capture_output=True, text=True,
                              env=ENV, timeout=120, stdin=subprocess.DEVNULL)

    for args, fragment in ((["--task", "debug/debug-999"], "no task"), (["--task", "nope/x"], "no benchmark split"),
                           (["--task", "debug"], "SPLIT/ID"), (["territory-v0", "--task", "debug/debug-000"],
                                                              "without ENV_ID")):
        done = mcp(*args)
        assert done.returncode != 0 and fragment in done.stderr and "Traceback" not in done.stderr, done.stderr
    forged = tmp_path / "forged.jsonl"
    forged.write_text(json.dumps({"task": f"{SPLIT}/debug-000", "started": 1.0, "actions": [], "code": "x",
                                  "split_sha256": "0" * 64}) + "\n")
    done = bench(tmp_path, "--from-record", str(forged))
    assert done.returncode == 1 and "another version of split" in done.stderr and "Traceback" not in done.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"task": "debug/debug-000"}\n')
    done = bench(tmp_path, "--from-record", str(garbage))
    assert done.returncode == 1 and "not an episode record" in done.stderr
    assert not (tmp_path / "runs.sqlite").exists()
