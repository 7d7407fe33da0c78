"""The benchmark's CLI: clear errors and non-zero exits for bad input, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_fakes import synthetic_episodes, synthetic_territories
from typer.testing import CliRunner

from salesgym.bench.store import RunRecord, Store
from salesgym.cli import app
from salesgym.envs.territory import splits as territory_splits

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"
runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


@pytest.fixture
def tampered(tmp_path: Path) -> Path:
    d = tmp_path / "splits"
    shutil.copytree(REPO_SPLITS, d)
    data = json.loads((d / "eval.json").read_text())
    data["territories"][0]["n_opportunities"] = 99
    (d / "eval.json").write_text(json.dumps(data, indent=2))
    return d


def test_splits_verify_ok() -> None:
    code, out = _invoke("splits", "verify", "--splits-dir", str(REPO_SPLITS))
    assert code == 0, out
    assert "split rules hold" in out


def test_splits_verify_names_the_tampered_file(tampered: Path) -> None:
    code, out = _invoke("splits", "verify", "--splits-dir", str(tampered))
    assert code == 1
    assert "eval.json" in out and "sha256 mismatch" in out


def test_splits_verify_env_var(tampered: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALESGYM_SPLITS_DIR", str(tampered))
    code, out = _invoke("splits", "verify")
    assert code == 1 and "eval.json" in out


def test_bench_refuses_a_tampered_split(tampered: Path, tmp_path: Path) -> None:
    code, out = _invoke("bench", "--split", "eval", "--splits-dir", str(tampered), "--db", str(tmp_path / "x.sqlite"))
    assert code == 1
    assert "eval.json" in out and "sha256 mismatch" in out
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--split", "nope"], 1, "no split named 'nope'"),
        (["--backend", "slurm"], 2, "--backend"),
        (["--workers", "0"], 2, "--workers"),
        (["--episodes", "0"], 2, "--episodes"),
        (["--max-steps", "-3"], 2, "--max-steps"),
        (["--ablation", "no_gravity"], 1, "unknown ablation 'no_gravity'"),
        (["--ray-address", "ray://h:1"], 1, "--ray-address only applies"),
        (["--splits-dir", "/no/such/dir"], 1, "does not exist"),
    ],
)
def test_bench_bad_arguments(args: list[str], code: int, message: str, tmp_path: Path) -> None:
    got, out = _invoke("bench", *args, "--db", str(tmp_path / "x.sqlite"))
    assert got == code, out
    assert message in out


def test_bench_unknown_policy(tmp_path: Path) -> None:
    code, out = _invoke("bench", "--split", "debug", "--policy", "nope", "--db", str(tmp_path / "x.sqlite"))
    assert code == 1
    assert "nope" in out or "not installed" in out  # before the policies land, the preflight says so


def _synthetic_db(tmp_path: Path) -> Path:
    db = tmp_path / "runs.sqlite"
    with Store(db) as store:
        store.ensure_run(RunRecord("eval-syn", "", "eval", "d" * 64, ("random", "expected-value", "oracle"), {}, "0"))
        for ep in synthetic_episodes(("random", "expected-value", "oracle"), synthetic_territories(5)):
            store.record("eval-syn", ep)
    return db


def test_report_export_and_runs(tmp_path: Path) -> None:
    db = _synthetic_db(tmp_path)
    code, out = _invoke("report", "eval-syn", "--db", str(db), "--out", str(tmp_path / "rep"))
    assert code == 0, out
    assert (tmp_path / "rep" / "report.html").is_file() and (tmp_path / "rep" / "report.md").is_file()
    code, out = _invoke("export", "eval-syn", "--db", str(db), "--format", "csv", "--out", str(tmp_path / "e.csv"))
    assert code == 0 and (tmp_path / "e.csv").read_text().startswith("run_id,policy")
    code, out = _invoke("export", "eval-syn", "--db", str(db), "--out", str(tmp_path / "e.json"))
    assert code == 0 and json.loads((tmp_path / "e.json").read_text())["run"]["id"] == "eval-syn"
    code, out = _invoke("runs", "--db", str(db))
    assert code == 0 and "eval-syn" in out


def test_report_errors(tmp_path: Path) -> None:
    code, out = _invoke("report", "eval-syn", "--db", str(tmp_path / "none.sqlite"))
    assert code == 1 and "no run database" in out
    db = _synthetic_db(tmp_path)
    code, out = _invoke("report", "nope", "--db", str(db))
    assert code == 1 and "no run 'nope'" in out and "eval-syn" in out
    code, out = _invoke("export", "eval-syn", "--db", str(db), "--format", "xml")
    assert code == 2


def test_splits_generate_refuses_to_change_frozen_splits(tmp_path: Path) -> None:
    pytest.importorskip("salesgym.envs.territory.families")
    target = tmp_path / "gen"
    code, out = _invoke("splits", "generate", "--out", str(target))
    assert code == 0, out
    names = {f"{name}.json" for name in territory_splits.SPLIT_NAMES}
    assert {p.name for p in target.iterdir()} == names | {"README.md"}
    code, out = _invoke("splits", "generate", "--out", str(target))
    assert code == 0  # unchanged: allowed
    data = json.loads((target / "debug.json").read_text())
    data["description"] = "edited"
    (target / "debug.json").write_text(json.dumps(data))
    code, out = _invoke("splits", "generate", "--out", str(target))
    assert code == 1 and "debug" in out and "--force" in out
    code, out = _invoke("splits", "generate", "--out", str(target), "--force")
    assert code == 0
    code, out = _invoke("splits", "generate", "--out", str(target), "--held-out-family", "atlantis")
    assert code == 1 and "atlantis" in out
