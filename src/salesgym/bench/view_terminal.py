"""The episode in the terminal (rich): the header, the start, the turn-by-turn trace as a table, the end and
the score. Only :class:`rich.text.Text` is printed, so nothing in the trajectory is read as markup."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from salesgym.bench.view_model import (
    EpisodeView,
    Fold,
    Item,
    ModelTurn,
    Row,
    TurnView,
    change_text,
    cost_text,
    fold,
    usage_text,
)
from salesgym.bench.view_text import CALL_LIMIT, OUTPUT_LIMIT, cut, cut_note, number

OBS_LIMIT = 400  # characters (and OBS_LINES lines) of the first observation in the terminal
OBS_LINES = 6
NARROW = 100  # console width below which the clock goes above each turn


def _append_cut(text: Text, body: str, limit: int, style: str, full: bool, lines: int | None = None) -> None:
    shown, left = (body, 0) if full else cut(body, limit, lines)
    text.append(shown, style=style)
    if left:
        text.append(cut_note(left), style="dim italic")


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
        text.append(f"\n▲ milestones {change_text(row.changes)}", style="bold magenta")
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
    figures = usage_text(m.requests, m.usage)
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
    text.append(f" · {cost_text(t)}", style="dim")
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


def show(episode: EpisodeView, console: Console, *, full: bool = False) -> None:
    """Print one episode to ``console``: header, start state, the trace, end and score.

    Long texts are cut with a note and runs of waits are folded; ``full`` shows every text uncut, every call
    on its own row and the observation text after each turn."""
    console.print(Text(f"Episode: {episode.title}", style="bold underline"))
    console.print(_line(episode.meta))
    if episode.start:
        console.print(Text("start: ", style="bold") + _line(episode.start))
    if episode.observation:
        text = Text()
        _append_cut(text, episode.observation, OBS_LIMIT, "dim", full, OBS_LINES)
        console.print(text)
    note = "" if full else "; --full: uncut, unfolded, with the observation after each turn"
    console.print(Text(f"\nTrace ({episode.trace_note}{note})", style="bold"))
    if episode.turns:
        console.print(trace_table(episode.turns if full else fold(episode.turns), full, console.width))
    if episode.stopped is not None:  # the turn the policy stopped in made no step: its replies are in the record
        reason, last = episode.stopped
        text = Text(f"stopped in turn {episode.total + 1} ({reason}):\n", style="bold")
        _model_text(text, last, full)
        console.print(text)
    console.print(Text())
    console.print(_line(episode.end))
    console.print(Text("\nFinal score", style="bold"))
    if episode.score_head or episode.score_rest:
        console.print(Group(_line(episode.score_head, "bold green"), _line(episode.score_rest, "dim bold")))
    else:
        console.print(Text("no score recorded", style="dim"))
