"""``salesgym report RUN``: a Markdown file and a self-contained HTML file (plots inlined as base64 PNG)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from salesgym.bench import analysis as an
from salesgym.bench import counterparty, plots, tiers
from salesgym.bench import vocabulary as vc
from salesgym.bench.breakdown import breakdowns, tag_breakdowns
from salesgym.bench.stats import PairedDifference, Summary
from salesgym.bench.store import EpisodeRecord, RunRecord, Store

Table = tuple[list[str], list[list[str]]]
MAX_COLUMNS = 10  # data columns of one table beside its label column: a wider one is cut into several


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    intro: str = ""
    table: Table | None = None
    image: tuple[str, bytes] | None = None  # (file name, PNG bytes)
    more: tuple[Table, ...] = ()  # the rest of a table cut by columns (split_columns)


def split_columns(table: Table, per: int = MAX_COLUMNS) -> list[Table]:
    """``table`` cut into tables of at most ``per`` data columns, each keeping the label (first) column, so a
    table with a column per template or per violation kind fits a page.

    >>> [h for h, _ in split_columns((["p", "a", "b", "c"], [["x", "1", "2", "3"]]), per=2)]
    [['p', 'a', 'b'], ['p', 'c']]
    """
    header, rows = table
    if len(header) <= per + 1:
        return [table]
    cuts = range(1, len(header), per)
    return [([header[0], *header[i:i + per]], [[r[0], *r[i:i + per]] for r in rows]) for i in cuts]


def _cut(title: str, intro: str, table: Table, image: tuple[str, bytes] | None = None) -> Section:
    first, *rest = split_columns(table)
    return Section(title, intro, first, image, tuple(rest))


@dataclass(frozen=True, slots=True)
class ReportFiles:
    markdown: Path
    html: Path
    images: list[Path]


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None or x != x else f"{x:,.{digits}f}"


def _ci(s: Summary | PairedDifference | None) -> str:
    return "—" if s is None else f"[{_f(s.ci_low)}, {_f(s.ci_high)}]"


def _diff(d: PairedDifference | None) -> str:
    if d is None:
        return "—"
    star = " *" if d.significant else ""
    return f"{d.mean:+,.2f} {_ci(d)}{star}"


def suite_of(run: RunRecord) -> object | None:
    """The policy suite of the run's environment family (None if it is not registered here)."""
    try:
        from salesgym.bench.runner import family_of_run, policy_suite

        return policy_suite(family_of_run(run.config))
    except Exception:  # an old or foreign run: analysed with the documented defaults
        return None


def analyse_run(
    store: Store, run_id: str, *, pass_threshold: float = an.DEFAULT_PASS_THRESHOLD, prices: an.Prices | None = None
) -> tuple[RunRecord, an.Analysis]:
    run = store.get_run(run_id)
    assert run is not None
    eps = store.episodes(run_id)
    return run, an.analyse(eps, list(run.policies), suite_of(run), pass_threshold=pass_threshold, prices=prices)


def words_of(run: RunRecord) -> vc.Vocabulary:
    """The run's family's report words (its spec's ``report_words``); neutral ones for a family not registered here."""
    from salesgym.bench.runner import family_of_run

    try:
        return vc.for_family(family_of_run(run.config))
    except ValueError:  # no family here may omit env_id: an old or foreign run
        return vc.NEUTRAL


def leaderboard_table(a: an.Analysis, words: vc.Vocabulary = vc.NEUTRAL) -> Table:
    header = ["rank", "policy", "n", "normalised", "normalised 95% CI", "primary", "primary 95% CI", "median",
              words.closed.title, *(c.title for c in words.columns)]
    if a.trials > 1:
        header += ["trials", "spread", f"pass^{a.trials}", f"pass^{a.trials} 95% CI"]
    if a.has_usage:
        header += ["tokens/episode (prompt/completion/cached)"] + (["$/episode"] if a.prices else [])
    rows: list[list[str]] = []
    for label, r in an.ranked(a.rows, "headroom"):
        p, n = r.primary, r.normalised
        row = [
            label,
            r.policy,
            str(p.n if p else 0),
            _f(n.mean if n else None),
            _ci(n),
            _f(p.mean if p else None),
            _ci(p),
            _f(p.median if p else None),
            _f(r.closed_value.mean if r.closed_value else None),
            *(_f(r.secondary.get(c.key)) for c in words.columns),
        ]
        if a.trials > 1:
            ci = f"{r.pass_k_ci[0]:.2f}–{r.pass_k_ci[1]:.2f}" if r.pass_k_ci else "—"
            row += [str(r.trials), _f(r.spread), _f(r.pass_k), ci]
        if a.has_usage:
            c = a.costs[r.policy]
            row += [an.tokens_text(c.tokens_mean)] + ([an.dollars(c.cost_mean)] if a.prices else [])
        rows.append(row)
    return header, rows


