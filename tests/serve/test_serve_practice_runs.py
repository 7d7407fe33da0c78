"""Verifier runs that count and runs that do not: a run opened from a split's task id gets its world and seed from
the service and never shows an agent the seed; a run opened with a caller's own seed (whose hidden values the
caller can regenerate from the public code) is labelled practice in every answer and never enters a benchmark
listing, even when its world is exactly a task's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, OPERATOR, Server, running

pytest.importorskip("jq")

import salesgym
from salesgym.bench import splits as sp
from salesgym.bench.runner import territory_kwargs

SPLIT = "workflows-eval"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("practice"), "--no-access-log") as s:
        yield s


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _answers(server: Server, run_id: str, token: str) -> list[dict[str, Any]]:
    """Every answer an agent gets about a run, from each endpoint that names it."""
    with httpx.Client(base_url=server.url, headers=_h(token), timeout=60) as c:
        state = c.get(f"/runs/{run_id}/state").json()
        app = next(iter(state["state"]))
        out = [c.get(f"/runs/{run_id}").json(), state,
               c.put(f"/runs/{run_id}/state", json={"app": app, "tables": {}}).json(),
               c.post(f"/runs/{run_id}/calls", json={"calls": [{"tool": "finish_task", "args": {"summary": "x"}}]}
                      ).json(),
               c.post(f"/runs/{run_id}/assertions", json={"assertions": [{"expr": ".", "op": "exists"}]}).json()]
    for answer in out:
        assert "error" not in answer, answer
    return out


def _task(split: str, index: int) -> tuple[str, sp.Territory]:
    manifest = sp.load(split)
    entry = manifest.territories[index]
    return entry.id, entry


def test_a_run_from_a_task_id_is_the_tasks_world_and_never_shows_the_seed(server: Server) -> None:
    task_id, entry = _task(SPLIT, 0)
    r = httpx.post(f"{server.url}/runs", json={"task": {"split": SPLIT, "id": task_id}}, headers=_h(AGENT_A))
    assert r.status_code == 201, r.text
    run = r.json()
    expected = salesgym.make("workflows-v0", **territory_kwargs(entry, "workflows-v0"))
    expected.reset(seed=entry.seed)
    assert run["task"] == expected._world.task.public() and run["benchmark_task"] == f"{SPLIT}/{task_id}"
    for answer in [run, *_answers(server, run["run_id"], AGENT_A)]:
        assert answer["practice"] is False and answer.get("seed") is None, answer
        assert str(entry.seed) not in str(answer)
    verdict = httpx.post(f"{server.url}/runs/{run['run_id']}/verdict", headers=_h(OPERATOR)).json()
    assert verdict["practice"] is False and verdict["benchmark_task"] == f"{SPLIT}/{task_id}"
    listed = httpx.get(f"{server.url}/benchmark/{SPLIT}/runs", headers=_h(OPERATOR)).json()
    mine = [r for r in listed["runs"] if r["run_id"] == run["run_id"]]
    assert len(mine) == 1 and mine[0]["verdict"]["passed"] == verdict["passed"] and mine[0]["task"] == task_id


def test_a_run_with_a_callers_seed_is_practice_everywhere_and_never_listed(server: Server) -> None:
    _, entry = _task(SPLIT, 1)
    # the very world of a task, chosen by the caller: the seed is public here, so it could be any seed
    body = {"kwargs": territory_kwargs(entry, "workflows-v0"), "seed": entry.seed}
    r = httpx.post(f"{server.url}/runs", json=body, headers=_h(AGENT_A))
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["practice"] is True and run["benchmark_task"] is None and run["seed"] == entry.seed
    for answer in _answers(server, run["run_id"], AGENT_A):
        assert answer["practice"] is True, answer
    verdict = httpx.post(f"{server.url}/runs/{run['run_id']}/verdict", headers=_h(OPERATOR)).json()
    assert verdict["practice"] is True and verdict["benchmark_task"] is None
    assert httpx.get(f"{server.url}/runs/{run['run_id']}", headers=_h(OPERATOR)).json()["practice"] is True
    listed = httpx.get(f"{server.url}/benchmark/{SPLIT}/runs", headers=_h(OPERATOR)).json()
    assert run["run_id"] not in {r["run_id"] for r in listed["runs"]}


def test_who_may_open_and_list_task_runs(server: Server) -> None:
    task_id, _ = _task(SPLIT, 2)
    body = {"task": {"split": SPLIT, "id": task_id}}
    assert httpx.get(f"{server.url}/benchmark/{SPLIT}/runs", headers=_h(AGENT_A)).status_code == 403
    mixed = httpx.post(f"{server.url}/runs", json={**body, "seed": 3}, headers=_h(AGENT_A))
    assert mixed.status_code == 422 and mixed.json()["error"] == "invalid_request"
    unknown = httpx.post(f"{server.url}/runs", json={"task": {"split": SPLIT, "id": "nope"}}, headers=_h(AGENT_A))
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_task"
    territory = httpx.post(f"{server.url}/runs", json={"task": {"split": "debug", "id": "debug-000"}},
                           headers=_h(AGENT_A))
    assert territory.status_code == 422 and territory.json()["error"] == "no_verifier_api"
    neither = httpx.post(f"{server.url}/runs", json={"kwargs": {"template": "crm-closed-won"}}, headers=_h(AGENT_A))
    assert neither.status_code == 422
