"""The HTTP service end to end, against a real uvicorn server on loopback: an episode played remotely equals
the same calls in-process; idempotent steps; roles; isolation; limits; bad requests answered 4xx."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, AGENT_B, DEBUG, OPERATOR, VERIFIER_KEY, Server, in_process, running

from salesgym.agents.base import rollout
from salesgym.agents.territory import ExpectedValue
from salesgym.serve.client import Client, RemoteEnv, ServiceError

WAIT = {"tool": "wait", "args": {"hours": 4, "until": None}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("serve")) as s:
        yield s


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with tight limits: 3 steps a session, 2 s idle, 4 KiB bodies."""
    with running(tmp_path_factory.mktemp("small"), "--max-steps", "3", "--idle-s", "2", "--max-request-bytes",
                 "4096") as s:
        yield s


def test_a_remote_episode_equals_the_same_calls_in_process(server: Server) -> None:
    client = server.client()
    env = RemoteEnv(client, DEBUG)
    steps = list(rollout(env, ExpectedValue(seed=1), seed=3))
    assert steps[-1].terminated and len(steps) > 50
    reference = in_process(DEBUG, 3, [s.action for s in steps])
    operator = server.client(OPERATOR)
    assert env.session_id is not None
    assert operator.events(env.session_id)["event_log_hash"] == reference.event_log_hash()
    assert operator.score(env.session_id) == reference.score()
    assert [s.reward for s in steps] == pytest.approx(_rewards(reference, steps), abs=0)
    assert client.replay(env.session_id).identical
    assert client.replay(env.session_id).event_log_hash is None  # the hash is operator-side
    assert operator.replay(env.session_id).event_log_hash == reference.event_log_hash()


def _rewards(reference: Any, steps: list[Any]) -> list[float]:
    twin = in_process(DEBUG, 3, [])
    return [twin.step(s.action)[1] for s in steps]


def test_a_retried_step_is_answered_from_the_record_and_not_applied_twice(server: Server) -> None:
    client, operator = server.client(), server.client(OPERATOR)
    created = client.create(DEBUG, seed=5)
    sid, v0 = created.session_id, created.state_version
    first = client.step(sid, WAIT, v0)
    events = operator.events(sid)["total"]
    again = client.step(sid, {"args": {"until": None, "hours": 4}, "tool": "wait"}, v0)  # same call, keys reordered
    assert again.replayed and not first.replayed
    assert again.model_dump(exclude={"replayed"}) == first.model_dump(exclude={"replayed"})
    assert operator.events(sid)["total"] == events  # nothing happened twice
    with pytest.raises(ServiceError) as stale:
        client.step(sid, {"tool": "wait", "args": {"hours": 8, "until": None}}, v0)  # another call at that version
    assert stale.value.status == 409 and stale.value.error == "stale_version"
    assert stale.value.state_version == first.state_version
    with pytest.raises(ServiceError) as future:
        client.step(sid, WAIT, first.state_version + 7)
    assert future.value.status == 409
    second = client.step(sid, WAIT, first.state_version)
    assert second.step == 2 and operator.events(sid)["event_log_hash"] == in_process(
        DEBUG, 5, [WAIT, WAIT]).event_log_hash()


def test_bad_calls_are_data_and_count_as_steps(server: Server) -> None:
    client = server.client()
    created = client.create(DEBUG, seed=1)
    for junk in ("{not json", {"tool": "nope", "args": {}}, [1, 2], None, 7, {"tool": "wait", "args": [1]}):
        result = client.step(created.session_id, junk, client.session(created.session_id).state_version)
        assert result.info["tool_result"]["status"] == "error" and result.reward == 0.0
    assert client.session(created.session_id).steps == 6


def test_roles_agent_and_operator(server: Server) -> None:
    sid = server.client().create(DEBUG, seed=2).session_id
    for path in ("score", "events", "hidden"):
        assert httpx.get(f"{server.url}/sessions/{sid}/{path}", headers=_auth(AGENT_A)).status_code == 403
        assert httpx.get(f"{server.url}/sessions/{sid}/{path}", headers=_auth(OPERATOR)).status_code == 200
        assert httpx.get(f"{server.url}/sessions/{sid}/{path}").status_code == 401
        assert httpx.get(f"{server.url}/sessions/{sid}/{path}", headers=_auth("x" * 30)).status_code == 401
    assert httpx.get(f"{server.url}/sessions", headers={"Authorization": AGENT_A}).status_code == 401  # no Bearer
    assert VERIFIER_KEY not in httpx.get(f"{server.url}/sessions/{sid}/score", headers=_auth(OPERATOR)).text
    assert server.client(OPERATOR).score(sid)["verifier_key"] == "deployment"


def test_a_second_agent_cannot_read_or_act_on_the_first_agents_session(server: Server) -> None:
    a, b = server.client(AGENT_A), server.client(AGENT_B)
    sid = a.create(DEBUG, seed=4).session_id
    v = a.session(sid).state_version
    for call in (lambda: b.session(sid), lambda: b.observation(sid), lambda: b.tools(sid),
                 lambda: b.step(sid, WAIT, v), lambda: b.clone(sid), lambda: b.replay(sid),
                 lambda: b.close_session(sid)):
        with pytest.raises(ServiceError) as refused:
            call()
        assert refused.value.status == 404  # the same answer as for a session that never existed
    with pytest.raises(ServiceError) as score:
        b.score(sid)
    assert score.value.status == 403
    assert sid not in {s.session_id for s in b.sessions()}
    assert sid in {s.session_id for s in a.sessions()}
    assert a.session(sid).steps == 0 and a.session(sid).state_version == v  # B changed nothing
    assert sid in {s.session_id for s in server.client(OPERATOR).sessions()}


