"""``rounded(x, n)``: the same float as the built-in ``round(x, n)``, without its decimal-string round trip.

``round(x, n)`` on a float finds the correctly rounded decimal through a digit string and reads it back, which
costs several times a multiply and a divide. For most values the scaled product ``x * 10**n`` lies far enough
from a half that its rounding direction is certain; then the exact integer over ``10**n`` is the nearest float
to that decimal, which is what ``round`` returns. Values near a half, zeros, huge or odd inputs take ``round``.
"""

from __future__ import annotations

from math import floor

_SCALES = tuple(float(10**n) for n in range(16))  # exact powers of ten (10**22 is the last exact one)
_LIMIT = float(2**40)  # |x * 10**n| below this: the product's rounding error is at most 2**-13
_MARGIN = 1e-3  # how far from a half the scaled value must be (far above that error) for the fast path


def rounded(x: float, n: int) -> float:
    """``round(x, n)``: fast for a float ``x`` and ``0 <= n <= 15``; anything else (an int stays an int) is
    passed to ``round``."""
    if type(x) is float and 0 <= n <= 15:
        scale = _SCALES[n]
        y = x * scale
        if -_LIMIT < y < _LIMIT:
            whole = floor(y)
            frac = y - whole  # exact: y and its floor share an exponent range
            if frac < 0.5 - _MARGIN:
                if whole:
                    return whole / scale
            elif frac > 0.5 + _MARGIN:
                whole += 1
                if whole:
                    return whole / scale
    return round(x, n)  # near a half, a zero (keeps -0.0's sign), NaN, infinities, huge values
