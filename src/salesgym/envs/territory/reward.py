"""Reward: potential-based shaping over verified milestones, terminal economics, anti-gaming penalties.

Φ(s) = (Σ_o w(milestone_o)·attainable_value_o + dq_credit·value of correctly dropped deals) / norm, where
attainable value is zero for deals that cannot close and norm is the territory's public pipeline value (the
midpoints of the public value bands), so returns are comparable across territory sizes. Per step
r = γ^Δdays·Φ(s') − Φ(s) − penalties/norm; terminal economics are paid when a deal reaches its terminal
state (signature): closed value × (1 − discount − cost of delivery)/norm. Φ only moves on verified
milestones, which only move on buyer evidence, so nothing the seller writes can earn reward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from salesgym.core.clock import HOURS_PER_DAY
from salesgym.core.events import Event
from salesgym.envs.territory.state import TerritoryState
from salesgym.envs.territory.world import TerritoryWorld

MILESTONE_WEIGHTS = (0.0, 0.05, 0.15, 0.30, 0.45, 0.60, 0.80, 1.0)


@dataclass(frozen=True, slots=True)
class RewardConfig:
    weights: tuple[float, ...] = MILESTONE_WEIGHTS
    gamma_per_day: float = 0.995  # time pressure: value reached later is worth less
    dq_credit: float = 0.10  # share of value credited for dropping a deal that cannot close
    terminal_economics: float = 1.0  # weight of closed value x margin at the end
    delivery_cost: float = 0.2  # share of list price that is cost, so margin = 1 - discount - cost
    penalty_scale: float = 1.0

    def __post_init__(self) -> None:
        if len(self.weights) != 8 or any(b < a for a, b in zip(self.weights, self.weights[1:], strict=False)):
            raise ValueError("weights must be 8 non-decreasing numbers, one per milestone")
        if not 0 < self.gamma_per_day <= 1:
            raise ValueError("gamma_per_day must be in (0, 1]")

    @staticmethod
    def for_ablations(ablations: Sequence[str]) -> RewardConfig:
        cfg = RewardConfig()
        if "no_throughput" in ablations:
            cfg = RewardConfig(gamma_per_day=1.0)
        if "no_terminal_economics" in ablations:
            cfg = RewardConfig(gamma_per_day=cfg.gamma_per_day, terminal_economics=0.0)
        return cfg


def potential(cfg: RewardConfig, state: TerritoryState, world: TerritoryWorld) -> float:
    total = sum(cfg.weights[m] * v for m, v in state.milestone_value.items())
    return (total + cfg.dq_credit * state.dq_value) / world.pipeline_value


def step_reward(
    cfg: RewardConfig,
    world: TerritoryWorld,
    phi_before: float,
    phi_after: float,
    dt_hours: float,
    new: Sequence[Event],
) -> float:
    scale = world.pipeline_value
    reward: float = cfg.gamma_per_day ** (dt_hours / HOURS_PER_DAY) * phi_after - phi_before
    for e in new:
        if e.kind == "violation_recorded":
            reward -= cfg.penalty_scale * float(e.payload["penalty"]) / scale
        elif e.kind == "deal_closed" and cfg.terminal_economics:
            value = world.opportunities[e.payload["opportunity_id"]].true_value
            margin = max(0.0, 1.0 - e.payload["discount"] - cfg.delivery_cost)
            reward += cfg.terminal_economics * value * margin / scale
    return reward