def _trials_intro(a: an.Analysis, w: vc.Vocabulary) -> str:
    if a.trials <= 1:
        return ""
    return (
        f" Each {w.unit} was played {a.trials} times (trials; the world is the same, the policy's seed differs): "
        f"every per-{w.unit} figure is the mean over its trials; spread is the mean over {w.units} of the "
        f"standard deviation of the normalised score across trials; pass^{a.trials} is the share of {w.units} "
        f"where every trial reached a normalised score of at least {a.pass_threshold:g}, with its 95% bootstrap "
        f"interval over {w.units}."
    )


def _prices_text(prices: an.Prices | None) -> str:
    if prices is None:
        return "no prices given (pass --price-in/--price-out/--price-cached or --prices FILE for dollars)"
    cached = "the input price" if prices.cached is None else f"${prices.cached:g}"
    return f"prices per million tokens: input ${prices.input:g}, output ${prices.output:g}, cached input {cached}"


def _sections(run: RunRecord, a: an.Analysis, comparisons: Sequence[tuple[RunRecord, an.Analysis]],
              episodes: Sequence[EpisodeRecord] = ()) -> list[Section]:
    w = words_of(run)
    secs: list[Section] = []
    extra = "".join(f"; {c.title}: the mean of the {c.key} score" for c in w.columns)
    secs.append(
        Section(
            "Leaderboard",
            "Ranked by the normalised score: " + w.speak(a.normalisation) + f". 0 is no better than doing nothing or "
            f"random play on that {w.unit}, 1 is the reference; every {w.unit} counts alike. Beside it the raw "
            f"primary metric: {w.primary}; {w.closed.title}: {w.closed_means}{extra}. Means over {w.units}; 95% "
            f"percentile bootstrap CIs resampling {w.units} (fixed seed). Reference policies read hidden truth: "
            "they show headroom and are never ranked." + _trials_intro(a, w)
            + (" " + w.speak(" ".join(a.notes)) if a.notes else ""),
            leaderboard_table(a, w),
        )
    )
    if any(r.primary for r in a.rows) and plots.available():
        secs.append(Section("Scores", "", None, ("scores.png", plots.scores_with_ci(a.rows, axis=w.primary_axis))))
    secs.append(_secondary_section(a, w, episodes))
    diffs = [r for r in a.rows if r.vs_anchor is not None]
    if diffs:
        secs.append(
            Section(
                f"Paired differences vs {a.anchor}",
                f"Policy minus anchor on the same {w.units}, mean with 95% bootstrap CI; * = CI excludes 0. "
                f"W/L/T counts {w.units} won, lost and tied.",
                (
                    ["policy", "Δ primary [CI]", "W/L/T", f"Δ {w.closed.title} [CI]"],
                    [
                        [
                            r.policy,
                            _diff(r.vs_anchor),
                            f"{r.vs_anchor.wins}/{r.vs_anchor.losses}/{r.vs_anchor.ties}" if r.vs_anchor else "—",
                            _diff(r.vs_anchor_closed),
                        ]
                        for r in diffs
                    ],
                ),
            )
        )
    milestones: list[str] = []
    for f in a.funnels.values():
        milestones += [m for m in f if m not in milestones]
    if milestones and w.funnel is not None:
        secs.append(
            Section(
                w.funnel.title,
                w.funnel.intro,
                (["policy", *milestones], [[p, *(str(f.get(m, 0)) for m in milestones)] for p, f in a.funnels.items()]),
                ("funnel.png", plots.funnels(a.funnels, title=w.funnel.title.lower(), axis=w.funnel.axis))
                if plots.available() else None,
            )
        )
    kinds = sorted({k for f in a.failures.values() for k in f.violations})
    secs.append(
        _cut(
            "Failure modes",
            "Episodes ended by the invalid-action ceiling or horizon (truncated), by the runner's step cap, by the "
            "policy giving up (stopped), or by an error; invalid actions and anti-gaming violations by kind, summed "
            "over episodes.",
            (
                ["policy", "truncated", "step_cap", "stopped", "errors", "invalid actions",
                 *(f"violations: {k}" for k in kinds)],
                [
                    [
                        p,
                        str(f.truncated),
                        str(f.step_cap),
                        str(f.stopped),
                        str(f.errors),
                        str(f.invalid_actions),
                        *(str(f.violations.get(k, 0)) for k in kinds),
                    ]
                    for p, f in a.failures.items()
                ],
            ),
        )
    )
    secs.append(
        Section(
            f"Exploit check: {a.exploit_check}",
            f"Each paired probe is an honest policy plus one gaming behaviour, compared {w.unit} by {w.unit} "
            "with its honest twin: it passes when the mean paired difference is at most zero (gaming never "
            f"helps). Each pure probe only games: it passes when it scores below {a.anchor} on the primary metric "
            f"and on {w.closed.title} (or both score nothing there) and earns at most zero reward through the "
            "tools it exploits. " + an.exploit_line(a),
            (
                ["probe", "compared with", "Δ primary [CI]", "primary", "twin primary", "violations",
                 "mechanism reward", "result"],
                [
                    [
                        e.policy,
                        e.twin + ("" if e.paired else " (anchor)"),
                        _diff(e.difference),
                        _f(e.primary),
                        _f(e.twin_primary),
                        str(e.violations),
                        "n/a" if e.mechanism_reward is None else f"{e.mechanism_reward:.4f}",
                        "passed" if e.passed else "FAILED",
                    ]
                    for e in a.exploits
                ],
            )
            if a.exploits
            else None,
        )
    )
    secs.append(_ends_section(a))
    secs.append(_cost_section(a))
    found = counterparty.table(episodes, list(run.policies), w.counterparty)
    if found is not None and w.counterparty is not None:  # only a run whose other side a model played
        secs.append(_cut(f"Counterparty: {w.counterparty.title}", counterparty.intro(w.counterparty), found))
    if comparisons:
        secs.append(_ablation_section(run, a, comparisons))
    return secs


