"""The episode as the views show it: each turn as a :class:`TurnView` (its call, status, costs, what came back,
milestone changes, new alerts, a language model's messages), runs of :data:`FOLDED_TOOLS` calls folded into one
:class:`Fold`, score figures and states, and the :class:`EpisodeView` both the terminal and the page render.

Generic over families: the few keys of ``data`` read by name (:data:`MILESTONE_KEY`, :data:`CAPACITY_KEY`,
``time``, ``inbox``, ``alerts``) are skipped when absent, and any shape of input gives rows, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from salesgym.bench import counterparty
from salesgym.bench.view_text import as_dict, as_list, clean, clean_scalar, compact, number
from salesgym.bench.vocabulary import Counterparty

MILESTONE_KEY = "milestone_counts"  # data key: counts of opportunities (or leads) per milestone
CAPACITY_KEY = "capacity_left"  # data key: resource -> what is left
FOLDED_TOOLS = ("wait",)  # consecutive calls of these fold into one row
HEADLINE = ("primary", "primary_ceiling", "closed_value", "penalties", "return")  # score figures shown first


@dataclass(frozen=True, slots=True)
class Item:
    """One inbox item: ``kind`` (reply, meeting_answer, milestone...), who or what it concerns, its fields."""

    kind: str
    where: str  # e.g. "o006 · o006s4"
    tags: tuple[tuple[str, str], ...]  # (field, value): decision, evidence, milestone first
    text: str
    time: str = ""

    @property
    def milestone(self) -> bool:
        return self.kind == "milestone" or any(k == "milestone" for k, _ in self.tags)

    @property
    def evidence(self) -> bool:
        return any(k == "evidence" for k, _ in self.tags)


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: str
    calls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """A language model's record of one turn: its messages (failed attempts included), usage and failures."""

    messages: tuple[Message, ...]
    usage: tuple[tuple[str, float], ...]  # the numbers the endpoint reported (tokens, latency_s)
    requests: int | None
    failures: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Change:
    name: str
    before: float
    after: float


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn as the views show it (1-based ``number``)."""

    number: int
    tool: str
    call: str
    status: str
    time_cost: float
    costs: tuple[tuple[str, float, float | None], ...]  # (resource, cost, left after)
    output: str
    reward: float
    time: str
    inbox: tuple[Item, ...]
    changes: tuple[Change, ...]
    alerts: tuple[str, ...]
    model: ModelTurn | None
    observation: str

    @property
    def failed(self) -> bool:
        return self.status != "ok" or bool(self.model and self.model.failures)

    @property
    def eventful(self) -> bool:
        """Something arrived or changed: an inbox item, a milestone change or a failure."""
        return bool(self.inbox or self.changes or self.failed)


@dataclass(frozen=True, slots=True)
class Fold:
    """Consecutive calls of one folded tool (``wait``), shown as one row."""

    turns: tuple[TurnView, ...]

    @property
    def tool(self) -> str:
        return self.turns[0].tool

    @property
    def span(self) -> str:
        return f"{self.turns[0].number}–{self.turns[-1].number}"

    @property
    def inbox(self) -> tuple[Item, ...]:
        return tuple(i for t in self.turns for i in t.inbox)

    @property
    def changes(self) -> tuple[Change, ...]:
        return _net_changes(c for t in self.turns for c in t.changes)

    @property
    def alerts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for t in self.turns for a in t.alerts))

    @property
    def eventful(self) -> bool:
        return any(t.eventful for t in self.turns)

    def usage(self) -> str:
        """The folded turns' model requests and usage, summed ("" without a model)."""
        models = [t.model for t in self.turns if t.model is not None]
        if not models:
            return ""
        totals: dict[str, float] = {}
        for m in models:
            for k, v in m.usage:
                totals[k] = totals.get(k, 0.0) + v
        return usage_text(sum(m.requests or 0 for m in models), totals.items())


Row = TurnView | Fold


def _net_changes(changes: Iterable[Change]) -> tuple[Change, ...]:
    """Successive changes of the same counts as one change from the first value to the last."""
    net: dict[str, Change] = {}
    for c in changes:
        first = net.get(c.name, c)
        net[c.name] = Change(c.name, first.before, c.after)
    return tuple(c for c in net.values() if c.before != c.after)


