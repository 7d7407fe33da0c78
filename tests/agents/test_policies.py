"""Policies: the registry contract, determinism, safe play, and the orderings the benchmark promises on a
small set of territories (the published splits are checked in tests/bench/test_bench_ordering.py)."""

from __future__ import annotations

from statistics import mean
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy, suite
from salesgym.agents.base import rollout
from salesgym.agents.territory.memory import hours_of

SUITE = suite("territory")
# (family, template, seed): 10 opportunities, 30 days each; small but varied.
TERRITORIES = [
    ("midmarket_saas", "standard", 1), ("enterprise_security", "standard", 1), ("healthcare", "budget_freeze", 1),
    ("public_sector", "zombie_pipeline", 2),
]


def play(name: str, seed: int, **env_kwargs: Any) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    env = salesgym.make("territory-v0", **env_kwargs)
    env.reset(seed=seed)
    policy = make_policy(name, seed=seed, hidden_truth=env.hidden_truth() if name in SUITE.reference else None)
    actions = [step.action for step in rollout(env, policy, seed, max_steps=20_000)]
    return env.score(), env.event_log_hash(), actions


def test_registry_matches_the_contract() -> None:
    assert SUITE.baselines == ("idle", "random", "crm-stage", "expected-value", "earliest-deadline", "greedy-single")
    assert SUITE.reference == ("oracle",) and SUITE.anchor == "expected-value"
    assert set(SUITE.paired) <= set(SUITE.exploits) and set(SUITE.paired.values()) == {"expected-value"}
    assert {"spam-all", "inflate-stages", "always-discount", "cycle-stages", "forger"} <= set(SUITE.exploits)
    assert set(SUITE.policies) == {*SUITE.baselines, *SUITE.exploits, *SUITE.reference}
    assert all(cls.name == name for name, cls in SUITE.policies.items())
    with pytest.raises(ValueError, match="expected-value"):
        make_policy("nope", seed=0)


def test_stamps_parse_back_to_business_hours() -> None:
    from salesgym.envs.territory.contract import stamp

    for t in (0.0, 2.0, 13.5, 47.25, 123.0):
        assert hours_of(stamp(t)) == pytest.approx(t, abs=0.01)


@pytest.mark.parametrize("name", ["expected-value", "random", "oracle", "forger", "ev+spam"])
def test_same_seed_same_actions(name: str) -> None:
    a = play(name, 5, n_opportunities=4, horizon_days=30)
    b = play(name, 5, n_opportunities=4, horizon_days=30)
    assert a[1] == b[1] and a[2] == b[2]


@pytest.mark.parametrize("name", list(SUITE.policies))
def test_every_policy_finishes_a_debug_territory(name: str) -> None:
    score, _, actions = play(name, 3, n_opportunities=4, horizon_days=30, family="healthcare")
    if name == "ev+truncation":  # its whole point: it ends the episode early on purpose
        assert score["truncated"] and score["why"] == "invalid-action ceiling"
        return
    assert score["terminated"] and not score["truncated"], score["why"]
    assert score["why"] in ("horizon", "all opportunities terminal")
    if (name in SUITE.baselines and name != "random") or name in SUITE.reference:
        assert score["invalid_actions"] <= 5, score["invalid_actions"]
    names = {t["function"]["name"] for t in salesgym.make("territory-debug-v0").tool_schemas()}
    assert {a["tool"] for a in actions} <= names


@pytest.fixture(scope="module")
def results() -> dict[str, list[dict[str, Any]]]:
    names = ["oracle", "expected-value", "random", "idle", *SUITE.exploits]
    return {name: [play(name, seed, n_opportunities=10, horizon_days=30, family=f, template=t)[0]
                   for f, t, seed in TERRITORIES] for name in names}


def _primary(runs: list[dict[str, Any]]) -> float:
    return mean(s["primary"] for s in runs)


def test_oracle_beats_expected_value_beats_doing_nothing_and_random(results: dict[str, list[dict[str, Any]]]) -> None:
    assert all(s["primary"] == 0.0 for s in results["idle"])  # doing nothing earns exactly nothing
    floor = max(_primary(results["idle"]), _primary(results["random"]))
    ev = _primary(results["expected-value"])
    assert _primary(results["oracle"]) > 1.2 * ev
    assert ev > floor + 100.0
    assert all(e["primary"] > max(i["primary"], r["primary"])
               for e, i, r in zip(results["expected-value"], results["idle"], results["random"], strict=True))


@pytest.mark.parametrize("probe", [p for p in SUITE.exploits if p not in SUITE.paired])
def test_a_pure_probe_scores_below_the_anchor_and_closes_nothing(
    results: dict[str, list[dict[str, Any]]], probe: str
) -> None:
    ev, ours = results["expected-value"], results[probe]
    assert _primary(ours) < _primary(ev)
    assert all(s["closed_value"] == 0 for s in ours)  # no pure probe gets a single deal signed


@pytest.mark.parametrize("probe", sorted(SUITE.paired))
def test_a_paired_probe_never_beats_its_honest_twin(results: dict[str, list[dict[str, Any]]], probe: str) -> None:
    from salesgym.bench.analysis import NOISE_SHARE

    twin = results[SUITE.paired[probe]]
    gain = mean(p["primary"] - t["primary"] for p, t in zip(results[probe], twin, strict=True))
    assert gain <= NOISE_SHARE * mean(t["primary"] for t in twin)


class _Reworded:
    """The environment, with every text the seller reads replaced: inbox items, the observation text and
    refusal reasons. A baseline that reads only the typed data plays exactly the same."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def _reword(self, obs: dict[str, Any]) -> dict[str, Any]:
        data = {**obs["data"], "inbox": [{**i, "text": "(reworded)"} for i in obs["data"]["inbox"]]}
        return {"text": "(reworded)", "data": data}

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        return self._reword(obs), info

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        result = info["tool_result"]
        if result["status"] == "error":
            info = {**info, "tool_result": {**result, "output": {"error": "(reworded)"}}}
        return self._reword(obs), reward, terminated, truncated, info


@pytest.mark.parametrize("name", ["expected-value", "oracle", "crm-stage", "random", "ev+drop-by-reward"])
def test_baselines_read_the_typed_contract_not_the_wording(name: str) -> None:
    plain = play(name, 2, n_opportunities=10, horizon_days=30, family="healthcare", template="budget_freeze")
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, family="healthcare",
                        template="budget_freeze")
    env.reset(seed=2)
    policy = make_policy(name, seed=2, hidden_truth=env.hidden_truth() if name in SUITE.reference else None)
    actions = [step.action for step in rollout(_Reworded(env), policy, 2, max_steps=20_000)]
    assert actions == plain[2] and env.event_log_hash() == plain[1]
