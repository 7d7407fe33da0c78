"""Bad invocations of the real CLI: each gets one ``error:`` line naming the cause and a non-zero exit, never a
traceback, never exit 0.

Every row builds its own real artefact (a SQLite file corrupted for real, a resealed manifest, a file where a
directory should be, a read-only file) and runs ``salesgym`` on it: in-process through ``CliRunner``, or as a
subprocess where the kernel has to refuse a write (read-only files; as root, the child runs without the
capabilities that let root ignore file modes).
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench_fakes import synthetic_episodes, synthetic_territories
from typer.testing import CliRunner

from salesgym.bench import splits as sp
from salesgym.bench.store import RunRecord, Store
from salesgym.cli import app
from salesgym.envs.territory import splits as territory_splits

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"
RUN = "eval-syn"
POLICIES = ("random", "expected-value", "oracle")


# -- artefacts -------------------------------------------------------------------------------------
def good_db(tmp: Path, name: str = "runs.sqlite") -> Path:
    db = tmp / name
    with Store(db) as store:
        store.ensure_run(RunRecord(RUN, "", "eval", "d" * 64, POLICIES, {}, "0"))
        for ep in synthetic_episodes(POLICIES, synthetic_territories(5)):
            store.record(RUN, ep)
    return db


def edited_db(sql: str) -> Callable[[Path], Path]:
    """A good database changed with plain SQL, as someone editing it by hand would."""

    def make(tmp: Path) -> Path:
        db = good_db(tmp)
        with sqlite3.connect(db) as raw:
            raw.executescript(sql)
        raw.close()
        return db

    return make


def random_bytes_db(tmp: Path) -> Path:
    db = tmp / "noise.sqlite"
    db.write_bytes(random.Random(7).randbytes(16_384))
    return db


def truncated_db(tmp: Path) -> Path:
    db = good_db(tmp)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    return db


def damaged_page_db(tmp: Path) -> Path:
    """The header is intact (the file opens) but its last page is noise."""
    db = good_db(tmp)
    data = bytearray(db.read_bytes())
    page = 4096
    data[-page:] = random.Random(3).randbytes(page)
    db.write_bytes(bytes(data))
    return db


def empty_db(tmp: Path) -> Path:
    db = tmp / "empty.sqlite"
    db.write_bytes(b"")
    return db


def foreign_db(tmp: Path) -> Path:
    db = tmp / "other-app.sqlite"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE customers (name TEXT)")
    raw.close()
    return db


def a_file(tmp: Path) -> Path:
    f = tmp / "notes.txt"
    f.write_text("not a directory\n")
    return f


def resealed(mutate: Callable[[dict], None], split: str = "debug") -> Callable[[Path], Path]:
    """A copy of the committed splits where one manifest was edited and its hash recomputed."""

    def make(tmp: Path) -> Path:
        d = tmp / "splits"
        d.mkdir()
        for name in territory_splits.SPLIT_NAMES:
            shutil.copy(REPO_SPLITS / f"{name}.json", d)
        data = json.loads((d / f"{split}.json").read_text())
        mutate(data)
        sp.write_manifest(data, d / f"{split}.json")
        return d

    return make


def noise_manifest(tmp: Path) -> Path:
    d = resealed(lambda data: None)(tmp)
    (d / "debug.json").write_bytes(random.Random(5).randbytes(300))
    return d


def first(key: str, value: object) -> Callable[[dict], None]:
    return lambda data: data["territories"][0].update({key: value})


# -- the table -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]  # {db} {dir} {file} {tmp} are filled in from the artefact
    make: Callable[[Path], Path] | None
    code: int
    cause: str  # must appear (case-insensitively) on the error line


BENCH = ("bench", "--split", "debug", "-p", "random", "--workers", "1")

CASES = [
    # damaged or hand-edited run databases
    Case("runs-random-bytes", ("runs", "--db", "{db}"), random_bytes_db, 1, "file is not a database"),
    Case("bench-random-bytes", (*BENCH, "--db", "{db}"), random_bytes_db, 1, "file is not a database"),
    Case("report-truncated", ("report", RUN, "--db", "{db}", "--out", "{tmp}/r"), truncated_db, 1, "malformed"),
    Case(
        "export-damaged-page", ("export", RUN, "--db", "{db}", "--out", "{tmp}/e.json"), damaged_page_db, 1, "damaged"
    ),
    Case(
        "export-dropped-table",
        ("export", RUN, "--db", "{db}", "--out", "{tmp}/e.json"),
        edited_db("DROP TABLE episodes"),
        1,
        "table episodes is missing",
    ),
    Case(
        "bench-dropped-table",
        (*BENCH, "--db", "{db}"),
        edited_db("DROP TABLE episodes"),
        1,
        "table episodes is missing",
    ),
    Case(
        "runs-dropped-column",
        ("runs", "--db", "{db}"),
        edited_db("ALTER TABLE runs DROP COLUMN config"),
        1,
        "lacks column(s) config",
    ),
    Case(
        "bench-renamed-column",
        (*BENCH, "--db", "{db}"),
        edited_db("ALTER TABLE episodes RENAME COLUMN metrics TO m"),
        1,
        "lacks column(s) metrics",
    ),
    Case(
        "report-metrics-not-json",
        ("report", RUN, "--db", "{db}", "--out", "{tmp}/r"),
        edited_db("UPDATE episodes SET metrics = '{not json'"),
        1,
        "column metrics is not valid JSON",
    ),
    Case(
        "runs-policies-not-json",
        ("runs", "--db", "{db}"),
        edited_db("UPDATE runs SET policies = '[1,'"),
        1,
        "column policies is not valid JSON",
    ),
    Case(
        "export-csv-config-a-list",
        ("export", RUN, "--format", "csv", "--db", "{db}", "--out", "{tmp}/e.csv"),
        edited_db("UPDATE runs SET config = '[1, 2]'"),
        1,
        "column config must be a JSON object",
    ),
    Case(
        "report-metrics-a-list",
        ("report", RUN, "--db", "{db}", "--out", "{tmp}/r"),
        edited_db("UPDATE episodes SET metrics = '[1, 2]'"),
        1,
        "column metrics must be a JSON object",
    ),
    Case(
        "export-steps-a-word",
        ("export", RUN, "--db", "{db}", "--out", "{tmp}/e.json"),
        edited_db("UPDATE episodes SET steps = 'lots'"),
        1,
        "column steps holds str",
    ),
    Case(
        "runs-unknown-status",
        ("runs", "--db", "{db}"),
        edited_db("UPDATE episodes SET status = 'weird'"),
        1,
        "unknown status 'weird'",
    ),
    Case(
        "runs-invalid-utf8",
        ("runs", "--db", "{db}"),
        edited_db("UPDATE episodes SET error = CAST(x'ff00fe' AS TEXT)"),
        1,
        "could not decode to utf-8",
    ),
    Case("runs-empty-file", ("runs", "--db", "{db}"), empty_db, 1, "not a salesgym run database (it is empty)"),
    Case("bench-foreign-db", (*BENCH, "--db", "{db}"), foreign_db, 1, "not a salesgym run database"),
    Case("bench-db-a-directory", (*BENCH, "--db", "{tmp}"), None, 2, "is a directory"),
    Case("bench-db-under-a-file", (*BENCH, "--db", "{file}/x.sqlite"), a_file, 1, "is not a directory"),
    Case("runs-no-db", ("runs", "--db", "{tmp}/none.sqlite"), None, 1, "no run database here"),
    # output paths
    Case(
        "report-out-a-file",
        ("report", RUN, "--db", "{db}", "--out", "{file}"),
        None,
        1,
        "exists and is not a directory",
    ),
    Case(
        "report-out-under-a-file", ("report", RUN, "--db", "{db}", "--out", "{file}/sub"), None, 1, "is not a directory"
    ),
    Case(
        "report-out-in-proc",
        ("report", RUN, "--db", "{db}", "--out", "/proc/salesgym-report"),
        None,
        1,
        "cannot write the report",
    ),
    Case("export-out-a-directory", ("export", RUN, "--db", "{db}", "--out", "{tmp}"), None, 1, "is a directory"),
    Case(
        "export-out-under-a-file",
        ("export", RUN, "--db", "{db}", "--out", "{file}/e.json"),
        None,
        1,
        "is not a directory",
    ),
    Case(
        "export-out-in-proc",
        ("export", RUN, "--db", "{db}", "--out", "/proc/salesgym.json"),
        None,
        1,
        "cannot write the export",
    ),
    Case("generate-out-a-file", ("splits", "generate", "--out", "{file}"), None, 1, "exists and is not a directory"),
    Case("generate-out-under-a-file", ("splits", "generate", "--out", "{file}/d"), None, 1, "is not a directory"),
    # resealed manifests (hash recomputed after the edit)
    Case(
        "bench-seed-2**70",
        (*BENCH, "--splits-dir", "{dir}", "--db", "{tmp}/x.sqlite"),
        resealed(first("seed", 2**70)),
        1,
        "seed must be in 0..2**63-1",
    ),
    Case(
        "verify-seed-2**70",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("seed", 2**70)),
        1,
        "seed must be in 0..2**63-1",
    ),
    Case(
        "verify-seed-2**63",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("seed", 2**63)),
        1,
        "seed must be in 0..2**63-1, got 9223372036854775808",
    ),
    Case(
        "verify-unknown-family",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("family", "atlantis")),
        1,
        "unknown scenario family 'atlantis'",
    ),
    Case(
        "verify-unknown-template",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("template", "nope")),
        1,
        "unknown template 'nope'",
    ),
    Case(
        "verify-7-opportunities",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("n_opportunities", 7)),
        1,
        "n_opportunities must be an int in 10-100",
    ),
    Case(
        "verify-45-days",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("horizon_days", 45)),
        1,
        "horizon_days must be one of",
    ),
    Case(
        "verify-path-in-id",
        ("splits", "verify", "--splits-dir", "{dir}"),
        resealed(first("id", "../x")),
        1,
        "territories[0].id must be 1-64 letters",
    ),
    Case(
        "bench-7-opportunities",
        (*BENCH, "--splits-dir", "{dir}", "--db", "{tmp}/x.sqlite"),
        resealed(first("n_opportunities", 7)),
        1,
        "the environment cannot build this split",
    ),
    Case(
        "bench-manifest-noise",
        (*BENCH, "--splits-dir", "{dir}", "--db", "{tmp}/x.sqlite"),
        noise_manifest,
        1,
        "not a text file",
    ),
    Case(
        "verify-manifest-noise",
        ("splits", "verify", "--splits-dir", "{dir}"),
        noise_manifest,
        1,
        "not a text file",
    ),
    # bad options and arguments
    Case("bench-episodes-0", (*BENCH, "--episodes", "0", "--db", "{tmp}/x.sqlite"), None, 2, "--episodes"),
    Case("bench-workers-0", (*BENCH, "--workers", "0", "--db", "{tmp}/x.sqlite"), None, 2, "--workers"),
    Case("bench-max-steps-negative", (*BENCH, "--max-steps", "-3", "--db", "{tmp}/x.sqlite"), None, 2, "--max-steps"),
    Case("bench-backend-unknown", (*BENCH, "--backend", "slurm", "--db", "{tmp}/x.sqlite"), None, 2, "--backend"),
    Case("bench-unknown-option", (*BENCH, "--bogus", "--db", "{tmp}/x.sqlite"), None, 2, "no such option: --bogus"),
    Case(
        "bench-splits-dir-missing",
        (*BENCH, "--splits-dir", "{tmp}/nowhere", "--db", "{tmp}/x.sqlite"),
        None,
        1,
        "splits directory does not exist",
    ),
    Case(
        "bench-splits-dir-a-file",
        (*BENCH, "--splits-dir", "{file}", "--db", "{tmp}/x.sqlite"),
        None,
        1,
        "is not a directory",
    ),
    Case(
        "bench-key-file-on-public",
        (*BENCH, "--key-file", "{file}", "--db", "{tmp}/x.sqlite"),
        None,
        1,
        "applies to private splits only",
    ),
    Case(
        "bench-verifier-key-missing",
        (*BENCH, "--verifier-key-file", "{tmp}/none.key", "--db", "{tmp}/x.sqlite"),
        None,
        1,
        "cannot read the verifier key file",
    ),
    Case(
        "bench-verifier-key-too-short",
        (*BENCH, "--verifier-key-file", "{file}", "--db", "{tmp}/x.sqlite"),
        None,
        1,
        "at least 32 characters",
    ),
    Case(
        "bench-policy-with-markup", (*BENCH, "-p", "[/b]", "--db", "{tmp}/x.sqlite"), None, 1, "unknown policy '[/b]'"
    ),
    Case("runs-db-path-with-markup", ("runs", "--db", "{tmp}/[/x].sqlite"), None, 1, "[/x].sqlite: no run database"),
    Case("export-format-xml", ("export", RUN, "--format", "xml", "--db", "{db}"), None, 2, "--format"),
    Case("export-no-run-id", ("export", "--db", "{db}"), None, 2, "missing argument"),
    Case("report-unknown-run", ("report", "nope", "--db", "{db}", "--out", "{tmp}/r"), None, 1, "no run 'nope'"),
]


def _fill(args: tuple[str, ...], tmp: Path, artefact: Path | None) -> list[str]:
    db = artefact if artefact is not None and artefact.suffix == ".sqlite" else tmp / "runs.sqlite"
    if not db.exists() and artefact is None:
        good_db(tmp)
    values = {
        "db": str(db),
        "dir": str(artefact),
        "file": str(a_file(tmp)),
        "tmp": str(tmp),
    }
    return [a.format(**values) for a in args]


def assert_one_error_line(code: int, stdout: str, stderr: str, expected_code: int, cause: str) -> None:
    both = stdout + stderr
    assert "Traceback" not in both, both
    assert code == expected_code, f"exit {code}, wanted {expected_code}: {both}"
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, f"want exactly one error: line on stderr, got {stderr!r}"
    assert cause.lower() in errors[0].lower(), errors[0]
    assert "internal error" not in errors[0], errors[0]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_invocation(case: Case, tmp_path: Path) -> None:
    artefact = case.make(tmp_path) if case.make is not None else None
    args = _fill(case.args, tmp_path, artefact)
    before = foreign_tables(artefact) if case.make is foreign_db and artefact is not None else None
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert_one_error_line(result.exit_code, result.stdout, result.stderr, case.code, case.cause)
    if before is not None:  # someone else's database is refused, not extended with our tables
        assert artefact is not None and foreign_tables(artefact) == before


def test_stored_text_is_shown_not_interpreted(tmp_path: Path) -> None:
    db = edited_db("UPDATE runs SET split = '[/red]'")(tmp_path)
    result = CliRunner().invoke(app, ["runs", "--db", str(db)])
    assert result.exit_code == 0 and "[/red]" in result.stdout, result.output


def foreign_tables(db: Path) -> list[str]:
    with sqlite3.connect(db) as raw:
        names = [r[0] for r in raw.execute("SELECT name FROM sqlite_master ORDER BY name")]
    raw.close()
    return names


# -- read-only files: the kernel must refuse the write -----------------------------------------------
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _drop_file_override() -> None:
    """In the child, before exec: as root, give up the capabilities that bypass file modes."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "salesgym.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_drop_file_override,
        cwd=cwd,
        env={**os.environ, "MPLCONFIGDIR": str(cwd / ".mpl")},
    )


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[Path], None]]:
    """chmod a path read-only, and check that a child process really cannot write there (skip if, as root,
    this machine does not let a process give up its file-mode override)."""
    probe = tmp_path / "probe"
    probe.write_text("")
    probe.chmod(0o444)
    try:
        check = subprocess.run(
            [sys.executable, "-c", f"open({str(probe)!r}, 'a')"], preexec_fn=_drop_file_override, capture_output=True
        )
    except subprocess.SubprocessError as err:
        pytest.skip(f"cannot start a process without file-mode override here: {err}")
    if check.returncode == 0:
        pytest.skip("a read-only file is still writable for this user here (root with CAP_DAC_OVERRIDE)")
    changed: list[Path] = []

    def make(path: Path) -> None:
        path.chmod(0o555 if path.is_dir() else 0o444)
        changed.append(path)

    yield make
    for path in changed:  # let pytest clean up
        path.chmod(0o755 if path.is_dir() else 0o644)


