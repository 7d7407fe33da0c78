"""A run: one task instance of the workflows family behind the web apps, keyed by a run id.

Every page of every app reads through the replicas' own read tools and every form writes through their write
tools, on the run's one :class:`~salesgym.envs.workflows.env.WorkflowsEnv`: a form submitted is a tool call
(``env.step``), with the same handlers, the same events and the same refusals, so replay, clones, the invariant,
forbidden actions and the verdict do not depend on whether the agent clicked or called. A page that reads runs
its read tools on a clone of the environment (a read emits nothing and its clone is dropped): pages cost no
call of the budget and move no clock; the clock moves one minute per form submitted, as one tool call.

Runs live in a :class:`Runs` registry (in memory, per process); the pages find theirs by the ``sgrun`` cookie.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from salesgym.webapps.variants import DEFAULT_VARIANT, Variant

COOKIE = "sgrun"
MAX_RUNS = 64
RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Refused(Exception):
    """A tool call the sandbox refused: ``reason`` is its error, ``status`` the HTTP status it names."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        found = re.match(r"^(\d{3}) ", reason)
        self.status = int(found.group(1)) if found else 400


@dataclass
class Call:
    """A tool call a page made on the agent's behalf: what ``info["app_calls"]`` reports for a browser step."""

    app: str
    tool: str
    args: dict[str, Any]
    status: str
    output: dict[str, Any]
    reward: float = 0.0
    event_ids: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        return {"app": self.app, "tool": self.tool, "args": self.args, "status": self.status, "output": self.output}


@dataclass
class Run:
    """One task instance (an environment already reset) and what its pages keep between requests."""

    run_id: str
    env: Any  # a WorkflowsEnv after reset()
    variant: Variant = DEFAULT_VARIANT
    calls: list[Call] = field(default_factory=list)  # every tool call a form made, in order
    chat: list[dict[str, str]] = field(default_factory=list)  # questions to the requester and replies, answered
    flash: dict[str, str] = field(default_factory=dict)  # per app: the message the next page shows once
    origins: dict[str, str] = field(default_factory=dict)  # where each app is, when not the server's default
    lock: threading.RLock = field(default_factory=threading.RLock)

    # -- what the pages may know ------------------------------------------------------------------------------
    @property
    def task(self) -> dict[str, Any]:
        return dict(self.env.observe()["data"]["task"])

    def observation(self) -> dict[str, Any]:
        """The tool path's public observation data (task, clock, told, inbox, episode with the verdict at the end)."""
        with self.lock:
            return dict(self.env.observe()["data"])

    @property
    def over(self) -> bool:
        episode = self.env.observe()["data"]["episode"]
        return bool(episode["terminated"] or episode["truncated"])

    def uses(self, app: str) -> bool:
        return app in self.task["apps"]

    def read_only(self, app: str) -> bool:
        return app in self.task["read_only"]

    # -- reads and writes ----------------------------------------------------------------------------------------
    def read(self, tool: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A read tool's output, from a clone (nothing recorded, no clock moved); raises :class:`Refused`."""
        with self.lock:
            twin = self.env.clone()
            info = twin.step({"tool": tool, "args": dict(args or {})})[4]
        result = info["tool_result"]
        if result["status"] != "ok":
            raise Refused(str(result["output"].get("error", "refused")))
        return dict(result["output"])

    def write(self, app: str, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """One tool call on the run's environment (one step: its events, its minute, its refusal); returns the
        tool result's output, or raises :class:`Refused` with the sandbox's reason (recorded as an invalid action,
        as for a tool call)."""
        with self.lock:
            _, reward, _, _, info = self.env.step({"tool": tool, "args": dict(args)})
            result = info["tool_result"]
            self.calls.append(Call(app, tool, dict(args), result["status"], dict(result["output"]), float(reward),
                                   tuple(result["event_ids"])))
        if result["status"] != "ok":
            raise Refused(str(result["output"].get("error", "refused")))
        return dict(result["output"])

    def say(self, app: str, text: str) -> None:
        self.flash[app] = text

    def take_flash(self, app: str) -> str:
        return self.flash.pop(app, "")


class Runs:
    """The runs of this process, by id (the oldest is dropped beyond ``max_runs``)."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._lock = threading.Lock()
        self.max_runs = max_runs

    def open(self, env: Any, variant: Variant = DEFAULT_VARIANT, run_id: str | None = None,
             origins: Mapping[str, str] | None = None) -> Run:
        """Register a run for ``env`` (already reset) under ``run_id`` (default: a fresh random id); ``origins``:
        where its pages link each app (default: the server's)."""
        run_id = run_id or "run-" + secrets.token_hex(8)
        if not RUN_ID.match(run_id):
            raise ValueError("a run id is 1-64 letters, digits, '-' or '_'")
        run = Run(run_id, env, variant, origins=dict(origins or {}))
        with self._lock:
            if run_id in self._runs:
                raise ValueError(f"run {run_id!r} is already open")
            self._runs[run_id] = run
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
        return run

    def get(self, run_id: str | None) -> Run | None:
        if not run_id:
            return None
        with self._lock:
            return self._runs.get(run_id)

    def close(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)

    def __len__(self) -> int:
        return len(self._runs)
