"""``salesgym view RUN``: one episode's trajectory and final score, in the terminal or as a self-contained page.

:func:`render` prints the turn-by-turn trace with rich: each tool call with its status, time and resource cost
and the capacity left, what came back (inbox items: buyer replies, meeting answers, verified milestones...),
milestone counts as they change, new alerts, a language model's messages, usage and failures when the policy
recorded them (and, with ``full``, the observation text after each turn), then the end reason and the final
score. :func:`html` returns the same as one HTML page that loads nothing (its Content-Security-Policy forbids
any fetch), with every tool output and observation in collapsed details and a filter over the turns.
:func:`view_command` is the CLI command.

Everything shown is data, never markup: control characters are made visible (:func:`clean`), rich markup is
not interpreted (only :class:`rich.text.Text` is printed) and HTML is escaped. The views are generic over
families: they show what the trajectory holds; the few keys of ``data`` they read by name
(:data:`MILESTONE_KEY`, :data:`CAPACITY_KEY`, ``time``, ``inbox``, ``alerts``) are skipped when absent.

Long episodes stay readable: runs of :data:`FOLDED_TOOLS` calls fold into one row (what arrived meanwhile is
still shown), long texts are cut with a note unless ``full``, and ``turns`` selects a range.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeGuard

import typer
from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from salesgym.bench import counterparty
from salesgym.bench.vocabulary import Counterparty, for_env

if TYPE_CHECKING:
    from salesgym.bench.store import EpisodeRecord

MILESTONE_KEY = "milestone_counts"  # data key: counts of opportunities (or leads) per milestone
CAPACITY_KEY = "capacity_left"  # data key: resource -> what is left
FOLDED_TOOLS = ("wait",)  # consecutive calls of these fold into one row
CALL_LIMIT = 200  # characters of a call, an inbox item, a message before a cut
OUTPUT_LIMIT = 80  # characters of a tool's output on the result line
OBS_LIMIT = 400  # characters (and OBS_LINES lines) of the first observation in the terminal
OBS_LINES = 6
PAGE_LIMIT = 6000  # characters of any one text on the page
NARROW = 100  # console width below which the clock goes above each turn
HEADLINE = ("primary", "primary_ceiling", "closed_value", "penalties", "return")  # score figures shown first


# -- safe text ---------------------------------------------------------------------------------------------
def clean(text: object) -> str:
    """``text`` with every control or format character (ANSI escapes, NUL, bidi overrides...) written out as
    ``\\x1b``-style escapes; newlines and tabs stay.

    >>> clean("ok\\x1b[31m red\\x00")
    'ok\\\\x1b[31m red\\\\x00'
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c in "\n\t" else _escape_char(c) for c in s)


def _escape_char(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def cut(text: str, limit: int, lines: int | None = None) -> tuple[str, int]:
    """The first ``limit`` characters (and at most ``lines`` lines) of ``text``, and how many were left out."""
    head = text[:limit]
    if lines is not None:
        head = "\n".join(head.split("\n")[:lines])
    return head, len(text) - len(head)


def compact(value: object) -> str:
    """Compact JSON of ``value`` (any object: what JSON cannot hold is written by ``str``), cleaned."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clean(text)


def number(x: object) -> str:
    """``86.662801`` -> ``86.66``, ``15.0`` -> ``15``, ``1234567`` -> ``1,234,567``; other values as text."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return clean(x)
    if isinstance(x, int):
        return f"{x:,}"
    text = f"{x:,.2f}" if abs(x) < 1000 else f"{x:,.0f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _dict(x: object) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def _list(x: object) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else []


# -- the episode as rows -----------------------------------------------------------------------------------
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
        return _usage_text(sum(m.requests or 0 for m in models), totals.items())


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
    return {clean(k): _float(v) for k, v in _dict(data.get(MILESTONE_KEY)).items()}


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


def clean_scalar(value: object) -> str:
    return clean(value) if isinstance(value, str) else compact(value)


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
    fn = _dict(_dict(raw).get("function"))
    if not fn:
        return compact(raw)
    args = fn.get("arguments", "")
    return f"{clean_scalar(fn.get('name', '?'))}({clean(args) if isinstance(args, str) else compact(args)})"


def _is_action(raw: object, action: object) -> bool:
    """The tool call is the action the turn played (already shown as the turn's call)."""
    fn, act = _dict(_dict(raw).get("function")), _dict(action)
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
            role=clean(_dict(m).get("role", "?")),
            content=_content(_dict(m).get("content")),
            calls=tuple(_tool_call(c) for c in _list(_dict(m).get("tool_calls")) if not _is_action(c, action)),
        )
        for m in _list(record.get("messages"))
    )
    usage = tuple((clean(k), _float(v)) for k, v in _dict(record.get("usage")).items() if _is_number(v))
    failures = tuple(
        (clean(_dict(f).get("kind", "failure")), clean_scalar(_dict(f).get("detail", "")))
        for f in _list(record.get("failures"))
    )
    requests = record.get("requests")
    return ModelTurn(messages, usage, requests if isinstance(requests, int) else None, failures)