def _wal_db(tmp: Path) -> Path:
    """A run database in WAL mode whose -wal and -shm files exist (as while another reader has it open)."""
    db = good_db(tmp)
    keep = sqlite3.connect(db)
    keep.execute("PRAGMA wal_autocheckpoint = 0")
    keep.execute("UPDATE runs SET package_version = package_version")
    keep.commit()
    copy = tmp / "ro"
    copy.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(f"{db}{suffix}", copy / f"runs.sqlite{suffix}")
    keep.close()
    return copy / "runs.sqlite"


def test_bench_refuses_a_read_only_database(tmp_path: Path, read_only: Callable[[Path], None]) -> None:
    db = _wal_db(tmp_path)
    for f in db.parent.iterdir():
        read_only(f)
    r = _cli(*BENCH, "--db", str(db), cwd=tmp_path)
    assert_one_error_line(r.returncode, r.stdout, r.stderr, 1, "the run database is read-only")


def test_readers_work_on_a_read_only_database(tmp_path: Path, read_only: Callable[[Path], None]) -> None:
    db = _wal_db(tmp_path)
    for f in db.parent.iterdir():
        read_only(f)
    read_only(db.parent)
    r = _cli("runs", "--db", str(db), cwd=tmp_path)
    assert r.returncode == 0 and RUN in r.stdout, r.stdout + r.stderr
    r = _cli("export", RUN, "--db", str(db), "--out", str(tmp_path / "e.json"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "e.json").read_text())["run"]["id"] == RUN


