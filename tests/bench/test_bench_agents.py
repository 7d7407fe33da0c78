"""``--agent module:Class`` / ``module:factory``: a user's agent from a module in the current directory, played
by real workers on the debug split, ranked against the floors and the oracle, with its token usage and cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_fixtures import write_agent_module
from typer.testing import CliRunner

from salesgym.bench import analysis as an
from salesgym.bench.policyspec import PolicySpecError, outside_seed, resolve_agent
from salesgym.bench.report import write_report
from salesgym.bench.runner import trial_seed
from salesgym.bench.store import Store
from salesgym.cli import app

PRICES = ("--price-in", "1.5", "--price-out", "6", "--price-cached", "0.25")


def _bench(*args: str) -> str:
    result = CliRunner().invoke(app, ["bench", "--split", "debug", *args])
    assert "Traceback" not in result.output
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of agents in the current directory (not installed, not on sys.path before the bench starts)."""
    monkeypatch.chdir(tmp_path)
    return write_agent_module(tmp_path)


def test_agent_class_from_the_current_directory_is_ranked_with_its_cost(agents: str, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    output = _bench("--agent", f"{agents}:CoinSeller", "--agent", f"{agents}:Waiter", "--workers", "2",
                    "--db", str(db), *PRICES)
    assert "note: added idle, random, oracle to the run" in output
    with Store(db, readonly=True) as store:
        run = store.runs()[-1]
        eps = store.episodes(run.id)
    assert run.policies == ("coin-seller", f"{agents}:Waiter", "idle", "random", "oracle")
    assert run.config["agents"]["coin-seller"]["target"] == f"{agents}:CoinSeller"
    assert run.config["agents"]["coin-seller"]["source_sha256"]  # editing the agent starts a new run
    assert not [e.error for e in eps if e.status == "error"]
    a = an.analyse(eps, list(run.policies), None, prices=an.Prices(1.5, 6.0, 0.25))
    rows = {r.policy: r for r in a.rows}
    assert not rows["coin-seller"].reference and rows["coin-seller"].normalised is not None  # ranked like a baseline
    assert rows[f"{agents}:Waiter"].normalised is not None
    seller = [e for e in eps if e.policy == "coin-seller"]
    for e in seller:  # the agent's episode_record() is kept with the episode
        assert e.policy_record == {"usage": {"prompt_tokens": 1000 * e.steps, "completion_tokens": 50 * e.steps,
                                             "cached_tokens": 400 * e.steps}, "failures": {}}
    cost = a.costs["coin-seller"]
    per_step = (600 * 1.5 + 400 * 0.25 + 50 * 6) / 1e6  # uncached prompt, cached prompt, completion
    assert cost.cost_total == pytest.approx(per_step * sum(e.steps for e in seller))
    assert cost.cost_mean == pytest.approx(cost.cost_total / 3)
    assert cost.tokens_mean == pytest.approx({"prompt_tokens": 1000 * cost.steps_mean,
                                              "completion_tokens": 50 * cost.steps_mean,
                                              "cached_tokens": 400 * cost.steps_mean})
    assert a.costs[f"{agents}:Waiter"].usage_episodes == 0 and a.costs["random"].tokens_mean is None
    with Store(db, readonly=True) as store:
        md = write_report(store, run.id, tmp_path / "rep", prices=an.Prices(1.5, 6.0, 0.25)).markdown.read_text()
    line = next(x for x in md.splitlines() if "| coin-seller |" in x)
    assert an.dollars(cost.cost_mean) in line and an.tokens_text(cost.tokens_mean) in line
    assert f"the whole run: {an.dollars(cost.cost_total)}" in md
    assert "## Episode ends" in md


def test_an_agent_never_gets_the_worlds_seed(agents: str, tmp_path: Path) -> None:
    """On a private split the world's seed is secret: with it an agent could build the world and read its
    hidden truth. Agents get a one-way hash of their policy seed instead, reproducible per trial."""
    db = tmp_path / "s.sqlite"
    _bench("--agent", f"{agents}:SeedTeller", "-p", "idle", "-p", "random", "-p", "oracle", "--trials", "2",
           "--workers", "1", "--db", str(db))
    with Store(db, readonly=True) as store:
        eps = [e for e in store.episodes(store.runs()[-1].id) if e.policy == "seed-teller"]
    world_seeds = {e.seed for e in eps}
    assert len(eps) == 6 and len(world_seeds) == 3
    for e in eps:
        got = e.policy_record["seed"]
        assert got == outside_seed(trial_seed(e.seed, e.trial)) and got not in world_seeds
    assert len({e.policy_record["seed"] for e in eps}) == 6


def test_a_factory_plays_the_same_agent(agents: str, tmp_path: Path) -> None:
    by_class, by_factory = tmp_path / "c.sqlite", tmp_path / "f.sqlite"
    _bench("--agent", f"{agents}:CoinSeller", "-p", "random", "--workers", "1", "--db", str(by_class))
    _bench("--agent", f"{agents}:make_seller", "-p", "random", "--workers", "1", "--db", str(by_factory))
    results = []
    for db in (by_class, by_factory):
        with Store(db, readonly=True) as store:
            run = store.runs()[-1]
            assert "oracle" in run.policies and "idle" in run.policies  # added: random was there already
            results.append({(e.policy, e.territory_id): (e.metrics, e.steps) for e in store.episodes(run.id)})
    assert results[0] == results[1]


def test_resolve_checks_the_agent_before_any_episode(agents: str) -> None:
    spec = resolve_agent(f"{agents}:Waiter")
    assert (spec.kind, spec.name, spec.target) == ("agent", f"{agents}:Waiter", f"{agents}:Waiter")
    assert json.loads(json.dumps(spec.to_dict()))["kind"] == "agent" and "path" not in spec.to_dict()
    with pytest.raises(PolicySpecError, match="without act"):
        resolve_agent(f"{agents}:NoAct")
    with pytest.raises(PolicySpecError, match="expected module:Class") as bad:
        resolve_agent("no-colon")
    assert bad.value.code == 2


def test_an_agent_that_stops_is_recorded_with_its_reason(agents: str, tmp_path: Path) -> None:
    from salesgym.bench.runner import LocalBackend, run_benchmark
    from salesgym.bench.splits import load

    with Store(tmp_path / "r.sqlite") as store:
        run_id = run_benchmark(store, load("debug"), [resolve_agent(f"{agents}:Quitter")], LocalBackend(1)).run.id
        eps = store.episodes(run_id)
        traj = store.trajectory(run_id, "quitter", eps[0].territory_id)
    assert [(e.status, e.end, e.steps) for e in eps] == [("stopped", "stopped: token budget spent", 5)] * 3
    assert traj["end"] == "stopped: token budget spent" and len(traj["turns"]) == 5
    a = an.analyse(eps, ["quitter"])
    assert a.ends == {"quitter": {"stopped: token budget spent": 3}} and a.failures["quitter"].stopped == 3
