"""Answers to remote callers name splits, tasks and sessions, never the service's files: every error path that
involves a split (no such split, a manifest that cannot be read or was edited after it was frozen, a private split
the service's key does not open, no such task), over every endpoint that takes a split or a task, a database that
cannot be written, and the MCP server's own refusals."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serve_helpers import AGENT_A, DEBUG, OPERATOR, Server, running

from salesgym.bench import splits as sp

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("remote-errors")


@pytest.fixture(scope="module")
def server(tmp: Path) -> Iterator[Server]:
    splits = tmp / "the-operators-splits"
    (splits / "workflows").mkdir(parents=True)
    shutil.copy(REPO / "splits" / "debug.json", splits)
    shutil.copy(REPO / "splits" / "test-private.json", splits)
    shutil.copy(REPO / "splits" / "workflows" / "workflows-eval.json", splits / "workflows")
    (splits / "broken.json").write_text("{not json")
    tampered = json.loads((REPO / "splits" / "debug.json").read_text())
    tampered["name"], tampered["description"] = "tampered", "edited after it was frozen"
    (splits / "tampered.json").write_text(json.dumps(tampered))
    sp.write_key(tmp / "keys" / "not-the-sealing.key")  # a valid key, not the one test-private was sealed with
    env = {"SALESGYM_SPLITS_DIR": str(splits), "SALESGYM_SPLIT_KEY_FILE": str(tmp / "keys" / "not-the-sealing.key")}
    with running(tmp, "--no-access-log", env=env) as s:
        yield s


def _paths(tmp: Path) -> list[str]:
    """Where the service's files are: none of these may reach a remote caller."""
    return [str(tmp), str(REPO), sys.prefix, os.getcwd(), str(Path.home()), "the-operators-splits",
            "not-the-sealing.key"]


def _no_path(text: str, tmp: Path) -> None:
    for path in _paths(tmp):
        assert path not in text, f"{path} in {text[:400]}"
    assert not re.search(r"\.(json|key|sqlite)\b", text), text[:400]


CASES = [  # method, path, body, token, status, error, the split or task the answer names
    ("GET", "/benchmark/nope", None, AGENT_A, 404, "unknown_split", "'nope'"),
    ("GET", "/benchmark/broken", None, AGENT_A, 503, "split_unavailable", "'broken'"),
    ("GET", "/benchmark/tampered", None, AGENT_A, 503, "split_unavailable", "'tampered'"),
    ("GET", "/benchmark/nope/sessions", None, OPERATOR, 404, "unknown_split", "'nope'"),
    ("GET", "/benchmark/broken/runs", None, OPERATOR, 503, "split_unavailable", "'broken'"),
    ("POST", "/sessions", {"task": {"split": "nope", "id": "x"}}, AGENT_A, 404, "unknown_split", "'nope'"),
    ("POST", "/sessions", {"task": {"split": "broken", "id": "x"}}, AGENT_A, 503, "split_unavailable", "'broken'"),
    ("POST", "/sessions", {"task": {"split": "tampered", "id": "x"}}, AGENT_A, 503, "split_unavailable",
     "'tampered'"),
    ("POST", "/sessions", {"task": {"split": "test-private", "id": "test-private-000"}}, AGENT_A, 409,
     "split_locked", "'test-private'"),
    ("POST", "/sessions", {"task": {"split": "debug", "id": "debug-999"}}, AGENT_A, 404, "unknown_task",
     "'debug-999'"),
    ("POST", "/runs", {"task": {"split": "nope", "id": "x"}}, AGENT_A, 404, "unknown_split", "'nope'"),
    ("POST", "/runs", {"task": {"split": "broken", "id": "x"}}, AGENT_A, 503, "split_unavailable", "'broken'"),
    ("POST", "/runs", {"task": {"split": "test-private", "id": "test-private-000"}}, AGENT_A, 409, "split_locked",
     "'test-private'"),
    ("POST", "/runs", {"task": {"split": "workflows-eval", "id": "nope"}}, AGENT_A, 404, "unknown_task", "'nope'"),
    ("POST", "/runs", {"kwargs": {"template": "no-such-template"}, "seed": 1}, AGENT_A, 400, "bad_kwargs",
     "no-such-template"),
    ("POST", "/sessions", {"env_id": "workflows-v0", "seed": 1, "kwargs": {"template": "x"}}, AGENT_A, 400,
     "bad_kwargs", "'x'"),
]


@pytest.mark.parametrize(("method", "path", "body", "token", "status", "error", "names"), CASES,
                         ids=[f"{c[0]} {c[1]} {c[2]}" for c in CASES])
def test_split_and_task_errors_name_the_split_never_a_path(server: Server, tmp: Path, method: str, path: str,
                                                         body: object, token: str, status: int, error: str,
                                                         names: str) -> None:
    r = httpx.request(method, server.url + path, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert (r.status_code, r.json()["error"]) == (status, error), r.text
    assert names in r.json()["detail"]
    _no_path(r.text, tmp)


def test_a_listing_names_splits_and_no_file(server: Server, tmp: Path) -> None:
    r = httpx.get(server.url + "/benchmark/nope", headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=60)
    assert "debug" in r.json()["detail"] and "workflows-eval" in r.json()["detail"]  # what there is, by name
    _no_path(r.text, tmp)


def test_a_database_that_cannot_be_written_is_answered_without_its_path(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from salesgym.serve.app import create_app
    from salesgym.serve.store import Store

    store = Store(tmp_path / "sessions.sqlite")
    client = TestClient(create_app(store))
    created = client.post("/sessions", json={"env_id": DEBUG, "seed": 1}).json()
    store._db.execute("PRAGMA query_only = ON")  # SQLite now refuses every write, as for a read-only file
    for r in (client.post(f"/sessions/{created['session_id']}/step", json={"state_version": created["state_version"],
                                                                           "action": "x"}),
              client.post("/sessions", json={"env_id": DEBUG, "seed": 1})):
        assert r.status_code == 503 and r.json()["error"] == "store_unavailable"
        assert str(tmp_path) not in r.text and "sqlite" not in r.text.lower()


def test_mcp_refusals_name_no_path(tmp: Path) -> None:
    from test_serve_hostile_input import INIT, StdioPeer

    peer = StdioPeer(tmp / "mcp-stderr.log")
    try:
        peer.send(json.dumps(INIT).encode())
        peer.receive()
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for n, message in enumerate([
            {"method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
            {"method": "tools/call", "params": {"name": "wait", "arguments": {"hours": "x"}}},
            {"method": "resources/read", "params": {"uri": "file:///etc/passwd"}},
            {"method": "no/such/method", "params": {}},
            {"method": "tools/call", "params": {"name": "wait"}},
        ], 1):
            peer.send(json.dumps({"jsonrpc": "2.0", "id": n, **message}).encode())
            answer = peer.receive()
            assert answer["id"] == n and ("error" in answer or answer["result"]["isError"]), answer
            _no_path(json.dumps(answer), tmp)
    finally:
        peer.close()
