"""Hostile Python objects for bad-input tests: each raises from every method a parser could be tempted to
call (``repr``, ``str``, ``len``, iteration, lookups, comparisons, conversions). A step must refuse them as
data, never call them. The conformance kit, the fuzz tests and the fuzz campaign share these.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def _raise(*_: Any, **__: Any) -> Any:
    raise RuntimeError("boom")


class Boom:
    """Every method raises; hashable (once: the second ``hash`` raises too), so it can be a key."""

    def __init__(self) -> None:
        self.hashed = False

    __repr__ = __str__ = __format__ = __eq__ = __lt__ = __len__ = __iter__ = __getitem__ = __bool__ = _raise
    __index__ = __int__ = __float__ = __contains__ = __getattr__ = _raise

    def __hash__(self) -> int:
        if self.hashed:
            raise RuntimeError("boom")
        self.hashed = True
        return 7


class RaisingStr(str):
    __repr__ = __str__ = __len__ = __getitem__ = __iter__ = __eq__ = strip = encode = __format__ = _raise
    __hash__ = str.__hash__


class RaisingDict(dict):  # type: ignore[type-arg]
    keys = items = values = get = __getitem__ = __iter__ = __len__ = __contains__ = __repr__ = _raise


class RaisingMapping(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        raise RuntimeError("boom")


class RaisingList(list):  # type: ignore[type-arg]
    __iter__ = __len__ = __getitem__ = __repr__ = _raise


class RaisingInt(int):
    __repr__ = __str__ = __index__ = __float__ = __format__ = _raise


class CollidingKey(str):
    """Hashes like the text it was made from and raises when compared, so looking that text up in a dict
    holding this key raises (put it only in a dict without that key)."""

    def __hash__(self) -> int:
        return hash(str.__str__(self))

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("boom")
