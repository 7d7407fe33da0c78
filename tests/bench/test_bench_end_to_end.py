"""End to end on the real environment and policies."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from salesgym.bench import analysis as an
from salesgym.bench.runner import EpisodeSpec, LocalBackend, policy_suite, run_benchmark, run_episode
from salesgym.bench.splits import load
from salesgym.bench.store import Store


def test_episode_is_deterministic() -> None:
    t = load("debug").territories[0]
    a, b = run_episode(EpisodeSpec("expected-value", t)), run_episode(EpisodeSpec("expected-value", t))
    assert a.status != "error", a.error
    assert (a.metrics, a.steps, a.tool_calls) == (b.metrics, b.steps, b.tool_calls)


def test_every_policy_runs_on_debug(tmp_path: Path) -> None:
    suite = policy_suite("territory")
    with Store(tmp_path / "r.sqlite") as store:
        out = run_benchmark(store, load("debug"), suite.all, LocalBackend(2))
        eps = store.episodes(out.run.id)
    errors = [(e.policy, e.territory_id, e.error) for e in eps if e.status == "error"]
    assert not errors, errors[:2]
    assert len(eps) == len(suite.all) * 3
    assert all(e.metrics is not None and "primary" in e.metrics for e in eps)


def test_pure_probes_earn_nothing_through_what_they_exploit_on_debug(tmp_path: Path) -> None:
    """The pure probes score below expected-value and earn no reward through the tools they exploit (the
    paired probes and the published splits are checked in test_bench_ordering.py)."""
    suite = policy_suite("territory")
    pure = [p for p in suite.exploits if p not in suite.paired]
    with Store(tmp_path / "r.sqlite") as store:
        out = run_benchmark(store, load("debug"), ("expected-value", *pure), LocalBackend(2))
        a = an.analyse(store.episodes(out.run.id), ["expected-value", *pure], suite)
    assert a.exploit_check.startswith("passed"), an.exploit_line(a)
    mech = {e.policy: e.mechanism_reward for e in a.exploits}
    for probe in an.MECHANISM_TOOLS:  # reward earned through the exploited tools is at most zero
        assert mech[probe] is not None and mech[probe] <= 1e-9, (probe, mech[probe])


def test_bench_cli_runs_resumes_and_reports(tmp_path: Path) -> None:
    from salesgym.cli import app

    db = str(tmp_path / "r.sqlite")
    args = [
        "bench",
        "--split",
        "debug",
        "-p",
        "random",
        "-p",
        "expected-value",
        "-p",
        "oracle",
        "--workers",
        "2",
        "--db",
        db,
    ]
    cli = CliRunner()
    first = cli.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "expected-value" in first.output and "95% CI" in first.output and "exploit check" in first.output
    again = cli.invoke(app, args)
    assert again.exit_code == 0 and "resuming: 9 episode(s) already" in again.output
    with Store(db) as store:
        run_id = store.runs()[-1].id
    rep = cli.invoke(app, ["report", run_id, "--db", db, "--out", str(tmp_path / "rep")])
    assert rep.exit_code == 0, rep.output
    assert "data:image/png;base64," in (tmp_path / "rep" / "report.html").read_text()
