"""The token prices of ``--price-in``, ``--price-out``, ``--price-cached`` and ``--prices FILE``."""

from __future__ import annotations

import json
from pathlib import Path

from salesgym.bench import analysis as an
from salesgym.bench.runner import BenchError

PRICE_KEYS = ("input", "output", "cached")


def load_prices(
    price_in: float | None, price_out: float | None, price_cached: float | None, path: Path | None
) -> an.Prices | None:
    """Prices from a file (``input``, ``output``, ``cached`` in $/Mtok) overridden by the flags; None if neither."""
    found: dict[str, float] = {}
    if path is not None:
        found = _price_file(path)
    for key, flag in zip(PRICE_KEYS, (price_in, price_out, price_cached), strict=True):
        if flag is not None:
            found[key] = flag
    if not found:
        return None
    return an.Prices(found.get("input", 0.0), found.get("output", 0.0), found.get("cached"))


def _price_file(path: Path) -> dict[str, float]:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except OSError as e:
        raise BenchError(f"{path}: cannot read the prices file: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise BenchError(f"{path}: the prices file is not valid {kind}: {e}") from None
    if not isinstance(data, dict):
        raise BenchError(f"{path}: the prices file must hold a table/object with {', '.join(PRICE_KEYS)}")
    unknown = sorted(set(data) - set(PRICE_KEYS))
    if unknown:
        raise BenchError(f"{path}: unknown price(s) {', '.join(unknown)}; known: {', '.join(PRICE_KEYS)} ($/Mtok)")
    out: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != value:
            raise BenchError(f"{path}: price {key} must be a number >= 0 ($ per million tokens), got {value!r}")
        out[key] = float(value)
    return out
