"""Turn a run's episodes into the numbers a leaderboard shows (shared by the CLI table and the reports).

With several trials per territory (``bench --trials K``) every per-territory figure is the mean over the
territory's trials, so the bootstrap still resamples territories; the spread across trials and the pass^k
reliability (:func:`reliability`) come from the individual trials.

An episode the policy's endpoint stopped (errors, timeouts, refused connections after the retries:
``stopped: endpoint_error: ...``) is *invalid*: like an error, it is no evidence of what the policy does and is
not scored (:func:`invalid`); a row whose episodes are mostly invalid or errors is shown, never ranked. How
each policy's episodes ended is summarised by :func:`stop_shares`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from salesgym.bench import stats
from salesgym.bench.store import EpisodeRecord

PRIMARY = "primary"
SECONDARY = (
    "closed_value",
    "win_rate",
    "disqualification_accuracy",
    "cycle_time_days",
    "utilisation",
    "invalid_actions",
)
# what a run is analysed against without a family's suite (tests, old runs)
DEFAULT_ANCHOR = "expected-value"
DEFAULT_REFERENCE = ("oracle",)
DEFAULT_FLOORS = ("idle", "random")
DEFAULT_PASS_THRESHOLD = 0.5  # pass^k: every trial's normalised score at least this (half-way floor -> reference)
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens")
ENDPOINT_STOP = "stopped: endpoint_error"  # the end of an episode the policy's endpoint stopped
# how an episode ended, by the start of its recorded end, for the leaderboard's "ended by" column
STOP_KINDS = (
    (ENDPOINT_STOP, "endpoint"),
    ("stopped: no_tool_call", "no call"),
    ("stopped: token_budget", "budget"),
    ("stopped: wall_budget", "budget"),
    ("stopped: context_overflow", "context"),
    ("stopped", "stopped"),
    ("step_cap", "step cap"),
    ("error", "error"),
)
INVALID_ACTION_CEILING = "invalid calls"  # truncated by the environment's invalid-action ceiling
MILESTONE_ORDER = (
    "identified",
    "engaged",
    "qualified",
    "validated",
    "mobilised",
    "commercial",
    "commit",
    "closed",
    "disqualified",
)


@dataclass(frozen=True, slots=True)
class PolicyRow:
    policy: str
    reference: bool  # shown as headroom, never ranked
    probe: bool  # an exploit probe: shown, checked, never ranked
    episodes: int
    errors: int
    primary: stats.Summary | None
    closed_value: stats.Summary | None
    secondary: Mapping[str, float | None]
    normalised: stats.Summary | None  # per-territory normalised score, summarised over territories
    vs_anchor: stats.PairedDifference | None
    vs_anchor_closed: stats.PairedDifference | None
    trials: int = 1  # the most trials any territory has for this policy
    spread: float | None = None  # mean over territories of the std of the normalised score across trials
    pass_k: float | None = None  # share of territories where every trial reached the pass threshold
    pass_k_ci: tuple[float, float] | None = None  # its 95% bootstrap interval over territories
    invalid: int = 0  # episodes the policy's endpoint stopped (not scored)

    @property
    def unrankable(self) -> bool:
        """Mostly invalid episodes or errors: the row is shown, never ranked."""
        return 2 * (self.invalid + self.errors) > self.episodes


@dataclass(frozen=True, slots=True)
class FailureModes:
    truncated: int
    step_cap: int
    errors: int
    invalid_actions: int
    violations: Mapping[str, int]
    stopped: int = 0  # the policy gave up (StopEpisode: a budget, an endpoint that stayed down)


@dataclass(frozen=True, slots=True)
class Prices:
    """Dollars per million tokens. Cached prompt tokens cost ``cached`` (``input`` when not given); the rest of
    the prompt ``input``; completions ``output``."""

    input: float = 0.0
    output: float = 0.0
    cached: float | None = None

    def episode_cost(self, usage: Mapping[str, float]) -> float:
        prompt, completion, cached = (float(usage.get(k, 0.0)) for k in USAGE_KEYS)
        cached = min(cached, prompt)  # the endpoint's prompt_tokens include the cached ones
        cached_price = self.input if self.cached is None else self.cached
        return ((prompt - cached) * self.input + cached * cached_price + completion * self.output) / 1e6


@dataclass(frozen=True, slots=True)
class Cost:
    episodes: int
    wall_s_total: float
    wall_s_mean: float
    steps_mean: float
    tool_calls_total: int
    steps_per_s: float
    usage_episodes: int = 0  # episodes whose policy reported token usage
    tokens_mean: Mapping[str, float] | None = None  # per episode, over those: prompt / completion / cached
    tokens_total: Mapping[str, float] | None = None
    cost_mean: float | None = None  # dollars per episode (given prices)
    cost_total: float | None = None


@dataclass(frozen=True, slots=True)
class ExploitResult:
    """One probe's check. A paired probe (``twin`` set) passes when its mean paired difference with its honest
    twin is at most zero; a pure probe passes when it scores below the anchor on primary and closed value and
    earns no reward through the tools it exploits."""

    policy: str
    twin: str  # the policy it is compared with: its honest twin, or the anchor for a pure probe
    paired: bool
    difference: stats.PairedDifference | None  # probe - twin on the primary, paired by territory
    primary: float
    twin_primary: float
    closed_value: float
    twin_closed_value: float
    violations: int
    mechanism_reward: float | None  # reward earned through the exploited tools (must be <= 0), if known
    passed: bool


@dataclass(frozen=True, slots=True)
class Analysis:
    rows: list[PolicyRow]  # ranked policies first (by normalised score, then primary), then probes, then references
    funnels: dict[str, dict[str, int]]
    failures: dict[str, FailureModes]
    costs: dict[str, Cost]
    exploits: list[ExploitResult]
    exploit_check: str  # "passed" | "failed" | "not run: ..."
    anchor: str = DEFAULT_ANCHOR
    normalisation: str = ""  # how the normalised score was made here, in words
    notes: list[str] = field(default_factory=list)
    trials: int = 1  # the most trials of any policy on any territory
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    ends: dict[str, dict[str, int]] = field(default_factory=dict)  # policy -> how its episodes ended -> count
    prices: Prices | None = None
    stops: dict[str, dict[str, float]] = field(default_factory=dict)  # policy -> early end -> share of episodes

    @property
    def has_usage(self) -> bool:
        return any(c.usage_episodes for c in self.costs.values())


def ranked(rows: Sequence[PolicyRow], reference_label: str) -> list[tuple[str, PolicyRow]]:
    """Rows with their rank label: 1, 2, ... for ranked policies, ``reference_label`` for references,
    ``probe`` for exploit probes and ``invalid`` for rows whose episodes are mostly invalid or errors."""
    out: list[tuple[str, PolicyRow]] = []
    rank = 0
    for r in rows:
        if r.reference:
            out.append((reference_label, r))
        elif r.probe:
            out.append(("probe", r))
        elif r.unrankable:
            out.append(("invalid", r))
        else:
            rank += 1
            out.append((str(rank), r))
    return out


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def invalid(ep: EpisodeRecord) -> bool:
    """The policy's endpoint stopped the episode: no evidence of what the policy does (never scored)."""
    return ep.status == "stopped" and (ep.end or "").startswith(ENDPOINT_STOP)


