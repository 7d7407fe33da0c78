"""Benchmark tasks behind the service: a remote agent takes a frozen split by its task ids, never by seeds.

``POST /sessions {"task": {"split": "eval", "id": "eval-003"}}`` opens the world of that split entry: the
service resolves its environment, arguments and seed from the manifest (a private split's seed from the
operator's key, which never leaves the service). The agent's view of such a session names the task and not the
seed. The operator then collects the sessions per task (``GET /benchmark/{split}/sessions``) and scores them in
process with ``salesgym bench --from-service``: trial k of a task is the k-th session the agent opened for it,
whatever happened to it, so starting over never discards a bad attempt.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from salesgym.serve.sessions import ServiceError


@dataclass(frozen=True, slots=True)
class Task:
    split: str
    id: str
    env_id: str
    kwargs: dict[str, Any]
    seed: int
    split_sha256: str = ""

    @property
    def ref(self) -> str:
        """How the session record names its task."""
        return f"{self.split}/{self.id}"


def _manifest(split: str) -> Any:
    from salesgym.bench import splits as sp

    try:
        return sp.load(split)
    except sp.SplitError as err:
        raise ServiceError(404, "unknown_split", f"no benchmark split {split!r} here ({err})") from None


def listing(split: str) -> dict[str, Any]:
    """What an agent may know of a split: its environment, description and task ids (never a seed)."""
    manifest = _manifest(split)
    return {"split": manifest.name, "env_id": manifest.env_id, "description": manifest.description,
            "private": manifest.private, "sha256": manifest.sha256, "tasks": [slot.id for slot in manifest.layout]}


@functools.cache
def code() -> str:
    """The fingerprint of the code that decides results, which the scoring side checks against its own."""
    from salesgym.bench.runner import code_fingerprint

    return code_fingerprint()


def resolve(split: str, task_id: str) -> Task:
    """The world of one split entry, with its seed (a private split's from the operator's key)."""
    from salesgym.bench import splits as sp
    from salesgym.bench.runner import territory_kwargs

    manifest = _manifest(split)
    if manifest.private:
        try:
            key = sp.resolve_key()
            if key is None:
                raise sp.SplitError(split, f"set ${sp.KEY_ENV_VAR} where the service runs")
            manifest = manifest.unlock(key)
        except sp.SplitError as err:
            raise ServiceError(409, "split_locked", f"private split {split!r} cannot be opened here: {err}") from None
    entry = next((t for t in manifest.territories if t.id == task_id), None)
    if entry is None:
        raise ServiceError(404, "unknown_task", f"split {split!r} has no task {task_id!r}; GET /benchmark/{split}")
    return Task(manifest.name, entry.id, manifest.env_id, territory_kwargs(entry, manifest.env_id), entry.seed,
                manifest.sha256)
