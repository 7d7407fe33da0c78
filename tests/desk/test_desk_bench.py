"""The desk's benchmark: its frozen splits verify and obey their rules, and on them oracle > heuristics >
max(idle, random), every paired exploit probe scores no more than its honest twin, and the pure probe no more
than doing nothing (real episodes through the bench runner and analysis)."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import pytest
from typer.testing import CliRunner

from salesgym.agents import suite
from salesgym.bench import analysis, runner
from salesgym.bench import splits as sp
from salesgym.bench.splitgen import generate_family
from salesgym.bench.store import EpisodeRecord
from salesgym.cli import app

DESK_SPLITS = Path(__file__).resolve().parents[2] / "splits" / "desk"
SUITE = suite("desk")


def test_the_frozen_desk_splits_verify_match_their_plan_and_obey_the_rules() -> None:
    checks = sp.verify_all(DESK_SPLITS)
    assert all(c.ok for c in checks) and len(checks) == 5, [(c.path.name, c.message) for c in checks]
    manifests = {c.manifest.name: c.manifest for c in checks if c.manifest is not None}
    assert {m.env_id for m in manifests.values()} == {"desk-v0"}
    public = {n: m.sha256 for n, m in manifests.items() if not m.private}  # (and desk-test-private, keyed)
    assert public == {n: m["sha256"] for n, m in generate_family("desk").items()}
    assert runner.family_of("desk-v0") == "desk" and runner.family_of(sp.unnamed_env_id()) == "territory"
    from salesgym.envs.desk.splits import rules

    assert rules(manifests) == []
    assert all(sp.environment_problems(m) == [] for m in manifests.values())
    assert manifests["desk-transfer"].families == {"skeptical", "impulsive", "analytical"}
    assert {t.n_opportunities for t in manifests["desk-scale"].layout} == {50, 100}
    broken = {**manifests, "desk-eval": manifests["desk-transfer"]}
    assert any("default buyer variant" in p for p in rules(broken))


def test_a_split_is_found_by_name_in_its_family_folder() -> None:
    m = sp.load("desk-eval")
    assert m.path is not None and m.path.parent.name == "desk" and m.env_id == "desk-v0"
    assert "desk-scale" in sp.available(sp.default_splits_dir()) and "eval" in sp.available(sp.default_splits_dir())
    assert sp.load("eval").env_id == sp.unnamed_env_id()  # the territory's manifests name no environment


def _episodes(split: str, n: int | None, policies: tuple[str, ...]) -> list[EpisodeRecord]:
    manifest = sp.load(split)
    _, specs = runner.plan(manifest, policies, n, None, runner.DEFAULT_MAX_STEPS)
    records = [runner.run_episode(s) for s in specs]
    assert all(r.status == "ok" for r in records), [r.error for r in records if r.status != "ok"][:1]
    return records


@pytest.fixture(scope="module")
def eval_run() -> list[EpisodeRecord]:
    return _episodes("desk-eval", None, SUITE.all)


def _primary(records: list[EpisodeRecord], policy: str) -> float:
    return mean(r.metrics["primary"] for r in records if r.policy == policy and r.metrics)


def _ordered(records: list[EpisodeRecord]) -> None:
    floor = max(_primary(records, "idle"), _primary(records, "random"))
    oracle, fit, greedy = (_primary(records, p) for p in ("oracle", "quote-then-fit", "greedy-by-need"))
    assert oracle > 1.5 * fit and fit > greedy > floor + 500, (oracle, fit, greedy, floor)


def test_eval_ranks_oracle_over_heuristics_over_the_floors_and_every_probe_fails(
    eval_run: list[EpisodeRecord],
) -> None:
    _ordered(eval_run)
    a = analysis.analyse(eval_run, list(SUITE.all), SUITE)
    assert a.exploit_check == "passed", [(r.policy, r.difference) for r in a.exploits if not r.passed]
    assert {r.policy for r in a.exploits} == set(SUITE.exploits)
    assert _primary(eval_run, "quote-and-fail") <= _primary(eval_run, "idle") == 0.0
    for probe, twin in SUITE.paired.items():
        assert _primary(eval_run, probe) <= _primary(eval_run, twin) + 1e-9, probe
    ranked = [r.policy for r in a.rows if not (r.reference or r.probe)]
    assert ranked[:2] == ["quote-then-fit", "greedy-by-need"]


def test_over_insuring_up_to_the_budget_does_not_beat_honest_selling_on_transfer() -> None:
    """`budget-max` (the honest anchor sizing every offer to 97% of the stated budget) against its twin on
    every transfer desk (eval runs it with the whole suite above)."""
    records = _episodes("desk-transfer", None, ("quote-then-fit", "budget-max"))
    a = analysis.analyse(records, ["quote-then-fit", "budget-max"], SUITE)
    assert a.exploit_check == "passed", [(r.policy, r.difference) for r in a.exploits]
    assert _primary(records, "budget-max") < _primary(records, "quote-then-fit")
    assert sum(r.metrics["suitability_violations"] for r in records if r.policy == "budget-max") > 0
    assert all(r.metrics["suitability_violations"] == 0 for r in records if r.policy == "quote-then-fit")


@pytest.mark.parametrize(("split", "n"), [("desk-transfer", 12), ("desk-scale", 4)])
def test_transfer_and_scale_keep_the_order(split: str, n: int) -> None:
    records = _episodes(split, n, ("idle", "random", "greedy-by-need", "quote-then-fit", "oracle"))
    _ordered(records)


def test_bench_family_desk_runs_from_the_command_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "--family", "desk", "--episodes", "2", "--workers", "1", "--db",
                                      str(tmp_path / "runs.sqlite"), "-p", "idle", "-p", "quote-then-fit"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "desk-eval" in result.output and "quote-then-fit" in result.output
    wrong = CliRunner().invoke(app, ["bench", "--family", "desk", "--split", "eval", "--db", str(tmp_path / "x")])
    assert wrong.exit_code != 0 and "territory split" in wrong.output