def turn_views(trajectory: Mapping[str, Any]) -> list[TurnView]:
    """Every turn of ``trajectory`` as a :class:`TurnView`; milestone changes and new alerts are relative to the
    turn before (the first observation for turn 1). Any shape of input gives rows, never an exception."""
    rows: list[TurnView] = []
    prev = _dict(trajectory.get("data"))
    for n, raw in enumerate(_list(trajectory.get("turns")), start=1):
        turn = _dict(raw)
        rows.append(_turn_view(n, turn, prev))
        prev = _dict(turn.get("data"))
    return rows


def _turn_view(n: int, turn: Mapping[str, Any], prev: Mapping[str, Any]) -> TurnView:
    data = _dict(turn.get("data"))
    result = _dict(turn.get("tool_result"))
    tool, call = _call(turn.get("action"))
    capacity = _dict(data.get(CAPACITY_KEY))
    costs = tuple(
        (clean(k), _float(v), _float(capacity[k]) if k in capacity else None)
        for k, v in _dict(result.get("resource_cost")).items()
        if _float(v)
    )
    output = result.get("output")
    error = _dict(output).get("error") if result.get("status") == "error" else None
    seen = {clean(a) for a in _list(prev.get("alerts"))}
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
        inbox=tuple(item(i) for i in _list(data.get("inbox"))),
        changes=_changes(_counts(prev), _counts(data)),
        alerts=tuple(a for a in (clean(x) for x in _list(data.get("alerts"))) if a not in seen),
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


def _selected(trajectory: Mapping[str, Any], turns: slice | None) -> tuple[list[TurnView], int]:
    views = turn_views(trajectory)
    return (views if turns is None else views[turns]), len(views)


# -- score and header ------------------------------------------------------------------------------------
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
    numbers; a model counterparty's accounting (``words``) as one figure at the end of the rest."""
    s = _dict(score)
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


def _counterparty_words(trajectory: Mapping[str, Any]) -> Counterparty | None:
    """The score keys of the episode's model counterparty, as its family states them (None: it has none)."""
    env_id = trajectory.get("env_id")
    return for_env(env_id).counterparty if isinstance(env_id, str) and env_id else None


def _meta(trajectory: Mapping[str, Any], n_turns: int) -> list[tuple[str, str]]:
    fields = [(k, trajectory.get(k)) for k in ("policy", "territory", "trial", "env_id", "seed")]
    meta = [(k, clean_scalar(v)) for k, v in fields if v not in (None, "")]
    meta.append(("turns", str(n_turns)))
    meta.append(("end", clean_scalar(trajectory.get("end", "?"))))
    totals = _dict(trajectory.get("totals"))
    if totals:
        meta.append(("model totals", figure(totals)))
    return meta