def stop_kind(ep: EpisodeRecord) -> str | None:
    """What ended an episode early, in a word (None: it ran to the environment's end). The environment's
    invalid-action ceiling shows as ``invalid calls`` (malformed or refused calls, one after another)."""
    end = end_of(ep)
    for prefix, kind in STOP_KINDS:
        if end.startswith(prefix):
            return kind
    if end == "truncated" and (ep.metrics or {}).get("ended_by") == "invalid-action ceiling":
        return INVALID_ACTION_CEILING
    return None


def stop_shares(episodes: Sequence[EpisodeRecord], policy: str) -> dict[str, float]:
    """Share of ``policy``'s episodes each early end took, largest first."""
    mine = [e for e in episodes if e.policy == policy]
    counts: dict[str, int] = {}
    for ep in mine:
        kind = stop_kind(ep)
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
    return {k: n / len(mine) for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}


def stops_text(shares: Mapping[str, float]) -> str:
    """``no call 67%, endpoint 33%``; ``—`` when every episode ran to its end."""
    return ", ".join(f"{k} {v:.0%}" for k, v in shares.items()) or "—"


def metric_by_episode(episodes: Sequence[EpisodeRecord], policy: str, key: str) -> dict[tuple[str, int], float]:
    """``(territory_id, trial) -> metric`` for one policy's scored episodes that have it (invalid ones are
    not scored)."""
    out: dict[tuple[str, int], float] = {}
    for ep in episodes:
        if ep.policy != policy or ep.metrics is None or invalid(ep):
            continue
        v = _num(ep.metrics.get(key))
        if v is not None:
            out[(ep.territory_id, ep.trial)] = v
    return out


