"""Every agent-side answer of the service, scanned: the family's own leak scanner (the conformance kit's hooks,
found through the registry) on each observation and tool output, and for every body: no score, hidden truth,
event log, proof or verifier key."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, DEBUG, OPERATOR, VERIFIER_KEY, Server, in_process, running

from salesgym.testing import Case

FORBIDDEN_KEYS = {"score", "hidden", "hidden_truth", "proof", "proof_ref", "verifier_key", "events"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("leaks"), "--no-access-log") as s:
        yield s


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from _keys(v)
    elif isinstance(node, list):
        for v in node:
            yield from _keys(v)


def _agent_side(body: Any, operator: dict[str, Any]) -> None:
    text = json.dumps(body)
    assert VERIFIER_KEY not in text
    assert not FORBIDDEN_KEYS & set(_keys(body)), sorted(FORBIDDEN_KEYS & set(_keys(body)))
    assert "proof_ref" not in text and operator["hash"] not in text
    for proof in operator["proofs"]:
        assert proof not in text


@pytest.mark.parametrize("seed", [0, 1])
def test_no_agent_side_answer_carries_what_only_the_operator_may_see(server: Server, seed: int) -> None:
    agent = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {AGENT_A}"})
    operator = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"})
    created = agent.post("/sessions", json={"env_id": DEBUG, "seed": seed}).json()
    sid = created["session_id"]
    mirror = in_process(DEBUG, seed, [])  # the same world in-process: what the family's scanner is built from
    hooks = Case(DEBUG).hooks(mirror)
    assert hooks is not None
    scanner = hooks.LeakScanner(mirror)
    drive, rng = Case(DEBUG).driver(mirror), random.Random(seed)
    answers: list[Any] = [created]
    actions: list[Any] = []
    for _ in range(120):
        action = drive(mirror, rng)  # the kit's driver picks live ids (it may read the mirror's state)
        actions.append(action)
        mirror.step(action)
        version = answers[-1]["state_version"]
        result = agent.post(f"/sessions/{sid}/step", json={"state_version": version, "action": action}).json()
        assert "observation" in result, result
        answers.append(result)
        scanner.learn(operator.get(f"/sessions/{sid}/events").json()["events"])
        scanner.scan(result["observation"], {"info": result["info"]})
        if result["terminated"] or result["truncated"]:
            break
    answers += [agent.get(p).json() for p in (f"/sessions/{sid}", f"/sessions/{sid}/observation",
                                               f"/sessions/{sid}/tools", "/sessions", "/envs")]
    answers.append(agent.post(f"/sessions/{sid}/replay").json())
    answers.append(agent.post(f"/sessions/{sid}/clone").json())
    for path in ("score", "events", "hidden"):
        refused = agent.get(f"/sessions/{sid}/{path}")
        assert refused.status_code == 403
        answers.append(refused.json())
    events = operator.get(f"/sessions/{sid}/events").json()
    secrets = {"hash": events["event_log_hash"],
               "proofs": [e["payload"]["evidence"]["proof_ref"] for e in events["events"]
                          if e["kind"] == "evidence_recorded"]}
    assert events["event_log_hash"] == mirror.event_log_hash()  # the scan looked at the real episode
    for body in answers:
        _agent_side(body, secrets)