def _state(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Clock, capacity and milestone counts of an observation's data (those present)."""
    out = []
    if _time(data):
        out.append(("time", _time(data)))
    if CAPACITY_KEY in data:
        out.append(("capacity left", figure(data[CAPACITY_KEY])))
    if MILESTONE_KEY in data:
        out.append(("milestones", figure(data[MILESTONE_KEY])))
    return out


def _last_data(trajectory: Mapping[str, Any]) -> Mapping[str, Any]:
    turns = _list(trajectory.get("turns"))
    return _dict(_dict(turns[-1]).get("data")) if turns else _dict(trajectory.get("data"))


def _title(trajectory: Mapping[str, Any]) -> str:
    who = clean_scalar(trajectory.get("policy", "?"))
    where = trajectory.get("territory") or trajectory.get("env_id") or "?"
    return f"{who} on {clean_scalar(where)}"


# -- terminal ----------------------------------------------------------------------------------------------
def _usage_text(requests: int | None, usage: Iterable[tuple[str, float]]) -> str:
    figures = ([f"requests {requests}"] if requests is not None else []) + [f"{k} {number(v)}" for k, v in usage]
    return " · ".join(figures)


def _cost_text(t: TurnView) -> str:
    parts = [f"{number(t.time_cost)}h"]
    for name, cost, left in t.costs:
        parts.append(f"{name} −{number(cost)}" + (f" ({number(left)} left)" if left is not None else ""))
    return " · ".join(parts)


def _change_text(changes: Sequence[Change]) -> str:
    return ", ".join(f"{c.name} {number(c.before)}→{number(c.after)}" for c in changes)


def _cut_note(left: int) -> str:
    return f" … +{left:,} chars" if left else ""


def _append_cut(text: Text, body: str, limit: int, style: str, full: bool, lines: int | None = None) -> None:
    shown, left = (body, 0) if full else cut(body, limit, lines)
    text.append(shown, style=style)
    if left:
        text.append(_cut_note(left), style="dim italic")


def _item_text(text: Text, it: Item, full: bool) -> None:
    mark, style = ("★", "bold green") if it.milestone else ("✉", "green" if it.evidence else "cyan")
    text.append(f"\n{mark} {it.kind}", style=style)
    if it.where:
        text.append(f" {it.where}", style=style)
    if it.tags:
        text.append(" [" + ", ".join(f"{k} {v}" for k, v in it.tags) + "]", style="dim")
    if it.text:
        text.append(" ")
        _append_cut(text, it.text, CALL_LIMIT, "", full)


def _events_text(text: Text, row: Row, full: bool) -> None:
    for it in row.inbox:
        _item_text(text, it, full)
    if row.changes:
        text.append(f"\n▲ milestones {_change_text(row.changes)}", style="bold magenta")
    for alert in row.alerts:
        text.append(f"\n! {alert}", style="yellow")


def _model_text(text: Text, m: ModelTurn, full: bool) -> None:
    for msg in m.messages:
        if msg.content:
            text.append(f"\n» {msg.role}: ", style="blue")
            _append_cut(text, msg.content, CALL_LIMIT, "blue", full)
        for c in msg.calls:
            text.append(f"\n» {msg.role} calls ", style="blue")
            _append_cut(text, c, CALL_LIMIT, "blue", full)
    figures = _usage_text(m.requests, m.usage)
    if figures:
        text.append(f"\n» {figures}", style="dim blue")
    for kind, detail in m.failures:
        text.append(f"\n✗ {kind}: ", style="bold red")
        _append_cut(text, detail, CALL_LIMIT, "red", full)


def _turn_text(t: TurnView, full: bool) -> Text:
    text = Text()
    _append_cut(text, t.call, CALL_LIMIT, "bold", full)
    ok = t.status == "ok"
    text.append(f"\n{t.status}", style="green" if ok else "bold red")
    text.append(f" · {_cost_text(t)}", style="dim")
    if t.reward:
        text.append(f" · reward {t.reward:+.4g}", style="bold yellow")
    if t.output:
        text.append(" · ")
        _append_cut(text, t.output, OUTPUT_LIMIT if ok else CALL_LIMIT, "dim" if ok else "red", full)
    if t.model:
        _model_text(text, t.model, full)
    _events_text(text, t, full)
    if full and t.observation:
        text.append("\n" + t.observation, style="dim")
    return text


def _fold_text(f: Fold, full: bool) -> Text:
    hours = sum(t.time_cost for t in f.turns)
    text = Text(f"{f.tool} ×{len(f.turns)}", style="bold")
    text.append(f" · {number(hours)}h", style="dim")
    if f.turns[-1].time:
        text.append(f" · until {f.turns[-1].time}", style="dim")
    reward = sum(t.reward for t in f.turns)
    if reward:
        text.append(f" · reward {reward:+.4g}", style="bold yellow")
    if f.usage():
        text.append(f"\n» {f.usage()}", style="dim blue")
    _events_text(text, f, full)
    return text


def _pairs_text(pairs: Sequence[tuple[str, str]], key_style: str = "bold") -> Text:
    text = Text()
    for i, (k, v) in enumerate(pairs):
        if i:
            text.append("\n")
        text.append(f"{k}: ", style=key_style)
        text.append(v)
    return text


def trace_table(rows: Sequence[Row], full: bool = False, width: int = 120) -> Table:
    """The trace as a rich table: turn number(s), the clock after the turn (above the turn on a console narrower
    than :data:`NARROW`), the turn."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
    wide = width >= NARROW
    table.add_column("#", justify="right", no_wrap=True)
    if wide:
        table.add_column("time", no_wrap=True, style="dim")
    table.add_column("turn", ratio=1, overflow="fold")
    for row in rows:
        first = row.turns[0] if isinstance(row, Fold) else row
        body = _fold_text(row, full) if isinstance(row, Fold) else _turn_text(row, full)
        number_cell = Text(row.span if isinstance(row, Fold) else str(row.number))
        if wide:
            table.add_row(number_cell, Text(first.time), body)
        else:
            table.add_row(number_cell, Text(f"{first.time}\n", style="dim") + body if first.time else body)
    return table


def _line(pairs: Sequence[tuple[str, str]], key_style: str = "bold") -> Text:
    """``key value · key value`` on one (wrapping) line."""
    text = Text()
    for i, (k, v) in enumerate(pairs):
        text.append(" · " if i else "")
        text.append(f"{k} ", style=key_style)
        text.append(v)
    return text


def render(
    trajectory: Mapping[str, Any],
    score: Mapping[str, Any] | None,
    console: Console,
    *,
    turns: slice | None = None,
    full: bool = False,
) -> None:
    """Print one episode to ``console``: header, start state, the trace (``turns`` of it), end and score.

    Long texts are cut with a note and runs of waits are folded; ``full`` shows every text uncut, every call
    on its own row and the observation text after each turn."""
    selected, total = _selected(trajectory, turns)
    console.print(Text(f"Episode: {_title(trajectory)}", style="bold underline"))
    console.print(_line(_meta(trajectory, total)))
    start = _state(_dict(trajectory.get("data")))
    if start:
        console.print(Text("start: ", style="bold") + _line(start))
    obs = clean_scalar(trajectory.get("observation", ""))
    if obs:
        text = Text()
        _append_cut(text, obs, OBS_LIMIT, "dim", full, OBS_LINES)
        console.print(text)
    note = "" if full else "; --full: uncut, unfolded, with the observation after each turn"
    console.print(Text(f"\nTrace ({_range_note(selected, total, turns)}{note})", style="bold"))
    if selected:
        console.print(trace_table(selected if full else fold(selected), full, console.width))
    stopped = _dict(_dict(trajectory.get("totals")).get("stopped"))
    last = model_turn(stopped.get("turn"))
    if last is not None:  # the turn the policy stopped in made no step: its replies are in the episode record
        text = Text(f"stopped in turn {total + 1} ({clean_scalar(stopped.get('reason', '?'))}):\n", style="bold")
        _model_text(text, last, full)
        console.print(text)
    console.print(Text())
    console.print(_line([("end", clean_scalar(trajectory.get("end", "?"))), *_state(_last_data(trajectory))]))
    head, rest = score_figures(score, _counterparty_words(trajectory))
    console.print(Text("\nFinal score", style="bold"))
    if head or rest:
        console.print(Group(_line(head, "bold green"), _line(rest, "dim bold")))
    else:
        console.print(Text("no score recorded", style="dim"))


def _range_note(selected: Sequence[TurnView], total: int, turns: slice | None) -> str:
    if turns is None:
        return f"{total} turns"
    if not selected:
        return f"no turns in the range asked for; the episode has {total}"
    return f"turns {selected[0].number}–{selected[-1].number} of {total}"


# -- HTML --------------------------------------------------------------------------------------------------
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:78em;padding:0 1em;color:#1d232a}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #d8dde3}
h4{margin:.4em 0 0;font-size:.9em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dt{font-weight:600}dd{margin:0}
.headline dd{font-weight:600;color:#116329}
ol.trace,ol.inner{list-style:none;padding:0}
ol.trace li{border-top:1px solid #e6e9ed;padding:.35em 0;display:grid;gap:.6em;
grid-template-columns:5em 11em minmax(0,1fr)}
ol.trace li[hidden]{display:none}
.num{text-align:right;color:#57606a}.time{color:#57606a}
.call{font-family:ui-monospace,monospace;font-weight:600;overflow-wrap:anywhere}
.result{color:#57606a;overflow-wrap:anywhere}.error{color:#b3261e;font-weight:600}
.reward{color:#9a6700;font-weight:600}
.item{color:#0a5e8a}.item.evidence{color:#116329}.item.milestone{color:#116329;font-weight:700}
.changes{color:#8250df;font-weight:700}.alert{color:#9a6700}.model{color:#0550ae}.failure{color:#b3261e}
.cut,.when{color:#57606a;font-style:italic}.when{font-size:.85em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0;font:12px/1.4 ui-monospace,monospace;
background:#f6f8fa;padding:.4em}
details>summary{cursor:pointer;color:#57606a}details[open]~.fold-events{display:none}
.controls{display:flex;gap:1.5em;align-items:center;margin:.5em 0}
"""

SCRIPT = """
(() => {
  const filter = document.getElementById("filter-text"), eventful = document.getElementById("eventful-only");
  const shown = document.getElementById("shown");
  const rows = Array.from(document.querySelectorAll("ol.trace > li"));
  const total = rows.reduce((n, r) => n + Number(r.dataset.turns), 0);
  function apply() {
    const needle = filter.value.trim().toLowerCase();
    let n = 0;
    for (const row of rows) {
      const show = (!needle || row.textContent.toLowerCase().includes(needle))
        && (!eventful.checked || row.dataset.eventful === "1");
      row.hidden = !show;
      if (show) n += Number(row.dataset.turns);
    }
    shown.textContent = n + " of " + total + " turns shown";
  }
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("filter")) filter.value = params.get("filter");
  if (params.has("eventful")) eventful.checked = true;
  filter.addEventListener("input", apply);
  eventful.addEventListener("change", apply);
  apply();
})();
"""


def _script_hash(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{_script_hash(SCRIPT)}'; base-uri 'none'; form-action 'none'"
)


def _e(text: str) -> str:
    return html_lib.escape(text, quote=True)


def _page_text(body: str, full: bool, tag: str = "span", cls: str = "") -> str:
    shown, left = (body, 0) if full else cut(body, PAGE_LIMIT)
    attr = f' class="{cls}"' if cls else ""
    note = f'<span class="cut">{_e(_cut_note(left))}</span>' if left else ""
    return f"<{tag}{attr}>{_e(shown)}</{tag}>{note}"


def _h_pairs(pairs: Sequence[tuple[str, str]], cls: str = "meta") -> str:
    inner = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in pairs)
    return f'<dl class="{cls}">{inner}</dl>'


