"""The SQLite run store, on a real file: resume, force, export."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from salesgym.bench.store import EpisodeRecord, RunRecord, Store, StoreError, encode_trajectory


def _run(run_id: str = "eval-abc") -> RunRecord:
    return RunRecord(run_id, "", "eval", "f" * 64, ("random", "expected-value"), {"ablation": None}, "0.1.0", None)


def _ep(
    policy: str, tid: str, primary: float = 1.0, status: str = "ok", trial: int = 0, trajectory: bytes | None = None
) -> EpisodeRecord:
    metrics = {"primary": primary, "advances": {"engaged": 3, "closed": 1}, "violations": {}}
    return EpisodeRecord(policy, tid, 7, status, metrics if status != "error" else None, 0.5, 40, 38, None, trial,
                         trajectory=trajectory)


def test_run_roundtrip_and_idempotent_ensure(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    with Store(db) as store:
        first = store.ensure_run(_run())
        again = store.ensure_run(_run())
        assert first == again
        assert first.created  # filled in
        assert first.policies == ("random", "expected-value")
    assert db.is_file()
    with sqlite3.connect(db) as raw:  # a real SQLite file any tool can read
        assert raw.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_resume_skips_finished_episodes(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    wanted = [(p, t, 0) for p in ("random", "expected-value") for t in ("t1", "t2", "t3")]
    with Store(db) as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1"))
        store.record(run.id, _ep("expected-value", "t2"))
    with Store(db) as store:  # a new process would reopen the file like this
        todo = store.pending("eval-abc", wanted)
    assert ("random", "t1", 0) not in todo and ("expected-value", "t2", 0) not in todo
    assert len(todo) == 4


def test_force_reruns_and_overwrites(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1", primary=1.0))
        assert store.pending(run.id, [("random", "t1", 0)]) == []
        assert store.pending(run.id, [("random", "t1", 0)], force=True) == [("random", "t1", 0)]
        store.record(run.id, _ep("random", "t1", primary=2.0))
        eps = store.episodes(run.id)
        assert len(eps) == 1 and eps[0].metrics is not None and eps[0].metrics["primary"] == 2.0


def test_errors_are_finished_unless_retried(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1", status="error"))
        assert store.pending(run.id, [("random", "t1", 0)]) == []
        assert store.pending(run.id, [("random", "t1", 0)], retry_errors=True) == [("random", "t1", 0)]


def test_unknown_run_and_status_are_clear_errors(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        with pytest.raises(StoreError, match="no run 'nope'"):
            store.get_run("nope")
        run = store.ensure_run(_run())
        with pytest.raises(ValueError, match="status"):
            store.record(run.id, EpisodeRecord("random", "t1", 1, "weird", None, 0.0, 0, 0))


def test_unopenable_database_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(StoreError, match="cannot open"):
        Store(tmp_path / "dir.sqlite")


def test_export_json_and_csv(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1", 1.5))
        store.record(run.id, _ep("expected-value", "t1", 3.0))
        jpath = store.export_json(run.id, tmp_path / "out" / "run.json")
        cpath = store.export_csv(run.id, tmp_path / "out" / "run.csv")
    data = json.loads(jpath.read_text())
    assert data["run"]["id"] == "eval-abc"
    assert {e["policy"] for e in data["episodes"]} == {"random", "expected-value"}
    with cpath.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2
    assert {"metrics.primary", "metrics.advances.engaged", "wall_s", "tool_calls"} <= set(rows[0])
    assert sorted(float(r["metrics.primary"]) for r in rows) == [1.5, 3.0]


def test_readers_open_read_only_and_create_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run database here"):
        Store(tmp_path / "none.sqlite", readonly=True)
    assert not (tmp_path / "none.sqlite").exists()
    with Store(tmp_path / "r.sqlite") as store:
        store.ensure_run(_run())
    with Store(tmp_path / "r.sqlite", readonly=True) as store:
        assert [r.id for r in store.runs()] == ["eval-abc"]
        with pytest.raises(StoreError, match="cannot write"):
            store.ensure_run(_run("eval-new"))


def test_a_foreign_or_altered_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "app.sqlite"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE customers (name TEXT)")
    raw.close()
    with pytest.raises(StoreError, match="not a salesgym run database"):
        Store(db)
    with sqlite3.connect(db) as raw:  # untouched: no tables of ours were added
        assert [r[0] for r in raw.execute("SELECT name FROM sqlite_master")] == ["customers"]
    raw.close()
    with Store(tmp_path / "r.sqlite") as store:
        store.ensure_run(_run())
    with sqlite3.connect(tmp_path / "r.sqlite") as raw:
        raw.execute("ALTER TABLE episodes DROP COLUMN tool_calls")
    raw.close()
    with pytest.raises(StoreError, match="lacks column"):
        Store(tmp_path / "r.sqlite", readonly=True)


def test_hand_edited_rows_are_store_errors(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1"))
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE episodes SET metrics = '{\"primary\": 1,'")
    raw.close()
    with Store(db, readonly=True) as store, pytest.raises(StoreError, match="column metrics is not valid JSON"):
        store.episodes("eval-abc")


# -- formats: a database written before trials and trajectories -----------------------------------------
FORMAT1_SCHEMA = """
CREATE TABLE runs (id TEXT PRIMARY KEY, created TEXT NOT NULL, split TEXT NOT NULL, split_sha256 TEXT NOT NULL,
    policies TEXT NOT NULL, config TEXT NOT NULL, package_version TEXT NOT NULL, git_revision TEXT);
