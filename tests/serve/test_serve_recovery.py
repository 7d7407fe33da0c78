"""Durability: ``kill -9`` the server while a client is stepping, restart it on the same database, and every
session resumes with identical state (event-log hash), no acknowledged step lost and none applied twice."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import httpx
from serve_helpers import DEBUG, OPERATOR, Server, in_process

from salesgym.serve.client import ServiceError

WAITS = [{"tool": "wait", "args": {"hours": h, "until": None}} for h in (1, 2, 4, 8)]


def _calls(rng: random.Random) -> dict[str, Any]:
    # short waits, reads and refused calls: the episode lasts long enough to be killed in the middle
    return rng.choice([*WAITS[:2], "junk", {"tool": "view_opportunity", "args": {"opportunity_id": None, "page": 0}}])


def test_a_killed_server_resumes_every_session_identically(tmp_path: Path) -> None:
    first = Server(tmp_path / "serve.sqlite", tmp_path / "serve.log").start()
    client = first.client()
    calm = client.create(DEBUG, seed=11)
    calm_actions = WAITS[:3]
    for action in calm_actions:
        client.step(calm.session_id, action, client.session(calm.session_id).state_version)
    twin = client.clone(calm.session_id)
    before = client.observation(calm.session_id)

    busy = client.create(DEBUG, seed=12).session_id
    acked: list[Any] = []
    inflight: list[tuple[Any, int]] = []
    started = threading.Event()

    def stepper() -> None:
        rng, version = random.Random(0), client.session(busy).state_version
        with first.client() as mine:
            while True:
                action = _calls(rng)
                inflight[:] = [(action, version)]
                try:
                    result = mine.step(busy, action, version)
                except (httpx.TransportError, ServiceError):
                    return
                acked.append(action)
                version = result.state_version
                if len(acked) == 20:
                    started.set()
                if result.terminated or result.truncated:
                    inflight.clear()
                    return

    thread = threading.Thread(target=stepper)
    thread.start()
    assert started.wait(30)
    first.kill()  # mid-stream: a step may be committed and not yet answered
    thread.join(10)
    assert len(acked) >= 20

    second = Server(first.db, tmp_path / "serve2.log").start()
    try:
        client, operator = second.client(), second.client(OPERATOR)
        # the quiet session and its clone: exactly as before the crash
        assert client.observation(calm.session_id) == before
        quiet = in_process(DEBUG, 11, calm_actions).event_log_hash()
        assert operator.events(calm.session_id)["event_log_hash"] == quiet
        assert operator.events(twin.session_id)["event_log_hash"] == quiet
        # the busy one: every acknowledged step is there; the one in flight is there at most once
        steps = client.session(busy).steps
        assert steps in (len(acked), len(acked) + 1)
        if inflight:
            action, version = inflight[0]
            retried = client.step(busy, action, version)  # the client retries the step it got no answer for
            assert retried.replayed == (steps == len(acked) + 1)
            acked.append(action)
        assert client.session(busy).steps == len(acked)
        reference = in_process(DEBUG, 12, acked)
        assert operator.events(busy)["event_log_hash"] == reference.event_log_hash()
        assert client.observation(busy).model_dump() == json.loads(json.dumps(reference.observe()))  # tuples: lists
        assert client.replay(busy).identical
    finally:
        second.stop()