def _h_item(it: Item, full: bool) -> str:
    cls = "item milestone" if it.milestone else "item evidence" if it.evidence else "item"
    mark = "★" if it.milestone else "✉"
    tags = f' <span class="tags">[{_e(", ".join(f"{k} {v}" for k, v in it.tags))}]</span>' if it.tags else ""
    where = f" {_e(it.where)}" if it.where else ""
    text = f" {_page_text(it.text, full)}" if it.text else ""
    when = f' <span class="when">{_e(it.time)}</span>' if it.time else ""
    return f'<div class="{cls}">{mark} <b>{_e(it.kind)}</b>{where}{tags}{text}{when}</div>'


def _h_events(row: Row, full: bool) -> str:
    parts = [_h_item(it, full) for it in row.inbox]
    if row.changes:
        parts.append(f'<div class="changes">▲ milestones {_e(_change_text(row.changes))}</div>')
    parts.extend(f'<div class="alert">! {_e(a)}</div>' for a in row.alerts)
    return "".join(parts)


def _h_model(m: ModelTurn, full: bool) -> str:
    parts = []
    for msg in m.messages:
        if msg.content:
            parts.append(f'<div class="model">» {_e(msg.role)}: {_page_text(msg.content, full)}</div>')
        parts.extend(f'<div class="model">» {_e(msg.role)} calls {_page_text(c, full)}</div>' for c in msg.calls)
    figures = _usage_text(m.requests, m.usage)
    if figures:
        parts.append(f'<div class="model usage">» {_e(figures)}</div>')
    parts.extend(
        f'<div class="failure">✗ <b>{_e(kind)}</b>: {_page_text(detail, full)}</div>' for kind, detail in m.failures
    )
    return "".join(parts)