def _call(action: object) -> tuple[str, str]:
    """(tool name, the call as one line): ``send_message(stakeholder_id="o1s2", text="...")``."""
    if isinstance(action, Mapping) and isinstance(action.get("tool"), str):
        tool = clean(action["tool"])
        args = action.get("args", {})
        if isinstance(args, Mapping):
            inner = ", ".join(f"{clean(k)}={compact(v)}" for k, v in args.items())
        else:
            inner = compact(args)
        return tool, f"{tool}({inner})"
    if isinstance(action, str):
        return "?", clean(action)
    return "?", compact(action)


def _time(data: Mapping[str, Any]) -> str:
    t = data.get("time")
    if isinstance(t, Mapping):
        return clean(t.get("stamp", ""))
    return "" if t is None else clean(t)


def _is_number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _float(x: object, default: float = 0.0) -> float:
    return float(x) if _is_number(x) else default


def _counts(data: Mapping[str, Any]) -> dict[str, float]:
    return {clean(k): _float(v) for k, v in as_dict(data.get(MILESTONE_KEY)).items()}


def _changes(before: Mapping[str, float], after: Mapping[str, float]) -> tuple[Change, ...]:
    names = list(after) + [k for k in before if k not in after]
    return tuple(
        Change(k, before.get(k, 0.0), after.get(k, 0.0)) for k in names if before.get(k, 0.0) != after.get(k, 0.0)
    )


_WHERE = ("opportunity_id", "opportunity", "lead_id", "task_id", "from", "stakeholder_id")
_SKIP = ("kind", "text", "time")
_FIRST = ("decision", "evidence", "milestone")


def item(raw: object) -> Item:
    """An inbox item of any family as an :class:`Item`: its kind, who it concerns, its other set fields."""
    if not isinstance(raw, Mapping):
        return Item("item", "", (), compact(raw))
    where = tuple(dict.fromkeys(clean(raw[k]) for k in _WHERE if raw.get(k) not in (None, "")))
    rest = [k for k in raw if k not in _SKIP and k not in _WHERE and raw[k] not in (None, "", [], {})]
    order = [k for k in _FIRST if k in rest] + [k for k in rest if k not in _FIRST]
    tags = tuple((clean(k), number(raw[k]) if isinstance(raw[k], int | float) else clean_scalar(raw[k])) for k in order)
    text = raw.get("text")
    return Item(
        kind=clean(raw.get("kind", "item")),
        where=" · ".join(where),
        tags=tags,
        text=clean(text) if isinstance(text, str) else "",
        time=clean(raw.get("time", "") or ""),
    )