def by_territory(values: Mapping[tuple[str, int], float]) -> dict[str, float]:
    """Per-trial values averaged per territory."""
    groups: dict[str, list[float]] = {}
    for (tid, _), v in values.items():
        groups.setdefault(tid, []).append(v)
    return {tid: sum(vs) / len(vs) for tid, vs in groups.items()}


def metric_by_territory(episodes: Sequence[EpisodeRecord], policy: str, key: str) -> dict[str, float]:
    """``territory_id -> metric``, the mean over the territory's trials."""
    return by_territory(metric_by_episode(episodes, policy, key))


def _summary(values: Mapping[str, float]) -> stats.Summary | None:
    return stats.summarise([values[k] for k in sorted(values)]) if values else None


def _paired(a: Mapping[str, float], b: Mapping[str, float]) -> stats.PairedDifference | None:
    return stats.paired_difference(a, b) if set(a) & set(b) else None


def _mean(values: Mapping[str, float]) -> float | None:
    return sum(values.values()) / len(values) if values else None


def _milestone_key(name: str) -> tuple[int, str]:
    low = name.lower()
    return (MILESTONE_ORDER.index(low) if low in MILESTONE_ORDER else len(MILESTONE_ORDER), low)


def funnel(episodes: Sequence[EpisodeRecord], policy: str) -> dict[str, int]:
    totals: dict[str, int] = {}
    for ep in episodes:
        if ep.policy != policy or ep.metrics is None:
            continue
        adv = ep.metrics.get("advances")
        if isinstance(adv, Mapping):
            for k, v in adv.items():
                n = _num(v)
                if n is not None:
                    totals[str(k)] = totals.get(str(k), 0) + int(n)
    return {k: totals[k] for k in sorted(totals, key=_milestone_key)}


def failures(episodes: Sequence[EpisodeRecord], policy: str) -> FailureModes:
    mine = [e for e in episodes if e.policy == policy]
    violations: dict[str, int] = {}
    truncated = invalid = 0
    for ep in mine:
        m = ep.metrics or {}
        truncated += bool(m.get("truncated"))
        invalid += int(_num(m.get("invalid_actions")) or 0)
        viol = m.get("violations")
        if isinstance(viol, Mapping):
            for k, v in viol.items():
                violations[str(k)] = violations.get(str(k), 0) + int(_num(v) or 0)
    return FailureModes(
        truncated=truncated,
        step_cap=sum(e.status == "step_cap" for e in mine),
        errors=sum(e.status == "error" for e in mine),
        invalid_actions=invalid,
        violations=dict(sorted(violations.items())),
        stopped=sum(e.status == "stopped" for e in mine),
    )


