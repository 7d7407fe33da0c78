"""The operator's side of a benchmark taken through the service (``serve/tasks.py``) or an MCP server
(``salesgym mcp --task``): collect an agent's attempts per task and score them here, by replaying their
recorded calls in the same worlds.

``salesgym bench --from-service URL --name NAME`` builds one policy, NAME, whose episode on trial k of a task is
the k-th session opened for that task on the service, replayed (a session left open stops where it stopped; a
trial with no session is an episode that does nothing). The service must run the same code as this side
(its fingerprint is checked) and serve the same frozen split (by hash), so the replay sees what the agent saw.
``salesgym bench --from-record FILE`` does the same with an MCP server's record, trials in the order they
started.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from salesgym.bench.policyspec import SERVICE, PolicySpec
from salesgym.bench.runner import BenchError, code_fingerprint, trial_seed
from salesgym.bench.splits import Manifest, canonical_json

TOKEN_ENV = "SALESGYM_OPERATOR_TOKEN"


def collect(url: str, manifest: Manifest, trials: int, name: str, token: str | None = None,
            transport: Any = None) -> tuple[PolicySpec, list[str]]:
    """The policy that replays the service's sessions of ``manifest`` and notes on what was left out."""
    try:
        from salesgym.service_api.client import Client, ServiceError
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
    _same_code(found["code"], f"the service at {url}")
    return _policy(manifest, trials, name, url, found["sessions"])


def from_records(paths: list[Path], manifest: Manifest, trials: int, name: str) -> tuple[PolicySpec, list[str]]:
    """The policy that replays the task episodes an MCP server recorded (``salesgym mcp --task ... --record F``):
    trial k of a task is the k-th episode of it that started, finished or not."""
    episodes: list[dict[str, Any]] = []
    for path in paths:
        try:
            lines = path.read_text().splitlines()
        except OSError as err:
            raise BenchError(f"{path}: cannot read the record ({err.strerror or err})") from None
        before = len(episodes)
        for n, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                task = entry.get("task")
                if not isinstance(task, str) or not task.startswith(manifest.name + "/"):
                    continue
                started, actions, sha, code = entry["started"], entry["actions"], entry["split_sha256"], entry["code"]
            except (ValueError, KeyError, TypeError, AttributeError):
                raise BenchError(f"{path}:{n}: not an episode record of `salesgym mcp --task`") from None
            if sha != manifest.sha256:
                raise BenchError(f"{path}:{n}: recorded on another version of split {manifest.name!r} (sha256 "
                                 f"{str(sha)[:12]}, here {manifest.sha256[:12]})")
            _same_code(code, f"{path}:{n}")
            episodes.append({"task": task, "started": started, "actions": actions})
        if len(episodes) == before:  # an empty file, or another split's: scoring it would score nothing
            what = "is empty" if not lines else f"holds no episode of split {manifest.name!r}"
            raise BenchError(f"{path}: the record {what}: no episode to score (salesgym mcp --task "
                             f"{manifest.name}/ID --record FILE writes one)")
    episodes.sort(key=lambda e: float(e["started"]))
    return _policy(manifest, trials, name, "records:" + ",".join(str(p) for p in paths), episodes)


def _same_code(code: Any, where: str) -> None:
    if code != code_fingerprint():
        raise BenchError(f"{where} ran other code (fingerprint {code}, here {code_fingerprint()}): its episodes would "
                         "not replay into the worlds its agent saw")


def _policy(manifest: Manifest, trials: int, name: str, source: str,
            episodes: list[dict[str, Any]]) -> tuple[PolicySpec, list[str]]:
    """One policy from a task's attempts in order: trial k is the k-th attempt; notes on what is left out."""
    attempts: dict[str, list[list[Any]]] = {}
    for episode in episodes:
        attempts.setdefault(episode["task"].split("/", 1)[1], []).append(episode["actions"])
    by_seed: dict[str, list[Any]] = {}
    notes: list[str] = []
    for t in manifest.territories:
        mine = attempts.pop(t.id, [])
        for k, actions in enumerate(mine[:trials]):
            by_seed[str(trial_seed(t.seed, k))] = actions
        if len(mine) > trials:
            notes.append(f"{t.id}: {len(mine) - trials} attempt(s) after the first {trials} not scored")
        if len(mine) < trials:
            notes.append(f"{t.id}: {trials - len(mine)} trial(s) without an attempt, scored as doing nothing")
    notes += [f"{task}: not a task of {manifest.name} here, not scored" for task in sorted(attempts)]
    return PolicySpec(SERVICE, name, config=canonical_json({"source": source, "by_seed": by_seed})), notes
