"""The embedded run store: one SQLite file with ``runs`` and ``episodes``.

An episode is keyed by ``(run_id, policy, territory_id)``; it is written (and committed) the moment it
finishes, so an interrupted run loses nothing and a resumed run only plays what is missing. A run's id is
derived from its configuration, so asking for the same benchmark twice finds the same run.
"""

from __future__ import annotations

import csv
import json
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


class Store:
    """A SQLite file holding runs and their episodes. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as err:
            raise StoreError(f"{self.path}: cannot open the run database: {err}") from err

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._db:
            yield self._db

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
        row = self._db.execute(
            "SELECT id, created, split, split_sha256, policies, config, package_version, git_revision"
            " FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            if missing_ok:
                return None
            known = ", ".join(r.id for r in self.runs()[-5:]) or "none"
            raise StoreError(f"{self.path}: no run {run_id!r} (latest runs: {known})")
        return RunRecord(
            id=row[0],
            created=row[1],
            split=row[2],
            split_sha256=row[3],
            policies=tuple(json.loads(row[4])),
            config=json.loads(row[5]),
            package_version=row[6],
            git_revision=row[7],
        )

    def runs(self) -> list[RunRecord]:
        ids = [r[0] for r in self._db.execute("SELECT id FROM runs ORDER BY created, id")]
        return [r for r in (self.get_run(i) for i in ids) if r is not None]

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
        return {(p, t) for p, t in self._db.execute(sql, (run_id,))}

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
        rows = self._db.execute(
            "SELECT policy, territory_id, seed, status, metrics, wall_s, steps, tool_calls, error"
            " FROM episodes WHERE run_id = ? ORDER BY policy, territory_id",
            (run_id,),
        ).fetchall()
        return [
            EpisodeRecord(
                policy=r[0],
                territory_id=r[1],
                seed=r[2],
                status=r[3],
                metrics=json.loads(r[4]) if r[4] is not None else None,
                wall_s=r[5],
                steps=r[6],
                tool_calls=r[7],
                error=r[8],
            )
            for r in rows
        ]

    # -- export --------------------------------------------------------------------------------------
    def export_json(self, run_id: str, path: Path | str) -> Path:
        run = self.get_run(run_id)
        assert run is not None
        payload = {"run": run.to_dict(), "episodes": [e.to_dict() for e in self.episodes(run_id)]}
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return out

    def export_csv(self, run_id: str, path: Path | str) -> Path:
        """One row per episode; nested metrics are flattened to ``metrics.advances.engaged``-style columns."""
        self.get_run(run_id)
        episodes = self.episodes(run_id)
        base = ["run_id", "policy", "territory_id", "seed", "status", "wall_s", "steps", "tool_calls", "error"]
        rows: list[dict[str, Any]] = []
        metric_cols: set[str] = set()
        for ep in episodes:
            flat = flatten(ep.metrics or {}, "metrics")
            metric_cols.update(flat)
            rows.append({"run_id": run_id, **{k: v for k, v in ep.to_dict().items() if k != "metrics"}, **flat})
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=base + sorted(metric_cols))
            writer.writeheader()
            writer.writerows(rows)
        return out


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
