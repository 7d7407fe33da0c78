"""Sessions: live environments behind the service, each rebuilt on demand from the durable record.

Reaches environments only through the registry (``salesgym.make``), so every registered family is served.
A session lives in memory while it is used; after a restart it is rebuilt the first time it is touched, by
replaying its recorded actions into a fresh environment (the environment is deterministic, so the rebuilt
state equals the lost one: same event log, by hash).

Steps are idempotent: each carries the ``state_version`` it expects. Every step that acts moves the version
on (a refused call records one public ``invalid_action`` event), so the version a step was applied at names
it; a retry (same version, same action) gets the recorded result back instead of acting twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import salesgym
from salesgym.serve.auth import Principal
from salesgym.serve.store import SessionRecord, Store, StoreError, now

log = logging.getLogger("salesgym.serve")
RECENT_RESULTS = 32  # results kept per session to answer retries; an older retry gets 409 already_applied
# the service's key comes from its own environment, never a caller; and no caller names a model endpoint and the
# environment variable holding its key (``llm``: it could send the service's own secrets to any address), nor a
# directory of the server's to load a template pack from (``pack``: a pack runs its own fixtures.py; a pack the
# package ships may be named, ``shipped_pack``); the desk's language-model buyer (``buyer`` and its endpoint, model
# and key variable) likewise
RESERVED_KWARGS = frozenset({"verifier_key", "llm", "pack", "buyer", "buyer_model", "buyer_base_url",
                             "buyer_api_key_env"})  # fmt: skip


@dataclass(frozen=True)
class Limits:
    max_steps: int = 10_000  # per session
    max_wall_s: float = 24 * 3600.0  # from creation, across restarts
    idle_s: float = 3600.0  # untouched this long: expired
    max_request_bytes: int = 256 * 1024
    max_open_sessions: int = 1024  # in the whole service
    max_sessions_per_caller: int = 256


class ServiceError(Exception):
    """A refusal with an HTTP status, a machine-readable code and a one-line reason."""

    def __init__(self, status: int, error: str, detail: str, state_version: int | None = None) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.state_version = status, error, detail, state_version


def action_text(action: Any) -> str:
    """The action as the record keeps it: JSON text, replayed with ``json.loads`` (exact for JSON data)."""
    return json.dumps(action, ensure_ascii=True)


def action_digest(text: str) -> str:
    """Two spellings of the same call (key order) are the same retry."""
    return hashlib.sha256(json.dumps(json.loads(text), sort_keys=True).encode()).hexdigest()


@dataclass
class Live:
    record: SessionRecord
    env: Any
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    applied: dict[int, tuple[str, int]] = field(default_factory=dict)  # version -> (action digest, step number)
    recent: OrderedDict[int, dict[str, Any]] = field(default_factory=OrderedDict)  # version -> step result
    last_used: float = field(default_factory=time.monotonic)

    @property
    def id(self) -> str:
        return self.record.id

    def view(self) -> dict[str, Any]:
        r = self.record
        return {"session_id": r.id, "env_id": r.env_id, "kwargs": r.kwargs, "status": r.status,
                "seed": None if r.task else r.seed,  # a task's seed is the operator's (a private split's secret)
                "task": r.task, "steps": self.steps, "state_version": self.env.state_version,
                "terminated": self.terminated, "truncated": self.truncated, "observation": self.env.observe(),
                "parent": r.parent}

    def apply(self, text: str, expected: int) -> dict[str, Any]:
        """Step the environment with a recorded action; remember its result for retries."""
        obs, reward, terminated, truncated, info = self.env.step(json.loads(text))
        self.steps += 1
        self.terminated, self.truncated = terminated, truncated
        result = {"session_id": self.id, "observation": obs, "reward": reward, "terminated": terminated,
                  "truncated": truncated, "info": info, "state_version": info["state_version"], "step": self.steps,
                  "replayed": False}
        self.applied[expected] = (action_digest(text), self.steps)
        self.recent[expected] = result
        while len(self.recent) > RECENT_RESULTS:
            self.recent.popitem(last=False)
        return result


def shipped_packs(env_id: str) -> list[str]:
    """The names of the template packs the package ships for ``env_id``'s family (the only packs a caller names)."""
    hook = salesgym.family(env_id).shipped_packs
    return [] if hook is None else sorted(hook())


def shipped_pack(env_id: str, value: Any) -> bool:
    """Whether ``value`` names a pack the package ships: a name, never a path of the server's."""
    return isinstance(value, str) and value in shipped_packs(env_id)


