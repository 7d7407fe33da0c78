"""Episodes for the viewer's tests: real trajectories recorded in-process, a language model's turn records
attached to some turns, and hostile text in every place an agent (or a buyer quoting it) can put text."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.agents.trajectory import Recorder

Trajectory = dict[str, Any]
Score = dict[str, Any]

# rich markup, a hyperlink, ANSI (clear screen, colour, an OSC 8 link), NUL, a bidi override, HTML and script
HOSTILE = (
    "[bold red]RED[/bold red] [link=http://evil.example]click[/link] \x1b[2J\x1b[31mansi\x1b[0m "
    "\x1b]8;;http://evil.example\x07osc\x1b]8;;\x07 nul\x00 \u202eevil "
    '<img src=x onerror="document.title=\'pwned\'"> </script><script>document.title="pwned"</script> &amp;'
)


@cache
def _recorded(env_id: str, policy: str, seed: int, kwargs: tuple[tuple[str, int], ...]) -> tuple[str, str]:
    env = salesgym.make(env_id, **dict(kwargs))
    rec = Recorder(Episode(env, make_policy(policy, seed), seed=seed), env_id=env_id, territory="t01", trial=0)
    for _ in rec:
        pass
    return json.dumps(rec.trajectory), json.dumps(env.score())


def recorded(env_id: str, policy: str, seed: int, **kwargs: int) -> tuple[Trajectory, Score]:
    """A fresh copy of a recorded episode (trajectory, env.score()); recorded once per test session."""
    traj, score = _recorded(env_id, policy, seed, tuple(sorted(kwargs.items())))
    return json.loads(traj), json.loads(score)


def expected_value() -> tuple[Trajectory, Score]:
    """expected-value on a 10-opportunity, 30-day territory: hundreds of turns, replies, milestones, waits."""
    return recorded("territory-v0", "expected-value", 3, n_opportunities=10, horizon_days=30)


def expected_value_quarter() -> tuple[Trajectory, Score]:
    """expected-value on a 10-opportunity, 90-day territory: it works every hour it can, so only a quarter has
    runs of waits during which milestones move (buyers answer while the seller waits)."""
    return recorded("territory-v0", "expected-value", 1, n_opportunities=10, horizon_days=90)


def random_debug() -> tuple[Trajectory, Score]:
    """random on the debug territory: refused calls (errors), penalties."""
    return recorded("territory-debug-v0", "random", 1)


def wait_runs(turns: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(first, last) 1-based turn numbers of the runs of two or more successful waits (what the views fold)."""
    runs: list[tuple[int, int]] = []
    start = None
    for n, t in enumerate([*turns, {"action": {}}], start=1):
        action, result, model = t.get("action"), t.get("tool_result", {}), t.get("model") or {}
        is_wait = isinstance(action, dict) and action.get("tool") == "wait"
        is_wait = is_wait and result.get("status") == "ok" and not model.get("failures")
        if is_wait and start is None:
            start = n
        elif not is_wait and start is not None:
            if n - 1 > start:
                runs.append((start, n - 1))
            start = None
    return runs


def _call_message(action: dict[str, Any], content: str | None, call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function",
            "function": {"name": action["tool"], "arguments": json.dumps(action["args"])}}
    return {"role": "assistant", "content": content, "tool_calls": [call]}


def model_record(i: int, action: dict[str, Any], failing: bool = False) -> dict[str, Any]:
    """A language model's turn record as the LLM policy writes it; ``failing``: a plain-text reply and a
    malformed call came first."""
    messages = [_call_message(action, f"Turn {i}: next I call {action['tool']}.", f"call{i}")]
    failures = []
    if failing:
        messages = [
            {"role": "assistant", "content": f"Turn {i}: let me think about the pipeline first.", "tool_calls": None},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"bad{i}", "type": "function", "function": {"name": action["tool"], "arguments": "{not json"}}
            ]},
            *messages,
        ]
        failures = [
            {"kind": "no_tool_call", "detail": "the reply had no tool call"},
            {"kind": "malformed_call", "detail": "arguments are not JSON: Expecting property name at 1"},
        ]
    usage = {"prompt_tokens": 1000 + i, "completion_tokens": 40 + i, "cached_tokens": 900, "latency_s": 0.75}
    return {"messages": messages, "usage": usage, "requests": len(messages), "failures": failures}


def with_model(trajectory: Trajectory, failing: tuple[int, ...] = (3,)) -> Trajectory:
    """``trajectory`` as if a language model had played it: every turn gets a turn record (1-based turn
    numbers in ``failing`` with failed attempts), totals get tokens and failures by kind."""
    traj = copy.deepcopy(trajectory)
    for n, turn in enumerate(traj["turns"], start=1):
        turn["model"] = model_record(n, turn["action"], failing=n in failing)
    traj["policy"] = "llm"
    traj["totals"] = {"prompt_tokens": 123456, "completion_tokens": 7890,
                      "failures": {"no_tool_call": len(failing), "malformed_call": len(failing)},
                      "sampling": {"temperature": 0.0, "seed": 7}}
    return traj


def hostile(trajectory: Trajectory) -> tuple[Trajectory, Score]:
    """``trajectory`` with hostile text in the policy name, a call's arguments, a tool output, an inbox item, an
    alert, the model's messages and failures, the observation, and a score with hostile keys and values."""
    traj = with_model(trajectory, failing=(1,))
    traj["policy"] = f"evil {HOSTILE}"
    first = traj["turns"][0]
    args = {"stakeholder_id": "o001s0", "subject": HOSTILE, "body": HOSTILE}
    first["action"] = {"tool": "send_message", "args": args}
    first["tool_result"] = {**first["tool_result"], "status": "error", "output": {"error": HOSTILE}}
    first["observation"] = HOSTILE * 3
    first["data"]["inbox"] = [{"kind": "reply", "opportunity_id": "o001", "from": "o001s0", "evidence": HOSTILE,
                               "text": HOSTILE, "time": "Mon 09:00"}]
    first["data"]["alerts"] = [HOSTILE]
    first["model"]["messages"][0]["content"] = HOSTILE
    first["model"]["failures"][0]["detail"] = HOSTILE
    return traj, {"primary": 1.5, HOSTILE: HOSTILE, "nested": {HOSTILE: [HOSTILE]}}
