"""The live state of a world: a fold over its events, forked cheaply for clones.

A family subclasses :class:`State`, keeps its mutable containers (dicts of *immutable* records) as
attributes and lists them in ``FORKED``; ``fork`` then copies those containers shallowly. Records are never
mutated in place, only replaced, so sharing them between a state and its fork is safe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from enum import Enum
from typing import Any, ClassVar, Generic, Self, TypeVar, overload

from salesgym.core.clock import Scheduler
from salesgym.core.events import Event, sha256_of

S_ = TypeVar("S_")
K_ = TypeVar("K_")
V_ = TypeVar("V_")
T_ = TypeVar("T_")
W_ = TypeVar("W_")
Fold = Callable[[S_, W_, Event, Mapping[str, Any]], None]


class Folds(Generic[S_, W_]):
    """A family's fold, event kind by kind: ``@folds("kind")`` registers the step that applies one kind of
    event to the state (given the world, the event and its payload); ``folds.apply`` is the family's
    ``apply``. Kinds without a step change nothing; ``kinds`` are the ones that have one."""

    def __init__(self) -> None:
        self.by_kind: dict[str, Fold[S_, W_]] = {}

    def __call__(self, kind: str) -> Callable[[Fold[S_, W_]], Fold[S_, W_]]:
        def register(fn: Fold[S_, W_]) -> Fold[S_, W_]:
            self.by_kind[kind] = fn
            return fn

        return register

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self.by_kind)

    def apply(self, state: S_, world: W_, event: Event) -> None:
        fn = self.by_kind.get(event.kind)
        if fn is not None:
            fn(state, world, event, event.payload)


R_ = TypeVar("R_", bound=tuple[Any, ...])
_FIELD_INDEX: dict[type, dict[str, int]] = {}  # a record type's field names and their positions


def replaced(record: R_, changes: Mapping[str, Any]) -> R_:
    """A named-tuple record with ``changes`` made: ``record._replace(**changes)`` at a fraction of its cost (the
    territory and the desk replace a record on most events). The record's values are copied into a list and each
    change written at its field's position: work in the number of changes (one to three), not of fields (a
    desk lead has thirteen). A name the record does not have is a ``ValueError``, as with ``_replace``."""
    cls = type(record)
    index = _FIELD_INDEX.get(cls)
    if index is None:
        index = _FIELD_INDEX[cls] = {name: i for i, name in enumerate(cls._fields)}  # type: ignore[attr-defined]
    values = list(record)
    try:
        for name, value in changes.items():
            values[index[name]] = value
    except KeyError:
        raise ValueError(f"{cls.__name__} has no field {sorted(changes.keys() - index.keys())}") from None
    return tuple.__new__(cls, values)


class ForkMap(MutableMapping[K_, V_]):
    """A dict whose :meth:`copy` shares its storage: entries live in ``BUCKETS`` small dicts by key hash, a copy
    takes the list of buckets (a few hundred bytes, whatever the size), and each side copies a bucket the first
    time it writes to it after a fork. So forking a state costs the same after ten or ten thousand steps, and a
    fork that changes a few entries holds only the buckets it changed. Iteration is in key order (bucket order
    would follow the process's string hashing, which differs between processes)."""

    __slots__ = ("_buckets", "_len", "_owned")
    BUCKETS = 32  # the mask below is BUCKETS - 1, written out: it is on every read
    _ALL = (1 << BUCKETS) - 1

    def __init__(self, items: Mapping[K_, V_] | None = None) -> None:
        self._buckets: list[dict[K_, V_]] = [{} for _ in range(self.BUCKETS)]
        self._owned = self._ALL  # bit i: bucket i is this map's own (not shared with a fork)
        self._len = 0
        for k, v in (items or {}).items():
            self[k] = v

    def __getitem__(self, key: K_) -> V_:
        return self._buckets[hash(key) & 31][key]

    @overload
    def get(self, key: K_, /) -> V_ | None: ...

    @overload
    def get(self, key: K_, default: V_ | T_, /) -> V_ | T_: ...

    def get(self, key: K_, default: Any = None) -> Any:
        return self._buckets[hash(key) & 31].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._buckets[hash(key) & 31]

    def values_of(self, keys: Iterable[K_], default: V_) -> tuple[V_, ...]:
        """The value of each key in ``keys`` (``default`` where absent): several reads for the cost of one call."""
        buckets = self._buckets
        return tuple([buckets[hash(key) & 31].get(key, default) for key in keys])

    def _own(self, key: object) -> dict[K_, V_]:
        i = hash(key) & 31
        if self._owned >> i & 1:
            return self._buckets[i]
        bucket = self._buckets[i] = dict(self._buckets[i])
        self._owned |= 1 << i
        return bucket

    def __setitem__(self, key: K_, value: V_) -> None:
        bucket = self._own(key)
        if key not in bucket:
            self._len += 1
        bucket[key] = value

    def add(self, key: K_, amount: Any, start: Any = 0) -> None:
        """``self[key] = self.get(key, start) + amount`` in one call (counters: draws per key, hours per week)."""
        bucket: dict[K_, Any] = self._own(key)
        if key in bucket:
            bucket[key] += amount
        else:
            self._len += 1
            bucket[key] = start + amount

    def __delitem__(self, key: K_) -> None:
        bucket = self._own(key)
        del bucket[key]
        self._len -= 1

    def __iter__(self) -> Iterator[K_]:
        return iter(sorted(k for b in self._buckets for k in b))  # type: ignore[type-var]

    def __len__(self) -> int:
        return self._len

    def copy(self) -> Self:
        """A fork: both maps share every bucket until one of them writes to it."""
        twin = object.__new__(type(self))
        twin._buckets = self._buckets.copy()
        twin._len = self._len
        twin._owned = self._owned = 0
        self._copy_extra(twin)
        return twin

    def _copy_extra(self, twin: Self) -> None:
        """Subclasses with more attributes set them on ``twin`` here."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"


class State:
    FORKED: ClassVar[tuple[str, ...]] = ()
    # attributes that only memoise a view of the others (rebuilt on demand, so neither part of equality
    # nor of the snapshot: a replayed state that has not built them yet is still equal)
    DERIVED: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        self.seq = 0  # number of events applied (operator side)
        self.public_seq = 0  # number of those the agent sees: the public state_version
        self.now = 0.0
        self.scheduler = Scheduler()
        self.tape_index = 0
        self.draws: ForkMap[tuple[str, ...], int] = ForkMap()  # grows with every stakeholder the episode touches
        self.invalid_actions = 0
        self.tool_calls = 0
        self.terminated = False
        self.truncated = False

    def fork(self) -> Self:
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)  # what copy.copy does, minus its generic protocol (most of a fork)
        twin.scheduler = self.scheduler.fork()
        twin.draws = self.draws.copy()
        for name in self.FORKED:
            setattr(twin, name, getattr(self, name).copy())
        return twin

    def snapshot(self) -> dict[str, Any]:
        """Every attribute as plain data, for equality checks (replay == live)."""
        return {k: to_plain(v) for k, v in sorted(vars(self).items()) if k not in self.DERIVED}

    def digest(self) -> str:
        return sha256_of(self.snapshot())


def to_plain(value: Any) -> Any:
    """Plain JSON-able data from records, containers, enums and the scheduler."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Scheduler):
        return [to_plain(item) for item in value.pending()]
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, Mapping):
        return {_key(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((to_plain(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def _key(k: Any) -> str:
    return "|".join(map(str, k)) if isinstance(k, tuple) else str(k)