def _h_turn_body(t: TurnView, full: bool) -> str:
    ok = t.status == "ok"
    reward = f' · <span class="reward">reward {t.reward:+.4g}</span>' if t.reward else ""
    output = ""
    if t.output:  # an error in full, a result's start (the whole of it is in the details below)
        short, left = cut(t.output, OUTPUT_LIMIT * 2) if ok else (t.output, 0)
        output = f' · <span class="{"output" if ok else "error"}">{_e(short)}</span>' + ("…" if left else "")
    parts = [
        f'<div class="call">{_page_text(t.call, full)}</div>',
        f'<div class="result"><span class="{"ok" if ok else "error"}">{_e(t.status)}</span>'
        f" · {_e(_cost_text(t))}{reward}{output}</div>",
    ]
    if t.model:
        parts.append(_h_model(t.model, full))
    parts.append(_h_events(t, full))
    texts = [(name, body) for name, body in (("output", t.output), ("observation", t.observation)) if body]
    if texts:
        summary = " · ".join(name for name, _ in texts)
        inner = "".join(f"<h4>{name}</h4>{_page_text(body, full, 'pre')}" for name, body in texts)
        parts.append(f"<details><summary>{summary}</summary>{inner}</details>")
    return "".join(parts)


def _h_row(row: Row, full: bool) -> str:
    if isinstance(row, TurnView):
        attrs = f'class="turn" id="turn-{row.number}" data-tool="{_e(row.tool)}" data-turns="1"'
        attrs += f' data-eventful="{int(row.eventful)}" data-status="{_e(row.status)}"'
        cells = f'<span class="num">{row.number}</span><span class="time">{_e(row.time)}</span>'
        return f"<li {attrs}>{cells}<div>{_h_turn_body(row, full)}</div></li>"
    inner = "".join(_h_row(t, full) for t in row.turns)
    hours = number(sum(t.time_cost for t in row.turns))
    until = f" · until {row.turns[-1].time}" if row.turns[-1].time else ""
    summary = f"{row.tool} ×{len(row.turns)} · {hours}h{until}"
    attrs = f'class="fold" data-tool="{_e(row.tool)}" data-turns="{len(row.turns)}" data-eventful="{int(row.eventful)}"'
    cells = f'<span class="num">{_e(row.span)}</span><span class="time">{_e(row.turns[0].time)}</span>'
    usage = f'<div class="model usage">» {_e(row.usage())}</div>' if row.usage() else ""
    body = f'<details><summary class="call">{_e(summary)}</summary><ol class="inner">{inner}</ol></details>{usage}'
    events = f'<div class="fold-events">{_h_events(row, full)}</div>'  # hidden while the fold is open
    return f"<li {attrs}>{cells}<div>{body}{events}</div></li>"