def _content(content: object) -> str:
    """A message's content: text, or the text parts of a list of parts, or compact JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return clean(content)
    if isinstance(content, list) and all(isinstance(p, Mapping) and "text" in p for p in content):
        return clean("\n".join(str(p["text"]) for p in content))
    return compact(content)


def _tool_call(raw: object) -> str:
    fn = as_dict(as_dict(raw).get("function"))
    if not fn:
        return compact(raw)
    args = fn.get("arguments", "")
    return f"{clean_scalar(fn.get('name', '?'))}({clean(args) if isinstance(args, str) else compact(args)})"


def _is_action(raw: object, action: object) -> bool:
    """The tool call is the action the turn played (already shown as the turn's call)."""
    fn, act = as_dict(as_dict(raw).get("function")), as_dict(action)
    if not fn or fn.get("name") != act.get("tool"):
        return False
    args = fn.get("arguments")
    try:
        return bool(json.loads(args) == act.get("args")) if isinstance(args, str) else args == act.get("args")
    except (ValueError, RecursionError):
        return False


def model_turn(record: object, action: object = None) -> ModelTurn | None:
    """A policy's turn record (``{"messages", "usage", "requests", "failures"}``) as a :class:`ModelTurn`; the
    tool call that is the turn's ``action`` is left out of the messages (the turn shows it)."""
    if not isinstance(record, Mapping) or not record:
        return None
    messages = tuple(
        Message(
            role=clean(as_dict(m).get("role", "?")),
            content=_content(as_dict(m).get("content")),
            calls=tuple(_tool_call(c) for c in as_list(as_dict(m).get("tool_calls")) if not _is_action(c, action)),
        )
        for m in as_list(record.get("messages"))
    )
    usage = tuple((clean(k), _float(v)) for k, v in as_dict(record.get("usage")).items() if _is_number(v))
    failures = tuple(
        (clean(as_dict(f).get("kind", "failure")), clean_scalar(as_dict(f).get("detail", "")))
        for f in as_list(record.get("failures"))
    )
    requests = record.get("requests")
    return ModelTurn(messages, usage, requests if isinstance(requests, int) else None, failures)


def turn_views(trajectory: Mapping[str, Any]) -> list[TurnView]:
    """Every turn of ``trajectory`` as a :class:`TurnView`; milestone changes and new alerts are relative to the
    turn before (the first observation for turn 1). Any shape of input gives rows, never an exception."""
    rows: list[TurnView] = []
    prev = as_dict(trajectory.get("data"))
    for n, raw in enumerate(as_list(trajectory.get("turns")), start=1):
        turn = as_dict(raw)
        rows.append(_turn_view(n, turn, prev))
        prev = as_dict(turn.get("data"))
    return rows


def _turn_view(n: int, turn: Mapping[str, Any], prev: Mapping[str, Any]) -> TurnView:
    data = as_dict(turn.get("data"))
    result = as_dict(turn.get("tool_result"))
    tool, call = _call(turn.get("action"))
    capacity = as_dict(data.get(CAPACITY_KEY))
    costs = tuple(
        (clean(k), _float(v), _float(capacity[k]) if k in capacity else None)
        for k, v in as_dict(result.get("resource_cost")).items()
        if _float(v)
    )
    output = result.get("output")
    error = as_dict(output).get("error") if result.get("status") == "error" else None
    seen = {clean(a) for a in as_list(prev.get("alerts"))}
    return TurnView(
        number=n,
        tool=tool,
        call=call,
        status=clean(result.get("status", "?")),
        time_cost=_float(result.get("time_cost")),
        costs=costs,
        output=clean_scalar(error) if error is not None else ("" if output is None else compact(output)),
        reward=_float(turn.get("reward")),
        time=_time(data),
        inbox=tuple(item(i) for i in as_list(data.get("inbox"))),
        changes=_changes(_counts(prev), _counts(data)),
        alerts=tuple(a for a in (clean(x) for x in as_list(data.get("alerts"))) if a not in seen),
        model=model_turn(turn.get("model"), turn.get("action")),
        observation=clean_scalar(turn.get("observation", "")),
    )


def fold(turns: Sequence[TurnView]) -> list[Row]:
    """Runs of two or more successful :data:`FOLDED_TOOLS` calls (no model failure) as one :class:`Fold`."""
    rows: list[Row] = []
    run: list[TurnView] = []

    def flush() -> None:
        if len(run) >= 2:
            rows.append(Fold(tuple(run)))
        else:
            rows.extend(run)
        run.clear()

    for t in turns:
        foldable = t.tool in FOLDED_TOOLS and not t.failed
        if not foldable or (run and run[-1].tool != t.tool):
            flush()
        if foldable:
            run.append(t)
        else:
            rows.append(t)
    flush()
    return rows


def parse_turns(spec: str) -> slice:
    """A turn range as the views number turns (1-based, inclusive) -> a slice of the turn list.

    >>> parse_turns("10:40"), parse_turns("5"), parse_turns(":3"), parse_turns("7:")
    (slice(9, 40, None), slice(4, 5, None), slice(0, 3, None), slice(6, None, None))
    """
    text = spec.strip()
    lo, sep, hi = text.partition(":")
    try:
        first = int(lo) if lo.strip() else 1
        last = int(hi) if hi.strip() else None
    except ValueError:
        raise ValueError(f"--turns {spec!r}: expected A:B with turn numbers (e.g. 10:40, 10: or :40)") from None
    if not sep:
        last = first
    if first < 1 or (last is not None and last < first):
        raise ValueError(f"--turns {spec!r}: turns are numbered from 1 and A must not exceed B")
    return slice(first - 1, last)


def selected_turns(trajectory: Mapping[str, Any], turns: slice | None) -> tuple[list[TurnView], int]:
    views = turn_views(trajectory)
    return (views if turns is None else views[turns]), len(views)


def range_note(selected: Sequence[TurnView], total: int, turns: slice | None) -> str:
    if turns is None:
        return f"{total} turns"
    if not selected:
        return f"no turns in the range asked for; the episode has {total}"
    return f"turns {selected[0].number}–{selected[-1].number} of {total}"


def _grouped(d: Mapping[str, Any]) -> str:
    """``{"o1": "Engaged", "o2": "Engaged", "o3": "Closed"}`` -> ``Engaged: o1 o2; Closed: o3``."""
    groups: dict[str, list[str]] = {}
    for k, v in d.items():
        groups.setdefault(clean(v), []).append(clean(k))
    return "; ".join(f"{v}: {' '.join(ks)}" for v, ks in groups.items())


def figure(value: object) -> str:
    """A score value compactly: numbers rounded, a mapping as ``key value, ...`` (a long one of names grouped by
    value), anything else as compact JSON."""
    if isinstance(value, Mapping):
        if not value:
            return "—"
        if len(value) > 6 and all(isinstance(v, str) for v in value.values()):
            return _grouped(value)
        return ", ".join(f"{clean(k)} {figure(v)}" for k, v in value.items())
    if value is None:
        return "—"
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value)
    return compact(value)


