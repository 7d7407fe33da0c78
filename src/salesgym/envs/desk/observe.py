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
    minute, minute_text = _clock(now)
    left, left_text = _clock(w.horizon - now)
    data = {
        "time": {"minute": minute, "minutes_left": left},
        "desk": w.facts,
        "pipeline": dict(s.counts),
        "converted_mrr": s.mrr,
        "conversions": s.conversions,
        "call": None if call is None else {"lead_id": call.lead_id, "call_number": call.number,
                                           "offers": call.offers, "questions": call.questions},
        "callbacks_due": due[:10],
        "last_result": result,
        "episode": {"terminated": s.terminated, "truncated": s.truncated, "invalid_actions": s.invalid_actions},
    }
    # the head line from the values at hand, not read back out of ``data`` (rounding is idempotent, so the text
    # of ``now`` is the text of ``minute``): the same line at two fewer memo look-ups
    head = f"minute {minute_text}, {left_text} left | " + _tally(s.mrr, s.conversions, s.counts)
    return {"text": render_text(head, data), "data": data}


def render_text(head: str, data: dict[str, Any]) -> str:
    """The observation's text: ``head`` (clock and tally), then the call, the callbacks due, the last result."""
    lines = [head]
    call = data["call"]
    if call is not None:
        lines.append(f"On a call with {call['lead_id']} (call {call['call_number']}, {call['questions']} questions, "
                     f"{call['offers']} offers)")  # fmt: skip
    if data["callbacks_due"]:
        lines.append("Callbacks due: " + ", ".join(f"{c['lead_id']} at {c['due_minute']:g}"
                                                   for c in data["callbacks_due"]))  # fmt: skip
    last = data["last_result"]
    if last is not None:
        lines.append(result_line(last, MAX_RESULT_CHARS, f"{_clock(last['time_cost'])[1]} min", escaped_fallback=True))
    over = episode_line(data["episode"])
    if over is not None:
        lines.append(over)
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
