"""Policies: the registry contract, determinism, safe play on debug territories, and the score ordering
oracle > expected-value > random with every exploit probe below expected-value."""

from __future__ import annotations

from statistics import mean
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy, suite
from salesgym.agents.base import rollout
from salesgym.agents.territory.memory import hours_of

# (family, template, seed): 10 opportunities, 30 days each; small but varied.
TERRITORIES = [
    ("midmarket_saas", "standard", 1), ("enterprise_security", "standard", 1), ("healthcare", "budget_freeze", 1),
]


def play(name: str, seed: int, **env_kwargs: Any) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    env = salesgym.make("territory-v0", **env_kwargs)
    env.reset(seed=seed)
    policy = make_policy(name, seed=seed, hidden_truth=env.hidden_truth() if name in REFERENCE else None)
    actions = [step.action for step in rollout(env, policy, seed, max_steps=20_000)]
    return env.score(), env.event_log_hash(), actions


SUITE = suite("territory")
BASELINES, EXPLOITS, REFERENCE, POLICIES = SUITE.baselines, SUITE.exploits, SUITE.reference, SUITE.policies


def test_registry_matches_the_contract() -> None:
    assert BASELINES == ("random", "crm-stage", "expected-value", "earliest-deadline", "greedy-single")
    assert EXPLOITS == ("spam-all", "inflate-stages", "always-discount", "cycle-stages", "forger")
    assert REFERENCE == ("oracle",)
    assert set(POLICIES) == {*BASELINES, *EXPLOITS, *REFERENCE}
    with pytest.raises(ValueError, match="expected-value"):
        make_policy("nope", seed=0)


def test_stamps_parse_back_to_business_hours() -> None:
    from salesgym.envs.territory.calendar import stamp

    for t in (0.0, 2.0, 13.5, 47.25, 123.0):
        assert hours_of(stamp(t)) == pytest.approx(t, abs=0.01)


@pytest.mark.parametrize("name", ["expected-value", "random", "oracle", "forger"])
def test_same_seed_same_actions(name: str) -> None:
    a = play(name, 5, n_opportunities=4, horizon_days=30)
    b = play(name, 5, n_opportunities=4, horizon_days=30)
    assert a[1] == b[1] and a[2] == b[2]


@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_finishes_a_debug_territory(name: str) -> None:
    score, _, actions = play(name, 3, n_opportunities=4, horizon_days=30, family="healthcare")
    assert score["terminated"] and not score["truncated"], score["why"]
    assert score["why"] in ("horizon", "all opportunities terminal")
    if name != "random":
        assert score["invalid_actions"] <= 5, score["invalid_actions"]
    names = {t["function"]["name"] for t in salesgym.make("territory-debug-v0").tool_schemas()}
    assert {a["tool"] for a in actions} <= names


@pytest.fixture(scope="module")
def results() -> dict[str, list[dict[str, Any]]]:
    names = ["oracle", "expected-value", "random", *EXPLOITS]
    return {name: [play(name, seed, n_opportunities=10, horizon_days=30, family=f, template=t)[0]
                   for f, t, seed in TERRITORIES] for name in names}


def test_oracle_beats_expected_value_beats_random(results: dict[str, list[dict[str, Any]]]) -> None:
    primary = {k: mean(s["primary"] for s in v) for k, v in results.items()}
    assert primary["oracle"] > 1.1 * primary["expected-value"], primary
    assert primary["expected-value"] > 3 * primary["random"], primary


@pytest.mark.parametrize("probe", EXPLOITS)
def test_gaming_does_not_pay(results: dict[str, list[dict[str, Any]]], probe: str) -> None:
    ev = results["expected-value"]
    ours = results[probe]
    assert mean(s["primary"] for s in ours) < mean(s["primary"] for s in ev)
    assert mean(s["closed_value"] for s in ev) > 0
    assert mean(s["closed_value"] for s in ours) < mean(s["closed_value"] for s in ev)
    assert all(s["closed_value"] == 0 for s in ours)  # no probe gets a single deal signed
