"""Immutable events, an append-only log that refuses gaps, and canonical hashing.

Every change of a world is an :class:`Event`. Views are folds over the log, so the log is the
single source of truth: replaying it into a freshly generated world reproduces the live state.

The log is persistent: full chunks are frozen tuples shared between clones, only the short open
tail is copied, so ``EventLog.fork()`` costs O(length / CHUNK) pointer copies, which is flat in
practice (a 10 000-event episode forks 40 pointers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any, NamedTuple

JSONValue = Any  # JSON-serialisable data; kept loose on purpose, checked by canonical_json

CHUNK = 256


def event_id(seq: int) -> str:
    """The public id of the event with sequence number ``seq``."""
    return "ev" + str(seq).zfill(6)  # as f"ev{seq:06d}", at half the cost (several ids per step)


class Event(NamedTuple):
    """One change of the world, named in the past tense (``kind``) and never edited.

    A named tuple: immutable, and several times cheaper to create than a frozen dataclass, which matters
    because every step emits a handful of them."""

    seq: int
    time: float
    kind: str
    actor: str
    payload: Mapping[str, JSONValue] = {}  # shared default, never mutated: emit builds a fresh dict per event
    provenance: str = ""

    @property
    def id(self) -> str:
        return event_id(self.seq)

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "id": self.id,
            "seq": self.seq,
            "time": self.time,
            "kind": self.kind,
            "actor": self.actor,
            "payload": _plain(self.payload),
            "provenance": self.provenance,
        }


class SequenceGap(ValueError):
    """Raised when an event does not directly follow the last one in the log."""


class EventLog:
    """Append-only sequence of events; ``fork`` shares every frozen chunk with the original."""

    __slots__ = ("_chunks", "_n", "_tail")

    def __init__(self) -> None:
        self._chunks: list[tuple[Event, ...]] = []
        self._tail: list[Event] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, event: Event) -> None:
        if event.seq != self._n:
            raise SequenceGap(f"event seq {event.seq} does not follow {self._n - 1}")
        self._tail.append(event)
        self._n += 1
        if len(self._tail) == CHUNK:
            self._chunks.append(tuple(self._tail))
            self._tail = []

    def __iter__(self) -> Iterator[Event]:
        return chain.from_iterable((*self._chunks, self._tail.copy()))

    def __getitem__(self, index: int) -> Event:
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        full = len(self._chunks) * CHUNK
        if index >= full:
            return self._tail[index - full]
        return self._chunks[index // CHUNK][index % CHUNK]

    def since(self, seq: int) -> list[Event]:
        """Events with ``seq >= seq`` (cheap when they are all in the tail)."""
        first, offset = divmod(max(seq, 0), CHUNK)
        if first == len(self._chunks):  # a step's events, all in the open tail: the slice alone, no second list
            return self._tail[offset:]
        out: list[Event] = []
        for chunk in self._chunks[first:]:  # usually none: a step's events are in the open tail
            out.extend(chunk[offset:])
            offset = 0
        out.extend(self._tail[offset:])
        return out

    def fork(self) -> EventLog:
        twin = EventLog.__new__(EventLog)
        twin._chunks = self._chunks.copy()
        twin._tail = self._tail.copy()
        twin._n = self._n
        return twin

    def to_list(self) -> list[dict[str, JSONValue]]:
        return [e.to_dict() for e in self]

    def digest(self) -> str:
        return log_hash(self.to_list())


def _plain(value: JSONValue) -> JSONValue:
    """Tuples and mappings in payloads become lists and dicts, so the result is plain JSON data."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _normalise(value: JSONValue) -> JSONValue:
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        # 12 significant digits: stable across platforms and arithmetic orderings we control
        rounded = float(f"{value:.12g}")
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    return value


def canonical_json(value: JSONValue) -> str:
    """Sorted keys, no whitespace, normalised numbers: equal data gives equal text."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def strings_in(node: Any) -> Iterator[str]:
    """Every string in JSON-like data (mappings' values, lists and tuples), depth first."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for v in node.values():
            yield from strings_in(v)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from strings_in(v)


def sha256_of(value: JSONValue) -> str:
    # surrogatepass: agent-supplied text may hold lone surrogates; hashing must never fail on it
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def log_hash(events: list[dict[str, JSONValue]]) -> str:
    return sha256_of(events)
