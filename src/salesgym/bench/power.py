"""Discriminative power: how many territories (and trials) a paired comparison needs to tell two policies apart.

The benchmark compares two policies on the same territories: the per-territory difference of their normalised
scores, its mean, and a 95% percentile bootstrap interval over territories (``stats.paired_difference``). Two
policies are *separated* when that interval excludes 0. Given the per-territory differences observed between
real policies (their spread is what makes a comparison noisy), :func:`territories_needed` finds the smallest
number of territories for which a true difference of ``delta`` is separated in at least ``power`` of repeated
draws, by simulation: territories are drawn from the observed differences re-centred on ``delta``, and the
same bootstrap interval is computed on each draw. :func:`with_trials` adds the trial-to-trial noise of a
stochastic policy (averaging ``k`` trials per territory divides its variance by ``k``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z_975, Z_80 = 1.959964, 0.841621  # two-sided 95% interval; 80% power

GRID = (4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024)


@dataclass(frozen=True, slots=True)
class Needed:
    """Territories needed to separate ``delta`` at ``power``: by the simulated bootstrap (None past the grid's
    end) and by the normal approximation (``ceil((z_.975 + z_power)^2 sd^2 / delta^2)``), with the spread used."""

    delta: float
    sd: float
    bootstrap: int | None
    normal: int


def normal_territories(sd: float, delta: float, power_z: float = Z_80) -> int:
    """The normal approximation: n = (z_.975 + z_power)^2 sd^2 / delta^2, at least 2."""
    return max(2, math.ceil(((Z_975 + power_z) * sd / delta) ** 2))


def separated_share(
    diffs: Sequence[float], delta: float, n: int, *, sims: int = 400, resamples: int = 400, seed: int = 20240601
) -> float:
    """Share of ``sims`` draws of ``n`` territories (from ``diffs`` re-centred on ``delta``) whose 95% percentile
    bootstrap interval of the mean excludes 0 (on the side of ``delta``)."""
    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        raise ValueError("need at least two observed differences")
    shifted = d - d.mean() + delta
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        draw = rng.choice(shifted, size=n, replace=True)
        means = draw[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        hits += bool(low > 0) if delta > 0 else bool(high < 0)
    return hits / sims


def territories_needed(
    diffs: Sequence[float], delta: float = 0.02, power: float = 0.8, *, grid: Sequence[int] = GRID, seed: int = 20240601
) -> Needed:
    """The smallest ``n`` of ``grid`` whose :func:`separated_share` reaches ``power`` (None if none does), and the
    normal approximation for the same spread."""
    sd = float(np.std(np.asarray(diffs, dtype=float), ddof=1))
    normal = normal_territories(sd, abs(delta))
    for n in grid:
        if separated_share(diffs, delta, n, seed=seed) >= power:
            return Needed(delta, sd, n, normal)
    return Needed(delta, sd, None, normal)


def with_trials(sd_between: float, sd_trial: float, trials: int, stochastic_sides: int = 1) -> float:
    """The spread of per-territory differences when ``stochastic_sides`` of the two policies (0, 1 or 2) are
    stochastic with trial-to-trial spread ``sd_trial`` and each territory's score is the mean of ``trials`` trials."""
    return math.sqrt(sd_between**2 + stochastic_sides * sd_trial**2 / trials)


def trial_spread(per_territory_trials: Sequence[Sequence[float]]) -> float:
    """Pooled within-territory standard deviation of a stochastic policy's scores across its trials."""
    groups = [np.asarray(g, dtype=float) for g in per_territory_trials if len(g) > 1]
    if not groups:
        raise ValueError("need territories with at least two trials")
    ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    dof = sum(len(g) - 1 for g in groups)
    return math.sqrt(ss / dof)
