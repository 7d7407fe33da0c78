"""The embedded run store: one SQLite file with ``runs`` and ``episodes``.

An episode is keyed by ``(run_id, policy, territory_id)``; it is written (and committed) the moment it
finishes, so an interrupted run loses nothing and a resumed run only plays what is missing. A run's id is
derived from its configuration, so asking for the same benchmark twice finds the same run.

Every failure of the file (not a database, damaged, altered tables, hand-edited rows, read-only) is a
:class:`StoreError` naming the file and what is wrong; the store checks integrity and schema when it opens
and validates every row it decodes. Readers (``runs``, ``report``, ``export``) open it read-only.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    split TEXT NOT NULL,
    split_sha256 TEXT NOT NULL,
    policies TEXT NOT NULL,
    config TEXT NOT NULL,
    package_version TEXT NOT NULL,
    git_revision TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    policy TEXT NOT NULL,
    territory_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    metrics TEXT,
    wall_s REAL NOT NULL,
    steps INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    error TEXT,
    finished TEXT NOT NULL,
    UNIQUE (run_id, policy, territory_id)
);
CREATE INDEX IF NOT EXISTS episodes_run ON episodes(run_id);
"""

STATUSES = ("ok", "step_cap", "error")
COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": ("id", "created", "split", "split_sha256", "policies", "config", "package_version", "git_revision"),
    "episodes": (
        "run_id",
        "policy",
        "territory_id",
        "seed",
        "status",
        "metrics",
        "wall_s",
        "steps",
        "tool_calls",
        "error",
        "finished",
    ),
}
PRIVATE_KEY = "private_split"  # set in a run's config when its split is private: exports hide the seeds