def test_a_read_only_wal_database_without_shm_is_a_clear_error(
    tmp_path: Path, read_only: Callable[[Path], None]
) -> None:
    (tmp_path / "d").mkdir()
    db = good_db(tmp_path / "d")
    assert {p.name for p in db.parent.iterdir()} == {"runs.sqlite"}  # WAL mode, no -wal/-shm after close
    read_only(db)
    read_only(db.parent)  # SQLite cannot create the -shm it needs to read a WAL database
    r = _cli("runs", "--db", str(db), cwd=tmp_path)
    assert_one_error_line(r.returncode, r.stdout, r.stderr, 1, "not writable")


@pytest.mark.parametrize("command", ["report", "export"])
def test_output_in_a_read_only_directory(command: str, tmp_path: Path, read_only: Callable[[Path], None]) -> None:
    db = good_db(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    read_only(locked)
    out = locked / ("rep" if command == "report" else "e.json")
    r = _cli(command, RUN, "--db", str(db), "--out", str(out), cwd=tmp_path)
    assert_one_error_line(r.returncode, r.stdout, r.stderr, 1, "permission denied")


# -- --agent, --policy llm, trials, prices, trajectories ------------------------------------------------
def format1_db(tmp: Path) -> Path:
    """A run database as salesgym wrote it before trials and trajectories (format 1)."""
    from test_bench_store import write_format1_db

    return write_format1_db(tmp / "old.sqlite", RUN)


def newer_db(tmp: Path) -> Path:
    db = good_db(tmp)
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA user_version = 9")
    raw.close()
    return db


AGENT_CASES = [
    Case("agent-not-module-colon-attr", (*BENCH, "--agent", "MySeller"), None, 2, "expected module:Class"),
    Case("agent-empty-attr", (*BENCH, "--agent", "{mod}:"), None, 2, "expected module:Class"),
    Case("agent-no-module", (*BENCH, "--agent", "no_such_mod_x:Seller"), None, 1, "cannot import module"),
    Case("agent-no-attribute", (*BENCH, "--agent", "{mod}:Nope"), None, 1, "has no attribute 'Nope'"),
    Case("agent-not-callable", (*BENCH, "--agent", "{mod}:NOT_CALLABLE"), None, 1, "is a int, not a class"),
    Case("agent-without-act", (*BENCH, "--agent", "{mod}:NoAct"), None, 1, "without act()"),
    Case("agent-factory-raises", (*BENCH, "--agent", "{mod}:broken"), None, 1, "raised RuntimeError: no model today"),
    Case("agent-takes-no-seed", (*BENCH, "--agent", "{mod}:takes_nothing"), None, 1, "(seed) raised TypeError"),
    Case("agent-name-taken", (*BENCH, "--agent", "{mod}:Impostor"), None, 1, "'random' is already a registered"),
    Case("agent-twice-same-name", (*BENCH, "--agent", "{mod}:CoinSeller", "--agent", "{mod}:make_seller"), None, 1,
         "'coin-seller' is already --agent"),
    Case("agent-module-fails", (*BENCH, "--agent", "{bad}:X"), None, 1, "failed: ZeroDivisionError"),
    Case("model-without-llm", (*BENCH, "--model", "m", "--temperature", "0"), None, 1,
         "--model, --temperature apply to --policy llm only"),
    Case("llm-without-model", (*BENCH, "-p", "llm"), None, 1, "--policy llm needs --model"),
    Case("trials-0", (*BENCH, "--trials", "0"), None, 2, "--trials"),
    Case("price-negative", (*BENCH, "--price-in", "-1"), None, 2, "--price-in"),
    Case("prices-file-not-json", (*BENCH, "--prices", "{file}"), None, 1, "the prices file is not valid JSON"),
    Case("prices-file-unknown-key", (*BENCH, "--prices", "{prices}"), None, 1, "unknown price(s) gpu"),
    Case("dry-run-episodes-0", (*BENCH, "--dry-run", "--dry-run-episodes", "0"), None, 2, "--dry-run-episodes"),
    Case("bench-newer-format", (*BENCH,), newer_db, 1, "written by a newer salesgym (run database format 9"),
    Case("runs-newer-format", ("runs",), newer_db, 1, "upgrade salesgym to read it"),
    Case("export-trajectories-and-format", ("export", RUN, "--trajectories", "--format", "csv"), None, 2,
         "--trajectories writes JSONL"),
    Case("export-trajectories-format1", ("export", RUN, "--trajectories", "--out", "{tmp}/t.jsonl"), format1_db, 1,
         "has no stored trajectories (format 1"),
    Case("export-tool-arguments-bad", ("export", RUN, "--trajectories", "--tool-arguments", "yaml"), None, 2,
         "--tool-arguments"),
]


@pytest.mark.parametrize("case", AGENT_CASES, ids=[c.id for c in AGENT_CASES])
def test_bad_agent_or_option(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_fixtures import write_agent_module

    monkeypatch.chdir(tmp_path)
    db = case.make(tmp_path) if case.make is not None else tmp_path / "x.sqlite"
    (tmp_path / "prices.json").write_text('{"input": 1, "gpu": 2}')
    values = {
        "mod": write_agent_module(tmp_path),
        "bad": write_agent_module(tmp_path, "1 / 0\n"),
        "file": str(a_file(tmp_path)),
        "prices": str(tmp_path / "prices.json"),
        "tmp": str(tmp_path),
    }
    args = [a.format(**values) for a in case.args]
    before = db.read_bytes() if db.exists() else None
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert_one_error_line(result.exit_code, result.stdout, result.stderr, case.code, case.cause)
    assert (db.read_bytes() if db.exists() else None) == before  # nothing written, nothing upgraded
    assert not (tmp_path / "t.jsonl").exists()


def test_llm_policy_without_the_extra_is_one_line(tmp_path: Path) -> None:
    """The openai SDK made unimportable (as on an install without the extra): one line, nothing written."""
    db = tmp_path / "x.sqlite"
    program = ("import sys; sys.modules['openai'] = None\n"  # any import of openai now raises ImportError
               "from salesgym.cli import app\n"
               f"app([*{list(BENCH)!r}, '-p', 'llm', '--model', 'm', '--db', {str(db)!r}])")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert_one_error_line(run.returncode, run.stdout, run.stderr, 1, "pip install 'salesgym[llm]'")
    assert not db.exists()
