"""The embedded run store: one SQLite file with ``runs``, ``episodes`` and ``trajectories``.

An episode is keyed by ``(run_id, policy, territory_id, trial)``; it is written (and committed) the moment it
finishes, together with its trajectory, so an interrupted run loses nothing and a resumed run only plays what
is missing. A run's id is derived from its configuration, so asking for the same benchmark twice finds the
same run.

Every failure of the file (not a database, damaged, altered tables, hand-edited rows, read-only, written by a
newer salesgym) is a :class:`StoreError` naming the file and what is wrong; the store checks integrity and
schema when it opens and validates every row it decodes. Readers (``runs``, ``report``, ``export``) open it
read-only.

Formats (``PRAGMA user_version``): 2 is this one. A format-1 file (salesgym before trials and trajectories:
episodes unique on ``(run, policy, territory)``) is read as it is, every episode trial 0 with no trajectory;
opening one for writing (``salesgym bench``) upgrades it in place, in one transaction.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 2
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
    trial INTEGER NOT NULL DEFAULT 0,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    metrics TEXT,
    wall_s REAL NOT NULL,
    steps INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    error TEXT,
    finished TEXT NOT NULL,
    end_reason TEXT,
    policy_record TEXT,
    UNIQUE (run_id, policy, territory_id, trial)
);
CREATE INDEX IF NOT EXISTS episodes_run ON episodes(run_id);
CREATE TABLE IF NOT EXISTS trajectories (
    run_id TEXT NOT NULL,
    policy TEXT NOT NULL,
    territory_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_id, policy, territory_id, trial),
    FOREIGN KEY (run_id, policy, territory_id, trial)
        REFERENCES episodes(run_id, policy, territory_id, trial) ON DELETE CASCADE
);
"""

STATUSES = ("ok", "step_cap", "stopped", "error")
EPISODE_V1 = (
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
)
COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": ("id", "created", "split", "split_sha256", "policies", "config", "package_version", "git_revision"),
    "episodes": (*EPISODE_V1, "trial", "end_reason", "policy_record"),
    "trajectories": ("run_id", "policy", "territory_id", "trial", "data"),
}
COLUMNS_V1 = {"runs": COLUMNS["runs"], "episodes": EPISODE_V1}
PRIVATE_KEY = "private_split"  # set in a run's config when its split is private: exports hide the seeds


class StoreError(Exception):
    """The database cannot be opened or does not hold what was asked for."""


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One finished episode: what the runner returns and the store keeps.

    ``end`` is the episode loop's reason (``terminated``, ``truncated``, ``step_cap``, ``stopped: <reason>``;
    None for an error or an old run); ``policy_record`` is the policy's ``episode_record()`` (tokens, failures,
    sampling parameters); ``trajectory`` is the compressed trajectory (:func:`encode_trajectory`), written
    with the episode and read back with :meth:`Store.trajectory`.
    """

    policy: str
    territory_id: str
    seed: int
    status: str  # ok | step_cap | stopped | error
    metrics: Mapping[str, Any] | None
    wall_s: float
    steps: int
    tool_calls: int
    error: str | None = None
    trial: int = 0
    end: str | None = None
    policy_record: Mapping[str, Any] | None = None
    trajectory: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.policy, self.territory_id, self.trial)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "territory_id": self.territory_id,
            "trial": self.trial,
            "seed": self.seed,
            "status": self.status,
            "metrics": dict(self.metrics) if self.metrics is not None else None,
            "wall_s": self.wall_s,
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "error": self.error,
            "end": self.end,
            "policy_record": dict(self.policy_record) if self.policy_record is not None else None,
        }


def encode_trajectory(trajectory: Mapping[str, Any]) -> bytes:
    """zlib of the trajectory's compact JSON (about 40 KB for an ``eval`` episode)."""
    return zlib.compress(json.dumps(trajectory, separators=(",", ":")).encode("utf-8"), 6)


