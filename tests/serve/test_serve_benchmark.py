"""A remote agent takes a benchmark split through the service by task ids, and the operator scores its
sessions in process: the scores equal the same agent's in-process benchmark run, exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, AGENT_B, OPERATOR, Server, running

from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.bench import splits as sp
from salesgym.bench.runner import trial_seed
from salesgym.bench.store import Store
from salesgym.serve.client import RemoteEnv, ServiceError

SPLIT = "debug"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("bench-serve")) as s:
        yield s


def bench(tmp: Path, db: Path, *args: str, token: str | None = OPERATOR) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SALESGYM_OPERATOR_TOKEN"}
    if token is not None:
        env["SALESGYM_OPERATOR_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "salesgym.cli", "bench", "--split", SPLIT, "--db", str(db),
                           "--workers", "1", *args], capture_output=True, text=True, env=env, cwd=tmp, timeout=600)


def metrics(db: Path, policy: str) -> dict[str, dict[str, Any]]:
    store = Store(db)
    try:
        (run,) = [r for r in store.runs() if r.split == SPLIT]
        return {r.territory_id: dict(r.metrics or {}) for r in store.episodes(run.id) if r.policy == policy}
    finally:
        store.close()


def test_an_agent_takes_the_split_by_task_and_scores_equal_the_in_process_run(server: Server,
                                                                              tmp_path: Path) -> None:
    client = server.client(AGENT_A)
    listing = client.benchmark(SPLIT)
    manifest = sp.load(SPLIT)
    assert listing.tasks == [t.id for t in manifest.territories] and listing.sha256 == manifest.sha256
    for t in manifest.territories:  # the agent: the same policy and seed the in-process bench gives it
        env = RemoteEnv.for_task(client, SPLIT, t.id)
        steps = list(rollout(env, make_policy("expected-value", seed=trial_seed(t.seed, 0)), seed=0))
        assert steps[-1].terminated
        view = client.session(env.session_id or "")
        assert view.task == f"{SPLIT}/{t.id}" and view.seed is None  # the agent never learns the world's seed
        if t is manifest.territories[0]:
            with pytest.raises(ServiceError) as refused:
                env.clone()  # a look-ahead the in-process agent does not have
            assert refused.value.status == 403
        env.close()
    # a second, abandoned session of the first task: it is not trial 0, so starting over discards nothing
    extra = RemoteEnv.for_task(client, SPLIT, manifest.territories[0].id)
    extra.reset()
    extra.step({"tool": "wait", "args": {"hours": 1, "until": None}})

    db = tmp_path / "runs.sqlite"
    remote = bench(tmp_path, db, "--from-service", server.url, "--name", "ev-remote", "-p", "expected-value")
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "attempt(s) after the first 1 not scored" in remote.stderr
    scored, local = metrics(db, "ev-remote"), metrics(db, "expected-value")
    assert set(scored) == {t.id for t in manifest.territories}
    assert scored == local  # every metric of every territory, the return included
    assert "ev-remote" in remote.stdout


def test_operator_endpoints_and_refusals(server: Server, tmp_path: Path) -> None:
    agent, operator = server.client(AGENT_B), server.client(OPERATOR)
    with pytest.raises(ServiceError) as no_split:
        agent.benchmark("no-such-split")
    assert no_split.value.status == 404
    with pytest.raises(ServiceError) as no_task:
        agent.create_task(SPLIT, "debug-999")
    assert no_task.value.status == 404 and "debug-999" in no_task.value.detail
    with pytest.raises(ServiceError) as not_operator:
        agent.task_sessions(SPLIT)
    assert not_operator.value.status == 403
    both = httpx.post(server.url + "/sessions", headers={"Authorization": f"Bearer {AGENT_B}"},
                      json={"task": {"split": SPLIT, "id": "debug-000"}, "env_id": "territory-debug-v0", "seed": 1})
    assert both.status_code == 422 and "task alone" in both.json()["detail"]
    listed = operator.task_sessions(SPLIT)
    assert all(s["task"].startswith(f"{SPLIT}/") for s in listed["sessions"])
    assert json.dumps(listed).count('"seed"') == 0


def test_bench_from_service_refuses_clearly(server: Server, tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    no_token = bench(tmp_path, db, "--from-service", server.url, token=None)
    assert no_token.returncode == 1 and "SALESGYM_OPERATOR_TOKEN" in no_token.stderr
    agent_token = bench(tmp_path, db, "--from-service", server.url, token=AGENT_A)
    assert agent_token.returncode == 1 and "operator" in agent_token.stderr
    nobody = bench(tmp_path, db, "--from-service", "http://127.0.0.1:9", token=OPERATOR)
    assert nobody.returncode == 1 and "cannot reach" in nobody.stderr
    for run in (no_token, agent_token, nobody):
        assert "Traceback" not in run.stderr
    assert not db.exists()
