"""The agent's observation: the task (as told), the sandbox clock and the call budget, what the requester has
said, the messages in the inbox (scripted mid-episode turns), the last tool result, and at the end the verdict
(pass or fail). Public facts only: the tables are read through the tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.core.events import Event
from salesgym.core.observation_text import episode_line, result_line
from salesgym.envs.workflows import verifier
from salesgym.envs.workflows.apps.common import Ctx, now_iso

MAX_RESULT_CHARS = 2500
INBOX_FIELDS = ("id", "from", "text", "at")  # what a delivered message shows (its sender's key and turn stay back)


def verdict(ctx: Ctx) -> str | None:
    """At the episode's end, the verified outcome the agent is told (and paid): "pass" or "fail". The final step
    asks twice (its reward, then its observation) and ``score()`` asks for the whole report: the verifier computes
    it once (``verifier.verdict``)."""
    s = ctx.state
    if not (s.terminated or s.truncated):
        return None
    return "pass" if verifier.verdict(ctx.world, s, ctx.log, getattr(ctx.family, "judge", None)) else "fail"


def observe(ctx: Ctx, result: Mapping[str, Any] | None, new: Sequence[Event]) -> dict[str, Any]:
    s, w = ctx.state, ctx.world
    data = {
        "task": w.task.public(),
        "clock": {"now": now_iso(ctx), "calls_used": int(s.now), "calls_left": int(w.horizon - s.now)},
        "told": dict(s.revealed),
        "inbox": [{k: m[k] for k in INBOX_FIELDS} for m in s.inbox],
        "last_result": result,
        "episode": {"terminated": s.terminated, "truncated": s.truncated, "invalid_actions": s.invalid_actions,
                    "verdict": verdict(ctx)},
    }
    return {"text": render_text(data), "data": data}


def render_text(data: dict[str, Any]) -> str:
    c, task = data["clock"], data["task"]
    lines = [f"{c['now']} | calls left {c['calls_left']} | task: {task['title']}"]
    if data["told"]:
        lines.append("The requester told you: " + "; ".join(f"{k}: {v}" for k, v in data["told"].items()))
    for m in data["inbox"]:
        lines.append(f"Message {m['id']} from {m['from']} at {m['at']}: {m['text']} (answer with reply_message)")
    last = data["last_result"]
    if last is not None:
        lines.append(result_line(last, MAX_RESULT_CHARS, escaped_fallback=True))
    over = episode_line(data["episode"])
    if over is not None:
        lines.append(over)
    return "\n".join(lines)