def _make(env_id: str, kwargs: dict[str, Any], seed: int, verifier_key: bytes | None = None) -> Any:
    """A caller's environment, reset; ``verifier_key`` is the service's (never a caller's: reserved)."""
    if env_id not in salesgym.registry():
        raise ServiceError(400, "unknown_env", f"unknown environment {env_id!r}; GET /envs lists them")
    shipped = "pack" in kwargs and shipped_pack(env_id, kwargs["pack"])
    bad = sorted(k for k in kwargs if (k in RESERVED_KWARGS and not (k == "pack" and shipped)) or k.startswith("_"))
    if bad:
        named = shipped_packs(env_id)
        also = (f" (pack may name a template pack the package ships: {', '.join(named)}; never a directory)"
                if "pack" in bad and named else "")  # fmt: skip
        raise ServiceError(400, "bad_kwargs", f"{', '.join(bad)} cannot be set by a caller{also}")
    try:
        env = salesgym.make(env_id, **kwargs, **({} if verifier_key is None else {"verifier_key": verifier_key}))
        env.reset(seed=seed)
    except Exception as err:  # the family validates its own arguments; any refusal is the caller's input
        reason = " ".join(str(err).split())[:300]
        raise ServiceError(400, "bad_kwargs", f"cannot make {env_id}: {type(err).__name__}: {reason}") from None
    return env


