"""The runner: resume after an interruption and force (on the fake episode, in process), and a process pool
that returns exactly what in-process play returns (on real debug episodes)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench_fakes import fake_episode, synthetic_territories

from salesgym.bench import runner
from salesgym.bench.runner import EpisodeSpec, LocalBackend, RunConfig, run_benchmark
from salesgym.bench.splits import Manifest, Territory
from salesgym.bench.store import EpisodeRecord, Store

POLICIES = ("random", "expected-value", "spam-all")


def _manifest(n: int = 4) -> Manifest:
    return Manifest("debug", "synthetic", tuple(synthetic_territories(n)), None, "a" * 64)


def _key(records: Sequence[EpisodeRecord]) -> list[tuple[object, ...]]:
    """Everything but wall time, which is the only thing allowed to differ between backends."""
    return sorted((r.policy, r.territory_id, r.seed, r.status, repr(r.metrics), r.steps, r.tool_calls) for r in records)


@dataclass
class Interrupting:
    """Plays ``stop_after`` episodes then raises KeyboardInterrupt, like a user pressing Ctrl-C."""

    stop_after: int
    name: str = "interrupting"

    def run(self, specs: Sequence[EpisodeSpec]) -> Iterator[EpisodeRecord]:
        for i, spec in enumerate(specs):
            if i == self.stop_after:
                raise KeyboardInterrupt
            yield fake_episode(spec)


def test_run_resume_and_force(tmp_path: Path) -> None:
    backend = LocalBackend(workers=1, episode_fn=fake_episode)
    with Store(tmp_path / "r.sqlite") as store:
        first = run_benchmark(store, _manifest(), POLICIES, backend)
        assert (first.played, first.skipped) == (12, 0)
        again = run_benchmark(store, _manifest(), POLICIES, backend)
        assert again.run.id == first.run.id and (again.played, again.skipped) == (0, 12)
        forced = run_benchmark(store, _manifest(), POLICIES, backend, force=True)
        assert (forced.played, forced.skipped) == (12, 0)
        assert len(store.episodes(first.run.id)) == 12


def test_interrupted_run_resumes_without_losing_episodes(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store(db) as store, pytest.raises(KeyboardInterrupt):
        run_benchmark(store, _manifest(), POLICIES, Interrupting(stop_after=5))
    with Store(db) as store:
        played: list[str] = []
        out = run_benchmark(
            store,
            _manifest(),
            POLICIES,
            LocalBackend(1, episode_fn=fake_episode),
            on_plan=lambda t, d: played.append(f"{t}/{d}"),
        )
        assert (out.played, out.skipped) == (7, 5)
        assert played == ["7/5"]
        full = store.episodes(out.run.id)
    with Store(tmp_path / "ref.sqlite") as ref:
        expected = ref.episodes(
            run_benchmark(ref, _manifest(), POLICIES, LocalBackend(1, episode_fn=fake_episode)).run.id
        )
    assert _key(full) == _key(expected)


def test_process_pool_matches_in_process(tmp_path: Path) -> None:
    from salesgym.bench.splits import load

    specs = [EpisodeSpec(p, t) for p in POLICIES for t in load("debug").territories]
    serial = list(LocalBackend(1).run(specs))
    pooled = list(LocalBackend(2).run(specs))
    assert all(r.status == "ok" for r in serial), [r.error for r in serial if r.error][:1]
    assert _key(serial) == _key(pooled)


def test_episode_failure_is_recorded_not_raised() -> None:
    spec = EpisodeSpec("random", Territory("x-000", "no-such-family", "no-such-template", 1, 3, 30))
    rec = runner.run_episode(spec)
    assert rec.status == "error"
    assert rec.error and rec.metrics is None
    assert (rec.policy, rec.territory_id, rec.seed) == ("random", "x-000", 1)


def test_run_id_depends_on_results_not_on_how_they_run() -> None:
    cfg = RunConfig("eval", "a" * 64, ("random", "oracle"), ("t1", "t2"))
    same = RunConfig("eval", "a" * 64, ("oracle", "random"), ("t1", "t2"))
    abl = RunConfig("eval", "a" * 64, ("random", "oracle"), ("t1", "t2"), ablation="no_hidden_state")
    other_split = RunConfig("eval", "b" * 64, ("random", "oracle"), ("t1", "t2"))
    assert cfg.run_id("0.1.0") == same.run_id("0.1.0")
    assert cfg.run_id("0.1.0").startswith("eval-")
    assert abl.run_id("0.1.0").startswith("eval-no_hidden_state-")
    assert len({cfg.run_id("0.1.0"), abl.run_id("0.1.0"), other_split.run_id("0.1.0"), cfg.run_id("0.2.0")}) == 4


def test_plan_limits_territories_and_rejects_bad_counts() -> None:
    cfg, specs = runner.plan(_manifest(4), POLICIES, 2, None, 100)
    assert cfg.territories == ("syn-000", "syn-001") and len(specs) == 6
    with pytest.raises(runner.BenchError, match="--episodes"):
        runner.plan(_manifest(4), POLICIES, 0, None, 100)


def test_validation_of_names() -> None:
    suite = runner.policy_suite("territory")
    assert runner.validate_policies(["random", "random", "oracle"], suite) == ("random", "oracle")
    with pytest.raises(runner.BenchError, match="unknown policy 'nope'"):
        runner.validate_policies(["nope"], suite)
    assert runner.validate_ablation(None, "territory-v0") is None
    assert runner.validate_ablation("no_resource_limits", "territory-v0") == "no_resource_limits"
    with pytest.raises(runner.BenchError, match="unknown ablation"):
        runner.validate_ablation("no_gravity", "territory-v0")
    for training in ("sparse_reward", "time_discount"):  # reward-only: no fixed policy would score differently
        with pytest.raises(runner.BenchError, match="training ablation"):
            runner.validate_ablation(training, "territory-v0")
    with pytest.raises(runner.BenchError, match="--ray-address"):
        runner.make_backend("local", 2, "ray://x:10001")
    with pytest.raises(runner.BenchError, match="unknown backend"):
        runner.make_backend("slurm", 2)
