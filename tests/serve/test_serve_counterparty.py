"""The shipped ``workflows-counterparty`` pack through a real service on loopback: a session and a verifier run are
opened on a pack template by the pack's name (never a directory of the server's), played and judged like in
process (a run where people act: ``test_serve_people_runs.py``); the split's tasks are served by id; every other
value of ``pack`` is refused and opens nothing."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, OPERATOR, Server, in_process, running

pytest.importorskip("jq")

from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.bench import splits as sp
from salesgym.bench.runner import trial_seed
from salesgym.bench.store import Store
from salesgym.envs.workflows import packs
from salesgym.envs.workflows.tasks.model import resolve
from salesgym.envs.workflows.tools import OWNER_OF_TABLE
from salesgym.envs.workflows.verifier import calls_of
from salesgym.serve import tasks
from salesgym.serve.client import RemoteEnv
from salesgym.serve.sessions import ServiceError

PACK = "workflows-counterparty"
TEMPLATES = list(packs.shipped()[PACK].templates)
ACTING = [t for t, spec in packs.shipped()[PACK].templates.items() if spec.actions]  # simulated people act
POLICY = [t for t in TEMPLATES if t not in ACTING]
COMPARED = ("passed", "partial", "primary", "assertions", "steps", "invariant", "forbidden", "violations")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("counterparty"), "--no-access-log") as s:
        yield s


def _post(server: Server, path: str, body: Any, token: str = AGENT_A) -> httpx.Response:
    return httpx.post(server.url + path, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _local_reference(template: str, seed: int) -> Any:
    """The reference played in process on the same instance (the service's key): the expected end."""
    env = in_process("workflows-v0", seed, [], template=template, pack=PACK)
    secret, outputs = env._world.secret, []
    for action in secret.solution:
        _, _, _, _, info = env.step(resolve(action, secret.params, outputs))
        outputs.append(info["tool_result"]["output"])
    env.step({"tool": "finish_task", "args": {"summary": "done"}})
    return env


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_session_on_a_pack_template_plays_and_scores_as_in_process(server: Server, template: str) -> None:
    local = _local_reference(template, 7)
    actions = [{"tool": c["tool"], "args": c["args"] or {}} for c in calls_of(local._log)]
    with server.client(AGENT_A) as client:
        created = client.create("workflows-v0", 7, template=template, pack=PACK)
        assert created.kwargs == {"template": template, "pack": PACK}
        version = created.state_version
        for action in actions:
            version = client.step(created.session_id, action, version).state_version
    with server.client(OPERATOR) as operator:
        remote = operator.score(created.session_id)
    expected = local.score()
    assert expected["passed"] and {k: remote[k] for k in ("passed", "primary")} == {
        k: expected[k] for k in ("passed", "primary")}


@pytest.mark.parametrize("template", POLICY)
def test_a_verifier_run_on_a_pack_template_gets_the_in_process_verdict(server: Server, template: str) -> None:
    local = _local_reference(template, 5)
    expected = local.score()
    with server.client(AGENT_A) as client:
        run_id = client.create_run(5, "workflows-v0", template=template, pack=PACK)["run_id"]
        for app in local._world.task.apps:
            tables = {name.split(".", 1)[1]: rows for name, rows in local._state.tables.items()
                      if OWNER_OF_TABLE.get(name) == app}
            client.store_state(run_id, app, tables)
        calls = [{"tool": c["tool"], "args": c["args"] or {}, "status": "error" if c["refused"] else "ok"}
                 for c in calls_of(local._log)]
        client.record_calls(run_id, calls)
    remote = _post(server, f"/runs/{run_id}/verdict", None, OPERATOR).json()
    assert expected["passed"] and remote["passed"]
    assert {k: remote[k] for k in COMPARED if k != "forbidden"} == {k: expected[k] for k in COMPARED
                                                                    if k != "forbidden"}


@pytest.mark.parametrize("template", ACTING)
def test_a_verifier_run_where_people_act_is_opened_and_plays_them(server: Server, template: str) -> None:
    """Runs on the templates where people act are judged (``test_serve_people_runs.py`` plays them through): opened
    by seed or by the split's task id, they answer recorded calls with what the people did."""
    r = _post(server, "/runs", {"kwargs": {"template": template, "pack": PACK}, "seed": 5})
    assert r.status_code == 201, r.text
    entry = next(t for t in sp.load(PACK).territories if t.template == template)
    r = _post(server, "/runs", {"task": {"split": PACK, "id": entry.id}})
    assert r.status_code == 201 and r.json()["benchmark_task"] == f"{PACK}/{entry.id}", r.text
    calls = _post(server, f"/runs/{r.json()['run_id']}/calls", {"calls": [{"tool": "finish_task", "args": {}}]})
    assert calls.status_code == 200 and calls.json()["people"] == [], calls.text


def test_a_run_that_misses_the_policy_fails_remotely_too(server: Server) -> None:
    template = "policy-lead-routing"
    local = in_process("workflows-v0", 5, [{"tool": "finish_task", "args": {"summary": "nothing"}}],
                       template=template, pack=PACK)
    run_id = _post(server, "/runs", {"kwargs": {"template": template, "pack": PACK}, "seed": 5}).json()["run_id"]
    remote = _post(server, f"/runs/{run_id}/verdict", None, OPERATOR).json()
    assert not remote["passed"] and remote["passed"] == local.score()["passed"]


def test_the_counterparty_split_is_served_by_task_id(server: Server) -> None:
    manifest = sp.load(PACK)
    entry = manifest.territories[0]
    session = _post(server, "/sessions", {"task": {"split": PACK, "id": entry.id}})
    assert session.status_code == 201, session.text
    assert session.json()["kwargs"] == {"template": entry.template, "pack": PACK} and session.json()["seed"] is None
    run = _post(server, "/runs", {"task": {"split": PACK, "id": entry.id}})
    assert run.status_code == 201 and run.json()["benchmark_task"] == f"{PACK}/{entry.id}"
    expected = in_process("workflows-v0", entry.seed, [], template=entry.template, pack=PACK)
    assert run.json()["task"]["prompt"] == expected._world.task.prompt


PACK_REFUSALS = [
    str(packs.COUNTERPARTY),  # the shipped pack's own directory, by path
    str(Path(__file__).resolve().parents[1] / "workflows" / "example_pack"),  # a pack of the server's, by path
    "../workflows-counterparty",
    "workflows-counterparty/",
    "WORKFLOWS-COUNTERPARTY",
    "acme-private",
    "",
    ["workflows-counterparty"],
    {"name": "workflows-counterparty"},
    1,
    None,
]


@pytest.mark.parametrize("value", PACK_REFUSALS)
@pytest.mark.parametrize("path", ["/sessions", "/runs"])
def test_pack_names_only_a_shipped_pack(server: Server, value: Any, path: str) -> None:
    body = {"env_id": "workflows-v0", "kwargs": {"template": "policy-lead-routing", "pack": value}, "seed": 1}
    r = _post(server, path, body)
    assert r.status_code == 400 and r.json()["error"] == "bad_kwargs", r.text
    assert "never a directory" in r.json()["detail"] and PACK in r.json()["detail"]


def test_a_family_without_shipped_packs_still_refuses_pack(server: Server) -> None:
    r = _post(server, "/sessions", {"env_id": "desk-v0", "kwargs": {"pack": PACK}, "seed": 1})
    assert r.status_code == 400 and r.json()["detail"] == "pack cannot be set by a caller"


def test_a_split_over_a_pack_the_service_does_not_ship_is_refused() -> None:
    manifest = sp.load(PACK)
    assert manifest.pack is not None
    operators = dataclasses.replace(manifest, pack=sp.PackRef("acme-private", manifest.pack.fingerprint))
    with pytest.raises(ServiceError) as refused:
        tasks._shipped(operators)
    assert refused.value.status == 409 and "does not ship" in refused.value.detail
    changed = dataclasses.replace(manifest, pack=sp.PackRef(PACK, "0" * 64))
    with pytest.raises(ServiceError) as stale:
        tasks._shipped(changed)
    assert stale.value.status == 503


def test_bench_scores_the_counterparty_split_from_the_service_as_in_process(tmp_path: Path) -> None:
    """An agent takes every task of the split by id (a fresh service: its first session of a task is trial 0);
    the operator's --from-service scores equal the same policy played in process on the shipped pack."""
    with running(tmp_path, "--no-access-log", name="fresh") as server:
        _played_and_scored(server, tmp_path)


def _played_and_scored(server: Server, tmp_path: Path) -> None:
    client = server.client(AGENT_A)
    manifest = sp.load(PACK)
    for t in manifest.territories:
        env = RemoteEnv.for_task(client, PACK, t.id)
        list(rollout(env, make_policy("first-plausible", seed=trial_seed(t.seed, 0), family="workflows"), seed=0))
        env.close()
    db = tmp_path / "runs.sqlite"
    env = {**os.environ, "SALESGYM_OPERATOR_TOKEN": OPERATOR}
    done = subprocess.run([sys.executable, "-m", "salesgym.cli", "bench", "--split", PACK, "--db", str(db),
                           "--workers", "1", "--from-service", server.url, "--name", "fp-remote", "-p",
                           "first-plausible"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with Store(db, readonly=True) as store:
        [run] = store.runs()
        got = {p: {e.territory_id: dict(e.metrics or {}) for e in store.episodes(run.id) if e.policy == p}
               for p in ("fp-remote", "first-plausible")}  # fmt: skip
    assert set(got["fp-remote"]) == {t.id for t in manifest.territories}
    assert got["fp-remote"] == got["first-plausible"]
