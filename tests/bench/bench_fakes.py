"""A test fixture: a deterministic stand-in episode and synthetic stores, for the runner's and the store's
plumbing only (resume, force, export, listing). Its numbers mean nothing: anything about scores, rankings or
reports runs real episodes (the debug split takes seconds).

``fake_episode`` has the signature of :func:`salesgym.bench.runner.run_episode`; its metrics have the keys of
``env.score()`` and depend only on (policy, territory seed), like a real episode.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from salesgym.bench.runner import EpisodeSpec
from salesgym.bench.splits import Territory
from salesgym.bench.store import EpisodeRecord

STRENGTH: dict[str, float] = {
    "oracle": 12.0,
    "expected-value": 6.0,
    "crm-stage": 4.5,
    "earliest-deadline": 4.0,
    "greedy-single": 3.0,
    "random": 1.0,
    "spam-all": 0.6,
    "inflate-stages": 0.2,
    "always-discount": 2.0,
    "cycle-stages": 0.3,
    "forger": 0.1,
}
MILESTONES = ("identified", "engaged", "qualified", "validated", "mobilised", "commercial", "commit", "closed")


def fake_metrics(policy: str, seed: int, n_opportunities: int = 10) -> dict[str, Any]:
    """Plausible ``env.score()``-shaped metrics, a pure function of (policy, seed)."""
    rng = np.random.default_rng([seed, zlib.crc32(policy.encode())])
    strength = STRENGTH.get(policy, 1.0)
    territory_richness = 0.5 + (seed % 7) / 7.0  # shared by every policy on this territory: pairing helps
    primary = strength * territory_richness * (0.8 + 0.4 * float(rng.random()))
    advances: dict[str, int] = {}
    remaining = n_opportunities
    for i, m in enumerate(MILESTONES):
        advances[m] = remaining
        keep = min(0.95, 0.25 + strength / 14.0) if i else 1.0
        remaining = int(rng.binomial(remaining, keep))
    closed = advances["closed"]
    closed_value = float(closed * 50_000 * (0.7 if policy == "always-discount" else 1.0))
    violations = {"claim_without_evidence": int(rng.integers(3, 9))} if policy in ("forger", "inflate-stages") else {}
    return {
        "primary": round(primary, 6),
        "closed_value": closed_value,
        "win_rate": closed / n_opportunities,
        "advances": advances,
        "violations": violations,
        "invalid_actions": int(rng.integers(0, 3)) if policy == "random" else 0,
        "hours_used": 200.0,
        "utilisation": min(1.0, 0.3 + strength / 15.0),
        "disqualification_accuracy": min(1.0, strength / 12.0),
        "cycle_time_days": 20.0 - strength,
        "terminated": True,
        "truncated": policy == "spam-all" and seed % 2 == 0,
    }


def fake_episode(spec: EpisodeSpec) -> EpisodeRecord:
    """Stand-in for :func:`~salesgym.bench.runner.run_episode` that needs no environment."""
    t = spec.territory
    metrics = fake_metrics(spec.policy, t.seed, t.n_opportunities)
    steps = 50 + t.seed % 13
    return EpisodeRecord(spec.policy, t.id, t.seed, "ok", metrics, 0.01, steps, steps - 1)


def synthetic_territories(n: int, prefix: str = "syn") -> list[Territory]:
    return [Territory(f"{prefix}-{i:03d}", "fam", "tpl", 100 + i, 10, 30) for i in range(n)]


def synthetic_episodes(policies: Sequence[str], territories: Sequence[Territory]) -> list[EpisodeRecord]:
    return [fake_episode(EpisodeSpec(p, t)) for p in policies for t in territories]
