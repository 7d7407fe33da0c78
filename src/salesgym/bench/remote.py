"""The operator's side of a benchmark taken through the service (``serve/tasks.py``): collect an agent's
sessions per task and score them here, by replaying their recorded calls in the same worlds.

``salesgym bench --from-service URL --name NAME`` builds one policy, NAME, whose episode on trial k of a task is
the k-th session opened for that task on the service, replayed (a session left open stops where it stopped; a
trial with no session is an episode that does nothing). The service must run the same code as this side
(its fingerprint is checked) and serve the same frozen split (by hash), so the replay sees what the agent saw.
"""

from __future__ import annotations

import os
from typing import Any

from salesgym.bench.policyspec import SERVICE, PolicySpec
from salesgym.bench.runner import BenchError, code_fingerprint, trial_seed
from salesgym.bench.splits import Manifest, canonical_json

TOKEN_ENV = "SALESGYM_OPERATOR_TOKEN"


def collect(url: str, manifest: Manifest, trials: int, name: str, token: str | None = None,
            transport: Any = None) -> tuple[PolicySpec, list[str]]:
    """The policy that replays the service's sessions of ``manifest`` and notes on what was left out."""
    try:
        from salesgym.serve.client import Client, ServiceError
    except ImportError:
        raise BenchError("--from-service needs the service client: pip install 'salesgym[serve]'") from None
    import httpx

    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise BenchError(f"--from-service needs the service's operator token in ${TOKEN_ENV}")
    try:
        with Client(url, token, transport=transport) as client:
            listing = client.benchmark(manifest.name)
            found = client.task_sessions(manifest.name)
    except ServiceError as err:
        raise BenchError(f"{url}: {err}") from None
    except httpx.HTTPError as err:
        raise BenchError(f"{url}: cannot reach the service ({type(err).__name__}: {err})") from None
    if listing.sha256 != manifest.sha256:
        raise BenchError(f"the service's split {manifest.name!r} is not this one (sha256 {listing.sha256[:12]} there, "
                         f"{manifest.sha256[:12]} here)")
    if found["code"] != code_fingerprint():
        raise BenchError(f"the service runs other code (fingerprint {found['code']} there, {code_fingerprint()} "
                         "here): its sessions would not replay into the worlds its agent saw")
    attempts: dict[str, list[list[Any]]] = {}
    for session in found["sessions"]:
        attempts.setdefault(session["task"].split("/", 1)[1], []).append(session["actions"])
    by_seed: dict[str, list[Any]] = {}
    notes: list[str] = []
    for t in manifest.territories:
        mine = attempts.pop(t.id, [])
        for k, actions in enumerate(mine[:trials]):
            by_seed[str(trial_seed(t.seed, k))] = actions
        if len(mine) > trials:
            notes.append(f"{t.id}: {len(mine) - trials} session(s) after the first {trials} not scored")
        if len(mine) < trials:
            notes.append(f"{t.id}: {trials - len(mine)} trial(s) without a session, scored as doing nothing")
    notes += [f"{task}: not a task of {manifest.name} here, not scored" for task in sorted(attempts)]
    return PolicySpec(SERVICE, name, config=canonical_json({"service": url, "by_seed": by_seed})), notes
