"""The scheduled-event queue of semi-Markov time: happenings due at a simulated time, fired in order.

Time is a float whose unit the family chooses (the territory counts business hours, a desk counts
minutes); the engine only orders, fires and rounds it. Calendars belong to families.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any, NamedTuple


class Scheduled(NamedTuple):
    """A happening due at ``due``; ``item_id`` breaks ties in scheduling order (so ``data`` is never
    compared: items order as plain tuples, in C)."""

    due: float
    item_id: int
    kind: str
    data: Mapping[str, Any]


class Scheduler:
    """A min-heap of :class:`Scheduled` items; forks copy only the pending items."""

    __slots__ = ("_heap",)

    def __init__(self) -> None:
        self._heap: list[Scheduled] = []

    def push(self, item: Scheduled) -> None:
        heapq.heappush(self._heap, item)

    def peek(self) -> Scheduled | None:
        return self._heap[0] if self._heap else None

    def pop(self, item_id: int) -> Scheduled:
        head = heapq.heappop(self._heap)
        if head.item_id != item_id:
            raise ValueError(f"scheduled item {item_id} is not due next (head is {head.item_id})")
        return head

    def __len__(self) -> int:
        return len(self._heap)

    def pending(self) -> list[Scheduled]:
        return sorted(self._heap)

    def fork(self) -> Scheduler:
        twin = Scheduler.__new__(Scheduler)
        twin._heap = self._heap.copy()
        return twin
