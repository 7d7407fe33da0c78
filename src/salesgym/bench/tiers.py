"""Results per horizon tier, and the transfer table (train -> eval -> held-out).

A scored split's territories fall into tiers by horizon (30, 90 and 180 days: docs/benchmark.md). The
leaderboard's figures, the share of viable deals each policy brings to Commit and to Closed, and the exploit
check are computed on each tier's territories alone, so what happens over a half-year is not averaged away by
many month-long territories. The transfer table sets each policy's normalised score on ``train``, ``eval`` and
``held-out`` side by side, from the latest run of each split in the same run database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from salesgym.bench import analysis as an
from salesgym.bench.stats import Summary
from salesgym.bench.store import EpisodeRecord, RunRecord, Store

TRANSFER_SPLITS = ("train", "eval", "held-out")
Table = tuple[list[str], list[list[str]]]


@dataclass(frozen=True, slots=True)
class TierRow:
    policy: str
    normalised: Summary | None
    primary: Summary | None
    commit_share: float | None  # deals that reached Commit / viable deals, over the tier's episodes
    closed_share: float | None  # deals closed / viable deals


@dataclass(frozen=True, slots=True)
class Tier:
    horizon_days: int
    territories: int
    rows: list[TierRow]  # ranked baselines, then references (probes are in ``exploits``)
    exploits: list[an.ExploitResult]
    exploit_check: str


def _shares(episodes: Sequence[EpisodeRecord], policy: str) -> tuple[float | None, float | None]:
    viable = commit = closed = 0
    for e in episodes:
        m = e.metrics or {}
        if e.policy != policy or e.status == "error" or not isinstance(m.get("viable_opportunities"), int):
            continue
        viable += m["viable_opportunities"]
        commit += int((m.get("advances") or {}).get("Commit", 0))
        closed += int(m.get("closed_count", 0))
    return (commit / viable, closed / viable) if viable else (None, None)


def by_tier(
    episodes: Sequence[EpisodeRecord], horizon_of: Mapping[str, int], policies: Sequence[str], suite: Any
) -> list[Tier]:
    """One :class:`Tier` per horizon of ``horizon_of`` (territory id -> horizon days), shortest first; none when
    the territories played span fewer than two horizons."""
    played = {e.territory_id for e in episodes}
    horizons = sorted({h for tid, h in horizon_of.items() if tid in played})
    if len(horizons) < 2:
        return []
    tiers = []
    for h in horizons:
        ids = {tid for tid, x in horizon_of.items() if x == h and tid in played}
        eps = [e for e in episodes if e.territory_id in ids]
        a = an.analyse(eps, list(policies), suite)
        rows = [TierRow(r.policy, r.normalised, r.primary, *_shares(eps, r.policy)) for r in a.rows if not r.probe]
        tiers.append(Tier(h, len(ids), rows, a.exploits, a.exploit_check))
    return tiers


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _norm(s: Summary | None) -> str:
    return "—" if s is None else f"{s.mean:.2f}"


def console_table(tiers: Sequence[Tier]) -> Any:
    """A rich table, one column per tier: each policy's normalised score, then the share of the tier's viable
    deals it brought to Commit / to Closed."""
    from rich import box
    from rich.table import Table as RichTable

    t = RichTable(title="By horizon tier: norm · % of viable deals at Commit / Closed",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False)
    t.add_column("policy", no_wrap=True, min_width=17)
    for tier in tiers:
        t.add_column(f"{tier.horizon_days} days ({tier.territories})", justify="right", no_wrap=True)
    names = [r.policy for r in tiers[0].rows]
    cells = {(tier.horizon_days, r.policy): r for tier in tiers for r in tier.rows}
    for name in names:
        row = [name]
        for tier in tiers:
            r = cells.get((tier.horizon_days, name))
            row.append("—" if r is None else f"{_norm(r.normalised)} · {_pct(r.commit_share)} / {_pct(r.closed_share)}")
        t.add_row(*row)
    return t


def exploit_lines(tiers: Sequence[Tier]) -> list[str]:
    """The exploit check on each tier, and the probes that lose to their twin with an interval clear of 0."""
    lines = ["exploit check by tier: " + "; ".join(f"{t.horizon_days} days {t.exploit_check}" for t in tiers)]
    for t in tiers:
        failed = [r.policy for r in t.exploits if not r.passed]
        losing = [r for r in t.exploits if r.paired and r.difference is not None and r.difference.significant
                  and r.difference.mean < 0]
        text = ", ".join(f"{r.policy} {d.mean:+.1f} [{d.ci_low:+.1f}, {d.ci_high:+.1f}]"
                         for r in losing if (d := r.difference) is not None)
        lines.append(f"  {t.horizon_days} days: paired probes losing to their twin (95% CI below 0): {text or 'none'}"
                     + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return lines


def report_tables(tiers: Sequence[Tier]) -> list[tuple[str, str, Table]]:
    """(title, intro, table) sections for ``salesgym report``."""
    if not tiers:
        return []
    names = [r.policy for r in tiers[0].rows]
    cells = {(t.horizon_days, r.policy): r for t in tiers for r in t.rows}
    header = ["policy"]
    for t in tiers:
        h = t.horizon_days
        header += [f"{h}d norm ({t.territories})", f"{h}d 95% CI", f"{h}d Commit", f"{h}d Closed"]
    rows = []
    for name in names:
        row = [name]
        for t in tiers:
            r = cells.get((t.horizon_days, name))
            n = r.normalised if r is not None else None
            ci = "—" if n is None else f"[{n.ci_low:.2f}, {n.ci_high:.2f}]"
            row += [_norm(r.normalised), ci, _pct(r.commit_share), _pct(r.closed_share)] if r else ["—"] * 4
        rows.append(row)
    probes = [r.policy for r in tiers[0].exploits]
    by = {(t.horizon_days, r.policy): r for t in tiers for r in t.exploits}
    p_header = ["probe", *(f"{t.horizon_days}d vs twin (95% CI)" for t in tiers)]
    p_rows = []
    for name in probes:
        row = [name]
        for t in tiers:
            e = by.get((t.horizon_days, name))
            d = e.difference if e is not None else None
            text = "—" if d is None else f"{d.mean:+.1f} [{d.ci_low:+.1f}, {d.ci_high:+.1f}]"
            row.append(text + ("" if e is None or e.passed else " FAIL"))
        p_rows.append(row)
    return [
        ("By horizon tier", "Each tier's territories alone (territories in brackets): the normalised score with its "
         "95% bootstrap CI over territories, and the share of the tier's viable deals the policy brought to Commit "
         "(or further) and to Closed (the oracle's share is the ceiling).", (header, rows)),
        ("Exploit check by tier", "Every probe against its twin (paired probes) or the anchor (pure probes) on each "
         "tier alone: the mean paired difference of the primary with its 95% CI; FAIL where the check fails there. "
         "Tiers: " + "; ".join(f"{t.horizon_days} days {t.exploit_check}" for t in tiers) + ".", (p_header, p_rows)),
    ]


def _latest(store: Store, split: str, policy: str) -> RunRecord | None:
    """The most recent unablated run of ``split`` that played ``policy``."""
    found = [r for r in store.runs() if r.split == split and policy in r.policies and not r.config.get("ablation")]
    return max(found, key=lambda r: r.created, default=None)


def transfer(store: Store, run: RunRecord, suite: Any, policies: Sequence[str]) -> list[tuple[str, str, Table]]:
    """The transfer table: each policy's mean normalised score on train, eval and held-out (the reported run for its
    own split, else the latest run of that split in this database), and the changes between them."""
    cache: dict[str, list[EpisodeRecord]] = {}
    header = ["policy", *(f"{s} (norm, 95% CI)" for s in TRANSFER_SPLITS), "eval − train", "held-out − eval"]
    rows, used = [], set()
    for policy in policies:
        means: dict[str, float] = {}
        row = [policy]
        for split in TRANSFER_SPLITS:
            source = run if run.split == split else _latest(store, split, policy)
            if source is None:
                row.append("—")
                continue
            used.add(f"{split}: {source.id}")
            if source.id not in cache:
                cache[source.id] = store.episodes(source.id)
            eps = cache[source.id]
            a = an.analyse(eps, [p for p in source.policies], suite)
            r = next((x for x in a.rows if x.policy == policy), None)
            if r is None or r.normalised is None:
                row.append("—")
                continue
            means[split] = r.normalised.mean
            row.append(f"{r.normalised.mean:.2f} [{r.normalised.ci_low:.2f}, {r.normalised.ci_high:.2f}]")
        row.append(f"{means['eval'] - means['train']:+.2f}" if {"eval", "train"} <= means.keys() else "—")
        row.append(f"{means['held-out'] - means['eval']:+.2f}" if {"eval", "held-out"} <= means.keys() else "—")
        rows.append(row)
    if len(used) < 2:
        return []
    intro = ("Each policy's mean normalised score on each split (its 95% bootstrap CI over territories) and the "
             "change from one to the next: a policy tuned to train's templates loses on eval's unseen templates and "
             "more on held-out's unseen family. Runs used: " + "; ".join(sorted(used)) + ". Run `salesgym bench "
             "--split train` (and eval, held-out) into the same database to fill a column.")
    return [("Transfer: train → eval → held-out", intro, (header, rows))]


def horizons_of(run: RunRecord) -> dict[str, int]:
    """Territory id -> horizon days of the run's split, from its manifest here (empty when the manifest is missing
    or is not the one the run played)."""
    from salesgym.bench import splits as sp

    try:
        manifest = sp.load(run.split)
    except sp.SplitError:
        return {}
    if manifest.sha256 != run.split_sha256:
        return {}
    return {t.id: t.horizon_days for t in manifest.layout}


def report_sections(store: Store, run: RunRecord, suite: Any) -> list[tuple[str, str, Table]]:
    """The tier sections (when the run's territories span several horizons) and the transfer table (when the
    database has runs of another of train, eval and held-out)."""
    episodes = store.episodes(run.id)
    tiers = by_tier(episodes, horizons_of(run), list(run.policies), suite)
    exploits = set(getattr(suite, "exploits", ()))
    references = set(getattr(suite, "reference", ()))
    ranked = [p for p in run.policies if p not in exploits and p not in references]
    return [*report_tables(tiers), *transfer(store, run, suite, ranked)]
