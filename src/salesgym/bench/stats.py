"""Statistics of a benchmark run: pure functions over per-territory scores.

Uncertainty comes from the *territories* (the unit a split samples), never from steps: the bootstrap
resamples territories with replacement, with a fixed seed so a report is reproducible to the last digit.
Comparisons between two policies are *paired* on the territories both ran, which removes the variance
that comes from some territories simply being richer than others.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SEED = 20240601
N_RESAMPLES = 10_000
CONFIDENCE = 0.95
_CHUNK = 1_000  # resamples drawn per batch, so memory stays flat for large splits


@dataclass(frozen=True, slots=True)
class Summary:
    """Location and 95% percentile-bootstrap interval of one sample of per-territory values."""

    n: int
    mean: float
    median: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """``a - b`` over the territories both policies ran, with its bootstrap interval."""

    n: int
    mean: float
    median: float
    ci_low: float
    ci_high: float
    wins: int  # territories where a > b
    losses: int  # territories where a < b
    ties: int

    @property
    def significant(self) -> bool:
        """True when the interval excludes zero."""
        return self.ci_low > 0.0 or self.ci_high < 0.0


def _as_array(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"expected a flat sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("cannot summarise an empty sample")
    if not np.all(np.isfinite(arr)):
        raise ValueError("sample contains NaN or infinite values")
    return arr


def mean(values: Sequence[float]) -> float:
    return float(np.mean(_as_array(values)))


def median(values: Sequence[float]) -> float:
    return float(np.median(_as_array(values)))


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, resampling the given values with replacement."""
    arr = _as_array(values)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    n = arr.size
    if n == 1 or np.all(arr == arr[0]):
        return float(arr[0]), float(arr[0])
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, _CHUNK):
        stop = min(start + _CHUNK, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = arr[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def summarise(values: Sequence[float], *, seed: int = BOOTSTRAP_SEED, n_resamples: int = N_RESAMPLES) -> Summary:
    """Mean, median and bootstrap interval of ``values`` (one value per territory)."""
    arr = _as_array(values)
    low, high = bootstrap_ci(arr.tolist(), seed=seed, n_resamples=n_resamples)
    return Summary(n=int(arr.size), mean=float(arr.mean()), median=float(np.median(arr)), ci_low=low, ci_high=high)


def paired_difference(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    seed: int = BOOTSTRAP_SEED,
    n_resamples: int = N_RESAMPLES,
) -> PairedDifference:
    """Compare two policies territory by territory (keys are territory ids); only shared keys count."""
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("the two policies share no territory")
    diffs = [float(a[k]) - float(b[k]) for k in shared]
    s = summarise(diffs, seed=seed, n_resamples=n_resamples)
    wins = sum(d > 0 for d in diffs)
    losses = sum(d < 0 for d in diffs)
    return PairedDifference(
        n=s.n,
        mean=s.mean,
        median=s.median,
        ci_low=s.ci_low,
        ci_high=s.ci_high,
        wins=wins,
        losses=losses,
        ties=len(diffs) - wins - losses,
    )


def normalised_score(policy: float, floor: float, top: float) -> float | None:
    """``(policy - floor) / (top - floor)``: 0 is the floor (doing nothing or random), 1 the top (the oracle);
    None when undefined."""
    span = top - floor
    if not math.isfinite(span) or abs(span) < 1e-12:
        return None
    return (policy - floor) / span