CREATE TABLE episodes (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, policy TEXT NOT NULL,
    territory_id TEXT NOT NULL, seed INTEGER NOT NULL, status TEXT NOT NULL, metrics TEXT, wall_s REAL NOT NULL,
    steps INTEGER NOT NULL, tool_calls INTEGER NOT NULL, error TEXT, finished TEXT NOT NULL,
    UNIQUE (run_id, policy, territory_id));
CREATE INDEX episodes_run ON episodes(run_id);
"""


def write_format1_db(db: Path, run_id: str = "eval-abc") -> Path:
    """The schema salesgym 0.1 wrote (user_version 0), with one run and two episodes, via plain SQL."""
    with sqlite3.connect(db) as raw:
        raw.executescript(FORMAT1_SCHEMA)
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute(
            "INSERT INTO runs VALUES (?, '2026-01-01T00:00:00+00:00', 'eval', ?, ?, '{}', '0.1.0', NULL)",
            (run_id, "f" * 64, json.dumps(["random", "expected-value"])),
        )
        for policy, primary, status in (("random", 1.5, "ok"), ("expected-value", 3.0, "step_cap")):
            raw.execute(
                "INSERT INTO episodes VALUES (?, ?, 't1', 7, ?, ?, 0.5, 40, 38, NULL, '2026-01-01T00:00:01+00:00')",
                (run_id, policy, status, json.dumps({"primary": primary, "truncated": False})),
            )
    raw.close()
    return db


def test_a_format1_database_is_read_as_it_is(tmp_path: Path) -> None:
    db = write_format1_db(tmp_path / "old.sqlite")
    before = db.read_bytes()
    with Store(db, readonly=True) as store:
        assert store.format == 1
        eps = store.episodes("eval-abc")
        assert [(e.policy, e.trial, e.end, e.policy_record) for e in eps] == [
            ("expected-value", 0, None, None),
            ("random", 0, None, None),
        ]
        assert store.finished("eval-abc") == {("random", "t1", 0), ("expected-value", "t1", 0)}
        with pytest.raises(StoreError, match="older salesgym"):
            store.trajectory("eval-abc", "random", "t1")
        assert list(store.iter_trajectories("eval-abc")) == []
    assert db.read_bytes() == before


def test_opening_a_format1_database_for_writing_upgrades_it(tmp_path: Path) -> None:
    db = write_format1_db(tmp_path / "old.sqlite")
    with Store(db, readonly=True) as store:
        old = store.episodes("eval-abc")
    with Store(db) as store:
        assert (store.upgraded_from, store.format) == (1, 2)
        assert store.episodes("eval-abc") == old  # every old episode kept, as trial 0
        assert store.pending("eval-abc", [("random", "t1", 0), ("random", "t1", 1)]) == [("random", "t1", 1)]
        store.record("eval-abc", _ep("random", "t1", 9.0, trial=1, trajectory=encode_trajectory({"turns": []})))
        assert store.trajectory("eval-abc", "random", "t1", 1) == {"turns": []}
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
        assert raw.execute("SELECT count(*) FROM episodes").fetchone()[0] == 3
        assert {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
            "runs", "episodes", "trajectories"}
    raw.close()
    with Store(db) as store:
        assert store.upgraded_from is None  # once


def test_a_database_from_a_newer_salesgym_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        store.ensure_run(_run())
    with sqlite3.connect(tmp_path / "r.sqlite") as raw:
        raw.execute("PRAGMA user_version = 3")
    raw.close()
    for readonly in (True, False):
        with pytest.raises(StoreError, match=r"newer salesgym .*format 3"):
            Store(tmp_path / "r.sqlite", readonly=readonly)


# -- trajectories ----------------------------------------------------------------------------------
def test_a_trajectory_is_written_and_replaced_with_its_episode(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1", trajectory=encode_trajectory({"turns": [1, 2]})))
        store.record(run.id, _ep("random", "t1", trial=1, trajectory=encode_trajectory({"turns": [3]})))
        assert store.trajectory(run.id, "random", "t1") == {"turns": [1, 2]}
        assert store.trajectory(run.id, "random", "t1", 1) == {"turns": [3]}
        stored = [(e.trial, t) for e, t in store.iter_trajectories(run.id)]
        assert stored == [(0, {"turns": [1, 2]}), (1, {"turns": [3]})]
        store.record(run.id, _ep("random", "t1", status="error"))  # a forced re-run that failed: no stale trajectory
        with pytest.raises(StoreError, match="no trajectory stored"):
            store.trajectory(run.id, "random", "t1")
        with pytest.raises(StoreError, match="no run 'nope'"):
            store.trajectory("nope", "random", "t1")


def test_a_hand_edited_trajectory_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run = store.ensure_run(_run())
        store.record(run.id, _ep("random", "t1", trajectory=encode_trajectory({"turns": []})))
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE trajectories SET data = x'00ff'")
    raw.close()
    with Store(db, readonly=True) as store, pytest.raises(StoreError, match="not a compressed JSON trajectory"):
        store.trajectory("eval-abc", "random", "t1")
