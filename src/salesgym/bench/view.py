"""``salesgym view RUN``: one episode's trajectory and final score, in the terminal or as a self-contained page.

:func:`render` prints the turn-by-turn trace with rich (``view_terminal.py``): each tool call with its status, time
and resource cost and the capacity left, what came back (inbox items: buyer replies, meeting answers, verified
milestones...), milestone counts as they change, new alerts, a language model's messages, usage and failures when
the policy recorded them (and, with ``full``, the observation text after each turn), then the end reason and the
final score. :func:`html` returns the same as one HTML page that loads nothing (``view_html.py``: its
Content-Security-Policy forbids any fetch), with every tool output and observation in collapsed details and a
filter over the turns. Both render the :class:`~salesgym.bench.view_model.EpisodeView` built here from the
stored trajectory (``view_model.py`` reads its turns). :func:`view_command` is the CLI command.

Everything shown is data, never markup: control characters are made visible (``view_text.clean``), rich markup
is not interpreted (only :class:`rich.text.Text` is printed) and HTML is escaped. The views are generic over
families: they show what the trajectory holds.

Long episodes stay readable: runs of ``wait`` calls fold into one row (what arrived meanwhile is still shown),
long texts are cut with a note unless ``full``, and ``turns`` selects a range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from salesgym.bench import view_html, view_terminal
from salesgym.bench.view_model import (
    EpisodeView,
    figure,
    last_data,
    model_turn,
    parse_turns,
    range_note,
    score_figures,
    selected_turns,
    state_pairs,
)
from salesgym.bench.view_text import OUTPUT_LIMIT, as_dict, clean, clean_scalar, compact, number
from salesgym.bench.vocabulary import for_env

if TYPE_CHECKING:
    from salesgym.bench.store import EpisodeRecord

# the views' text helpers and the turn-range parser, imported from here by callers of the view
__all__ = ["OUTPUT_LIMIT", "EpisodeKey", "EpisodeNotFound", "clean", "compact", "episode_view", "html", "number",
           "parse_turns", "render", "select_episode", "view_command", "write_html"]  # fmt: skip


# -- the episode's header and view -------------------------------------------------------------------------
def _meta(trajectory: Mapping[str, Any], n_turns: int) -> list[tuple[str, str]]:
    fields = [(k, trajectory.get(k)) for k in ("policy", "territory", "trial", "env_id", "seed")]
    meta = [(k, clean_scalar(v)) for k, v in fields if v not in (None, "")]
    meta.append(("turns", str(n_turns)))
    meta.append(("end", clean_scalar(trajectory.get("end", "?"))))
    totals = dict(as_dict(trajectory.get("totals")))
    if "stopped" in totals:  # the turn it stopped in is the trace's last entry: the header names only why
        totals["stopped"] = {k: v for k, v in as_dict(totals["stopped"]).items() if k != "turn"}
    if totals:
        meta.append(("model totals", figure(totals)))
    return meta


def _title(trajectory: Mapping[str, Any]) -> str:
    who = clean_scalar(trajectory.get("policy", "?"))
    where = trajectory.get("territory") or trajectory.get("env_id") or "?"
    return f"{who} on {clean_scalar(where)}"


def episode_view(
    trajectory: Mapping[str, Any], score: Mapping[str, Any] | None, turns: slice | None = None
) -> EpisodeView:
    """What both views show of one stored trajectory and its score (``turns``: the range of the trace shown)."""
    selected, total = selected_turns(trajectory, turns)
    stopped = as_dict(as_dict(trajectory.get("totals")).get("stopped"))
    last = model_turn(stopped.get("turn"))
    env_id = trajectory.get("env_id")  # a model counterparty's keys, as the episode's family states them
    words = for_env(env_id).counterparty if isinstance(env_id, str) and env_id else None
    head, rest = score_figures(score, words)
    return EpisodeView(
        title=_title(trajectory),
        meta=_meta(trajectory, total),
        start=state_pairs(as_dict(trajectory.get("data"))),
        observation=clean_scalar(trajectory.get("observation", "")),
        turns=selected,
        total=total,
        trace_note=range_note(selected, total, turns),
        stopped=None if last is None else (clean_scalar(stopped.get("reason", "?")), last),
        end=[("end", clean_scalar(trajectory.get("end", "?"))), *state_pairs(last_data(trajectory))],
        score_head=head,
        score_rest=rest,
    )


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
    view_terminal.show(episode_view(trajectory, score, turns), console, full=full)


def html(
    trajectory: Mapping[str, Any], score: Mapping[str, Any] | None, *, turns: slice | None = None, full: bool = False
) -> str:
    """One episode as a self-contained HTML page: the same header, trace, end and score as :func:`render`, with a
    filter over the turns (``view_html.page``)."""
    return view_html.page(episode_view(trajectory, score, turns), full=full)


def write_html(trajectory: Mapping[str, Any], score: Mapping[str, Any] | None, path: Path, **kw: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html(trajectory, score, **kw), encoding="utf-8")
    return path


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
    from salesgym.bench.commands import console as cmd
    from salesgym.bench.commands.options import DEFAULT_DB
    from salesgym.bench.store import StoreError

    try:
        window = parse_turns(turns) if turns is not None else None
    except ValueError as e:
        cmd.fail(str(e), 2)
    if html_path is not None:
        cmd.check_parents(html_path)
    store = cmd.open_store(db or DEFAULT_DB, readonly=True)
    try:
        store.get_run(run)
        records = {_key(r): r for r in store.episodes(run)}
        key = select_episode(list(records), episode, run)
        # WIRING: the one call into the trajectory store (Store.trajectory, keyed by policy, territory, trial).
        trajectory = store.trajectory(run, key.policy, key.territory, key.trial)
    except (StoreError, EpisodeNotFound) as e:
        cmd.fail(str(e))
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
            cmd.fail(cmd.write_error(html_path, "the page", e))
        cmd.out.print(f"wrote {html_path}", markup=False, highlight=False, soft_wrap=True)
        return
    render(trajectory, score, cmd.out, turns=window, full=full)


def _key(record: EpisodeRecord) -> EpisodeKey:
    """A stored episode's key; a store without trials has trial 0 everywhere."""
    trial = getattr(record, "trial", 0)
    return EpisodeKey(record.policy, record.territory_id, trial if isinstance(trial, int) else 0)