def html(
    trajectory: Mapping[str, Any], score: Mapping[str, Any] | None, *, turns: slice | None = None, full: bool = False
) -> str:
    """One episode as a self-contained HTML page (no external asset; nothing is fetched): the same header,
    trace, end and score as :func:`render`, folded calls expandable, a text filter and an "only turns where
    something arrived or changed" switch (also set from the address: ``#filter=send_message&eventful``); each turn
    is an anchor (``#turn-40``)."""
    selected, total = _selected(trajectory, turns)
    head, rest = score_figures(score, _counterparty_words(trajectory))
    obs = clean_scalar(trajectory.get("observation", ""))
    start = _state(_dict(trajectory.get("data")))
    title = f"salesgym episode: {_title(trajectory)}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _h_pairs(_meta(trajectory, total)),
        '<section id="score"><h2>Final score</h2>',
        _h_pairs(head, "meta headline") if head else "<p>no score recorded</p>",
        f"<details><summary>all figures</summary>{_h_pairs(rest)}</details>" if rest else "",
        "</section>",
        '<section id="start"><h2>Start</h2>',
        _h_pairs(start) if start else "",
        f"<details><summary>first observation</summary>{_page_text(obs, full, 'pre')}</details>" if obs else "",
        "</section>",
        f'<section id="trace"><h2>Trace ({_e(_range_note(selected, total, turns))})</h2>',
        '<div class="controls"><label>filter <input id="filter-text" type="search" placeholder="tool, id or text">'
        '</label><label><input id="eventful-only" type="checkbox"> only turns where something arrived or changed'
        '</label><span id="shown"></span></div>',
        '<ol class="trace">',
        *(_h_row(r, full) for r in fold(selected)),
        "</ol></section>",
        '<section id="end"><h2>End</h2>',
        _h_pairs([("end", clean_scalar(trajectory.get("end", "?"))), *_state(_last_data(trajectory))]),
        "</section>",
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


