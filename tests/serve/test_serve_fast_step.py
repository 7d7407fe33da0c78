"""The step's fast path answers exactly as the declared FastAPI route does: the same status and the same body
for every request, good or bad, in the same order of checks (the route is what the OpenAPI schema documents)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from salesgym.serve.app import create_app
from salesgym.serve.auth import Tokens
from salesgym.serve.store import Store

AGENT, OTHER, OPERATOR = "agent-token-aaaaaaaaaaaaaaaa", "agent-token-bbbbbbbbbbbbbbbb", "operator-token-oooooooooooo"
TOKENS = Tokens(agents=(AGENT, OTHER), operator=OPERATOR)
WAIT = {"tool": "wait", "args": {"hours": 2, "until": None}}


class Twin:
    """One app with the fast path and one without, each with a session of the same world in the same state."""

    def __init__(self, tmp: Path) -> None:
        self.clients = [TestClient(create_app(Store(tmp / f"{fast}.sqlite"), TOKENS, fast_step=fast))
                        for fast in (True, False)]
        created = [c.post("/sessions", json={"env_id": "territory-debug-v0", "seed": 7}, headers=auth(AGENT)).json()
                   for c in self.clients]
        self.sessions = [c["session_id"] for c in created]
        self.version: int = created[0]["state_version"]

    def both(self, body: bytes, headers: dict[str, str], session: str | None = None) -> list[tuple[int, Any]]:
        """The same raw request to both apps (``{sid}`` in ``session`` names each app's own session)."""
        out = []
        for client, sid in zip(self.clients, self.sessions, strict=True):
            path = f"/sessions/{(session or '{sid}').format(sid=sid)}/step"
            r = client.post(path, content=body, headers=headers)
            out.append((r.status_code, json.loads(re.sub(r"s-[0-9a-f]{16}", "SID", r.text))))
        return out


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


JSON = {"Content-Type": "application/json"}


@pytest.fixture()
def twin(tmp_path: Path) -> Twin:
    return Twin(tmp_path)


def step(version: int, action: Any = WAIT) -> bytes:
    return json.dumps({"state_version": version, "action": action}).encode()


CASES: list[tuple[str, bytes, dict[str, str], str | None]] = [  # a new session is at state_version 1
    ("a good step", step(1), {**JSON, **auth(AGENT)}, None),
    ("a bad call is data", step(1, {"tool": "no_such_tool", "args": {}}), {**JSON, **auth(AGENT)}, None),
    ("a call as JSON text", step(1, json.dumps(WAIT)), {**JSON, **auth(AGENT)}, None),
    ("a stale version", step(5), {**JSON, **auth(AGENT)}, None),
    ("no token", step(0), JSON, None),
    ("a wrong token", step(0), {**JSON, **auth("agent-token-zzzzzzzzzzzzzzzz")}, None),
    ("another agent's session", step(0), {**JSON, **auth(OTHER)}, None),
    ("an unknown session", step(0), {**JSON, **auth(AGENT)}, "s-0000000000000000"),
    ("a path the route refuses", step(0), {**JSON, **auth(AGENT)}, "bad.id"),
    ("no body", b"", {**JSON, **auth(AGENT)}, None),
    ("no body, no token", b"", JSON, None),
    ("not JSON", b"{nope", {**JSON, **auth(AGENT)}, None),
    ("not JSON, no token", b"{nope", JSON, None),
    ("not UTF-8", b'{"state_version": 0, "action": "\xff\xfe"}', {**JSON, **auth(AGENT)}, None),
    ("NaN, which Python's reader takes", b'{"state_version": 0, "action": NaN}', {**JSON, **auth(AGENT)}, None),
    ("an integer beyond 64 bits", b'{"state_version": 123456789012345678901234567890, "action": 1}',
     {**JSON, **auth(AGENT)}, None),
    ("a negative version", step(-1), {**JSON, **auth(AGENT)}, None),
    ("a missing field", b'{"state_version": 0}', {**JSON, **auth(AGENT)}, None),
    ("an extra field", b'{"state_version": 0, "action": 1, "x": 2}', {**JSON, **auth(AGENT)}, None),
    ("not an object", b"[1, 2]", {**JSON, **auth(AGENT)}, None),
    ("no content type", step(0), auth(AGENT), None),
    ("another content type", step(0), {"Content-Type": "text/plain", **auth(AGENT)}, None),
]


@pytest.mark.parametrize(("body", "headers", "session"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_fast_path_answers_as_the_route_does(twin: Twin, body: bytes, headers: dict[str, str],
                                                 session: str | None) -> None:
    fast, declared = twin.both(body, headers, session)
    assert fast == declared
    if body == step(1):
        assert fast[0] == 200 and fast[1]["state_version"] == 2

def test_a_retry_and_a_whole_sequence_answer_alike(twin: Twin) -> None:
    assert twin.version == 1
    version = twin.version
    for i in range(30):
        action = [WAIT, {"tool": "view_opportunity", "args": {"opportunity_id": None, "page": 0}}, "junk"][i % 3]
        fast, declared = twin.both(step(version, action), {**JSON, **auth(AGENT)})
        assert fast == declared and fast[0] == 200
        retried = twin.both(step(version, action), {**JSON, **auth(AGENT)})
        assert retried[0] == retried[1] == (200, {**fast[1], "replayed": True})  # answered from the record
        version = fast[1]["state_version"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(
    st.binary(max_size=64),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                 lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=12), kids, max_size=3),
                 max_leaves=8).map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"state_version": st.integers(-2, 3), "action": st.one_of(st.text(max_size=20),
                                                                                    st.just(WAIT))})
    .map(lambda v: json.dumps(v).encode()),
))
def test_any_body_gets_the_same_answer_from_both(tmp_path: Path, body: bytes) -> None:
    twin = TWINS.setdefault(str(tmp_path), Twin(tmp_path))
    fast, declared = twin.both(body, {**JSON, **auth(AGENT)})
    assert fast == declared


TWINS: dict[str, Twin] = {}
