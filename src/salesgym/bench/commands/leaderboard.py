"""The leaderboard ``salesgym bench`` prints: the table, its legend in the family's words, the exploit check."""

from __future__ import annotations

from rich import box
from rich.markup import escape
from rich.table import Table

from salesgym.bench import analysis as an
from salesgym.bench import vocabulary as vc


def num(x: float) -> str:
    """Compact number: 2 decimals below 10, 1 below 1000, none above."""
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:,.0f}"


def leaderboard(a: an.Analysis, title: str, words: vc.Vocabulary = vc.NEUTRAL) -> Table:
    t = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False
    )
    t.add_column("#", justify="right", min_width=5, no_wrap=True)
    t.add_column("policy", no_wrap=True, min_width=17)
    columns = ["norm", "primary", "95% CI", words.closed.short, "Δ anchor"]
    columns += ["spread", f"pass^{a.trials}"] if a.trials > 1 else []
    columns += ["tokens/ep p/c/cached"] + (["$/ep"] if a.prices else []) if a.has_usage else []
    stops = any(a.stops.values())
    columns += ["ended by"] if stops else []
    for col in columns:
        t.add_column(col, justify="right", no_wrap=True)
    for label, r in an.ranked(a.rows, "ref"):
        p, n, diff = r.primary, r.normalised, r.vs_anchor
        dim = r.reference or r.probe
        cells = [
            label,
            f"[dim]{escape(r.policy)}[/]" if dim else escape(r.policy),
            f"{n.mean:.2f}" if n else "—",
            num(p.mean) if p else "—",
            f"{num(p.ci_low)}–{num(p.ci_high)}" if p else "—",
            f"{r.closed_value.mean:,.0f}" if r.closed_value else "—",
            (("+" if diff.mean >= 0 else "") + num(diff.mean) + ("*" if diff.significant else "")) if diff else "—",
        ]
        if a.trials > 1:
            spread = num(r.spread) if r.spread is not None else "—"
            cells += [spread, f"{r.pass_k:.2f}" if r.pass_k is not None else "—"]
        if a.has_usage:
            c = a.costs[r.policy]
            cells += [an.tokens_text(c.tokens_mean)] + ([an.dollars(c.cost_mean)] if a.prices else [])
        if stops:
            cells.append(an.stops_text(a.stops.get(r.policy, {})))
        t.add_row(*cells)
    return t


def explain(a: an.Analysis, words: vc.Vocabulary = vc.NEUTRAL) -> str:
    """The legend under the leaderboard, in the family's words (``envs/<family>/report_words.py``)."""
    w = words
    return (
        f"[dim]Ranked by norm, the normalised score: {w.speak(a.normalisation)} (0 = no better than doing nothing or "
        f"random, 1 = the reference), so every {w.unit} counts alike. primary = {escape(w.primary)} (mean; 95% "
        f"bootstrap CI over {w.units}). {escape(w.closed.short)} = {escape(w.closed_means)}. Δ anchor = paired "
        f"difference with {a.anchor} on the same {w.units} (* = CI excludes 0). probe = an exploit probe, checked "
        "below, never ranked. ref = reads hidden truth: headroom, never ranked."
        + (
            f" Each {w.unit} played {a.trials} times: figures are means over its trials; spread = mean std of norm "
            f"across trials; pass^{a.trials} = share of {w.units} where every trial reached norm >= "
            f"{a.pass_threshold:g}."
            if a.trials > 1
            else ""
        )
        + (
            " tokens/ep = prompt/completion/cached tokens per episode, as the policy's endpoint reported them."
            if a.has_usage
            else ""
        )
        + (
            " ended by = share of episodes that ended early and why: no call (replies without a tool call), invalid "
            "calls (the environment's invalid-action ceiling), budget, context, step cap, error, endpoint (stopped by "
            "the endpoint: invalid, not scored; a row of mostly invalid episodes is not ranked)."
            if any(a.stops.values())
            else ""
        )
        + "[/]"
    )


def exploit_lines(a: an.Analysis) -> list[str]:
    lines = [an.exploit_line(a)]
    for r in a.exploits:
        d = r.difference
        vs = f"{r.policy} − {r.twin}: {d.mean:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]" if d else f"{r.policy}: —"
        lines.append(f"  {'ok  ' if r.passed else 'FAIL'} {vs}" + ("" if r.paired else " (pure probe)"))
    return lines