def _breakdown_sections(store: Store, run: RunRecord, a: an.Analysis) -> list[Section]:
    """Mean primary per scenario value (a territory split's families and templates; the desk's buyer variants
    and pipeline sizes), from the split's manifest; none when the manifest is not here."""
    import salesgym
    from salesgym.bench import splits as sp

    try:
        manifest = sp.load(run.split)
        spec = salesgym.family(manifest.env_id)
        words, tags = spec.scenario_words or None, spec.scenario_tags
    except (sp.SplitError, KeyError, ValueError):
        return []
    if manifest.sha256 != run.split_sha256:
        return []  # the manifest here is not the one the run played
    policies = [r.policy for r in a.rows]
    played = set(run.config.get("territories") or ())
    layout = [t for t in manifest.layout if t.id in played] or list(manifest.layout)
    out = []
    episodes = store.episodes(run.id)
    w = words_of(run)
    for b in [*breakdowns(layout, episodes, policies, words), *tag_breakdowns(layout, episodes, policies, tags)]:
        labels = [f"{v} ({b.territories[v]})" for v in b.values]
        if len(b.values) <= max(MAX_COLUMNS, len(policies)):  # a column per value
            table: Table = (["policy", *labels], [[p, *(_f(b.cells[p][v]) for v in b.values)] for p in policies])
        else:  # many more values than policies (a workflows split's templates): a row per value
            table = ([b.title[3:], *policies], [[label, *(_f(b.cells[p][v]) for p in policies)]
                                                 for label, v in zip(labels, b.values, strict=True)])
        counted = f"; a {w.unit} counts once for each {b.title[3:]} it uses" if b.dimension in tags else ""
        out.append(_cut(f"{b.title} (mean primary)", f"Mean primary of each policy over the {w.units} of each "
                        f"{b.title[3:]} ({w.units} in brackets{counted}), trials included.", table))
    return out


