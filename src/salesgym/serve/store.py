"""The service's durable record: an embedded SQLite database in WAL mode.

A session is its creation parameters plus the actions it was given, in order; the environment is
deterministic, so replaying the actions into a fresh environment rebuilds the session exactly
(docs/architecture.md, promises 1 and 2). Each write is committed before the service answers, so a step the client saw
acknowledged survives a ``kill -9``. ``synchronous=NORMAL`` (the default here) survives a crash of the
process; ``durability="full"`` also fsyncs every commit, to survive losing the machine's power.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Durability = Literal["normal", "full"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    env_id TEXT NOT NULL,
    kwargs TEXT NOT NULL,
    seed INTEGER NOT NULL,
    created REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',  -- open | closed | expired
    parent TEXT,
    task TEXT  -- "split/task id" for a benchmark task's session (serve/tasks.py)
);
CREATE TABLE IF NOT EXISTS actions (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    idx INTEGER NOT NULL,
    expected_version INTEGER NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session_id, idx)
);
"""


class StoreError(Exception):
    """The database cannot be opened or written (a path, a permission, a damaged file)."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    owner: str
    env_id: str
    kwargs: dict[str, Any]
    seed: int
    created: float
    status: str
    parent: str | None
    task: str | None = None


class Store:
    """One connection, serialised by a lock (SQLite allows one writer at a time anyway)."""

    def __init__(self, path: str | Path, durability: Durability = "normal") -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}
            if "task" not in columns:  # a database from before benchmark tasks
                self._db.execute("ALTER TABLE sessions ADD COLUMN task TEXT")
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: cannot open the session database ({err})") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._db.execute(sql, params)
                self._db.execute("COMMIT")
            except sqlite3.Error as err:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: cannot write the session database ({err})") from None

    def create(self, record: SessionRecord, actions: Sequence[tuple[int, str]] = ()) -> None:
        """A new session (a clone passes its parent's actions along, committed with it)."""
        rows: list[tuple[str, tuple[Any, ...]]] = [(
            "INSERT INTO sessions (id, owner, env_id, kwargs, seed, created, status, parent, task) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (record.id, record.owner, record.env_id, json.dumps(record.kwargs), record.seed, record.created,
             record.status, record.parent, record.task),
        )]
        rows += [("INSERT INTO actions VALUES (?,?,?,?,?)", (record.id, i, v, a, record.created))
                 for i, (v, a) in enumerate(actions)]
        self._write(rows)

    def append(self, session_id: str, idx: int, expected_version: int, action: str) -> None:
        self._write([("INSERT INTO actions VALUES (?,?,?,?,?)", (session_id, idx, expected_version, action, now()))])

    def retract(self, session_id: str, idx: int) -> None:
        """Undo an append whose step failed (an environment bug): the record must match what was applied."""
        self._write([("DELETE FROM actions WHERE session_id=? AND idx=?", (session_id, idx))])

    def last_activity(self, session_id: str) -> float:
        with self._lock:
            row = self._db.execute(
                "SELECT MAX(at) FROM actions WHERE session_id=?", (session_id,)
            ).fetchone()
        return float(row[0]) if row and row[0] is not None else 0.0

    def set_status(self, session_id: str, status: str) -> None:
        self._write([("UPDATE sessions SET status=? WHERE id=?", (status, session_id))])

    def get(self, session_id: str) -> SessionRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM sessions WHERE id=?", (session_id,)).fetchone()
        return None if row is None else _record(row)

    def actions(self, session_id: str) -> list[tuple[int, str]]:
        """``(expected_version, action JSON)`` in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT expected_version, action FROM actions WHERE session_id=? ORDER BY idx", (session_id,)
            ).fetchall()
        return [(int(v), str(a)) for v, a in rows]

    def count_open(self, owner: str | None = None) -> int:
        sql, params = "SELECT COUNT(*) FROM sessions WHERE status='open'", tuple[str, ...]()
        if owner is not None:
            sql, params = sql + " AND owner=?", (owner,)
        with self._lock:
            return int(self._db.execute(sql, params).fetchone()[0])

    def sessions(self, owner: str | None = None, status: str | None = "open",
                 task_prefix: str | None = None) -> Iterator[SessionRecord]:
        sql, params = "SELECT * FROM sessions WHERE 1=1", list[Any]()
        if owner is not None:
            sql, params = sql + " AND owner=?", [*params, owner]
        if status is not None:
            sql, params = sql + " AND status=?", [*params, status]
        if task_prefix is not None:  # exact prefix match: substr, not LIKE (a split name may hold "_" or "%")
            sql, params = sql + " AND substr(task, 1, ?) = ?", [*params, len(task_prefix), task_prefix]
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created, id", params).fetchall()
        return (_record(r) for r in rows)


def _record(row: tuple[Any, ...]) -> SessionRecord:
    sid, owner, env_id, kwargs, seed, created, status, parent, task = row
    return SessionRecord(sid, owner, env_id, json.loads(kwargs), int(seed), float(created), status, parent, task)


def now() -> float:
    return time.time()
