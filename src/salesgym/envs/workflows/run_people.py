"""The simulated people of a verifier run (``remote.py``; ``users.py`` for who acts and when).

In a run the agent's apps store their tables and the harness records the agent's calls; nobody else writes to
the run. So the service plays the people itself, as the engine does in process: recording a successful call
does the actions that call triggers (``after`` tools, ``when`` over the stored state) and, the call having
moved the run's clock one minute, the actions due by then (``at``). Their changes go into the run's stored
tables, and the answer to the calls says what each person did, so the app reads its tables back before the
next call (an app that writes back its old tables undoes the person's change: a change of the agent's).

Who changed what is kept on an event tape like the episode's: every record change an app stores is the
agent's (the difference from what the run held before, whatever the record says), every change a person
makes is theirs. No request can write as a person, since a stored table is diffed and attributed to the agent
whatever it holds. The verdict reads the tape with the in-process function (``verifier.by_users``), so it is
the in-process verdict when the app stores its tables after each call and reads them back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from salesgym.core.env import Context
from salesgym.core.events import EventLog
from salesgym.core.evidence import Verifier
from salesgym.envs.workflows import users
from salesgym.envs.workflows.apps.common import format_id
from salesgym.envs.workflows.contract import CALL_MINUTES
from salesgym.envs.workflows.env import WorkflowsRules
from salesgym.envs.workflows.state import Record, WorkflowsState, new_state
from salesgym.envs.workflows.verifier import by_users
from salesgym.envs.workflows.world import WorkflowsWorld


class RunPeople:
    """One run's people, its clock (one minute per successful call, as in process) and its event tape. Its
    state's tables are the run's stored tables (the same dict)."""

    def __init__(self, world: WorkflowsWorld) -> None:
        self.world = world
        self.state: WorkflowsState = new_state(world)
        self.log = EventLog()
        self.ctx: Context[WorkflowsWorld, WorkflowsState] = Context(
            world, self.state, WorkflowsRules(), self.log, Verifier(b"", world.seed, frozenset()), [], "run")
        self.clock = 0.0

    def store(self, given: Mapping[str, Mapping[str, Record]]) -> None:
        """Put the agent's changes on the tape: ``given`` (checked tables) against what the run holds."""
        for table, rows in given.items():
            held = self.state.rows(table)
            for key in held.keys() - rows.keys():
                self.ctx.emit("record_deleted", "agent", {"table": table, "id": key})
            for key, record in rows.items():
                if key not in held:
                    counter = self.state.counters.get(table, 0) + 1  # the engine's count: one past the last
                    self.ctx.emit("record_created", "agent", {"table": table, "id": key, "record": record,
                                                             "counter": counter})  # fmt: skip
                elif held[key] != record:
                    self.ctx.emit("record_updated", "agent", {"table": table, "id": key, "record": record,
                                                             "changed": []})  # fmt: skip

    def _fresh_ids(self) -> None:
        """Move each table's counter past ids an app has taken, so a person's new record never takes one."""
        for table, rows in self.state.tables.items():
            n = self.state.counters.get(table, 0)
            while format_id(table, n + 1, self.world.seed) in rows:
                n += 1
            if n:
                self.state.counters[table] = n

    def called(self, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Play the people for recorded calls (``remote.checked_calls``): what each of them did, in order."""
        start = len(self.log)
        self._fresh_ids()
        for call in calls:
            if call["refused"]:
                continue  # a refused call takes no time and triggers no one
            self.state.now = max(self.state.now, self.clock)
            self._act(users.after_call, call["tool"], call["args"])
            self._advance(min(self.clock + CALL_MINUTES, self.world.horizon))
        return [{"kind": e.kind, **e.payload} for e in self.log.since(start)
                if e.kind in ("user_acted", "message_received")]  # fmt: skip

    def _advance(self, target: float) -> None:
        tape = self.world.tape
        while self.state.tape_index < len(tape) and tape[self.state.tape_index].due <= target:
            item = tape[self.state.tape_index]
            self.state.tape_index += 1
            self.state.now = max(self.state.now, item.due)
            self._act(users.fire, item)
        self.clock = target

    def _act(self, how: Callable[..., None], *args: Any) -> None:
        """Let the people act; on records an app stored in another shape than its platform's (which the engine
        never holds) a person finds nothing to act on, as a verb does, and the action stays pending."""
        with contextlib.suppress(LookupError, TypeError, ValueError, AttributeError):
            how(self.ctx, *args)

    def made_by_users(self) -> dict[tuple[str, str], Any]:
        return by_users(self.world.tables, self.log)


def people(world: WorkflowsWorld) -> RunPeople | None:
    """A run's people, or None when its task has no one who acts (then the run keeps no tape)."""
    return RunPeople(world) if world.secret.actions else None
