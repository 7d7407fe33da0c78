"""What every command of the command line shares: the bounds and finiteness of numeric options, and one-line
messages.

Typer checks ``min``/``max`` while it parses, but a float range lets ``nan`` through (every comparison with it is
false) and ``inf`` (``1e309`` parses as infinity) past a one-sided bound: each float option therefore also takes
``callback=finite``. Every int option states both bounds (``tests/test_cli_surface.py`` checks it for every
command, from the CLI's own tree), so a seed, a count or a port out of range is one ``error:`` line naming the
option, before any work starts.
"""

from __future__ import annotations

import math

import typer

SEED_MAX = 2**63 - 1  # environments take seeds in [0, 2**63) (the run store keeps them in a signed 64-bit INTEGER)
PORT_MAX = 65_535
COUNT_MAX = 1_000_000  # territories, episodes, trials: far above any real run, far below an overflow
STEPS_MAX = 10_000_000


def finite(value: float | None) -> float | None:
    """Typer callback of a float option: ``nan``, ``inf`` and ``-inf`` (also spelled ``1e309``) are refused."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, got {value}")
    return value


def one_line(message: str) -> str:
    """``message`` on one printable line (SQLite and OS messages may quote raw file content)."""
    return " ".join("".join(c if c.isprintable() else " " for c in message).split())