# -- choosing an episode and the command -----------------------------------------------------------------
@dataclass(frozen=True, slots=True, order=True)
class EpisodeKey:
    """Which episode of a run: ``POLICY/TERRITORY[/TRIAL]``."""

    policy: str
    territory: str
    trial: int = 0

    def label(self, with_trial: bool) -> str:
        return f"{self.policy}/{self.territory}" + (f"/{self.trial}" if with_trial else "")


class EpisodeNotFound(ValueError):
    """``--episode`` names no episode of the run; the message lists valid ids."""


def select_episode(keys: Sequence[EpisodeKey], spec: str | None, run_id: str = "") -> EpisodeKey:
    """The episode ``spec`` (``POLICY/TERRITORY`` or ``POLICY/TERRITORY/TRIAL``; names may hold ``/``) names
    among ``keys``; without a spec the first one. Without a trial, the lowest trial of that pair.

    >>> keys = [EpisodeKey("random", "t01"), EpisodeKey("random", "t01", 1), EpisodeKey("idle", "t02")]
    >>> select_episode(keys, "random/t01/1"), select_episode(keys, "idle/t02").trial
    (EpisodeKey(policy='random', territory='t01', trial=1), 0)
    """
    ordered = sorted(keys)
    in_run = f" in run {run_id}" if run_id else ""
    if not ordered:
        raise EpisodeNotFound(f"no episodes{in_run}")
    if spec is None:
        return ordered[0]
    for k in ordered:
        if spec.strip() in (k.label(True), k.label(False)):
            return k
    with_trial = any(k.trial for k in ordered)
    near = [k for k in ordered if spec.startswith(f"{k.policy}/")] or ordered
    labels = list(dict.fromkeys(k.label(with_trial) for k in near))
    more = f" … and {len(labels) - 8} more" if len(labels) > 8 else ""
    raise EpisodeNotFound(
        f"no episode {clean(spec)!r}{in_run}; valid ids (POLICY/TERRITORY[/TRIAL]): {', '.join(labels[:8])}{more}"
    )


