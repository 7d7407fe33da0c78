"""The live state of a world: a fold over its events, forked cheaply for clones.

A family subclasses :class:`State`, keeps its mutable containers (dicts of *immutable* records) as
attributes and lists them in ``FORKED``; ``fork`` then copies those containers shallowly. Records are never
mutated in place, only replaced, so sharing them between a state and its fork is safe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, ClassVar, Generic, Self, TypeVar

from salesgym.core.clock import Scheduler
from salesgym.core.events import Event, sha256_of

S_ = TypeVar("S_")
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
        self.draws: dict[tuple[str, ...], int] = {}
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
