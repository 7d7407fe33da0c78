"""The noise-floor arithmetic (salesgym.bench.power): the territories a paired bootstrap needs to separate two
policies, by simulation and by the normal approximation, and how trials of a stochastic policy shrink it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from salesgym.bench import power


def _diffs(sd: float, n: int = 200, seed: int = 1) -> list[float]:
    return list(np.random.default_rng(seed).normal(0.0, sd, n))


def test_normal_approximation_matches_the_textbook_formula() -> None:
    # (1.96 + 0.84)^2 * 0.1^2 / 0.02^2 = 196.2 -> 197
    assert power.normal_territories(0.1, 0.02) == 197
    assert power.normal_territories(0.0, 0.02) == 2  # never fewer than two


def test_bootstrap_count_follows_the_spread_and_agrees_with_the_normal_one() -> None:
    small, large = power.territories_needed(_diffs(0.03), 0.02), power.territories_needed(_diffs(0.08), 0.02)
    assert small.bootstrap is not None and large.bootstrap is not None
    assert small.bootstrap < large.bootstrap  # noisier pairs need more territories
    for needed in (small, large):  # the simulated bootstrap lands near the formula (grid steps of ~25%)
        assert 0.5 * needed.normal <= needed.bootstrap <= 2.0 * needed.normal, needed


def test_at_the_needed_count_the_difference_is_separated_and_well_below_it_it_is_not() -> None:
    diffs = _diffs(0.05)
    needed = power.territories_needed(diffs, 0.02)
    assert needed.bootstrap is not None
    assert power.separated_share(diffs, 0.02, needed.bootstrap) >= 0.8
    assert power.separated_share(diffs, 0.02, max(2, needed.bootstrap // 4)) < 0.8
    assert power.separated_share(diffs, -0.02, needed.bootstrap) >= 0.8  # either sign


def test_trials_average_away_only_the_trial_noise() -> None:
    assert power.with_trials(0.05, 0.0, 1) == pytest.approx(0.05)
    assert power.with_trials(0.05, 0.04, 4) == pytest.approx(math.sqrt(0.05**2 + 0.04**2 / 4))
    assert power.with_trials(0.05, 0.04, 4, stochastic_sides=2) > power.with_trials(0.05, 0.04, 4)
    spread = power.trial_spread([[1.0, 3.0], [10.0, 12.0], [5.0]])  # the single-trial territory is skipped
    assert spread == pytest.approx(math.sqrt(2.0))
    with pytest.raises(ValueError):
        power.trial_spread([[1.0], [2.0]])
    with pytest.raises(ValueError):
        power.separated_share([0.1], 0.02, 10)
