"""The HTTP verifier API against a real uvicorn server on loopback (``salesgym serve``) and the real jq library:
a task's reference end state stored app by app under one run and judged once gives the in-process verdict; roles;
bad jq, operators, ids, apps and tables get a 4xx with a reason and change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, AGENT_B, OPERATOR, Server, running

pytest.importorskip("jq")

from tests.workflows.wf_helpers import play_reference, step, workflow

from salesgym.envs.workflows.tools import OWNER_OF_TABLE
from salesgym.envs.workflows.verifier import calls_of

COMPARED = ("passed", "partial", "primary", "assertions", "rubric", "steps", "invariant", "forbidden", "violations")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("verifier"), "--no-access-log") as s:
        yield s


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _post(server: Server, path: str, body: Any = None, token: str = AGENT_A) -> httpx.Response:
    return httpx.post(server.url + path, json=body, headers=_h(token), timeout=30)


def _run(server: Server, template: str, seed: int, token: str = AGENT_A) -> str:
    r = _post(server, "/runs", {"kwargs": {"template": template}, "seed": seed}, token)
    assert r.status_code == 201, r.text
    return str(r.json()["run_id"])


def _same(remote: dict[str, Any], local: dict[str, Any]) -> None:
    """The verdicts agree on every check; a forbidden hit names its call (the remote run has no event log)."""
    def strip(v: dict[str, Any]) -> dict[str, Any]:
        out = {k: v[k] for k in COMPARED}
        hits = [{**h, "event": None} for h in v["forbidden"]["violations"]]
        out["forbidden"] = {**v["forbidden"], "violations": hits}
        return out

    assert strip(remote) == strip(local)


def _store_episode(server: Server, run_id: str, env: Any) -> None:
    """Each app stores its own tables under the run (through the client); then the agent's calls."""
    with server.client(AGENT_A) as client:
        for app in env._world.task.apps:
            tables = {name.split(".", 1)[1]: rows for name, rows in env._state.tables.items()
                      if OWNER_OF_TABLE.get(name) == app}
            assert app in client.store_state(run_id, app, tables)["stored"]
        calls = [{"tool": c["tool"], "args": c["args"] or {}, "status": "error" if c["refused"] else "ok"}
                 for c in calls_of(env._log)]
        assert client.record_calls(run_id, calls)["calls"] == len(calls)
        assert client.run_state(run_id, env._world.task.apps[0]) == {
            env._world.task.apps[0]: {name.split(".", 1)[1]: rows for name, rows in env._state.tables.items()
                                      if OWNER_OF_TABLE.get(name) == env._world.task.apps[0]}}


@pytest.mark.parametrize("template", ["new-exec-full-cycle", "positive-reply", "inmail-reply-referral"])
def test_a_cross_app_reference_state_stored_per_app_gets_the_in_process_verdict(server: Server,
                                                                              template: str) -> None:
    env = workflow(template, 5)
    play_reference(env)
    step(env, "finish_task", summary="done")
    local = env.score()
    assert local["passed"]
    run_id = _run(server, template, 5)
    _store_episode(server, run_id, env)
    assert _post(server, f"/runs/{run_id}/verdict").status_code == 403  # an agent never sees the verdict
    remote = _post(server, f"/runs/{run_id}/verdict", token=OPERATOR).json()
    _same(remote, local)
    again = _post(server, f"/runs/{run_id}/verdict", token=OPERATOR)
    assert again.status_code == 409 and again.json()["error"] == "already_judged"
    view = httpx.get(f"{server.url}/runs/{run_id}", headers=_h(OPERATOR)).json()
    assert view["status"] == "judged" and view["verdict"]["passed"] and "verdict" not in httpx.get(
        f"{server.url}/runs/{run_id}", headers=_h(AGENT_A)).json()


def test_a_failing_episode_and_a_forbidden_attempt_get_the_same_verdict_remotely(server: Server) -> None:
    env = workflow("enrich-contacts", 2)
    play_reference(env, stop=1)  # the search only: no title written
    refused = step(env, "send_inmail", recipient_urn="urn:li:fs_salesProfile:L0001", subject="Hi", body="Hello")
    assert refused["status"] == "error"  # the prospecting app is read only here, and the attempt is forbidden
    local = env.score()
    run_id = _run(server, "enrich-contacts", 2)
    _store_episode(server, run_id, env)
    remote = _post(server, f"/runs/{run_id}/verdict", token=OPERATOR).json()
    assert not remote["passed"] and remote["violations"] == local["violations"] == {"forbidden": 1}
    _same(remote, local)