def test_clone_is_exact_and_independent(server: Server) -> None:
    client, operator = server.client(), server.client(OPERATOR)
    sid = client.create(DEBUG, seed=6).session_id
    client.step(sid, WAIT, client.session(sid).state_version)
    twin = client.clone(sid)
    assert twin.parent == sid and twin.observation == client.observation(sid) and twin.steps == 1
    client.step(twin.session_id, {"tool": "wait", "args": {"hours": None, "until": "next_event"}}, twin.state_version)
    assert client.session(sid).steps == 1
    assert operator.events(sid)["event_log_hash"] == in_process(DEBUG, 6, [WAIT]).event_log_hash()
    assert client.replay(twin.session_id).identical


def test_close_and_list(server: Server) -> None:
    client = server.client()
    sid = client.create(DEBUG, seed=8).session_id
    assert client.close_session(sid).status == "closed"
    with pytest.raises(ServiceError) as gone:
        client.session(sid)
    assert gone.value.status == 410
    assert sid not in {s.session_id for s in client.sessions()}


@pytest.mark.parametrize(("body", "status", "error"), [
    (b"{not json", 400, None),
    (b"[" * 50_000, 400, None),
    (b'{"env_id": "territory-debug-v0"}', 422, "invalid_request"),
    (b'{"env_id": "territory-debug-v0", "seed": -1}', 422, "invalid_request"),
    (b'{"env_id": "territory-debug-v0", "seed": 1e999}', 400, "malformed_json"),  # beyond a double: refused unread
    (b'{"env_id": "nope-v0", "seed": 1}', 400, "unknown_env"),
    (b'{"env_id": "territory-debug-v0", "seed": 1, "kwargs": {"n_opportunities": 7}}', 400, "bad_kwargs"),
    (b'{"env_id": "territory-debug-v0", "seed": 1, "kwargs": {"verifier_key": "mine"}}', 400, "bad_kwargs"),
    (b'{"env_id": "territory-debug-v0", "seed": 1, "kwargs": {"reward": {"x": 1}}}', 400, "bad_kwargs"),
    (b'{"env_id": "territory-debug-v0", "seed": 1, "extra": 1}', 422, "invalid_request"),
])
def test_bad_requests_get_a_4xx_with_a_reason(server: Server, body: bytes, status: int, error: str | None) -> None:
    r = httpx.post(f"{server.url}/sessions", content=body, headers={**_auth(AGENT_A), "content-type":
                                                                     "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["detail"]
    if error:
        assert r.json()["error"] == error


def test_unknown_and_malformed_session_ids(server: Server) -> None:
    for sid, status in (("s-0000000000000000", 404), ("../etc", 404), ("x" * 65, 422), ("a%20b", 422)):
        r = httpx.get(f"{server.url}/sessions/{sid}", headers=_auth(AGENT_A))
        assert r.status_code == status, (sid, r.text)
    r = httpx.post(f"{server.url}/sessions/s-0000000000000000/step", json={"state_version": 0, "action": {}},
                   headers=_auth(AGENT_A))
    assert r.status_code == 404


def test_limits_on_steps_idle_time_and_request_size(small: Server) -> None:
    import time

    client = small.client()
    sid = client.create(DEBUG, seed=1).session_id
    for _ in range(3):
        client.step(sid, WAIT, client.session(sid).state_version)
    with pytest.raises(ServiceError) as limit:
        client.step(sid, WAIT, client.session(sid).state_version)
    assert limit.value.status == 409 and limit.value.error == "step_limit"
    big = {"state_version": 0, "action": {"tool": "wait", "args": {"x": "y" * 5000}}}
    r = httpx.post(f"{small.url}/sessions/{sid}/step", json=big, headers=_auth(AGENT_A))
    assert r.status_code == 413 and r.json()["error"] == "too_large"
    chunked = httpx.post(f"{small.url}/sessions/{sid}/step", content=iter([b"{" + b" " * 3000, b" " * 3000 + b"}"]),
                         headers={**_auth(AGENT_A), "content-type": "application/json"})
    assert chunked.status_code == 413
    idle = client.create(DEBUG, seed=2).session_id
    time.sleep(2.5)
    with pytest.raises(ServiceError) as expired:
        client.session(idle)
    assert expired.value.status == 410 and expired.value.error == "expired"


def test_no_token_reaches_the_log(server: Server, small: Server) -> None:
    httpx.get(f"{server.url}/sessions", headers=_auth(AGENT_A + "-wrong"))
    for s in (server, small):
        text = s.log.read_text()
        assert "GET /sessions" in text  # the access log is on, and it is this server's
        for token in (AGENT_A, AGENT_B, OPERATOR, VERIFIER_KEY):
            assert token not in text


def test_the_service_refuses_to_listen_beyond_loopback_without_tokens(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "salesgym.cli", "serve", "--host", "0.0.0.0", "--db",
                           str(tmp_path / "x.sqlite")], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and done.stderr.startswith("error: binding to 0.0.0.0 needs")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.sqlite").exists()


def test_openapi_schema_lists_the_models(server: Server) -> None:
    spec = httpx.get(server.url + "/openapi.json").json()
    assert {"CreateSession", "StepRequest", "StepResult", "Created", "Problem"} <= set(spec["components"]["schemas"])
    assert "409" in spec["paths"]["/sessions/{session_id}/step"]["post"]["responses"]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_client_module_is_typed_on_httpx() -> None:
    assert issubclass(Client, object) and Client.__init__.__annotations__
