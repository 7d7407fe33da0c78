"""The primary metric's ceiling: what closing every viable deal and dropping every other one would score."""

from __future__ import annotations

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.envs.territory.reward import RewardConfig


@pytest.mark.parametrize(("policy", "n", "days", "seed"), [("oracle", 5, 90, 1), ("expected-value", 10, 30, 2)])
def test_no_policy_scores_above_the_ceiling(policy: str, n: int, days: int, seed: int) -> None:
    env = salesgym.make("territory-v0", n_opportunities=n, horizon_days=days)
    env.reset(seed=seed)
    truth = env.hidden_truth()
    for _ in rollout(env, make_policy(policy, seed, truth), seed):
        pass
    score = env.score()
    assert 0 < score["primary"] <= score["primary_ceiling"]
    # the ceiling from the hidden truth by hand: Closed on every viable deal, DQ credit on the rest
    cfg = RewardConfig()
    opps = truth["opportunities"].values()
    best = (cfg.weights[-1] - cfg.weights[0]) * sum(o["true_value"] for o in opps if o["viable"])
    best += cfg.dq_credit * sum(o["true_value"] for o in opps if not o["viable"])
    assert score["primary_ceiling"] == pytest.approx(100 * best / score["constrained_hours"], rel=1e-6)


def test_an_untouched_territory_scores_zero_under_a_positive_ceiling() -> None:
    env = salesgym.make("territory-v0", n_opportunities=4, horizon_days=30)
    env.reset(seed=3)
    score = env.score()  # nothing done yet
    assert score["primary"] == 0 and score["primary_ceiling"] > 0