def write_html(trajectory: Mapping[str, Any], score: Mapping[str, Any] | None, path: Path, **kw: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html(trajectory, score, **kw), encoding="utf-8")
    return path


def view_command(
    run: Annotated[str, typer.Argument(help="run id printed by `salesgym bench`")],
    episode: Annotated[
        str | None,
        typer.Option("--episode", help="POLICY/TERRITORY[/TRIAL] (default: the run's first episode)"),
    ] = None,
    html_path: Annotated[
        Path | None,
        typer.Option("--html", help="write the episode as a self-contained HTML page to this file", dir_okay=False),
    ] = None,
    turns: Annotated[
        str | None, typer.Option("--turns", help="turn range A:B (numbered from 1, inclusive; A: and :B too)")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="long texts uncut, every wait on its own row")] = False,
    db: Annotated[
        Path | None,
        typer.Option("--db", help="SQLite run database (default: runs/salesgym.sqlite)", dir_okay=False),
    ] = None,
) -> None:
    """Show one episode of a run: each tool call, what came back, milestones, capacity, the end and the score."""
    from salesgym.bench import commands as cmd
    from salesgym.bench.store import StoreError

    try:
        window = parse_turns(turns) if turns is not None else None
    except ValueError as e:
        cmd._fail(str(e), 2)
    if html_path is not None:
        cmd._check_parents(html_path)
    store = cmd._open_store(db or cmd.DEFAULT_DB, readonly=True)
    try:
        store.get_run(run)
        records = {_key(r): r for r in store.episodes(run)}
        key = select_episode(list(records), episode, run)
        # WIRING: the one call into the trajectory store (Store.trajectory, keyed by policy, territory, trial).
        trajectory = store.trajectory(run, key.policy, key.territory, key.trial)
    except (StoreError, EpisodeNotFound) as e:
        cmd._fail(str(e))
    finally:
        store.close()
    record = records[key]
    score = dict(record.metrics or {})
    if record.error:
        score.setdefault("error", record.error.strip().splitlines()[0])
    if episode is None and len(records) > 1:
        shown = key.label(any(k.trial for k in records))
        cmd.err.print(
            f"showing {shown} ({len(records)} episodes in run {run}; pick one with --episode)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if html_path is not None:
        try:
            write_html(trajectory, score, html_path, turns=window, full=full)
        except OSError as e:
            cmd._fail(cmd._write_error(html_path, "the page", e))
        cmd.out.print(f"wrote {html_path}", markup=False, highlight=False, soft_wrap=True)
        return
    render(trajectory, score, cmd.out, turns=window, full=full)


def _key(record: EpisodeRecord) -> EpisodeKey:
    """A stored episode's key; a store without trials has trial 0 everywhere."""
    trial = getattr(record, "trial", 0)
    return EpisodeKey(record.policy, record.territory_id, trial if isinstance(trial, int) else 0)
