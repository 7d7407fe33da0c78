"""``core.numbers.rounded`` is the built-in ``round(x, n)``, bit for bit, on every kind of value."""

from __future__ import annotations

import math
import random
import struct

from salesgym.core.numbers import rounded


def _same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)  # -0.0 and 0.0 differ, NaN equals NaN


def _check(x: float) -> None:
    for n in range(-2, 18):
        assert _same(rounded(x, n), round(x, n)), (x, n, rounded(x, n), round(x, n))


def test_random_values_match_round() -> None:
    rng = random.Random(20261203)
    for _ in range(20_000):
        _check(rng.uniform(-2000.0, 2000.0))
        _check(rng.random())
        _check(rng.uniform(-1.0, 1.0) * 10.0 ** rng.randint(-20, 20))


def test_halves_and_near_halves_match_round() -> None:
    for n in range(0, 16):
        for k in range(-300, 300):
            half = (k + 0.5) / 10**n
            for x in (half, math.nextafter(half, math.inf), math.nextafter(half, -math.inf)):
                _check(x)
            _check(k / 10**n + 0.4999 / 10**n)
            _check(k / 10**n + 0.5001 / 10**n)
    for x in (0.125, 0.375, 2.675, 1.005, 0.045, 1.0005, 2.5, 3.5, -2.5, -0.5, 0.5, 1234.5675):
        _check(x)


def test_zeros_huge_small_and_odd_values_match_round() -> None:
    for x in (0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e-3, -1e-3, 0.0049, -0.0049, 1e15, -1e15, 2.0**40, 2.0**52 + 1,
              1e300, -1e300, 1.7976931348623157e308, math.inf, -math.inf, math.nan):  # fmt: skip
        _check(x)
    for e in range(-30, 30):
        _check(1.2345678901234567 * 10.0**e)
        _check(-9.87654321 * 10.0**e)


def test_other_numbers_are_left_to_round() -> None:
    for x in (0, 7, -3, 2**70, True):
        for n in (0, 2, 4):
            assert rounded(x, n) == round(x, n) and type(rounded(x, n)) is type(round(x, n))
