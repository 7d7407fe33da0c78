"""Keyed random streams: every draw is a pure function of (seed, purpose key, draw number).

There is no global generator. ``uniform(seed, "buyer", sid, "reply", n)`` gives the n-th reply draw of one
stakeholder, so acting on one deal never shifts the dice of another, clones need no generator state, and
replay needs none at all (outcomes are written into events).
"""

from __future__ import annotations

import hashlib
import random

_SCALE = float(1 << 53)


def _key_bytes(seed: int, key: tuple[object, ...]) -> bytes:
    return ("\x1f".join(map(str, (seed, *key)))).encode()


def stream_seed(seed: int, *key: object) -> int:
    """A 64-bit seed for the stream named by ``key`` under ``seed``."""
    return int.from_bytes(hashlib.blake2b(_key_bytes(seed, key), digest_size=8).digest(), "big")


def uniform(seed: int, *key: object) -> float:
    """A uniform number in [0, 1) determined only by ``seed`` and ``key``."""
    return (stream_seed(seed, *key) >> 11) / _SCALE


def stream(seed: int, *key: object) -> random.Random:
    """A sequential generator for one purpose (used by world generation, where draws are ordered)."""
    return random.Random(stream_seed(seed, *key))
