"""The generated sandbox: the replicas' starting tables and one task instance, shared by every clone.

The tables and the task's public part (prompt, apps, permissions, the requester's name) are what the agent may
learn; the instance's hidden part (parameters, expected values, assertions, invariants, forbidden actions, the
requester's hidden facts and persona, the reference solution) only the verifier, the operator and the
reference policy read. No tool handler reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from salesgym.core.clock import Scheduled

GENERATOR_VERSION = "workflows-gen/1"


@dataclass(frozen=True, slots=True)
class Fact:
    """Something the simulated requester knows and tells only when asked in words the rules recognise."""

    key: str
    keywords: tuple[str, ...]  # a question naming any of these (case-insensitive) gets the answer
    value: str
    param: str = ""  # the instance parameter it is (expected values depend on it)
    requires: tuple[Mapping[str, Any], ...] = ()  # conditions that must hold before it is told (simulator.py)
    hint: str = ""  # the answer while a condition does not hold
    holder: str = "requester"  # who knows it: the requester or a scripted message's sender
    uses: str | None = None  # jq over a write's arguments: it uses the fact (besides holding its value)


@dataclass(frozen=True, slots=True)
class TaskView:
    """The task as the agent is told it."""

    title: str
    prompt: str
    apps: tuple[str, ...]  # apps this task may use
    read_only: tuple[str, ...]  # of those, the apps it may read but not write
    requester: str  # who asked (the colleague ``ask_requester`` reaches)
    policies: tuple[str, ...] = ()  # the policy documents that apply (``read_policy``)

    def public(self) -> dict[str, Any]:
        return {"title": self.title, "prompt": self.prompt, "apps": list(self.apps),
                "read_only": list(self.read_only), "requester": self.requester,
                **({"policies": list(self.policies)} if self.policies else {})}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Secret:
    """The instance's hidden part (``tasks.model.Template.instantiate`` builds it)."""

    template: str
    tier: int
    params: Mapping[str, Any]
    steps: tuple[Mapping[str, Any], ...]  # resolved: {"step", "app", "objective", "actions", "assertions": [...]}
    changes: tuple[Mapping[str, Any], ...]  # resolved allowed changes (the invariant)
    forbidden: tuple[Mapping[str, Any], ...]  # resolved forbidden actions
    facts: tuple[Fact, ...]
    persona: str  # how the requester speaks (only an optional voice would read it)
    solution: tuple[Mapping[str, Any], ...]  # the reference solution: calls with markers, resolved as it plays
    rubrics: tuple[Mapping[str, Any], ...] = ()  # resolved message rubrics (rubric.py)
    turns: tuple[Mapping[str, Any], ...] = ()  # scripted mid-episode messages (simulator.py)
    replies: tuple[Mapping[str, Any], ...] = ()  # canned answers that tell nothing
    actions: tuple[Mapping[str, Any], ...] = ()  # resolved scripted actions of simulated people (users.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "tier": self.tier,
            "params": dict(self.params),
            "steps": [dict(s) for s in self.steps],
            "changes": [dict(c) for c in self.changes],
            "forbidden": [dict(f) for f in self.forbidden],
            "facts": [{"key": f.key, "keywords": list(f.keywords), "value": f.value, "param": f.param,
                       "requires": [dict(c) for c in f.requires], "hint": f.hint, "holder": f.holder,
                       "uses": f.uses}
                      for f in self.facts],
            "persona": self.persona,
            "solution": [dict(a) for a in self.solution],
            "rubrics": [dict(r) for r in self.rubrics],
            "turns": [dict(t) for t in self.turns],
            "replies": [dict(r) for r in self.replies],
            **({"actions": [dict(a) for a in self.actions]} if self.actions else {}),  # (older instances unchanged)
        }


@dataclass(frozen=True, slots=True)
class WorkflowsWorld:
    seed: int
    horizon: float  # minutes: the budget of tool calls, one minute each
    anchor: str  # the sandbox's clock at the start (ISO, UTC)
    tables: Mapping[str, Mapping[str, dict[str, Any]]]  # starting records, per table
    counters: Mapping[str, int]
    task: TaskView
    secret: Secret
    provenance: Mapping[str, str]  # "table/key" -> generator, seed and the part of the population it came from
    tape: tuple[Scheduled, ...] = ()
    pack: str = ""  # the template pack's directory ("": the package's own templates)

    @property
    def tier(self) -> int:
        return len(self.task.apps)

    def public(self) -> dict[str, Any]:
        return {"generator": GENERATOR_VERSION, "seed": self.seed, "anchor": self.anchor,
                "max_calls": int(self.horizon), "task": self.task.public()}  # fmt: skip

    def hidden(self) -> dict[str, Any]:
        return {**self.public(), "instance": self.secret.to_dict(),
                "tables": {name: list(rows.values()) for name, rows in self.tables.items()},
                "provenance": dict(self.provenance), **({"pack": self.pack} if self.pack else {})}  # fmt: skip
