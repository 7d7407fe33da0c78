"""Benchmark tasks behind the service: a remote agent takes a frozen split by its task ids, never by seeds.

``POST /sessions {"task": {"split": "eval", "id": "eval-003"}}`` opens the world of that split entry: the
service resolves its environment, arguments and seed from the manifest (a private split's seed from the
operator's key, which never leaves the service). The agent's view of such a session names the task and not the
seed. The operator then collects the sessions per task (``GET /benchmark/{split}/sessions``) and scores them in
process with ``salesgym bench --from-service``: trial k of a task is the k-th session the agent opened for it,
whatever happened to it, so starting over never discards a bad attempt.

Answers name splits and tasks, never the service's files: a split that is not here is answered with the names of
those that are; one whose manifest cannot be used, or a private one the service's key does not open, with what is
wrong in words, the file and the reason going to the service's log for the operator.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from salesgym.serve.sessions import ServiceError

if TYPE_CHECKING:
    from salesgym.bench.splits import Manifest, SplitKey

log = logging.getLogger("salesgym.serve")


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


def manifest(split: str) -> Manifest:
    """The frozen split ``split`` (404 if there is none of that name, 503 if its manifest cannot be used)."""
    from salesgym.bench import splits as sp

    try:
        directory = sp.resolve_splits_dir()
        names = sp.available(directory)
    except (sp.SplitError, OSError) as err:
        log.warning("no benchmark split can be served: %s", err)
        raise ServiceError(503, "split_unavailable", "the service has no splits to serve") from None
    if split not in names:
        raise ServiceError(404, "unknown_split", f"no benchmark split {split!r} here; the splits here: "
                           f"{', '.join(names) or 'none'}")  # fmt: skip
    try:
        return sp.load(split, directory)
    except sp.SplitError as err:
        log.warning("split %r cannot be served: %s", split, err)
        raise ServiceError(503, "split_unavailable", f"split {split!r} is here but its manifest does not verify; "
                           "the operator's log says why") from None  # fmt: skip


def listing(split: str) -> dict[str, Any]:
    """What an agent may know of a split: its environment, description and task ids (never a seed)."""
    found = manifest(split)
    return {"split": found.name, "env_id": found.env_id, "description": found.description,
            "private": found.private, "sha256": found.sha256, "tasks": [slot.id for slot in found.layout]}


@functools.cache
def code() -> str:
    """The fingerprint of the code that decides results, which the scoring side checks against its own."""
    from salesgym.bench.runner import code_fingerprint

    return code_fingerprint()


def resolve(split: str, task_id: str, key: SplitKey | None = None) -> Task:
    """The world of one split entry, with its seed (a private split's from ``key``, the operator's)."""
    from salesgym.bench import splits as sp
    from salesgym.bench.runner import territory_kwargs

    found = manifest(split)
    if found.private:
        if key is None:
            raise ServiceError(409, "split_locked", f"private split {split!r} cannot be opened here: the service "
                               f"holds no split key (set ${sp.KEY_ENV_VAR} where it starts)")  # fmt: skip
        try:
            found = found.unlock(key)
        except sp.SplitError as err:
            log.warning("private split %r cannot be opened: %s", split, err)
            raise ServiceError(409, "split_locked", f"private split {split!r} cannot be opened here: the service's "
                               "split key is not the one it was sealed with") from None  # fmt: skip
    pack = None if found.pack is None else _shipped(found)
    entry = next((t for t in found.territories if t.id == task_id), None)
    if entry is None:
        raise ServiceError(404, "unknown_task", f"split {split!r} has no task {task_id!r}; GET /benchmark/{split}")
    kwargs = {**territory_kwargs(entry, found.env_id), **({} if pack is None else {"pack": pack})}
    return Task(found.name, entry.id, found.env_id, kwargs, entry.seed, found.sha256)


def _shipped(found: Manifest) -> str:
    """The name of the shipped template pack a split is cut over (an operator's own pack is never served: it runs
    its own code and is scored in process with --templates-dir)."""
    from salesgym.bench import splits as sp

    try:
        attached = sp.shipped_pack(found)
    except sp.SplitError as err:
        log.warning("split %r cannot be served: %s", found.name, err)
        raise ServiceError(503, "split_unavailable", f"split {found.name!r} is here but its template pack changed "
                           "since it was frozen; the operator's log says why") from None  # fmt: skip
    if attached is None or attached.pack_dir is None:
        raise ServiceError(409, "split_not_served", f"split {found.name!r} is cut over a template pack this service "
                           "does not ship; its operator scores it in process")  # fmt: skip
    return attached.pack_dir
