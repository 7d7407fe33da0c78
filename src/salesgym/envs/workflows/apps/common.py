"""What every replica shares: the tool context, record ids, the three writes (each one event), paging and
the sandbox clock. A handler checks everything first and raises ``ToolError`` before its first write; after
that it only writes (so a refused call changes nothing but the engine's one ``invalid_action``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from salesgym.core.env import Context
from salesgym.core.rng import uniform
from salesgym.core.tools import ToolError, ToolOutcome, quote
from salesgym.envs.workflows.contract import CALL_MINUTES, MAX_PAGE, sandbox_now_iso
from salesgym.envs.workflows.state import Record, WorkflowsState
from salesgym.envs.workflows.world import WorkflowsWorld

Ctx = Context[WorkflowsWorld, WorkflowsState]

# Record ids are keyed by the seed: the n-th record of a table gets the number ``(a*n + b) mod ID_SPACE`` with
# ``a`` and ``b`` drawn from the instance's keyed stream for that table, a permutation, so no two records share an
# id, no id, position or ordering repeats from one instance to the next (a call list memorised on one instance
# names nothing on another), and replay needs no state. Beyond the space (never in practice) numbers continue
# past it. Each table then writes its number its platform's way (the key in the table; the record's own id field
# may be an int).
ID_SPACE = 99_991  # a prime
ID_FORMATS: dict[str, Callable[[int], str]] = {
    "crm.contacts": lambda k: str(100_000 + k),
    "crm.companies": lambda k: str(5_000_000 + k),
    "crm.deals": lambda k: str(9_000_000 + k),
    "crm.notes": lambda k: str(30_000_000 + k),
    "crm.tasks": lambda k: str(40_000_000 + k),
    "crm.meetings": lambda k: str(50_000_000 + k),
    "crm.owners": lambda k: str(61_000_000 + k),
    "crm.pipelines": lambda k: str(7_400_000 + k),
    "crm.stages": lambda k: str(7_500_000 + k),  # a custom pipeline's stage ids (no table of their own)
    "sequencer.prospects": str,
    "sequencer.accounts": str,
    "sequencer.sequences": str,
    "sequencer.sequence_states": str,
    "sequencer.mailboxes": str,
    "sequencer.mailings": str,
    "sequencer.users": str,
    "sequencer.tasks": str,
    "scheduler.users": lambda k: f"U{k:05d}",
    "scheduler.event_types": lambda k: f"ET{k:05d}",
    "scheduler.scheduled_events": lambda k: f"EV{k:05d}",
    "scheduler.invitees": lambda k: f"IN{k:05d}",
    "scheduler.busy_times": lambda k: f"BT{k:05d}",
    "scheduler.scheduling_links": lambda k: f"SL{k:05d}",
    "scheduler.no_shows": lambda k: f"NS{k:05d}",
    "prospecting.leads": lambda k: f"L{k:05d}",
    "prospecting.accounts": lambda k: f"A{k:05d}",
    "prospecting.lists": lambda k: f"LL{k:05d}",
    "prospecting.inmails": lambda k: f"IM{k:05d}",
}


@lru_cache(maxsize=4096)
def _permutation(seed: int, table: str) -> tuple[int, int]:
    a = 1 + int(uniform(seed, "ids", table, "a") * (ID_SPACE - 1))
    return a, int(uniform(seed, "ids", table, "b") * ID_SPACE)


def record_number(seed: int, table: str, n: int) -> int:
    """The keyed number of the ``n``-th record (``n >= 1``) of ``table`` under ``seed``."""
    if n >= ID_SPACE:
        return ID_SPACE + n
    a, b = _permutation(seed, table)
    return (a * n + b) % ID_SPACE


def format_id(table: str, n: int, seed: int) -> str:
    """The id of the ``n``-th record of ``table`` in the instance of ``seed``."""
    k = record_number(seed, table, n)
    fmt = ID_FORMATS.get(table)
    return fmt(k) if fmt is not None else f"{k}"


def id_order(key: str) -> tuple[int, str]:
    """How a platform lists records: by id (numbers by value)."""
    return len(key), key


def now_iso(ctx: Ctx) -> str:
    return sandbox_now_iso(ctx.world.anchor, ctx.state.now)


def done(output: Mapping[str, Any]) -> ToolOutcome:
    return ToolOutcome(output, CALL_MINUTES)


def rows(ctx: Ctx, table: str) -> dict[str, Record]:
    return ctx.state.rows(table)


def get(ctx: Ctx, table: str, key: str, what: str) -> Record:
    record = ctx.state.rows(table).get(key)
    if record is None:
        raise ToolError(f"404 Not Found: no {what} with id {quote(key)}")
    return record


def next_key(ctx: Ctx, table: str) -> tuple[str, int]:
    """The id of the table's next record and its counter (the record's number in creation order)."""
    n = ctx.state.counters.get(table, 0) + 1
    return format_id(table, n, ctx.world.seed), n


def create(ctx: Ctx, table: str, key: str, record: Record, counter: int | None = None, actor: str = "agent") -> Record:
    """``actor``: who made the change, the agent's call or a simulated person's scripted action (``users.py``)."""
    payload: dict[str, Any] = {"table": table, "id": key, "record": record}
    if counter is not None:
        payload["counter"] = counter
    ctx.emit("record_created", actor, payload)
    return record


def update(ctx: Ctx, table: str, key: str, record: Record, changed: Sequence[str], actor: str = "agent") -> Record:
    ctx.emit("record_updated", actor, {"table": table, "id": key, "record": record, "changed": list(changed)})
    return record


def delete(ctx: Ctx, table: str, key: str) -> None:
    ctx.emit("record_deleted", "agent", {"table": table, "id": key})


def page(items: Sequence[Any], offset: int, limit: int) -> list[Any]:
    return list(items[offset : offset + min(limit, MAX_PAGE)])


def unique(values: Iterable[str], what: str) -> list[str]:
    seen: list[str] = []
    for v in values:
        if v in seen:
            raise ToolError(f"400 Bad Request: {what} {quote(v)} is listed twice")
        seen.append(v)
    return seen