class StoreError(Exception):
    """The database cannot be opened or does not hold what was asked for."""


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One finished episode: what the runner returns and the store keeps."""

    policy: str
    territory_id: str
    seed: int
    status: str  # ok | step_cap | error
    metrics: Mapping[str, Any] | None
    wall_s: float
    steps: int
    tool_calls: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "territory_id": self.territory_id,
            "seed": self.seed,
            "status": self.status,
            "metrics": dict(self.metrics) if self.metrics is not None else None,
            "wall_s": self.wall_s,
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: str
    created: str
    split: str
    split_sha256: str
    policies: tuple[str, ...]
    config: Mapping[str, Any] = field(default_factory=dict)
    package_version: str = ""
    git_revision: str | None = None

    @property
    def private(self) -> bool:
        """The run played a private split: its (derived) seeds are not exported."""
        return bool(self.config.get(PRIVATE_KEY))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "split": self.split,
            "split_sha256": self.split_sha256,
            "policies": list(self.policies),
            "config": dict(self.config),
            "package_version": self.package_version,
            "git_revision": self.git_revision,
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _sqlite_reason(err: sqlite3.Error) -> str:
    text = str(err)
    if "readonly" in text or "read-only" in text:
        return f"{text} (the file, its -wal/-shm files or its directory are not writable)"
    if "malformed" in text or "not a database" in text:
        return f"{text} (the file is damaged or is not a SQLite database)"
    return text


class Store:
    """A SQLite file holding runs and their episodes. Use as a context manager or call :meth:`close`.

    ``readonly=True`` opens an existing file for reading only (``mode=ro``): nothing is created or changed,
    which is what ``runs``, ``report`` and ``export`` need; a read-only file is fine for them.
    """

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if self.path.is_dir():
            raise StoreError(f"{self.path}: cannot open the run database: it is a directory")
        if readonly and not self.path.is_file():
            raise StoreError(f"{self.path}: no run database here")
        if not readonly:
            self._check_writable()
        try:
            if readonly:
                self._db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path)
        except (sqlite3.Error, OSError) as err:
            reason = _sqlite_reason(err) if isinstance(err, sqlite3.Error) else (err.strerror or str(err))
            raise StoreError(f"{self.path}: cannot open the run database: {reason}") from err
        try:
            self._open()
        except sqlite3.Error as err:
            self._db.close()
            raise StoreError(f"{self.path}: cannot open the run database: {_sqlite_reason(err)}") from err
        except StoreError:
            self._db.close()
            raise

    def _check_writable(self) -> None:
        """Refuse a read-only file before any work: SQLite would only fail at the first write."""
        for ancestor in self.path.absolute().parents:
            if ancestor.exists():
                if not ancestor.is_dir():
                    raise StoreError(f"{self.path}: cannot create the run database: {ancestor} is not a directory")
                break
        for f in (self.path, *(self.path.with_name(self.path.name + x) for x in ("-wal", "-shm", "-journal"))):
            if f.is_file() and not os.access(f, os.W_OK):
                raise StoreError(f"{f}: the run database is read-only; pass a writable --db to record runs")
        parent = self.path.parent
        if self.path.is_file() and parent.is_dir() and not os.access(parent, os.W_OK | os.X_OK):
            raise StoreError(
                f"{parent}: directory is not writable (SQLite keeps its -wal/-shm files beside the database)"
            )

    def _open(self) -> None:
        """Integrity and schema check; a new (empty) file gets the schema."""
        self._db.execute("PRAGMA foreign_keys = ON")
        check = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if check is None or check[0] != "ok":
            raise StoreError(f"{self.path}: the run database is damaged: {check[0] if check else 'no answer'}")
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ours = set(COLUMNS)
        if not tables & ours:
            if tables:
                others = ", ".join(sorted(tables)[:5])
                raise StoreError(f"{self.path}: not a salesgym run database (it holds table(s) {others})")
            if self.readonly:
                raise StoreError(f"{self.path}: not a salesgym run database (it is empty)")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA)
            return
        for table, wanted in COLUMNS.items():
            if table not in tables:
                raise StoreError(f"{self.path}: table {table} is missing (the database was altered)")
            have = {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}
            missing = [c for c in wanted if c not in have]
            if missing:
                raise StoreError(
                    f"{self.path}: table {table} lacks column(s) {', '.join(missing)} (the database was altered)"
                )
        if not self.readonly:
            self._db.execute("PRAGMA journal_mode = WAL")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """SQLite errors after opening (a file damaged or changed underneath, a read-only file) as StoreError."""
        try:
            yield
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: cannot {what}: {_sqlite_reason(err)}") from err

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._guard("write to the run database"), self._db:
            yield self._db

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._guard("read the run database"):
            return self._db.execute(sql, params).fetchall()

    # -- runs ----------------------------------------------------------------------------------------
    def ensure_run(self, run: RunRecord) -> RunRecord:
        """Create the run if it does not exist; return the stored record (the original one on resume)."""
        existing = self.get_run(run.id, missing_ok=True)
        if existing is not None:
            return existing
        with self._tx() as db:
            db.execute(
                "INSERT INTO runs (id, created, split, split_sha256, policies, config, package_version, git_revision)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.id,
                    run.created or _now(),
                    run.split,
                    run.split_sha256,
                    json.dumps(list(run.policies)),
                    json.dumps(dict(run.config), sort_keys=True),
                    run.package_version,
                    run.git_revision,
                ),
            )
        stored = self.get_run(run.id)
        assert stored is not None
        return stored

    def get_run(self, run_id: str, *, missing_ok: bool = False) -> RunRecord | None:
        rows = self._rows(
            "SELECT id, created, split, split_sha256, policies, config, package_version, git_revision"
            " FROM runs WHERE id = ?",
            (run_id,),
        )
        if not rows:
            if missing_ok:
                return None
            known = ", ".join(self._run_ids()[-5:]) or "none"
            raise StoreError(f"{self.path}: no run {run_id!r} (latest runs: {known})")
        return self._run_record(rows[0])

    def _run_ids(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT id FROM runs ORDER BY created, id")]

    def _run_record(self, row: Sequence[Any]) -> RunRecord:
        where = f"run {row[0]!r}"
        for i, col in enumerate(("id", "created", "split", "split_sha256", "policies", "config", "package_version")):
            _want(self.path, where, col, row[i], str)
        if row[7] is not None:
            _want(self.path, where, "git_revision", row[7], str)
        policies = _json(self.path, where, "policies", row[4])
        if not isinstance(policies, list) or not all(isinstance(p, str) for p in policies):
            raise StoreError(f"{self.path}: {where}: column policies must be a JSON list of names (edited by hand?)")
        config = _json(self.path, where, "config", row[5])
        if not isinstance(config, dict):
            raise StoreError(f"{self.path}: {where}: column config must be a JSON object (edited by hand?)")
        return RunRecord(
            id=row[0],
            created=row[1],
            split=row[2],
            split_sha256=row[3],
            policies=tuple(policies),
            config=config,
            package_version=row[6],
            git_revision=row[7],
        )

    def runs(self) -> list[RunRecord]:
        rows = self._rows(
            "SELECT id, created, split, split_sha256, policies, config, package_version, git_revision"
            " FROM runs ORDER BY created, id"
        )
        return [self._run_record(r) for r in rows]

    # -- episodes ------------------------------------------------------------------------------------
    def record(self, run_id: str, ep: EpisodeRecord) -> None:
        """Write one finished episode (replacing an earlier one with the same key) and commit."""
        if ep.status not in STATUSES:
            raise ValueError(f"unknown episode status {ep.status!r}")
        with self._tx() as db:
            db.execute(
                "INSERT INTO episodes (run_id, policy, territory_id, seed, status, metrics, wall_s, steps,"
                " tool_calls, error, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, policy, territory_id) DO UPDATE SET seed = excluded.seed,"
                " status = excluded.status, metrics = excluded.metrics, wall_s = excluded.wall_s,"
                " steps = excluded.steps, tool_calls = excluded.tool_calls, error = excluded.error,"
                " finished = excluded.finished",
                (
                    run_id,
                    ep.policy,
                    ep.territory_id,
                    ep.seed,
                    ep.status,
                    json.dumps(dict(ep.metrics), sort_keys=True) if ep.metrics is not None else None,
                    float(ep.wall_s),
                    int(ep.steps),
                    int(ep.tool_calls),
                    ep.error,
                    _now(),
                ),
            )

    def finished(self, run_id: str, *, include_errors: bool = True) -> set[tuple[str, str]]:
        """``(policy, territory_id)`` pairs already recorded for the run."""
        sql = "SELECT policy, territory_id FROM episodes WHERE run_id = ?"
        if not include_errors:
            sql += " AND status != 'error'"
        return {(p, t) for p, t in self._rows(sql, (run_id,))}

    def pending(
        self, run_id: str, wanted: Iterable[tuple[str, str]], *, force: bool = False, retry_errors: bool = False
    ) -> list[tuple[str, str]]:
        """The wanted pairs still to play: all of them with ``force``, else those not yet recorded."""
        wanted = list(wanted)
        if force:
            return wanted
        done = self.finished(run_id, include_errors=not retry_errors)
        return [w for w in wanted if w not in done]

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        rows = self._rows(
            "SELECT policy, territory_id, seed, status, metrics, wall_s, steps, tool_calls, error"
            " FROM episodes WHERE run_id = ? ORDER BY policy, territory_id",
            (run_id,),
        )
        return [self._episode_record(run_id, r) for r in rows]

    def _episode_record(self, run_id: str, r: Sequence[Any]) -> EpisodeRecord:
        where = f"run {run_id!r}, episode {r[0]!r} on {r[1]!r}"
        _want(self.path, where, "policy", r[0], str)
        _want(self.path, where, "territory_id", r[1], str)
        for i, col in ((2, "seed"), (6, "steps"), (7, "tool_calls")):
            _want(self.path, where, col, r[i], int)
        _want(self.path, where, "wall_s", r[5], float)
        if r[3] not in STATUSES:
            raise StoreError(f"{self.path}: {where}: unknown status {repr(r[3])[:40]} (edited by hand?)")
        if r[8] is not None:
            _want(self.path, where, "error", r[8], str)
        metrics = _json(self.path, where, "metrics", r[4]) if r[4] is not None else None
        if metrics is not None and not isinstance(metrics, dict):
            raise StoreError(f"{self.path}: {where}: column metrics must be a JSON object (edited by hand?)")
        return EpisodeRecord(
            policy=r[0],
            territory_id=r[1],
            seed=r[2],
            status=r[3],
            metrics=metrics,
            wall_s=float(r[5]),
            steps=r[6],
            tool_calls=r[7],
            error=r[8],
        )

    # -- export --------------------------------------------------------------------------------------
    def _exported(self, run: RunRecord) -> list[dict[str, Any]]:
        """Episodes as dicts; a private split's derived seeds are left out (``null``): they rebuild its worlds."""
        rows = [e.to_dict() for e in self.episodes(run.id)]
        if run.private:
            for row in rows:
                row["seed"] = None
        return rows

    def export_json(self, run_id: str, path: Path | str) -> Path:
        run = self.get_run(run_id)
        assert run is not None
        payload = {"run": run.to_dict(), "episodes": self._exported(run)}
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return out

    def export_csv(self, run_id: str, path: Path | str) -> Path:
        """One row per episode; nested metrics are flattened to ``metrics.advances.engaged``-style columns."""
        run = self.get_run(run_id)
        assert run is not None
        base = ["run_id", "policy", "territory_id", "seed", "status", "wall_s", "steps", "tool_calls", "error"]
        rows: list[dict[str, Any]] = []
        metric_cols: set[str] = set()
        for ep in self._exported(run):
            flat = flatten(ep["metrics"] or {}, "metrics")
            metric_cols.update(flat)
            rows.append({"run_id": run_id, **{k: v for k, v in ep.items() if k != "metrics"}, **flat})
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=base + sorted(metric_cols))
            writer.writeheader()
            writer.writerows(rows)
        return out


def _want(path: Path, where: str, column: str, value: Any, kind: type) -> None:
    """A decoded column has the type the store wrote (SQLite itself accepts any value in any column)."""
    ok = isinstance(value, int | float) if kind is float else isinstance(value, kind)
    if not ok or isinstance(value, bool):
        raise StoreError(
            f"{path}: {where}: column {column} holds {type(value).__name__} {repr(value)[:40]}, expected "
            f"{kind.__name__} (edited by hand?)"
        )


def _json(path: Path, where: str, column: str, text: Any) -> Any:
    if not isinstance(text, str):
        raise StoreError(f"{path}: {where}: column {column} holds {type(text).__name__}, expected JSON text")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise StoreError(f"{path}: {where}: column {column} is not valid JSON ({err}; edited by hand?)") from None


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists become JSON strings."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            out.update(flatten(value, name))
        elif isinstance(value, list | tuple):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


def policies_of(episodes: Sequence[EpisodeRecord]) -> list[str]:
    return sorted({e.policy for e in episodes})
