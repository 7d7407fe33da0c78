"""What every replica shares: the tool context, record ids, the three writes (each one event), paging and
the sandbox clock. A handler checks everything first and raises ``ToolError`` before its first write; after
that it only writes (so a refused call changes nothing but the engine's one ``invalid_action``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from salesgym.core.env import Context
from salesgym.core.tools import ToolError, ToolOutcome, quote
from salesgym.envs.workflows.contract import CALL_MINUTES, MAX_PAGE, sandbox_now_iso
from salesgym.envs.workflows.state import Record, WorkflowsState
from salesgym.envs.workflows.world import WorkflowsWorld

Ctx = Context[WorkflowsWorld, WorkflowsState]

# how each table names its n-th record (the key in the table; the record's own id field may be an int)
ID_FORMATS: dict[str, Callable[[int], str]] = {
    "crm.contacts": lambda n: str(100 + n),
    "crm.companies": lambda n: str(5000 + n),
    "crm.deals": lambda n: str(9000 + n),
    "crm.notes": lambda n: str(30000 + n),
    "crm.tasks": lambda n: str(40000 + n),
    "crm.meetings": lambda n: str(50000 + n),
    "crm.owners": lambda n: str(61000000 + n),
    "sequencer.prospects": str,
    "sequencer.accounts": str,
    "sequencer.sequences": str,
    "sequencer.sequence_states": str,
    "sequencer.mailboxes": str,
    "sequencer.users": str,
    "sequencer.tasks": str,
    "scheduler.event_types": lambda n: f"ET{n:04d}",
    "scheduler.scheduled_events": lambda n: f"EV{n:05d}",
    "scheduler.invitees": lambda n: f"IN{n:05d}",
    "scheduler.busy_times": lambda n: f"BT{n:04d}",
    "scheduler.scheduling_links": lambda n: f"SL{n:04d}",
    "scheduler.no_shows": lambda n: f"NS{n:04d}",
    "prospecting.leads": lambda n: f"L{n:04d}",
    "prospecting.accounts": lambda n: f"A{n:03d}",
    "prospecting.lists": lambda n: f"LL{n:03d}",
    "prospecting.inmails": lambda n: f"IM{n:04d}",
}


def format_id(table: str, n: int) -> str:
    fmt = ID_FORMATS.get(table)
    return fmt(n) if fmt is not None else f"{n}"


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
    n = ctx.state.counters.get(table, 0) + 1
    return format_id(table, n), n


def create(ctx: Ctx, table: str, key: str, record: Record, counter: int | None = None) -> Record:
    payload: dict[str, Any] = {"table": table, "id": key, "record": record}
    if counter is not None:
        payload["counter"] = counter
    ctx.emit("record_created", "agent", payload)
    return record


def update(ctx: Ctx, table: str, key: str, record: Record, changed: Sequence[str]) -> Record:
    ctx.emit("record_updated", "agent", {"table": table, "id": key, "record": record, "changed": list(changed)})
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