def test_assertions_ad_hoc_and_the_tasks_own(server: Server) -> None:
    run_id = _run(server, "crm-closed-won", 4)
    ok = _post(server, f"/runs/{run_id}/assertions", {"assertions": [
        {"name": "deals exist", "expr": ".crm.deals | length", "op": "gt", "expected": 0},
        {"expr": '.crm.deals[] | select(.properties.dealstage == "closedwon") | .id', "op": "count", "expected": 99},
    ]}).json()
    assert ok["total"] == 2 and ok["passed"] == 1
    first, second = ok["results"]
    assert first["passed"] and first["name"] == "deals exist" and first["expr"] == ".crm.deals | length"
    assert not second["passed"] and second["reason"].endswith("values") and second["expected"] == 99
    # the task's own assertions hold expected values: the operator's only
    assert _post(server, f"/runs/{run_id}/assertions", {"task": True}).status_code == 403
    own = _post(server, f"/runs/{run_id}/assertions", {"task": True}, OPERATOR).json()
    assert own["total"] >= 3 and own["passed"] < own["total"] and {r["step"] for r in own["results"]} == {1, 2}
    # an agent's probe sees no hidden parameter: $amount does not exist for it
    probe = _post(server, f"/runs/{run_id}/assertions", {"assertions": [{"expr": "$amount", "op": "exists"}]})
    assert probe.status_code == 422 and "$amount is not defined" in probe.json()["detail"]
    assert "$__in" not in probe.json()["detail"]  # jq's reason, not the wrapped program
    seen = _post(server, f"/runs/{run_id}/assertions", {"assertions": [{"expr": "$amount", "op": "exists"}]},
                 OPERATOR).json()
    assert seen["passed"] == 1


def _state(server: Server, run_id: str) -> Any:
    return httpx.get(f"{server.url}/runs/{run_id}/state", headers=_h(AGENT_A)).json()


@pytest.mark.parametrize(("method", "path", "body", "status", "error", "why"), [
    ("post", "/assertions", {"assertions": [{"expr": ".crm.deals[", "op": "equals"}]}, 422, "invalid_assertion",
     "jq cannot compile it (jq: error: syntax error"),
    ("post", "/assertions", {"assertions": [{"expr": ".crm", "op": "roughly"}]}, 422, "invalid_assertion",
     "unknown operator 'roughly'"),
    ("post", "/assertions", {"assertions": [{"expr": ".crm", "op": "exists"}], "task": True}, 422, "invalid_request",
     "either assertions or task"),
    ("put", "/state", {"app": "crm", "tables": {"dealz": {}}}, 422, "invalid_table", "crm has no table 'dealz'"),
    ("put", "/state", {"app": "crm", "tables": {"deals": {"9001": "not a record"}}}, 422, "invalid_table",
     "an object of records by id"),
    ("put", "/state", {"app": "scheduler", "tables": {}}, 404, "unknown_app", "this task's apps are crm"),
    ("post", "/calls", {"calls": [{"tool": "drop_database", "args": {}}]}, 422, "invalid_call", "no tool"),
    ("post", "/calls", {"calls": [{"tool": "finish_task", "status": "maybe"}]}, 422, "invalid_request", "status"),
])
def test_bad_requests_get_a_4xx_with_a_reason_and_change_nothing(server: Server, method: str, path: str,
                                                                body: Any, status: int, error: str, why: str) -> None:
    run_id = _run(server, "crm-closed-won", 4)
    before = _state(server, run_id)
    r = httpx.request(method.upper(), f"{server.url}/runs/{run_id}{path}", json=body, headers=_h(AGENT_A))
    assert r.status_code == status and r.json()["error"] == error and why in r.json()["detail"], r.text
    assert _state(server, run_id) == before
    view = httpx.get(f"{server.url}/runs/{run_id}", headers=_h(AGENT_A)).json()
    assert view["stored"] == [] and view["calls"] == 0


def test_ids_and_ownership(server: Server) -> None:
    run_id = _run(server, "crm-closed-won", 4)
    assert httpx.get(f"{server.url}/runs/{run_id}", headers=_h(AGENT_B)).status_code == 404  # not someone else's
    assert httpx.get(f"{server.url}/runs/r-0000", headers=_h(AGENT_A)).json()["error"] == "not_found"
    assert httpx.get(f"{server.url}/runs/{run_id}/state?app=prospecting", headers=_h(AGENT_A)).status_code == 404
    assert httpx.get(f"{server.url}/runs/{run_id}", headers=_h(OPERATOR)).status_code == 200
    assert _post(server, "/runs", {"kwargs": {"template": "nope"}, "seed": 1}).json()["error"] == "bad_kwargs"
    assert _post(server, "/runs", {"env_id": "no-such-env", "seed": 1}).json()["error"] == "unknown_env"
    assert _post(server, "/runs", {"env_id": "territory-debug-v0", "seed": 1}).json()["error"] == "no_verifier_api"
    assert _post(server, "/runs", {"kwargs": {"verifier_key": "x"}, "seed": 1}).json()["error"] == "bad_kwargs"
    # no caller picks the model endpoint and the variable holding its key: the service's secrets stay home
    leak = {"judge": "llm", "llm": {"model": "m", "base_url": "http://127.0.0.1:9",
                                    "api_key_env": "SALESGYM_OPERATOR_TOKEN"}}
    assert _post(server, "/runs", {"kwargs": leak, "seed": 1}).json()["error"] == "bad_kwargs"
    assert _post(server, "/sessions", {"env_id": "workflows-v0", "kwargs": leak, "seed": 1}).status_code == 400
    assert httpx.post(f"{server.url}/runs", json={"seed": 1}).status_code == 401
    assert httpx.delete(f"{server.url}/runs/{run_id}", headers=_h(AGENT_A)).status_code == 200
    assert httpx.get(f"{server.url}/runs/{run_id}", headers=_h(AGENT_A)).status_code == 404
