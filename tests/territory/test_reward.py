"""The reward agrees with the score (docs/architecture.md, promise 8): the return is the public estimate of the
primary score, it never pays for delay or for ending early, and it reads no hidden value."""

from __future__ import annotations

from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.envs.territory.reward import RewardConfig, potential
from salesgym.envs.territory.verifier import MILESTONE_WEIGHTS, PENALTY, constrained_hours

TERRITORIES = [({"family": "midmarket_saas", "template": "standard"}, 1),
               ({"family": "healthcare", "template": "budget_freeze"}, 2),
               ({"family": "enterprise_security", "template": "incumbent_displacement"}, 3)]


def _episode(policy: str, seed: int, **kwargs: Any) -> tuple[Any, list[float]]:
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, **kwargs)
    env.reset(seed=seed)
    truth = env.hidden_truth() if policy == "oracle" else None
    rewards = [s.reward for s in rollout(env, make_policy(policy, seed, truth), seed)]
    return env, rewards


def _public_estimate(env: Any) -> float:
    """The primary score's formula over public values: each deal's band midpoint at its verified milestone
    (Commit and Closed at the agreed price), credit for drops on the buyer's reason, minus penalties."""
    s, w = env._state, env._world
    total = 0.0
    for oid, opp in w.opportunities.items():
        total += MILESTONE_WEIGHTS[s.deals[oid].milestone] * opp.shown_value * s.deals[oid].price
    total += RewardConfig().dq_credit * s.dq_shown
    for e in env.event_log():
        if e["kind"] == "violation_recorded":
            total -= PENALTY[e["payload"]["kind"]] * w.opportunities[e["payload"]["opportunity_id"]].shown_value
    return 100.0 * total / constrained_hours(w)


@pytest.mark.parametrize(("kwargs", "seed"), TERRITORIES)
@pytest.mark.parametrize("policy", ["expected-value", "random", "always-discount", "oracle"])
def test_the_return_is_the_public_estimate_of_the_score(policy: str, kwargs: dict[str, Any], seed: int) -> None:
    """With the default (undiscounted) reward the return telescopes to a function of the final state alone:
    when a milestone was reached cannot change it, so nothing pays for delay."""
    env, rewards = _episode(policy, seed, **kwargs)
    assert sum(rewards) == pytest.approx(_public_estimate(env), abs=1e-6)
    if policy in ("expected-value", "oracle"):  # an honest seller's return is positive
        assert sum(rewards) > 0
    if policy == "always-discount":  # it only breaks rules: its return is its penalties
        assert sum(rewards) < 0


def _truncate(env: Any) -> list[float]:
    rewards = []
    while True:
        _, reward, _, truncated, _ = env.step({"tool": "end_now", "args": {}})
        rewards.append(reward)
        if truncated:
            return rewards


@pytest.mark.parametrize("ablation", [None, "time_discount"])
def test_ending_early_on_purpose_never_raises_the_return(ablation: str | None) -> None:
    """Truncating an honest episode at any point (by invalid calls up to the ceiling) returns no more than
    playing it out, with or without a time discount (an early end is charged as if it ran to the horizon)."""
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, ablation=ablation)
    env.reset(seed=4)
    policy = make_policy("expected-value", 4)
    steps = list(rollout(env, policy, 4))
    full = sum(s.reward for s in steps)
    replay = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, ablation=ablation)
    replay.reset(seed=4)
    so_far = 0.0
    for i, step in enumerate(steps[:-1]):
        _, reward, *_ = replay.step(step.action)
        so_far += reward
        if i % 40 == 0:
            truncated = so_far + sum(_truncate(replay.clone()))
            assert truncated <= full + 1e-9, (i, truncated, full)


def test_with_a_time_discount_the_same_progress_earlier_is_worth_at_least_as_much() -> None:
    """The discounted shaping telescopes to γ^horizon · Φ(final): the Φ part ignores when milestones came, and
    what the discount touches is paid earlier, not later."""
    cfg = RewardConfig.for_ablations(["time_discount"])
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, ablation="time_discount")
    env.reset(seed=2)
    steps = list(rollout(env, make_policy("expected-value", 2), 2))
    phi_final = potential(cfg, env._state, env._world)
    days = env._world.horizon / 8
    assert env.score()["violations"] == {}  # an honest seller: the return is the discounted final potential
    assert sum(s.reward for s in steps) == pytest.approx(cfg.gamma_per_day**days * phi_final, rel=1e-9)


def test_rewards_follow_the_agents_own_view_not_the_worlds() -> None:
    """The step reward moves only with what the seller is shown: a step whose observation shows no new
    verified milestone, no drop and no violation pays exactly zero."""
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30)
    env.reset(seed=5)
    for step in rollout(env, make_policy("random", 5), 5):
        inbox = env.observe()["data"]["inbox"]
        told = any(i["kind"] in ("milestone", "violation") for i in inbox) or step.action["tool"] == "disqualify"
        if not told:
            assert step.reward == 0.0, step.action