def decode_trajectory(blob: bytes) -> dict[str, Any]:
    """The inverse of :func:`encode_trajectory`; ValueError when the blob is not one."""
    try:
        data = json.loads(zlib.decompress(blob))
    except (zlib.error, ValueError, RecursionError) as err:
        raise ValueError(f"not a compressed JSON trajectory ({err})") from None
    if not isinstance(data, dict):
        raise ValueError("a trajectory must be a JSON object")
    return data


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
        self.format = SCHEMA_VERSION  # the file's format; 1 only for an old file opened read-only
        self.upgraded_from: int | None = None  # set when opening for writing upgraded an old file
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
        """Integrity and schema check; a new (empty) file gets the schema, a format-1 file opened for writing
        is upgraded."""
        self._db.execute("PRAGMA foreign_keys = ON")
        check = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if check is None or check[0] != "ok":
            raise StoreError(f"{self.path}: the run database is damaged: {check[0] if check else 'no answer'}")
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables & {"runs", "episodes"}:
            if tables:
                others = ", ".join(sorted(tables)[:5])
                raise StoreError(f"{self.path}: not a salesgym run database (it holds table(s) {others})")
            if self.readonly:
                raise StoreError(f"{self.path}: not a salesgym run database (it is empty)")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
            return
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer salesgym (run database format {version}; this version reads "
                f"formats 1-{SCHEMA_VERSION}): upgrade salesgym to read it"
            )
        self.format = 1 if version < 2 else 2
        self._check_columns(COLUMNS_V1 if self.format == 1 else COLUMNS, tables)
        if not self.readonly:
            self._db.execute("PRAGMA journal_mode = WAL")
            if self.format == 1:
                self._upgrade()

    def _check_columns(self, wanted_by_table: Mapping[str, Sequence[str]], tables: set[str]) -> None:
        for table, wanted in wanted_by_table.items():
            if table not in tables:
                raise StoreError(f"{self.path}: table {table} is missing (the database was altered)")
            have = {r[1] for r in self._db.execute(f"PRAGMA table_info({table})")}
            missing = [c for c in wanted if c not in have]
            if missing:
                raise StoreError(
                    f"{self.path}: table {table} lacks column(s) {', '.join(missing)} (the database was altered)"
                )

    def _upgrade(self) -> None:
        """Format 1 -> 2 in one transaction: episodes gain a trial (0 for every old one), an end reason and the
        policy's record, and are keyed by trial; the trajectories table is added."""
        v1 = ", ".join(EPISODE_V1)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("ALTER TABLE episodes RENAME TO episodes_format1")
            db.execute("DROP INDEX IF EXISTS episodes_run")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"INSERT INTO episodes ({v1}) SELECT {v1} FROM episodes_format1")
            db.execute("DROP TABLE episodes_format1")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.commit()
        except BaseException:
            db.rollback()
            raise
        self.upgraded_from = self.format
        self.format = SCHEMA_VERSION

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
        """Write one finished episode and its trajectory (replacing an earlier one with the same key) and
        commit both together."""
        if ep.status not in STATUSES:
            raise ValueError(f"unknown episode status {ep.status!r}")
        key = (run_id, ep.policy, ep.territory_id, int(ep.trial))
        with self._tx() as db:
            db.execute(
                "INSERT INTO episodes (run_id, policy, territory_id, trial, seed, status, metrics, wall_s, steps,"
                " tool_calls, error, finished, end_reason, policy_record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, policy, territory_id, trial) DO UPDATE SET seed = excluded.seed,"
                " status = excluded.status, metrics = excluded.metrics, wall_s = excluded.wall_s,"
                " steps = excluded.steps, tool_calls = excluded.tool_calls, error = excluded.error,"
                " finished = excluded.finished, end_reason = excluded.end_reason,"
                " policy_record = excluded.policy_record",
                (
                    *key,
                    ep.seed,
                    ep.status,
                    _dumps(ep.metrics),
                    float(ep.wall_s),
                    int(ep.steps),
                    int(ep.tool_calls),
                    ep.error,
                    _now(),
                    ep.end,
                    _dumps(ep.policy_record),
                ),
            )
            db.execute(
                "DELETE FROM trajectories WHERE run_id = ? AND policy = ? AND territory_id = ? AND trial = ?", key
            )
            if ep.trajectory is not None:
                db.execute(
                    "INSERT INTO trajectories (run_id, policy, territory_id, trial, data) VALUES (?, ?, ?, ?, ?)",
                    (*key, sqlite3.Binary(ep.trajectory)),
                )

    def finished(self, run_id: str, *, include_errors: bool = True) -> set[tuple[str, str, int]]:
        """``(policy, territory_id, trial)`` keys already recorded for the run."""
        trial = "trial" if self.format >= 2 else "0"
        sql = f"SELECT policy, territory_id, {trial} FROM episodes WHERE run_id = ?"
        if not include_errors:  # errors, and episodes the policy's endpoint stopped (analysis.invalid)
            sql += " AND status != 'error'" + (" AND COALESCE(end_reason, '') NOT LIKE 'stopped: endpoint_error%'"
                                                if self.format >= 2 else "")
        return {(p, t, int(k)) for p, t, k in self._rows(sql, (run_id,))}

    def pending(
        self,
        run_id: str,
        wanted: Iterable[tuple[str, str, int]],
        *,
        force: bool = False,
        retry_errors: bool = False,
    ) -> list[tuple[str, str, int]]:
        """The wanted ``(policy, territory_id, trial)`` keys still to play: all of them with ``force``, else
        those not yet recorded."""
        wanted = list(wanted)
        if force:
            return wanted
        done = self.finished(run_id, include_errors=not retry_errors)
        return [w for w in wanted if w not in done]

    def _episode_columns(self) -> str:
        extra = "trial, end_reason, policy_record" if self.format >= 2 else "0, NULL, NULL"
        return f"policy, territory_id, seed, status, metrics, wall_s, steps, tool_calls, error, {extra}"

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        order = "policy, territory_id, trial" if self.format >= 2 else "policy, territory_id"
        rows = self._rows(
            f"SELECT {self._episode_columns()} FROM episodes WHERE run_id = ? ORDER BY {order}", (run_id,)
        )
        return [self._episode_record(run_id, r) for r in rows]

    def _episode_record(self, run_id: str, r: Sequence[Any]) -> EpisodeRecord:
        where = f"run {run_id!r}, episode {r[0]!r} on {r[1]!r}" + (f" trial {r[9]!r}" if r[9] else "")
        _want(self.path, where, "policy", r[0], str)
        _want(self.path, where, "territory_id", r[1], str)
        for i, col in ((2, "seed"), (6, "steps"), (7, "tool_calls"), (9, "trial")):
            _want(self.path, where, col, r[i], int)
        _want(self.path, where, "wall_s", r[5], float)
        if r[3] not in STATUSES:
            raise StoreError(f"{self.path}: {where}: unknown status {repr(r[3])[:40]} (edited by hand?)")
        for i, col in ((8, "error"), (10, "end_reason")):
            if r[i] is not None:
                _want(self.path, where, col, r[i], str)
        return EpisodeRecord(
            policy=r[0],
            territory_id=r[1],
            seed=r[2],
            status=r[3],
            metrics=_json_object(self.path, where, "metrics", r[4]),
            wall_s=float(r[5]),
            steps=r[6],
            tool_calls=r[7],
            error=r[8],
            trial=r[9],
            end=r[10],
            policy_record=_json_object(self.path, where, "policy_record", r[11]),
        )

    # -- trajectories --------------------------------------------------------------------------------
    def trajectory(self, run_id: str, policy: str, territory_id: str, trial: int = 0) -> dict[str, Any]:
        """One episode's trajectory (format ``salesgym-trajectory/1``, see ``salesgym.agents.trajectory``)."""
        where = f"run {run_id!r}, episode {policy!r} on {territory_id!r} trial {trial}"
        if self.format < 2:
            raise StoreError(
                f"{self.path}: {where}: no trajectory: this database was written by an older salesgym (format "
                f"{self.format}), which kept none"
            )
        rows = self._rows(
            "SELECT data FROM trajectories WHERE run_id = ? AND policy = ? AND territory_id = ? AND trial = ?",
            (run_id, policy, territory_id, trial),
        )
        if not rows:
            self.get_run(run_id)  # an unknown run says so
            raise StoreError(f"{self.path}: {where}: no trajectory stored (the episode failed or was never played)")
        return _trajectory(self.path, where, rows[0][0])

    def iter_trajectories(self, run_id: str) -> Iterator[tuple[EpisodeRecord, dict[str, Any]]]:
        """Every episode of the run that has a trajectory, with it, one at a time (policy, territory, trial)."""
        if self.format < 2:
            return
        cols = ", ".join(f"e.{c.strip()}" for c in self._episode_columns().split(","))
        sql = (
            f"SELECT {cols}, t.data FROM episodes e JOIN trajectories t ON t.run_id = e.run_id AND"
            " t.policy = e.policy AND t.territory_id = e.territory_id AND t.trial = e.trial"
            " WHERE e.run_id = ? ORDER BY e.policy, e.territory_id, e.trial"
        )
        with self._guard("read the run database"):
            cursor = self._db.execute(sql, (run_id,))
            for row in cursor:
                ep = self._episode_record(run_id, row[:-1])
                where = f"run {run_id!r}, episode {ep.policy!r} on {ep.territory_id!r} trial {ep.trial}"
                yield ep, _trajectory(self.path, where, row[-1])

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
        base = [
            "run_id", "policy", "territory_id", "trial", "seed", "status", "end", "wall_s", "steps", "tool_calls",
            "error",
        ]
        nested = ("metrics", "policy_record")
        rows: list[dict[str, Any]] = []
        metric_cols: set[str] = set()
        for ep in self._exported(run):
            flat = {k: v for n in nested for k, v in flatten(ep[n] or {}, n).items()}
            metric_cols.update(flat)
            rows.append({"run_id": run_id, **{k: v for k, v in ep.items() if k not in nested}, **flat})
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


def _dumps(data: Mapping[str, Any] | None) -> str | None:
    return json.dumps(dict(data), sort_keys=True) if data is not None else None


def _json_object(path: Path, where: str, column: str, text: Any) -> dict[str, Any] | None:
    """A nullable JSON-object column."""
    if text is None:
        return None
    data = _json(path, where, column, text)
    if not isinstance(data, dict):
        raise StoreError(f"{path}: {where}: column {column} must be a JSON object (edited by hand?)")
    return data


def _trajectory(path: Path, where: str, blob: Any) -> dict[str, Any]:
    if not isinstance(blob, bytes):
        raise StoreError(f"{path}: {where}: column data holds {type(blob).__name__}, expected a compressed trajectory")
    try:
        return decode_trajectory(blob)
    except ValueError as err:
        raise StoreError(f"{path}: {where}: column data is {err} (edited by hand?)") from None


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