def end_of(ep: EpisodeRecord) -> str:
    """How an episode ended: the recorded reason, else (runs from before it was recorded) what its status and
    score say."""
    if ep.status == "error":
        return "error"
    if ep.end:
        return ep.end
    if ep.status == "step_cap":
        return "step_cap"
    return "truncated" if (ep.metrics or {}).get("truncated") else "terminated"


def ends(episodes: Sequence[EpisodeRecord], policy: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ep in episodes:
        if ep.policy == policy:
            counts[end_of(ep)] = counts.get(end_of(ep), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def usage_of(ep: EpisodeRecord) -> dict[str, float] | None:
    """The token usage the policy reported for the episode (``episode_record()["usage"]``), or None."""
    usage = (ep.policy_record or {}).get("usage")
    if not isinstance(usage, Mapping):
        return None
    found = {k: _num(usage.get(k)) for k in USAGE_KEYS}
    if all(v is None for v in found.values()):
        return None
    return {k: v or 0.0 for k, v in found.items()}


def cost(episodes: Sequence[EpisodeRecord], policy: str, prices: Prices | None = None) -> Cost:
    mine = [e for e in episodes if e.policy == policy]
    n = len(mine)
    wall = sum(e.wall_s for e in mine)
    steps = sum(e.steps for e in mine)
    usages = [u for u in map(usage_of, mine) if u is not None]
    totals = {k: sum(u[k] for u in usages) for k in USAGE_KEYS} if usages else None
    dollars = [prices.episode_cost(u) for u in usages] if prices is not None and usages else None
    return Cost(
        episodes=n,
        wall_s_total=wall,
        wall_s_mean=wall / n if n else 0.0,
        steps_mean=steps / n if n else 0.0,
        tool_calls_total=sum(e.tool_calls for e in mine),
        steps_per_s=steps / wall if wall > 0 else 0.0,
        usage_episodes=len(usages),
        tokens_mean={k: v / len(usages) for k, v in totals.items()} if totals else None,
        tokens_total=totals,
        cost_mean=sum(dollars) / len(dollars) if dollars else None,
        cost_total=sum(dollars) if dollars else None,
    )


# The tools through which a probe's exploit acts; reward earned on those steps must be at most zero. spam-all's
# messages and the forger's texts also carry legitimate outreach (and a step's reward includes buyer replies to
# earlier work that arrive while it runs), so for those two the check is the score comparison here plus the
# environment's forgery tests (tests/territory/test_forgery.py).
MECHANISM_TOOLS: dict[str, tuple[str, ...]] = {
    "inflate-stages": ("update_crm",),
    "cycle-stages": ("update_crm",),
    "always-discount": ("send_proposal", "negotiate", "send_contract"),
}


def mechanism_reward(episodes: Sequence[EpisodeRecord], policy: str) -> float | None:
    tools = MECHANISM_TOOLS.get(policy)
    if tools is None:
        return None
    total = 0.0
    for e in episodes:
        if e.policy == policy and e.metrics:
            by_tool = e.metrics.get("reward_by_tool") or {}
            total += sum(float(by_tool.get(t, 0.0)) for t in tools)
    return total


NOISE_SHARE = 0.005  # a paired difference this small a share of the twin's score, and not significant, is noise


def paired_probe_passes(diff: stats.PairedDifference, twin_mean: float | None) -> bool:
    """A paired probe passes when adding its behaviour never helps: the mean paired difference is at most zero,
    or it is indistinguishable from zero (the CI includes 0) and under 0.5% of the twin's mean score. (An
    honest seller and its twin with one extra behaviour part ways on chance outcomes a step or two later, so
    a strict sign test on a few dozen territories would fail a probe that gains nothing about half the time.)"""
    if diff.mean <= 1e-9:
        return True
    return not diff.significant and twin_mean is not None and diff.mean <= NOISE_SHARE * abs(twin_mean)


def exploit_check(
    episodes: Sequence[EpisodeRecord], exploits: Sequence[str], anchor: str, paired: Mapping[str, str]
) -> tuple[list[ExploitResult], str]:
    """Check every probe present: paired probes against their honest twin, pure probes against the anchor."""
    present = [p for p in exploits if any(e.policy == p for e in episodes)]
    if not present:
        return [], "not run: no exploit probe in this run"
    results: list[ExploitResult] = []
    missing: list[str] = []
    for p in present:
        twin = paired.get(p, anchor)
        mine, theirs = metric_by_territory(episodes, p, PRIMARY), metric_by_territory(episodes, twin, PRIMARY)
        if not theirs:
            missing.append(twin)
            continue
        closed, twin_closed = (metric_by_territory(episodes, q, "closed_value") for q in (p, twin))
        pr, tp, cv, tc = (_mean(x) for x in (mine, theirs, closed, twin_closed))
        diff = _paired(mine, theirs)
        viol = sum(failures(episodes, p).violations.values())
        if p in paired:
            passed = diff is not None and paired_probe_passes(diff, tp)
            mech = None
        else:
            mech = mechanism_reward(episodes, p)
            closed_ok = cv is not None and tc is not None and (cv < tc or (cv == 0.0 and tc == 0.0))
            passed = pr is not None and tp is not None and pr < tp and closed_ok and (mech is None or mech <= 1e-9)
        nan = float("nan")
        results.append(
            ExploitResult(p, twin, p in paired, diff, nan if pr is None else pr, nan if tp is None else tp,
                          nan if cv is None else cv, nan if tc is None else tc, viol, mech, passed)
        )
    if not results:
        return [], f"not run: {', '.join(sorted(set(missing)))} (the probes' twin) is not in this run"
    verdict = "passed" if all(r.passed for r in results) else "failed"
    if missing:
        verdict += f" (some probes not checked: {', '.join(sorted(set(missing)))} missing)"
    return results, verdict


def normalised_by_episode(
    episodes: Sequence[EpisodeRecord], policy: str, floors: Sequence[str], tops: Sequence[str]
) -> dict[tuple[str, int], float]:
    """Per episode (territory, trial): (primary − floor) / (top − floor), where the floor is the best of the
    ``floors`` policies on that territory (do-nothing and random; each its mean over trials) and the top is the
    reference (oracle) there, or the territory's ceiling when no reference ran. Territories where the top is
    not above the floor are left out."""
    mine = metric_by_episode(episodes, policy, PRIMARY)
    floor_by = [metric_by_territory(episodes, f, PRIMARY) for f in floors]
    top_by = next((t for t in (metric_by_territory(episodes, r, PRIMARY) for r in tops) if t), None)
    ceiling = metric_by_territory(episodes, policy, "primary_ceiling")
    out: dict[tuple[str, int], float] = {}
    for (tid, trial), p in mine.items():
        lows = [f[tid] for f in floor_by if tid in f]
        top = top_by.get(tid) if top_by is not None else ceiling.get(tid)
        if not lows or top is None:
            continue
        norm = stats.normalised_score(p, max(lows), top)
        if norm is not None and top > max(lows):
            out[(tid, trial)] = norm
    return out


def normalised_by_territory(
    episodes: Sequence[EpisodeRecord], policy: str, floors: Sequence[str], tops: Sequence[str]
) -> dict[str, float]:
    """:func:`normalised_by_episode` averaged over each territory's trials."""
    return by_territory(normalised_by_episode(episodes, policy, floors, tops))


def reliability(
    values: Mapping[tuple[str, int], float], trials: int, threshold: float
) -> tuple[float | None, float | None]:
    """(spread, pass^k) of per-trial scores: spread is the mean over territories of the standard deviation
    across their trials (territories with two or more); pass^k is the share of territories where all
    ``trials`` trials scored at least ``threshold`` (a territory with a trial missing, e.g. an error, fails)."""
    groups: dict[str, list[float]] = {}
    for (tid, _), v in values.items():
        groups.setdefault(tid, []).append(v)
    if not groups:
        return None, None
    stds = [_std(vs) for vs in groups.values() if len(vs) > 1]
    passed = sum(all_passed(values, trials, threshold).values())
    return (sum(stds) / len(stds) if stds else None), passed / len(groups)


def all_passed(values: Mapping[tuple[str, int], float], trials: int, threshold: float) -> dict[str, float]:
    """Per territory, 1.0 when all ``trials`` trials scored at least ``threshold`` (a missing trial fails)."""
    groups: dict[str, list[float]] = {}
    for (tid, _), v in values.items():
        groups.setdefault(tid, []).append(v)
    return {tid: float(len(vs) >= trials and min(vs) >= threshold) for tid, vs in groups.items()}


def _std(values: Sequence[float]) -> float:
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def analyse(
    episodes: Sequence[EpisodeRecord],
    policies: Sequence[str] | None = None,
    suite: Any | None = None,
    *,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
    prices: Prices | None = None,
) -> Analysis:
    """Leaderboard rows ranked by the normalised score (raw primary where it cannot be made), funnels,
    failure modes, episode ends, costs (tokens, and dollars given ``prices``), the trials' spread and pass^k
    (at ``pass_threshold``) and the exploit check. ``suite`` is the family's ``PolicySuite`` (anchor,
    references, floors, probes and their twins); without it the documented defaults apply and no probe is
    checked."""
    names = list(policies) if policies is not None else sorted({e.policy for e in episodes})
    anchor = suite.anchor if suite is not None else DEFAULT_ANCHOR
    reference = tuple(suite.reference) if suite is not None else DEFAULT_REFERENCE
    floors = tuple(suite.floors) if suite is not None else DEFAULT_FLOORS
    exploits = tuple(suite.exploits) if suite is not None else ()
    paired = dict(suite.paired) if suite is not None else {}
    notes: list[str] = []
    present_floors = [f for f in floors if any(e.policy == f for e in episodes)]
    tops = [r for r in reference if any(e.policy == r for e in episodes)]
    if not present_floors:
        notes.append(f"normalised score needs a floor policy ({', '.join(floors)}) in the run")
    how = (
        f"per territory, (primary − max({', '.join(present_floors)})) / "
        f"({tops[0] if tops else 'the territory ceiling'} − that floor), averaged over territories"
    )
    anchor_primary = metric_by_territory(episodes, anchor, PRIMARY)
    anchor_closed = metric_by_territory(episodes, anchor, "closed_value")
    trials = max((e.trial + 1 for e in episodes), default=1)
    rows: list[PolicyRow] = []
    for p in names:
        prim = metric_by_territory(episodes, p, PRIMARY)
        closed = metric_by_territory(episodes, p, "closed_value")
        per_trial = normalised_by_episode(episodes, p, present_floors, tops) if present_floors else {}
        norm = by_territory(per_trial)
        spread, pass_k = reliability(per_trial, trials, pass_threshold) if trials > 1 else (None, None)
        passes = list(all_passed(per_trial, trials, pass_threshold).values()) if trials > 1 else []
        pass_k_ci = stats.bootstrap_ci(passes) if passes else None
        rows.append(
            PolicyRow(
                policy=p,
                reference=p in reference,
                probe=p in exploits,
                episodes=sum(e.policy == p for e in episodes),
                errors=sum(e.policy == p and e.status == "error" for e in episodes),
                primary=_summary(prim),
                closed_value=_summary(closed),
                secondary={k: _mean(metric_by_territory(episodes, p, k)) for k in SECONDARY},
                normalised=_summary(norm),
                vs_anchor=_paired(prim, anchor_primary) if p != anchor else None,
                vs_anchor_closed=_paired(closed, anchor_closed) if p != anchor else None,
                trials=max((e.trial + 1 for e in episodes if e.policy == p), default=1),
                spread=spread,
                pass_k=pass_k,
                pass_k_ci=pass_k_ci,
                invalid=sum(e.policy == p and invalid(e) for e in episodes),
            )
        )

    def rank_key(r: PolicyRow) -> tuple[float, float, str]:
        norm = r.normalised.mean if r.normalised else float("-inf")
        return (-norm, -(r.primary.mean if r.primary else float("-inf")), r.policy)

    ranked = sorted((r for r in rows if not (r.reference or r.probe or r.unrankable)), key=rank_key)
    unrankable = sorted((r for r in rows if r.unrankable and not (r.reference or r.probe)), key=rank_key)
    probes = sorted((r for r in rows if r.probe), key=rank_key)
    refs = [r for r in rows if r.reference]
    results, verdict = exploit_check(episodes, exploits, anchor, paired)
    return Analysis(
        rows=ranked + unrankable + probes + refs,
        funnels={p: funnel(episodes, p) for p in names},
        failures={p: failures(episodes, p) for p in names},
        costs={p: cost(episodes, p, prices) for p in names},
        exploits=results,
        exploit_check=verdict,
        anchor=anchor,
        normalisation=how,
        notes=notes,
        trials=trials,
        pass_threshold=pass_threshold,
        ends={p: ends(episodes, p) for p in names},
        prices=prices,
        stops={p: stop_shares(episodes, p) for p in names},
    )


def exploit_line(analysis: Analysis) -> str:
    if not analysis.exploits:
        return f"exploit check: {analysis.exploit_check}"
    failed = [r.policy for r in analysis.exploits if not r.passed]
    detail = f" ({', '.join(failed)} failed)" if failed else f" (all {len(analysis.exploits)} probes)"
    return f"exploit check: {analysis.exploit_check}{detail}"


@dataclass(frozen=True, slots=True)
class Projection:
    """``bench --dry-run``: one policy's sample and what the whole split would take at the same rate."""

    policy: str
    sampled: int  # episodes played
    errors: int  # errors and invalid episodes (stopped by the endpoint)
    episodes: int  # episodes the real run would play
    wall_s_mean: float
    tokens_mean: Mapping[str, float] | None
    cost_mean: float | None

    @property
    def wall_s(self) -> float:
        return self.wall_s_mean * self.episodes

    @property
    def tokens(self) -> dict[str, float] | None:
        return {k: v * self.episodes for k, v in self.tokens_mean.items()} if self.tokens_mean else None

    @property
    def cost(self) -> float | None:
        return None if self.cost_mean is None else self.cost_mean * self.episodes


def projection(
    sample: Sequence[EpisodeRecord], policies: Sequence[str], episodes: int, prices: Prices | None
) -> list[Projection]:
    """Per policy: the sample's means per episode, scaled to ``episodes`` episodes (territories x trials)."""
    out: list[Projection] = []
    for p in policies:
        c = cost(sample, p, prices)
        errors = sum(e.policy == p and (e.status == "error" or invalid(e)) for e in sample)
        out.append(Projection(p, c.episodes, errors, episodes, c.wall_s_mean, c.tokens_mean, c.cost_mean))
    return out


# -- shared text for the CLI table and the reports -----------------------------------------------------------
def _k(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def tokens_text(tokens: Mapping[str, float] | None) -> str:
    """``prompt/completion/cached`` tokens, compact (``12.3k/1.1k/8.0k``); ``—`` when none were reported."""
    return "—" if not tokens else "/".join(_k(tokens.get(k, 0.0)) for k in USAGE_KEYS)


def dollars(x: float | None) -> str:
    if x is None:
        return "—"
    return f"${x:,.4f}" if abs(x) < 1 else f"${x:,.2f}"


def run_cost(a: Analysis) -> float | None:
    """Dollars for the whole run (every policy that reported usage), given prices."""
    totals = [c.cost_total for c in a.costs.values() if c.cost_total is not None]
    return sum(totals) if totals else None
