"""Trials (``--trials K``): the same world, the policy's seed differs by trial; trial 0 is the run as it always
was; the leaderboard's spread and pass^k. Real episodes on the debug split."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_fixtures import write_agent_module
from typer.testing import CliRunner

from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.bench import analysis as an
from salesgym.bench import runner, stats
from salesgym.bench.runner import EpisodeSpec, LocalBackend, run_benchmark, run_episode, trial_seed
from salesgym.bench.splits import SEED_LIMIT, load
from salesgym.bench.store import Store, decode_trajectory
from salesgym.cli import app

DEBUG = load("debug")


def test_trial_seeds() -> None:
    seeds = [trial_seed(12345, k) for k in range(50)]
    assert seeds[0] == 12345  # trial 0: the territory seed, as before trials existed
    assert len(set(seeds)) == 50 and all(0 <= s < SEED_LIMIT for s in seeds)
    assert trial_seed(12345, 3) == trial_seed(12345, 3) != trial_seed(12346, 3)


def test_trial_0_is_the_episode_runs_always_played() -> None:
    """What the runner did before trials: the policy seeded with the territory seed, on that world."""
    for t in DEBUG.territories:
        rec = run_episode(EpisodeSpec("random", t, trial=0))
        env = runner.make_env(t, None, "territory-v0")
        steps = sum(1 for _ in rollout(env, make_policy("random", t.seed), t.seed, runner.DEFAULT_MAX_STEPS))
        assert rec.status == "ok" and rec.metrics is not None
        assert (rec.steps, rec.metrics["primary"], rec.metrics["closed_value"]) == (
            steps, env.score()["primary"], env.score()["closed_value"])


def test_the_same_trial_replays_and_other_trials_differ() -> None:
    t = DEBUG.territories[0]
    one, again = (run_episode(EpisodeSpec("random", t, trial=2)) for _ in range(2))
    assert (one.metrics, one.steps, one.end) == (again.metrics, again.steps, again.end)
    assert one.trajectory is not None and again.trajectory is not None
    assert decode_trajectory(one.trajectory) == decode_trajectory(again.trajectory)
    runs = [run_episode(EpisodeSpec("random", t, trial=k)) for k in range(3)]
    assert len({(r.steps, repr(r.metrics)) for r in runs}) == 3  # a stochastic policy plays differently
    assert [decode_trajectory(r.trajectory)["policy_seed"] for r in runs if r.trajectory] == [
        trial_seed(t.seed, k) for k in range(3)]


def test_trials_are_stored_resumed_and_keyed(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        out = run_benchmark(store, DEBUG, ["random"], LocalBackend(2), trials=3, episodes=2)
        assert (out.played, out.skipped) == (6, 0)
        again = run_benchmark(store, DEBUG, ["random"], LocalBackend(1), trials=3, episodes=2)
        assert (again.run.id, again.played) == (out.run.id, 0)
        assert sorted((e.territory_id, e.trial) for e in store.episodes(out.run.id)) == [
            (t.id, k) for t in DEBUG.territories[:2] for k in range(3)]
        one = run_benchmark(store, DEBUG, ["random"], LocalBackend(1), episodes=2)
    assert one.run.id != out.run.id and "trials" not in one.run.config and out.run.config["trials"] == 3


def test_reliability_spread_and_pass_k() -> None:
    per_trial = {("a", 0): 0.9, ("a", 1): 0.7, ("b", 0): 0.9, ("b", 1): 0.3, ("c", 0): 0.6}  # c lost a trial
    spread, pass_k = an.reliability(per_trial, trials=2, threshold=0.5)
    assert pass_k == pytest.approx(1 / 3)  # only a: b has a trial below, c is missing one
    assert spread == pytest.approx((0.1414213562 + 0.4242640687) / 2)
    assert an.reliability(per_trial, trials=2, threshold=0.25)[1] == pytest.approx(2 / 3)
    assert an.reliability({}, 2, 0.5) == (None, None)


def test_pass_k_per_territory_and_its_interval() -> None:
    per_trial = {("a", 0): 1.0, ("a", 1): 1.0, ("b", 0): 1.0, ("b", 1): 0.0, ("c", 0): 1.0, ("d", 0): 1.0,
                 ("d", 1): 1.0}  # fmt: skip
    assert an.all_passed(per_trial, 2, 0.5) == {"a": 1.0, "b": 0.0, "c": 0.0, "d": 1.0}
    low, high = stats.bootstrap_ci(list(an.all_passed(per_trial, 2, 0.5).values()))
    assert 0.0 <= low < 0.5 < high <= 1.0


def test_cli_trials_show_pass_k_and_spread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mod = write_agent_module(tmp_path)
    db = str(tmp_path / "r.sqlite")
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "--agent", f"{mod}:CoinSeller", "--trials", "2",
                                      "--workers", "2", "--db", db, "--pass-threshold", "0.2"])
    assert result.exit_code == 0, result.output
    assert "x 2 trials" in result.output and "pass^2 = share of territories" in result.output
    with Store(db, readonly=True) as store:
        run = store.runs()[-1]
        eps = store.episodes(run.id)
    assert len(eps) == 4 * 3 * 2  # coin-seller, idle, random, oracle
    a = an.analyse(eps, list(run.policies), None, pass_threshold=0.2)
    row = next(r for r in a.rows if r.policy == "coin-seller")
    per_trial = an.normalised_by_episode(eps, "coin-seller", ["idle", "random"], ["oracle"])
    assert len(per_trial) == 6 and row.trials == 2
    assert (row.spread, row.pass_k) == an.reliability(per_trial, 2, 0.2)
    assert row.normalised is not None and row.normalised.mean == pytest.approx(
        sum(an.by_territory(per_trial).values()) / 3)
    rep = CliRunner().invoke(app, ["report", run.id, "--db", db, "--out", str(tmp_path / "rep"),
                                   "--pass-threshold", "0.2"])
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| trials | spread | pass^2 |" in md and "trials**: 2" in md
    line = next(x for x in md.splitlines() if "| coin-seller |" in x)
    assert f"| 2 | {row.spread:,.2f} | {row.pass_k:,.2f} |" in line