def _secondary_section(a: an.Analysis, w: vc.Vocabulary, episodes: Sequence[EpisodeRecord]) -> Section:
    """The family's secondary metrics: the mean over its scored items of each (per item: over its trials)."""
    def mean(policy: str, key: str) -> float | None:
        values = an.metric_by_territory(episodes, policy, key)
        return sum(values.values()) / len(values) if values else None

    return Section(
        "Secondary metrics (means)",
        f"Each the mean over {w.units} of the environment's score of that name.",
        (["policy", *(m.title for m in w.secondary)],
         [[r.policy, *(_f(mean(r.policy, m.key)) for m in w.secondary)] for r in a.rows]),
    )


def _ends_section(a: an.Analysis) -> Section:
    reasons = sorted({k for e in a.ends.values() for k in e}, key=lambda k: (k.startswith("stopped"), k))
    return _cut(
        "Episode ends",
        "How each episode ended (the episode loop's reason): terminated (the environment ended it: horizon or "
        "done), truncated (the invalid-action ceiling), step_cap (the runner's --max-steps), stopped: <reason> "
        "(the policy gave up, e.g. out of token budget), error (the episode raised; see the export).",
        (["policy", *reasons], [[p, *(str(e.get(k, 0)) for k in reasons)] for p, e in a.ends.items()]),
    )


def _cost_section(a: an.Analysis) -> Section:
    header = ["policy", "episodes", "wall s (total)", "wall s (mean)", "steps (mean)", "tool calls", "steps/s"]
    if a.has_usage:
        header += ["episodes with usage", "tokens/episode (prompt/completion/cached)", "tokens (total)"]
        header += ["$/episode", "$ (total)"] if a.prices else []
    rows: list[list[str]] = []
    for p, c in a.costs.items():
        row = [
            p,
            str(c.episodes),
            _f(c.wall_s_total),
            _f(c.wall_s_mean, 3),
            _f(c.steps_mean, 1),
            str(c.tool_calls_total),
            _f(c.steps_per_s, 0),
        ]
        if a.has_usage:
            row += [str(c.usage_episodes), an.tokens_text(c.tokens_mean), an.tokens_text(c.tokens_total)]
            row += [an.dollars(c.cost_mean), an.dollars(c.cost_total)] if a.prices else []
        rows.append(row)
    intro = "Wall time is per episode inside a worker (not the run's elapsed time)."
    if a.has_usage:
        intro += (
            " Tokens are what the policies' endpoints reported (prompt tokens include the cached ones); "
            + _prices_text(a.prices)
            + (f"; the whole run: {an.dollars(an.run_cost(a))}." if a.prices else ".")
        )
    return Section("Compute cost", intro, (header, rows))


def _ablation_section(run: RunRecord, a: an.Analysis, comparisons: Sequence[tuple[RunRecord, an.Analysis]]) -> Section:
    base = {r.policy: r.primary.mean for r in a.rows if r.primary}
    header = ["policy", f"{run.config.get('ablation') or 'full'} (this run)"]
    for other, _ in comparisons:
        header.append(f"{other.config.get('ablation') or 'full'} ({other.id}) Δ")
    rows: list[list[str]] = []
    for p, mean in base.items():
        row = [p, _f(mean)]
        for _, oa in comparisons:
            om = next((r.primary.mean for r in oa.rows if r.policy == p and r.primary), None)
            row.append("—" if om is None else f"{_f(om)} ({om - mean:+,.2f})")
        rows.append(row)
    return Section(
        "Ablations",
        "Mean primary score of each policy in this run and in the compared runs (same split), with the change. "
        "A mechanism contributes what its ablation removes.",
        (header, rows),
    )


