"""Statistics: bootstrap intervals, paired differences, normalised score."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salesgym.bench import stats


def test_summary_of_known_sample() -> None:
    s = stats.summarise([1.0, 2.0, 3.0, 4.0, 10.0])
    assert s.n == 5
    assert s.mean == pytest.approx(4.0)
    assert s.median == pytest.approx(3.0)
    assert s.ci_low < s.mean < s.ci_high
    assert s.ci_low >= 1.0 and s.ci_high <= 10.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-1e3, max_value=1e3, allow_nan=False), min_size=1, max_size=40))
def test_ci_contains_the_mean(values: list[float]) -> None:
    low, high = stats.bootstrap_ci(values, n_resamples=500)
    m = float(np.mean(values))
    assert low - 1e-9 <= m <= high + 1e-9


def test_bootstrap_is_deterministic_with_its_seed() -> None:
    values = list(np.random.default_rng(1).normal(size=30))
    assert stats.bootstrap_ci(values) == stats.bootstrap_ci(values)
    assert stats.bootstrap_ci(values, seed=1) != stats.bootstrap_ci(values, seed=2)


def test_ci_narrows_with_more_territories() -> None:
    rng = np.random.default_rng(0)
    small = rng.normal(5, 2, size=8).tolist()
    large = rng.normal(5, 2, size=400).tolist()
    w_small = np.subtract(*reversed(stats.bootstrap_ci(small)))
    w_large = np.subtract(*reversed(stats.bootstrap_ci(large)))
    assert w_large < w_small


def test_constant_and_single_samples_have_degenerate_intervals() -> None:
    assert stats.bootstrap_ci([3.0]) == (3.0, 3.0)
    assert stats.bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)


@pytest.mark.parametrize("bad", [[], [float("nan")], [1.0, float("inf")]])
def test_bad_samples_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        stats.summarise(bad)


def test_paired_difference_sign_and_counts() -> None:
    a = {"t1": 5.0, "t2": 6.0, "t3": 7.0, "t4": 8.0}
    b = {"t1": 4.0, "t2": 5.5, "t3": 7.0, "t4": 6.0, "extra": 100.0}
    d = stats.paired_difference(a, b)
    assert d.n == 4  # only shared territories count
    assert d.mean == pytest.approx(0.875)
    assert (d.wins, d.losses, d.ties) == (3, 0, 1)
    assert d.ci_low >= 0.0
    r = stats.paired_difference(b, a)
    assert r.mean == pytest.approx(-d.mean)
    assert r.ci_high <= 0.0


def test_pairing_removes_territory_variance() -> None:
    rng = np.random.default_rng(3)
    richness = rng.normal(0, 10, size=30)
    a = {f"t{i}": float(r + 1.0 + rng.normal(0, 0.1)) for i, r in enumerate(richness)}
    b = {f"t{i}": float(r) for i, r in enumerate(richness)}
    d = stats.paired_difference(a, b)
    assert d.significant and d.ci_low > 0.5
    assert not stats.summarise(list(a.values())).ci_low > stats.summarise(list(b.values())).ci_high


def test_paired_difference_needs_shared_territories() -> None:
    with pytest.raises(ValueError, match="share no territory"):
        stats.paired_difference({"a": 1.0}, {"b": 2.0})


def test_normalised_score() -> None:
    assert stats.normalised_score(5.0, 1.0, 9.0) == pytest.approx(0.5)
    assert stats.normalised_score(1.0, 1.0, 9.0) == 0.0
    assert stats.normalised_score(9.0, 1.0, 9.0) == 1.0
    assert stats.normalised_score(0.0, 1.0, 9.0) == pytest.approx(-0.125)
    assert stats.normalised_score(3.0, 2.0, 2.0) is None
    assert stats.normalised_score(3.0, 2.0, math.nan) is None


def test_a_paired_probe_passes_only_when_it_never_helps() -> None:
    from salesgym.bench.analysis import paired_probe_passes

    def diff(values: list[float]) -> stats.PairedDifference:
        probe = {str(i): v for i, v in enumerate(values)}
        return stats.paired_difference(probe, dict.fromkeys(probe, 0.0))

    assert paired_probe_passes(diff([0.0] * 10), 100.0)
    assert paired_probe_passes(diff([-3.0, -1.0, 0.0, 0.0]), 100.0)
    assert paired_probe_passes(diff([2.0, -1.5, 0.0, 0.0]), 100.0)  # noise: CI includes 0, gain under 0.5%
    assert not paired_probe_passes(diff([3.0, 2.0, 4.0, 3.0]), 100.0)  # significantly better
    assert not paired_probe_passes(diff([30.0, -20.0, 0.0, 0.0]), 100.0)  # not significant, but a real share
