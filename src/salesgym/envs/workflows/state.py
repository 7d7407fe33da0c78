"""The sandbox's live state: every replica's tables, folded from events.

A table is named ``<app>.<object>`` (``crm.contacts``, ``scheduler.scheduled_events``) and maps a record id to
an immutable-by-convention record (a plain dict that is replaced, never edited). Three generic events change
tables: ``record_created``, ``record_updated`` (the full new record and the changed fields), and
``record_deleted``; ``fact_revealed`` records what a simulated person said, ``message_received`` a scripted
message delivered to the agent's inbox mid-episode (``simulator.py``), ``user_acted`` a simulated person's
scripted action on the apps (``users.py``; its record changes are the three generic events, by that person),
``voice_spoke`` a reply of the optional language-model voice with its request hash (so a replay or a clone
reads it from the tape and never asks the model again), and ``task_finished`` the agent's declaration that it
is done. The state document (:func:`document`) is what the verifier's jq
assertions read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from salesgym.core.events import Event
from salesgym.core.state import State
from salesgym.envs.workflows.contract import APPS
from salesgym.envs.workflows.world import WorkflowsWorld

Record = dict[str, Any]


@dataclass
class WorkflowsState(State):
    FORKED = ("counters", "revealed", "inbox", "acted", "spoken")

    tables: dict[str, dict[str, Record]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)  # the next id number per table
    revealed: dict[str, str] = field(default_factory=dict)  # hidden facts the requester has told
    inbox: list[dict[str, Any]] = field(default_factory=list)  # scripted messages delivered (message_received)
    acted: list[str] = field(default_factory=list)  # simulated people's actions done (user_acted, users.py)
    spoken: dict[str, str] = field(default_factory=dict)  # the optional voice's replies by request hash (voice_spoke)
    finished: bool = False
    summary: str = ""

    def __post_init__(self) -> None:
        State.__init__(self)

    def fork(self) -> Self:
        twin = super().fork()
        twin.tables = {name: rows.copy() for name, rows in self.tables.items()}  # records are shared, never edited
        return twin

    def rows(self, table: str) -> dict[str, Record]:
        return self.tables.get(table, {})


def new_state(world: WorkflowsWorld) -> WorkflowsState:
    s = WorkflowsState()
    s.tables = {name: dict(rows) for name, rows in world.tables.items()}
    s.counters = dict(world.counters)
    return s


Fold = Callable[[WorkflowsState, Mapping[str, Any]], None]


def _created(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    table = p["table"]
    s.tables.setdefault(table, {})[p["id"]] = p["record"]
    if "counter" in p:
        s.counters[table] = p["counter"]


def _updated(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.tables[p["table"]][p["id"]] = p["record"]


def _deleted(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    del s.tables[p["table"]][p["id"]]


def _revealed(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.revealed[p["fact"]] = p["value"]


def _message(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.inbox.append(dict(p))


def _acted(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.acted.append(p["action"])


def _spoke(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.spoken[p["request"]] = p["reply"]


def _finished(s: WorkflowsState, p: Mapping[str, Any]) -> None:
    s.finished = True
    s.summary = p["summary"]


APPLY: dict[str, Fold] = {
    "record_created": _created,
    "record_updated": _updated,
    "record_deleted": _deleted,
    "fact_revealed": _revealed,
    "task_finished": _finished,
    "message_received": _message,
    "user_acted": _acted,
    "voice_spoke": _spoke,
}


def apply(s: WorkflowsState, world: WorkflowsWorld, event: Event) -> None:
    fn = APPLY.get(event.kind)
    if fn is not None:
        fn(s, event.payload)


def document(tables: Mapping[str, Mapping[str, Record]], known: Iterable[str] = ()) -> dict[str, Any]:
    """The state as the verifier reads it: ``{app: {object: [records in creation order]}}``; every ``known``
    table is there, empty when it has no record."""
    doc: dict[str, dict[str, list[Record]]] = {app: {} for app in APPS}
    for name in known:
        app, obj = name.split(".", 1)
        doc.setdefault(app, {})[obj] = []
    for name, rows in tables.items():
        app, obj = name.split(".", 1)
        doc.setdefault(app, {})[obj] = list(rows.values())
    return doc
