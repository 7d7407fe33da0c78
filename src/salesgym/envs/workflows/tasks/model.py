"""The blueprint format. A :class:`Template` is a parameterised blueprint; ``instantiate(template, seed)`` sets its
scene in the seeded population (its fixture) and resolves it into a world with one task instance.

A blueprint has a goal (the business outcome), a prompt (what the agent is told), ordered steps (app,
objective, the actions expected, and the assertions that check the step), the apps and the read-only apps,
the changes the task may make (the invariant), forbidden actions, and the hidden facts the requester holds.
Values that depend on the instance are written as markers, plain JSON data:

- ``P("name")`` -> ``{"$p": "name"}``: the instance parameter ``name``;
- ``F("text {name}")`` -> ``{"$f": ...}``: text formatted with the parameters;
- ``OUT(i, ".jq")`` -> ``{"$out": [i, ".jq"]}`` (reference solutions only): the first value of a jq program over
  the output of the solution's ``i``-th call.

jq expressions in assertions and forbidden rules read the parameters as ``$name`` variables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.rng import Dice, stream
from salesgym.envs.workflows import jqlib, policies, users
from salesgym.envs.workflows.apps.common import ID_FORMATS, id_order
from salesgym.envs.workflows.contract import APPS
from salesgym.envs.workflows.population import Builder, populate
from salesgym.envs.workflows.world import Fact, Secret, TaskView, WorkflowsWorld

CONDITIONS = ("told", "called", "says", "holds")  # see simulator.py
OPERATORS = ("equals", "not_equals", "contains", "count", "exists", "gt", "gte", "lt", "lte", "matches", "in")
CHANGE_KINDS = ("create", "update", "delete")
ORDERED = frozenset(ID_FORMATS) - {"crm.pipelines"}  # listed by id (the default pipeline stays first)


def P(name: str) -> dict[str, str]:
    return {"$p": name}


def F(text: str) -> dict[str, str]:
    return {"$f": text}


def OUT(index: int, expr: str) -> dict[str, Any]:
    return {"$out": [index, expr]}


@dataclass(frozen=True)
class A:
    """An assertion: ``expr`` (jq) over the end state, compared with ``expected`` by ``op`` (see ``verifier.py``)."""

    name: str
    expr: str
    op: str = "equals"
    expected: Any = True

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"assertion {self.name!r}: unknown operator {self.op!r}; use one of {OPERATORS}")


@dataclass(frozen=True)
class Step:
    app: str
    objective: str
    actions: tuple[str, ...]  # the tools this step is expected to call
    assertions: tuple[A, ...]


@dataclass(frozen=True)
class Change:
    """A change the task may make: ``kinds`` of records in ``table``; with ``ids``, only those records; with
    ``fields``, an update may change only those properties/attributes; with ``most``, at most that many records
    (an int, or a marker of a list parameter: its length), so a duplicate or an extra record is a violation."""

    table: str
    kinds: tuple[str, ...] = ("create",)
    ids: Any = None
    fields: tuple[str, ...] | None = None
    most: Any = None


@dataclass(frozen=True)
class Forbidden:
    """An action never to take: a successful call of one of ``tools`` (with ``args``, only calls whose
    arguments make that jq program output ``true``); with ``attempted``, a refused attempt counts too."""

    name: str
    tools: tuple[str, ...]
    args: str | None = None
    attempted: bool = False


class Needs:
    """Conditions a fact may need before it is told (plain JSON data; ``simulator.py`` evaluates them)."""

    @staticmethod
    def told(fact: str) -> dict[str, Any]:
        """Another fact has been told first."""
        return {"told": fact}

    @staticmethod
    def called(tool: str, args: str | None = None) -> dict[str, Any]:
        """The agent has made a successful call of ``tool`` (with ``args``: one whose arguments make that jq
        program output ``true``), e.g. it has proposed or booked a time."""
        return {"called": {"tool": tool, "args": args}}

    @staticmethod
    def says(pattern: str) -> dict[str, Any]:
        """The question itself matches ``pattern`` (a case-insensitive regular expression)."""
        return {"says": pattern}

    @staticmethod
    def holds(expr: str) -> dict[str, Any]:
        """A jq program over the live state document outputs ``true``."""
        return {"holds": expr}


@dataclass(frozen=True)
class FactSpec:
    """What a simulated person knows (``simulator.py``): told when a question names one of ``keywords`` and
    every condition in ``requires`` holds (else ``hint`` is the answer); ``holder`` is who knows it: the
    requester, or the sender of a scripted message (a :class:`Turn`'s ``sender_key``).

    A write that uses the fact before it was told is a violation (``verifier.untold``): one whose arguments
    hold the value (a number digit for digit, text as a substring) or, with ``uses`` (jq over the write's
    arguments, the parameters as variables), make that program output ``true``: how a fact shows when the
    write carries what it points to (the record it names, the time it gives) rather than its words."""

    key: str
    keywords: tuple[str, ...]
    param: str  # the instance parameter holding the value
    requires: tuple[Mapping[str, Any], ...] = ()  # simulator.told / called / says / holds
    hint: str = ""
    holder: str = "requester"
    uses: str | None = None


@dataclass(frozen=True)
class Reply:
    """A canned answer that reveals nothing: a question naming one of ``keywords`` (and no fact's) gets
    ``text`` (formatted with the parameters), e.g. "which figure do you mean?"."""

    keywords: tuple[str, ...]
    text: str
    holder: str = "requester"


@dataclass(frozen=True)
class Turn:
    """A scripted mid-episode message: after the first successful call of one of ``after`` whose end state makes
    ``when`` (jq, optional, over the state of that tool's app) output ``true``, ``sender`` (formatted) writes
    ``text`` (formatted) to the agent's inbox, one ``message_received`` event; the agent answers with
    ``reply_message``, and facts whose ``holder`` is ``sender_key`` are that sender's to tell."""

    key: str
    after: tuple[str, ...]
    sender: str
    text: str
    sender_key: str = "contact"
    when: str | None = None


@dataclass(frozen=True)
class Rubric:
    """A deterministic rubric for a text the agent writes (``rubric.py``). ``target`` is jq selecting the text:
    over the end-state document (which also holds ``.task.summary``, the ``finish_task`` summary), or, with
    ``tools``, over the arguments of every successful call of those tools. Each check is an assertion of step
    ``step``: every ``must_mention`` item appears (an item is a word or a tuple of alternatives, case-insensitive),
    every ``facts`` value (``(label, P(...))``) appears correctly (numbers compared digit for digit, so "$48,213"
    states 48213), no ``forbidden_claims`` pattern (``(label, regex)``) matches, and the text is at most
    ``max_len`` characters. ``criteria`` is extra wording for the optional language-model judge."""

    name: str
    target: str
    step: int
    must_mention: tuple[str | tuple[str, ...], ...] = ()
    facts: tuple[tuple[str, Any], ...] = ()
    forbidden_claims: tuple[tuple[str, str], ...] = ()
    max_len: int | None = None
    tools: tuple[str, ...] = ()
    criteria: str = ""


@dataclass(frozen=True)
class Act:
    """A scripted action of a simulated person on the shared apps (``users.py``): ``verb`` (one of
    ``users.VERBS``) with ``args`` (markers resolved with the parameters), done once by ``actor`` (formatted;
    ``actor_key`` names them as a :class:`Turn`'s ``sender_key`` does) either after the first successful call of
    one of ``after`` (with ``when``: whose end state makes that jq program over the whole state document output
    ``true``) or, with ``at``, when the sandbox clock reaches ``at`` minutes into the episode. With ``says``, the
    person then writes that (formatted) to the agent's inbox."""

    key: str
    actor: str
    verb: str
    args: Mapping[str, Any]
    after: tuple[str, ...] = ()
    at: float | None = None
    when: str | None = None
    says: str = ""
    actor_key: str = "contact"


Fixture = Callable[[Builder, Dice], dict[str, Any]]


@dataclass(frozen=True)
class Template:
    id: str
    motion: str  # inbound, outbound, pipeline, re-engagement, scheduling, hygiene
    title: str
    goal: str
    prompt: str  # formatted with the parameters
    apps: tuple[str, ...]
    fixture: Fixture
    steps: tuple[Step, ...]
    changes: tuple[Change, ...]
    solution: tuple[Mapping[str, Any], ...]
    read_only: tuple[str, ...] = ()
    forbidden: tuple[Forbidden, ...] = ()
    facts: tuple[FactSpec, ...] = ()
    requester_role: str = "your sales manager"
    mechanisms: tuple[str, ...] = ()  # the platform rules it exercises (the split generator's contamination note)
    rubrics: tuple[Rubric, ...] = ()  # what the agent writes, checked (step assertions too)
    turns: tuple[Turn, ...] = ()  # scripted mid-episode messages (conversational tasks)
    replies: tuple[Reply, ...] = ()  # canned answers that tell nothing
    policies: tuple[str, ...] = ()  # the policy documents that apply (``policies.py``; the task card names them)
    actions: tuple[Act, ...] = ()  # what simulated people do on the apps mid-episode (``users.py``)

    @property
    def tier(self) -> int:
        return len(self.apps)

    def check(self) -> None:
        """Raise ``ValueError`` if the blueprint is malformed (unknown app, step app outside the task's apps...)."""
        for app in (*self.apps, *self.read_only):
            if app not in APPS:
                raise ValueError(f"{self.id}: unknown app {app!r}")
        if not set(self.read_only) <= set(self.apps):
            raise ValueError(f"{self.id}: read-only apps must be among the task's apps")
        for step in self.steps:
            if step.app not in self.apps:
                raise ValueError(f"{self.id}: step app {step.app!r} is not one of the task's apps")
            if not step.assertions:
                raise ValueError(f"{self.id}: every step needs an assertion")
        for rubric in self.rubrics:
            if not 1 <= rubric.step <= len(self.steps):
                raise ValueError(f"{self.id}: rubric {rubric.name!r} names step {rubric.step} of {len(self.steps)}")
            for _, pattern in rubric.forbidden_claims:
                re.compile(pattern)
        for name in self.policies:
            policies.check_name(name)
        for act in self.actions:
            users.check(self.id, act)
        holders = {"requester", *(t.sender_key for t in self.turns), *(a.actor_key for a in self.actions)}
        for held in (*(f.holder for f in self.facts), *(r.holder for r in self.replies)):
            if held not in holders:
                raise ValueError(f"{self.id}: a fact or reply is held by {held!r}, who never speaks in this task")
        for fact in self.facts:
            for cond in fact.requires:
                if len(cond) != 1 or next(iter(cond)) not in CONDITIONS:
                    raise ValueError(f"{self.id}: fact {fact.key!r}: a condition is one of {CONDITIONS}, got {cond}")
        for change in self.changes:
            if not set(change.kinds) <= set(CHANGE_KINDS) or change.table.split(".")[0] not in self.apps:
                raise ValueError(f"{self.id}: bad allowed change {change}")
            if change.table.split(".")[0] in self.read_only:
                raise ValueError(f"{self.id}: a change to read-only app in {change.table}")


# --- resolution ----------------------------------------------------------------------------------------------
def resolve(value: Any, params: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]] | None = None) -> Any:
    """``value`` with every marker replaced (``$out`` only when ``outputs`` are given)."""
    if isinstance(value, dict):
        if set(value) == {"$p"}:
            return lookup(params, value["$p"])
        if set(value) == {"$f"}:
            return str(value["$f"]).format(**params)
        if set(value) == {"$out"}:
            if outputs is None:
                return value
            index, expr = value["$out"]
            found = jqlib.run(expr, outputs[index], {})
            return found[0] if found else None
        return {k: resolve(v, params, outputs) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [resolve(v, params, outputs) for v in value]
    return value


def lookup(params: Mapping[str, Any], path: str) -> Any:
    """``params["a"]`` for ``"a"``; a dotted path reads into lists and objects (``"people.1.email"``)."""
    head, *rest = path.split(".")
    value: Any = params[head]
    for part in rest:
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


REQUESTERS = (("Dana Whitfield", "your sales manager"), ("Omar Haddad", "the account executive"),
              ("Lucia Ferri", "the revenue operations lead"), ("Kenji Mori", "the sales director"))  # fmt: skip
CONTEXT = ("the quarterly pipeline review is on Friday", "marketing is measuring campaign follow-up speed",
           "the customer escalated to their executive sponsor", "we are cleaning the CRM before the board deck",
           "a new rep starts on the account next week", "finance wants the forecast locked today")  # fmt: skip
PERSONAS = ("brisk and to the point", "friendly and chatty", "detail-minded and careful", "busy, answers in fragments")


def instantiate(template: Template, seed: int, max_calls: int, pack: str = "") -> WorkflowsWorld:
    """The world of ``template`` under ``seed``: the population, the fixture's scene and the resolved task
    (``pack``: the template pack it comes from, "" for the package's own)."""
    builder = populate(seed)
    rng = stream(seed, "task", template.id)
    params = template.fixture(builder, rng)
    params.update({f"{k}_int": int(v) for k, v in list(params.items())
                   if k.endswith("_id") and isinstance(v, str) and v.isdigit()})  # engagement ids are numbers
    params.update({"renewal_pipeline": builder.renewal["pipeline"],
                   **{f"stage_{k}": v for k, v in builder.renewal.items() if k != "pipeline"}})
    who = stream(seed, "requester").choice(REQUESTERS)
    aside = stream(seed, "requester", "context")
    params = {"requester": who[0], "today": builder.anchor[:10], **params,
              "context": aside.choice(CONTEXT)}  # fmt: skip
    persona = stream(seed, "requester", "persona").choice(PERSONAS)
    secret = build_secret(template, params, persona)
    view = TaskView(template.title, template.prompt.format(**params), template.apps, template.read_only,
                    f"{who[0]} ({template.requester_role})", template.policies)  # fmt: skip
    tape = tuple(Scheduled(float(a["at"]), i, "user_action", {"key": a["key"]})
                 for i, a in enumerate(secret.actions) if a["at"] is not None)  # fmt: skip
    return WorkflowsWorld(seed, float(max_calls), builder.anchor, _freeze(builder.tables), dict(builder.counters),
                          view, secret, dict(builder.provenance), tuple(sorted(tape)), pack=pack)  # fmt: skip


def _most(value: Any) -> int:
    """A change rule's cap: an int, or the length of the list parameter it names."""
    return len(value) if isinstance(value, list | tuple) else int(value)


def build_secret(template: Template, params: dict[str, Any], persona: str) -> Secret:
    """The hidden part of an instance: the blueprint resolved with ``params`` (the reference solution keeps its
    markers: it is resolved as it plays, against the outputs it gets)."""
    facts = (*(Fact(f.key, f.keywords, str(params[f.param]), f.param, tuple(dict(c) for c in f.requires),
                    f.hint.format(**params), f.holder, f.uses) for f in template.facts),
             Fact("context", ("why", "reason", "context", "background"), params["context"], "context"))
    steps = tuple(
        {"step": i + 1, "app": s.app, "objective": s.objective, "actions": list(s.actions),
         "assertions": [{"name": a.name, "expr": a.expr, "op": a.op, "expected": resolve(a.expected, params)}
                        for a in s.assertions]}
        for i, s in enumerate(template.steps)
    )  # fmt: skip
    changes = tuple({"table": c.table, "kinds": list(c.kinds), "ids": _ids(resolve(c.ids, params)),
                     "fields": None if c.fields is None else list(c.fields),
                     **({} if c.most is None else {"most": _most(resolve(c.most, params))})}
                    for c in template.changes)  # fmt: skip
    forbidden = tuple({"name": f.name, "tools": list(f.tools), "args": f.args, "attempted": f.attempted}
                      for f in template.forbidden)  # fmt: skip
    rubrics = tuple({"name": r.name, "target": r.target, "step": r.step, "tools": list(r.tools),
                     "must_mention": [[m] if isinstance(m, str) else list(m) for m in r.must_mention],
                     "facts": [[label, resolve(v, params)] for label, v in r.facts],
                     "forbidden_claims": [list(c) for c in r.forbidden_claims], "max_len": r.max_len,
                     "criteria": r.criteria} for r in template.rubrics)  # fmt: skip
    turns = tuple({"key": t.key, "after": list(t.after), "sender": t.sender.format(**params),
                   "text": t.text.format(**params), "sender_key": t.sender_key, "when": t.when}
                  for t in template.turns)  # fmt: skip
    replies = tuple({"keywords": list(r.keywords), "text": r.text.format(**params), "holder": r.holder}
                    for r in template.replies)  # fmt: skip
    actions = tuple({"key": a.key, "actor": a.actor.format(**params), "actor_key": a.actor_key, "verb": a.verb,
                     "args": resolve(dict(a.args), params), "after": list(a.after), "at": a.at, "when": a.when,
                     "says": a.says.format(**params)} for a in template.actions)  # fmt: skip
    return Secret(template.id, template.tier, params, steps, changes, forbidden, facts, persona,
                  tuple(dict(a) for a in template.solution), rubrics, turns, replies, actions)


def _ids(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [str(v) for v in (value if isinstance(value, list) else [value])]


def _freeze(tables: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """The starting tables, each listed as its platform lists records: by id (keyed by the seed, so the order of
    the population, and where the task's records sit in it, changes from one instance to the next). Records the
    agent creates are listed after them, newest last."""
    return {name: dict(sorted(rows.items(), key=lambda kv: id_order(kv[0])) if name in ORDERED else rows)
            for name, rows in tables.items()}  # fmt: skip
