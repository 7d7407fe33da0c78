"""Quick policy comparison outside the benchmark runner: ``python benchmarks/compare_policies.py``.

Plays each policy on a grid of (family, template) x seeds and prints mean primary, its mean share of each
territory's ceiling (every viable deal closed, every other dropped), and closed value. The share shows where
the configuration leaves headroom: e.g. ``--policies expected-value,oracle --n 10 --horizon 90``.
For published numbers use ``salesgym bench``; this is the developer's loop.
"""

from __future__ import annotations

import argparse
from statistics import mean
from typing import Any

import salesgym
from salesgym.agents import make_policy, suite
from salesgym.agents.base import rollout

GRID = [
    ("midmarket_saas", "standard"),
    ("midmarket_saas", "entrenched_competitor"),
    ("enterprise_security", "standard"),
    ("healthcare", "budget_freeze"),
    ("public_sector", "standard"),
    ("midmarket_saas", "smb_velocity"),
]


def episode(name: str, seed: int, **env_kwargs: Any) -> dict[str, Any]:
    env = salesgym.make("territory-v0", **env_kwargs)
    env.reset(seed=seed)  # the oracle's hidden truth is read before its episode starts
    policy = make_policy(name, seed=seed, hidden_truth=env.hidden_truth() if name in suite().reference else None)
    for _ in rollout(env, policy, seed):
        pass
    score: dict[str, Any] = env.score()
    return score


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--policies", default=",".join(suite().policies))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--horizon", type=int, default=30)
    ap.add_argument("--default-territory", action="store_true", help="only make()'s default family and template")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    grid: list[tuple[str, str | None]] = [("midmarket_saas", None)] if a.default_territory else list(GRID)
    for name in a.policies.split(","):
        scores = [
            episode(name, s, n_opportunities=a.n, horizon_days=a.horizon, family=f, template=t)
            for f, t in grid
            for s in seeds
        ]
        print(
            f"{name:18s} primary {mean(x['primary'] for x in scores):8.1f}   "
            f"of ceiling {mean(x['primary'] / x['primary_ceiling'] for x in scores):5.2f}   "
            f"closed_value {mean(x['closed_value'] for x in scores):8.1f}   "
            f"closed {sum(x['closed_count'] for x in scores):3d}   "
            f"invalid {sum(x['invalid_actions'] for x in scores)}"
        )


if __name__ == "__main__":
    main()
