"""The agent's observation: compact text for a model and the same public content as a dict for code.

Built from public views only: the clock, the pipeline counts, converted MRR, the active call, callbacks due
soon and the last tool result. It stays a few lines at any pipeline size; the lead list is one
``crm_search_leads`` call away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.core.events import Event
from salesgym.core.observation_text import episode_line, result_line
from salesgym.envs.desk.contract import CALLBACK_EARLY_MINUTES
from salesgym.envs.desk.state import Call
from salesgym.envs.desk.tools import Ctx

MAX_RESULT_CHARS = 1500
DUE_SOON_MINUTES = 30.0


def observe(ctx: Ctx, result: Mapping[str, Any] | None, new: Sequence[Event]) -> dict[str, Any]:
    s, w = ctx.state, ctx.world
    now = s.now
    call = s.call
    due: list[dict[str, Any]] = []
    if s.pending:
        callbacks = s.callbacks
        for cb_id in s.pending:
            cb = callbacks[cb_id]
            if cb.due - CALLBACK_EARLY_MINUTES <= now + DUE_SOON_MINUTES:
                due.append({"callback_id": cb.id, "lead_id": cb.lead_id, "due_minute": cb.due})
    # the memos read here, not through their functions: a frame less for each hit (a miss formats and stores)
    minute, minute_text = _CLOCK.get(now) or _clock(now)
    left_of = w.horizon - now
    left, left_text = _CLOCK.get(left_of) or _clock(left_of)
    counts, mrr, conversions = s.counts, s.mrr, s.conversions
    tally = _TALLY.get((mrr, conversions, *counts.values())) or _tally(mrr, conversions, counts)
    shown = due if len(due) <= 10 else due[:10]  # the list itself when it is short enough: one list less a step
    episode = {"terminated": s.terminated, "truncated": s.truncated, "invalid_actions": s.invalid_actions}
    data = {
        "time": {"minute": minute, "minutes_left": left},
        "desk": w.facts,
        "pipeline": dict(counts),
        "converted_mrr": mrr,
        "conversions": conversions,
        "call": None if call is None else {"lead_id": call.lead_id, "call_number": call.number,
                                           "offers": call.offers, "questions": call.questions},
        "callbacks_due": shown,
        "last_result": result,
        "episode": episode,
    }
    # the head line from the values at hand, not read back out of ``data`` (rounding is idempotent, so the text
    # of ``now`` is the text of ``minute``): the same line at two fewer memo look-ups
    head = f"minute {minute_text}, {left_text} left | {tally}"
    return {"text": render_text(head, call, shown, result, episode), "data": data}


def render_text(head: str, call: Call | None, callbacks_due: Sequence[Mapping[str, Any]],
                last: Mapping[str, Any] | None, episode: Mapping[str, Any]) -> str:
    """The observation's text: ``head`` (clock and tally), then the call, the callbacks due, the last result (the
    values ``data`` shows, passed as they are rather than read back out of it)."""
    lines = [head]
    if call is not None:
        lines.append(f"On a call with {call.lead_id} (call {call.number}, {call.questions} questions, "
                     f"{call.offers} offers)")  # fmt: skip
    if callbacks_due:
        lines.append("Callbacks due: " + ", ".join(f"{c['lead_id']} at {c['due_minute']:g}"
                                                   for c in callbacks_due))  # fmt: skip
    if last is not None:
        cost = last["time_cost"]
        lines.append(result_line(last, MAX_RESULT_CHARS, f"{(_CLOCK.get(cost) or _clock(cost))[1]} min",
                                 escaped_fallback=True))  # fmt: skip
    if episode["terminated"] or episode["truncated"]:
        lines.append(episode_line(episode) or "")
    return "\n".join(lines)


# Memos of what is formatted every step from a few values that recur (minutes, the tally of MRR and leads): a
# dictionary lookup instead of float rounding and formatting. Bounded; values only, so shared by every desk.
_CLOCK: dict[float, tuple[float, str]] = {}
_TALLY: dict[tuple[Any, ...], str] = {}
MEMO_MAX = 50_000


def _clock(x: float) -> tuple[float, str]:
    """``round(x, 2)`` and its text (``:g``), as the observation shows a minute."""
    hit = _CLOCK.get(x)
    if hit is None:
        shown = round(x, 2)
        hit = (shown, f"{shown:g}")
        if x > 0.0 and len(_CLOCK) < MEMO_MAX:  # 0.0 and -0.0 are one key but print differently: never memoised
            _CLOCK[x] = hit
    return hit


def _tally(mrr: float, conversions: int, pipeline: Mapping[str, int]) -> str:
    key = (mrr, conversions, *pipeline.values())
    text = _TALLY.get(key)
    if text is None:
        text = (f"MRR ${mrr:,.2f} from {conversions} | leads: "
                + ", ".join(f"{k} {v}" for k, v in pipeline.items() if v))  # fmt: skip
        if len(_TALLY) < MEMO_MAX:
            _TALLY[key] = text
    return text