# -- rendering -------------------------------------------------------------------------------------
def _md_table(t: Table) -> str:
    header, rows = t
    esc = [[c.replace("|", "\\|") for c in row] for row in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def _html_table(t: Table) -> str:
    header, rows = t
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="lb"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _meta(run: RunRecord, n_episodes: int) -> list[tuple[str, str]]:
    return [
        ("run", run.id),
        ("split", f"{run.split} (sha256 {run.split_sha256[:16]}…)"),
        ("ablation", str(run.config.get("ablation") or "none")),
        ("policies", ", ".join(run.policies)),
        ("trials", str(run.config.get("trials", 1))),
        ("episodes", str(n_episodes)),
        ("created", run.created),
        ("salesgym", run.package_version),
        ("git revision", run.git_revision or "unknown"),
    ]


def render_markdown(run: RunRecord, n_episodes: int, sections: Sequence[Section]) -> str:
    out = [f"# salesgym benchmark report: `{run.id}`", ""]
    out += [f"- **{k}**: {v}" for k, v in _meta(run, n_episodes)]
    for s in sections:
        out += ["", f"## {s.title}", ""]
        if s.intro:
            out += [s.intro, ""]
        if s.image:
            out += [f"![{s.title}]({s.image[0]})", ""]
        for t in (s.table, *s.more) if s.table else ():
            out += [_md_table(t), ""]
    if not plots.available():
        out += ["", "_Plots omitted: install `salesgym[report]` (matplotlib)._"]
    return "\n".join(out) + "\n"


# tables fit a 1280 px page: headers wrap at their spaces, figures never do, wide tables are cut by columns
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;
     color:#222;padding:0 1rem}
table.lb{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}
table.lb th,table.lb td{border:1px solid #ccc;padding:.2rem .4rem;text-align:right}
table.lb td{white-space:nowrap} table.lb th{vertical-align:bottom;overflow-wrap:anywhere}
table.lb th:nth-child(-n+2),table.lb td:nth-child(-n+2){text-align:left}
table.lb thead{background:#f0f3f7} dl.meta{display:grid;grid-template-columns:max-content auto;gap:.1rem 1rem}
dl.meta dt{font-weight:600} img{max-width:100%} p.intro{color:#444;max-width:70em}
"""


def render_html(run: RunRecord, n_episodes: int, sections: Sequence[Section]) -> str:
    meta = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in _meta(run, n_episodes))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>salesgym report {html.escape(run.id)}</title><style>{CSS}</style></head><body>",
        f"<h1>salesgym benchmark report: <code>{html.escape(run.id)}</code></h1>",
        f'<dl class="meta">{meta}</dl>',
    ]
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.intro:
            parts.append(f'<p class="intro">{html.escape(s.intro)}</p>')
        if s.image:
            b64 = base64.b64encode(s.image[1]).decode("ascii")
            parts.append(f'<img alt="{html.escape(s.title)}" src="data:image/png;base64,{b64}">')
        for t in (s.table, *s.more) if s.table else ():
            parts.append(_html_table(t))
    if not plots.available():
        parts.append("<p><em>Plots omitted: install <code>salesgym[report]</code> (matplotlib).</em></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(
    store: Store,
    run_id: str,
    out_dir: Path | str,
    compare: Sequence[str] = (),
    *,
    pass_threshold: float = an.DEFAULT_PASS_THRESHOLD,
    prices: an.Prices | None = None,
) -> ReportFiles:
    """Write ``<out_dir>/report.md``, ``report.html`` and the PNGs the Markdown links to."""
    run, a = analyse_run(store, run_id, pass_threshold=pass_threshold, prices=prices)
    comparisons = [analyse_run(store, c, pass_threshold=pass_threshold, prices=prices) for c in compare]
    n_episodes = len(store.episodes(run_id))
    sections = _sections(run, a, comparisons, store.episodes(run_id))
    extra = [_cut(*t) for t in tiers.report_sections(store, run, suite_of(run))]  # tiers, transfer
    sections[1:1] = extra + _breakdown_sections(store, run, a)  # right after the leaderboard
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images: list[Path] = []
    for s in sections:
        if s.image:
            p = out / s.image[0]
            p.write_bytes(s.image[1])
            images.append(p)
    md = out / "report.md"
    md.write_text(render_markdown(run, n_episodes, sections), encoding="utf-8")
    page = out / "report.html"
    page.write_text(render_html(run, n_episodes, sections), encoding="utf-8")
    return ReportFiles(md, page, images)
