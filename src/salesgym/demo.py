"""``salesgym demo``: watch the expected-value seller work a small territory, as a readable trace.

Each tool call is one compact line; buyer replies and other inbox items are shown when they arrive;
verified milestone advances are highlighted; runs of waiting are folded into one line; the weekly
"seller hours used up" moments are called out; the verifier's score table closes the show.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

import salesgym
from salesgym.agents import make_policy

MAX_ARG_CHARS = 28
SKIP_ARGS = ("subject",)  # the body says it
KIND_STYLE = {"reply": "green", "meeting_accepted": "green", "meeting_declined": "yellow", "milestone": "bold magenta",
              "contract": "bold green", "terms": "cyan", "competitor": "red", "news": "red"}


def _compact(action: dict[str, Any]) -> str:
    args = {k: v for k, v in (action.get("args") or {}).items() if v is not None and v != [] and k not in SKIP_ARGS}
    parts = []
    for k, v in args.items():
        text = str(v)
        parts.append(f"{k}={text if len(text) <= MAX_ARG_CHARS else text[:MAX_ARG_CHARS - 3] + '...'}")
    return f"{action['tool']}({', '.join(parts)})"


def run_demo(seed: int = 7, n_opportunities: int = 5, horizon_days: int = 30, family: str = "midmarket_saas",
             max_steps: int = 400, console: Console | None = None) -> dict[str, Any]:
    """Play ``expected-value`` on one territory, print the trace and the score; returns ``env.score()``."""
    out = console or Console()
    env = salesgym.make("territory-v0", n_opportunities=n_opportunities, horizon_days=horizon_days, family=family)
    obs, _ = env.reset(seed=seed)
    policy = make_policy("expected-value", seed=seed)
    policy.reset(obs, env.tool_schemas(), env.instructions())
    out.rule(f"salesgym demo: expected-value seller, {family}, {n_opportunities} opportunities, "
             f"{horizon_days} days, seed {seed}")
    for line in obs["text"].splitlines():
        out.print(line, markup=False, highlight=False)
    waited, wait_calls, steps = 0.0, 0, 0
    terminated = truncated = False

    def flush_wait() -> None:
        nonlocal waited, wait_calls
        if wait_calls:
            out.print(f"[dim]   ... waited {waited:.1f} business hours ({wait_calls} wait call(s))[/dim]")
        waited, wait_calls = 0.0, 0

    while not (terminated or truncated) and steps < max_steps:
        action = policy.act(obs)
        before = obs["data"]["time"]["stamp"]
        obs, _reward, terminated, truncated, info = env.step(action)
        steps += 1
        result = info["tool_result"]
        policy.observe_result(result)
        data = obs["data"]
        if action["tool"] == "wait" and result["status"] == "ok":
            waited += float(result["output"].get("waited_hours", 0.0))
            wait_calls += 1
        else:
            flush_wait()
            ok = result["status"] == "ok"
            mark = "[green]ok[/green]" if ok else f"[red]error: {result['output'].get('error')}[/red]"
            out.print(f"[dim]{before[4:]}[/dim] {_compact(action)} [dim]({result['time_cost']:g}h)[/dim] {mark}",
                      highlight=False, overflow="ellipsis", no_wrap=True)
        if data["inbox"]:
            flush_wait()
        for item in data["inbox"]:
            style = KIND_STYLE.get(item["kind"], "white")
            line = f"<- {item['time'][4:]} {item['opportunity_id']} {item['from']}: {item['text']}"
            out.print(f"   [{style}]{line}[/{style}]",
                      highlight=False, overflow="ellipsis", no_wrap=True)
        if data["capacity_left"]["seller"] <= 0 and action["tool"] != "wait":
            week = data["time"]["week"] + 1
            out.print(f"[bold yellow]   seller hours for week {week} are used up: waiting until Monday[/bold yellow]")
    flush_wait()
    score: dict[str, Any] = env.score()
    out.rule("verifier score")
    table = Table(show_header=True, header_style="bold")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("primary", "value_weighted_advances", "closed_value", "closed_count", "win_rate",
                "disqualification_accuracy", "hours_used", "constrained_hours", "utilisation", "invalid_actions"):
        table.add_row(key, str(score[key]))
    table.add_row("advances", ", ".join(f"{k} {v}" for k, v in score["advances"].items()))
    table.add_row("disqualified", ", ".join(f"{k} {v}" for k, v in score["disqualified"].items()))
    table.add_row("violations", str(score["violations"] or "none"))
    out.print(table)
    milestones = Table("opportunity", "final milestone", show_header=True, header_style="bold")
    for oid, m in score["milestones"].items():
        milestones.add_row(oid, m)
    out.print(milestones)
    out.print(f"{steps} steps; episode {'ended' if terminated or truncated else 'stopped at max_steps'}")
    return score