Figures = list[tuple[str, str]]


def score_figures(score: Mapping[str, Any] | None, words: Counterparty | None = None) -> tuple[Figures, Figures]:
    """(headline figures, the rest) of a score dict: :data:`HEADLINE` keys when present, else its first three
    numbers; a model counterparty's accounting (``words``: its family's keys) as one figure at the end of the
    rest."""
    s = as_dict(score)
    head = [k for k in HEADLINE if k in s]
    if not head:
        head = [k for k, v in s.items() if isinstance(v, int | float) and not isinstance(v, bool)][:3]
    other = counterparty.figure(s, words)
    gathered = counterparty.keys(words) if other is not None else frozenset()
    return (
        [(clean(k), figure(s[k])) for k in head],
        [(clean(k), figure(v)) for k, v in s.items() if k not in head and k not in gathered]
        + ([] if other is None else [(clean(other[0]), clean(other[1]))]),
    )


def state_pairs(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Clock, capacity and milestone counts of an observation's data (those present)."""
    out = []
    if _time(data):
        out.append(("time", _time(data)))
    if CAPACITY_KEY in data:
        out.append(("capacity left", figure(data[CAPACITY_KEY])))
    if MILESTONE_KEY in data:
        out.append(("milestones", figure(data[MILESTONE_KEY])))
    return out


def last_data(trajectory: Mapping[str, Any]) -> Mapping[str, Any]:
    turns = as_list(trajectory.get("turns"))
    return as_dict(as_dict(turns[-1]).get("data")) if turns else as_dict(trajectory.get("data"))


def usage_text(requests: int | None, usage: Iterable[tuple[str, float]]) -> str:
    figures = ([f"requests {requests}"] if requests is not None else []) + [f"{k} {number(v)}" for k, v in usage]
    return " · ".join(figures)


def cost_text(t: TurnView) -> str:
    parts = [f"{number(t.time_cost)}h"]
    for name, cost, left in t.costs:
        parts.append(f"{name} −{number(cost)}" + (f" ({number(left)} left)" if left is not None else ""))
    return " · ".join(parts)


def change_text(changes: Sequence[Change]) -> str:
    return ", ".join(f"{c.name} {number(c.before)}→{number(c.after)}" for c in changes)


Pairs = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class EpisodeView:
    """One episode as both views show it: header, start, the trace (the turns asked for), end and score."""

    title: str  # who played where
    meta: Pairs  # the episode's identifying fields, turns, end, model totals
    start: Pairs  # the first observation's clock, capacity and milestone counts
    observation: str  # the first observation's text
    turns: Sequence[TurnView]  # the turns asked for
    total: int  # turns in the episode
    trace_note: str  # which turns are shown, of how many
    stopped: tuple[str, ModelTurn] | None  # why the policy stopped, and its record of that turn (it made no step)
    end: Pairs  # the end reason and the last observation's state
    score_head: Pairs  # the headline score figures
    score_rest: Pairs  # the other score figures
