"""The per-step reward: the agent-side estimate of the primary score, paid as it changes (docs/reward.md).

The primary score (``verifier.py``) counts each deal's verified milestone weighted by its *true* value (zero if
the deal cannot close), Commit and Closed at the agreed price, credit for dropping a deal the buyer said cannot
close, minus penalties. The reward is the same sum with every hidden number replaced by what the agent sees:
a deal's public value estimate (the midpoint of its value band) instead of its true value and viability.
So a step's reward is a function of public views, evidence the agent has been shown and its own actions;
two worlds that differ only in hidden values pay the same rewards for the same calls.

Φ(s) = scale · (Σ_o w(milestone_o) · v̂_o · (1 − discount_o) + dq_credit · Σ_{drops backed by the buyer's
reason} v̂_o · (1 − t_drop / horizon)),  scale = 100 / constrained seller hours (the primary's).

Per step r = γ^{t₀} · (γ^{t₁ − t₀} · Φ(s') − Φ(s)) − penalties, with times in business days, t₀ the clock
when the step began and t₁ its end, or the horizon when the episode ended in this step. The return every
adapter uses is the plain sum of step rewards. It telescopes to γ^{horizon} · Φ(final) − Φ(initial) − penalties
(Φ(initial) = 0): with the default γ = 1 it *is* the public estimate of the primary score, so it never pays for
delay or for ending early (an episode that ends early is charged as if it ran to the horizon), and it ranks
policies as the score does. With γ < 1 (the ``time_discount`` training ablation) only the horizon's discount
multiplies Φ(final), so shaping still does not pay for delay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from salesgym.core.events import Event
from salesgym.envs.territory.calendar import HOURS_PER_DAY
from salesgym.envs.territory.state import TerritoryState
from salesgym.envs.territory.verifier import DQ_CREDIT, MILESTONE_WEIGHTS, PENALTY, constrained_hours
from salesgym.envs.territory.world import TerritoryWorld

# Ablations that change only the reward: no fixed policy reads a reward, so they are for training runs
# (trainer adapters), never for ``salesgym bench`` (which refuses them).
TRAINING_ABLATIONS = {
    "sparse_reward": "only closed deals pay: every milestone weight but Closed's is 0 (the score is unchanged)",
    "time_discount": "the return is discounted by 0.995 per business day (the score is unchanged)",
    "no_throughput_reward": (
        "moving a deal through the pipeline pays nothing: Engaged to Commercial weigh 0, Commit and Closed keep "
        "their weights (the score is unchanged)"
    ),
    "no_terminal_economics": (
        "agreeing terms and signing pay nothing beyond Commercial: Commit and Closed weigh what Commercial does "
        "(the score is unchanged)"
    ),
}
_COMMERCIAL = 5  # index of Commercial in the milestone weights; Commit and Closed follow it


@dataclass(frozen=True, slots=True)
class RewardConfig:
    weights: tuple[float, ...] = MILESTONE_WEIGHTS
    dq_credit: float = DQ_CREDIT  # share of a deal's value credited for dropping it on the buyer's reason
    gamma_per_day: float = 1.0  # 1: the return is the score's estimate; < 1 prefers earlier progress
    penalty_scale: float = 1.0

    def __post_init__(self) -> None:
        if len(self.weights) != 8 or any(b < a for a, b in zip(self.weights, self.weights[1:], strict=False)):
            raise ValueError("weights must be 8 non-decreasing numbers, one per milestone")
        if self.weights[0] != 0.0:
            raise ValueError("the weight of Identified must be 0, so the return starts from 0")
        if not 0 < self.gamma_per_day <= 1:
            raise ValueError("gamma_per_day must be in (0, 1]")

    @staticmethod
    def for_ablations(ablations: Sequence[str]) -> RewardConfig:
        weights: tuple[float, ...] = MILESTONE_WEIGHTS
        if "sparse_reward" in ablations:
            weights = (0.0,) * 7 + (1.0,)
        if "no_throughput_reward" in ablations:
            weights = (0.0,) * (_COMMERCIAL + 1) + weights[_COMMERCIAL + 1 :]
        if "no_terminal_economics" in ablations:
            weights = weights[: _COMMERCIAL + 1] + (weights[_COMMERCIAL],) * (len(weights) - _COMMERCIAL - 1)
        if not any(weights):
            raise ValueError(f"the ablations {sorted(ablations)} leave no milestone that pays")
        return RewardConfig(weights=weights, gamma_per_day=0.995 if "time_discount" in ablations else 1.0)


def potential(cfg: RewardConfig, state: TerritoryState, world: TerritoryWorld) -> float:
    """Φ in primary-score units, from public values only (``state.shown_value``: v̂ · price per milestone).
    Remembered in ``state.phi`` until a fold moves the values: most steps move none."""
    memo = state.phi
    if memo is not None and memo[0] is cfg and memo[1] is world:
        return memo[2]
    weights = cfg.weights
    total = sum(weights[m] * v for m, v in state.shown_value.items())
    phi = (total + cfg.dq_credit * state.dq_shown) * 100.0 / constrained_hours(world)
    state.phi = (cfg, world, phi)
    return phi


def step_reward(
    cfg: RewardConfig,
    state: TerritoryState,
    world: TerritoryWorld,
    phi_before: float,
    phi_after: float,
    started: float,
    new: Sequence[Event],
) -> float:
    ended = state.terminated or state.truncated
    finished = world.horizon if ended else state.now  # an early end is charged as if it ran to the horizon
    gamma = cfg.gamma_per_day
    if gamma == 1.0:
        reward = phi_after - phi_before
    else:
        days_before, days_in = started / HOURS_PER_DAY, (finished - started) / HOURS_PER_DAY
        reward = gamma**days_before * (gamma**days_in * phi_after - phi_before)
    for e in new:
        if e.kind == "violation_recorded":  # penalties are never discounted: delaying a violation must not pay
            shown = world.opportunities[e.payload["opportunity_id"]].shown_value
            reward -= cfg.penalty_scale * PENALTY[e.payload["kind"]] * shown * 100.0 / constrained_hours(world)
    return reward