class SessionManager:
    def __init__(self, store: Store, limits: Limits | None = None, verifier_key: bytes | None = None) -> None:
        self.store = store
        self.limits = limits or Limits()
        self.live: dict[str, Live] = {}
        self.verifier_key = verifier_key  # the service's proof key (None: the process's, else the development key)

    # -- lifecycle -----------------------------------------------------------------------------------
    def create(self, caller: Principal, env_id: str, kwargs: dict[str, Any], seed: int,
               task: str | None = None) -> Live:
        self._room_for(caller)
        env = _make(env_id, kwargs, seed, self.verifier_key)
        record = SessionRecord("s-" + secrets.token_hex(8), caller.name, env_id, kwargs, seed, now(), "open", None,
                               task)
        self._write(lambda: self.store.create(record))
        live = self.live[record.id] = Live(record, env)
        return live

    def clone(self, caller: Principal, session_id: str) -> Live:
        parent = self.get(caller, session_id)
        r = parent.record
        if r.task is not None and not caller.operator:
            raise ServiceError(403, "forbidden", f"session {session_id} is benchmark task {r.task}: a clone would let "
                               "an agent try calls out before making them (the operator may clone it)")
        self._room_for(caller)
        record = SessionRecord("s-" + secrets.token_hex(8), caller.name, r.env_id, r.kwargs, r.seed, now(), "open",
                               r.id)
        actions = self.store.actions(r.id)
        self._write(lambda: self.store.create(record, actions))
        twin = Live(record, parent.env.clone(), parent.steps, parent.terminated, parent.truncated,
                    dict(parent.applied))  # the parent's recent results answer the parent's retries only
        self.live[record.id] = twin
        return twin

    def close(self, caller: Principal, session_id: str) -> None:
        self.get(caller, session_id)
        self._retire(session_id, "closed")

    def get(self, caller: Principal, session_id: str) -> Live:
        """The caller's session (any session for the operator). Someone else's is "not found", like one that
        never existed, so ids cannot be probed."""
        live = self.live.get(session_id)
        record = live.record if live is not None else self.store.get(session_id)
        if record is None or not (caller.operator or record.owner == caller.name):
            raise ServiceError(404, "not_found", f"no session {session_id!r}")
        if record.status != "open":
            raise ServiceError(410, record.status, f"session {session_id} is {record.status}")
        if live is None:
            live = self.live[session_id] = self._rebuild(record)
        elif time.monotonic() - live.last_used > self.limits.idle_s:
            self._retire(session_id, "expired")
            raise ServiceError(410, "expired", f"session {session_id} expired after {self.limits.idle_s:g} s idle")
        if now() - record.created > self.limits.max_wall_s:
            self._retire(session_id, "expired")
            raise ServiceError(410, "expired", f"session {session_id} reached its {self.limits.max_wall_s:g} s "
                               "wall-time limit")
        live.last_used = time.monotonic()
        return live

    def sessions(self, caller: Principal) -> list[Live]:
        out = []
        for record in self.store.sessions(None if caller.operator else caller.name):
            try:
                out.append(self.get(caller, record.id))
            except ServiceError:  # expired while listing
                continue
        return out

    def task_sessions(self, split: str) -> list[dict[str, Any]]:
        """Every session (open or not) opened for a task of ``split``, oldest first, with its recorded actions:
        what the operator scores (``salesgym bench --from-service``)."""
        return [{"session_id": r.id, "task": r.task, "owner": r.owner, "status": r.status, "created": r.created,
                 "actions": [json.loads(text) for _, text in self.store.actions(r.id)]}
                for r in self.store.sessions(status=None, task_prefix=split + "/")]

    # -- acting --------------------------------------------------------------------------------------
    def step(self, caller: Principal, session_id: str, expected: int, action: Any) -> dict[str, Any]:
        live = self.get(caller, session_id)
        try:
            text = action_text(action)
        except (TypeError, ValueError) as err:  # not reachable from JSON bodies; kept for in-process callers
            raise ServiceError(400, "bad_action", f"the action is not JSON data ({err})") from None
        current = live.env.state_version
        seen = live.applied.get(expected)  # only a version already stepped can be a retry
        if seen is not None and seen[0] == action_digest(text):
            recorded = live.recent.get(expected)
            if recorded is None:
                raise ServiceError(409, "already_applied", f"this call was applied as step {seen[1]}; its result "
                                   "is no longer kept: GET the session for the current observation", current)
            return {**recorded, "replayed": True}
        if expected != current:
            raise ServiceError(409, "stale_version", f"state_version {expected} is stale: the session is at "
                               f"{current}; GET the session, then step with state_version {current}", current)
        if live.terminated or live.truncated:  # the environment answers, changes nothing, records nothing
            obs, reward, terminated, truncated, info = live.env.step(json.loads(text))
            return {"session_id": live.id, "observation": obs, "reward": reward, "terminated": terminated,
                    "truncated": truncated, "info": info, "state_version": info["state_version"],
                    "step": live.steps, "replayed": False}
        if live.steps >= self.limits.max_steps:
            raise ServiceError(409, "step_limit", f"session {session_id} reached its limit of "
                               f"{self.limits.max_steps} steps", current)
        index = live.steps
        self._write(lambda: self.store.append(live.id, index, expected, text))  # committed before acting
        try:
            return live.apply(text, expected)
        except Exception:
            # an environment bug (step must never raise): undo the record and drop the half-stepped state; the
            # next access rebuilds the session from the record as it was
            self.store.retract(live.id, index)
            self.live.pop(live.id, None)
            raise

    def replay_check(self, caller: Principal, session_id: str) -> dict[str, Any]:
        live = self.get(caller, session_id)
        fresh = self._rebuild(live.record)
        same = fresh.env.event_log_hash() == live.env.event_log_hash()
        return {"session_id": live.id, "steps": fresh.steps, "state_version": fresh.env.state_version,
                "identical": same, "event_log_hash": live.env.event_log_hash() if caller.operator else None}

    # -- housekeeping --------------------------------------------------------------------------------
    def sweep(self) -> int:
        """Expire sessions idle longer than the limit (the ones in memory, and after a restart the ones on
        disk, by their last recorded action). Returns how many expired."""
        expired = 0
        clock, wall = time.monotonic(), now()
        for sid, live in list(self.live.items()):
            if clock - live.last_used > self.limits.idle_s or wall - live.record.created > self.limits.max_wall_s:
                self._retire(sid, "expired")
                expired += 1
        for record in list(self.store.sessions()):
            if record.id in self.live:
                continue
            last = max(record.created, self.store.last_activity(record.id))
            if wall - last > self.limits.idle_s or wall - record.created > self.limits.max_wall_s:
                self._retire(record.id, "expired")
                expired += 1
        return expired

    def _rebuild(self, record: SessionRecord) -> Live:
        live = Live(record, _make(record.env_id, record.kwargs, record.seed, self.verifier_key))
        for expected, text in self.store.actions(record.id):
            live.apply(text, expected)
        return live

    def _retire(self, session_id: str, status: str) -> None:
        self._write(lambda: self.store.set_status(session_id, status))
        self.live.pop(session_id, None)

    def _room_for(self, caller: Principal) -> None:
        if self.store.count_open() >= self.limits.max_open_sessions:
            raise ServiceError(429, "too_many_sessions", "the service has no room for another session; close one")
        if not caller.operator and self.store.count_open(caller.name) >= self.limits.max_sessions_per_caller:
            raise ServiceError(429, "too_many_sessions", f"at most {self.limits.max_sessions_per_caller} open "
                               "sessions per caller; close one")

    def _write(self, do: Callable[[], None]) -> None:
        try:
            do()
        except StoreError as err:  # the file and SQLite's reason are the operator's, in the log
            log.warning("%s", err)
            raise ServiceError(503, "store_unavailable", "the session record cannot be written; nothing was "
                               "applied") from None
