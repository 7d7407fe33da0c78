"""The agent's observation: compact text for a model and the same public content as a dict for code.

Built from public views only: the clock, the pipeline counts, converted MRR, the active call, callbacks due
soon and the last tool result. It stays a few lines at any pipeline size; the lead list is one
``crm_search_leads`` call away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from salesgym.core.events import Event
from salesgym.envs.desk.contract import CALLBACK_EARLY_MINUTES
from salesgym.envs.desk.tools import Ctx

MAX_RESULT_CHARS = 1500
DUE_SOON_MINUTES = 30.0


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, UnicodeDecodeError):  # a lone surrogate in an agent's note
        import json

        return json.dumps(value, ensure_ascii=True)


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
    data = {
        "time": {"minute": round(now, 2), "minutes_left": round(w.horizon - now, 2)},
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
    return {"text": render_text(data), "data": data}


def render_text(data: dict[str, Any]) -> str:
    t, p = data["time"], data["pipeline"]
    lines = [
        f"minute {t['minute']:g}, {t['minutes_left']:g} left | MRR ${data['converted_mrr']:,.2f} from "
        f"{data['conversions']} | leads: " + ", ".join(f"{k} {v}" for k, v in p.items() if v),
    ]
    call = data["call"]
    if call is not None:
        lines.append(f"On a call with {call['lead_id']} (call {call['call_number']}, {call['questions']} questions, "
                     f"{call['offers']} offers)")  # fmt: skip
    if data["callbacks_due"]:
        lines.append("Callbacks due: " + ", ".join(f"{c['lead_id']} at {c['due_minute']:g}"
                                                   for c in data["callbacks_due"]))  # fmt: skip
    last = data["last_result"]
    if last is not None:
        output = last["output"]
        body = str(output.get("error")) if last["status"] == "error" else _json(output)
        if len(body) > MAX_RESULT_CHARS:
            body = body[:MAX_RESULT_CHARS] + "... (truncated; the full output is in info['tool_result'])"
        lines.append(f"Last: {last['status']} ({last['time_cost']:g} min) {body}")
    ep = data["episode"]
    if ep["terminated"] or ep["truncated"]:
        lines.append("Episode over.")
    return "\n".join(lines)
