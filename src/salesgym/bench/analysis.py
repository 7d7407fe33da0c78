"""Turn a run's episodes into the numbers a leaderboard shows (shared by the CLI table and the reports)."""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class FailureModes:
    truncated: int
    step_cap: int
    errors: int
    invalid_actions: int
    violations: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Cost:
    episodes: int
    wall_s_total: float
    wall_s_mean: float
    steps_mean: float
    tool_calls_total: int
    steps_per_s: float


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


def ranked(rows: Sequence[PolicyRow], reference_label: str) -> list[tuple[str, PolicyRow]]:
    """Rows with their rank label: 1, 2, ... for ranked policies, ``reference_label`` for references and
    ``probe`` for exploit probes."""
    out: list[tuple[str, PolicyRow]] = []
    rank = 0
    for r in rows:
        if r.reference:
            out.append((reference_label, r))
        elif r.probe:
            out.append(("probe", r))
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


def metric_by_territory(episodes: Sequence[EpisodeRecord], policy: str, key: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for ep in episodes:
        if ep.policy != policy or ep.metrics is None:
            continue
        v = _num(ep.metrics.get(key))
        if v is not None:
            out[ep.territory_id] = v
    return out


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
    )


def cost(episodes: Sequence[EpisodeRecord], policy: str) -> Cost:
    mine = [e for e in episodes if e.policy == policy]
    n = len(mine)
    wall = sum(e.wall_s for e in mine)
    steps = sum(e.steps for e in mine)
    return Cost(
        episodes=n,
        wall_s_total=wall,
        wall_s_mean=wall / n if n else 0.0,
        steps_mean=steps / n if n else 0.0,
        tool_calls_total=sum(e.tool_calls for e in mine),
        steps_per_s=steps / wall if wall > 0 else 0.0,
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


def normalised_by_territory(
    episodes: Sequence[EpisodeRecord], policy: str, floors: Sequence[str], tops: Sequence[str]
) -> dict[str, float]:
    """Per territory: (primary − floor) / (top − floor), where the floor is the best of the ``floors``
    policies there (do-nothing and random) and the top is the reference (oracle) there, or the territory's
    ceiling when no reference ran. Territories where the top is not above the floor are left out."""
    mine = metric_by_territory(episodes, policy, PRIMARY)
    floor_by = [metric_by_territory(episodes, f, PRIMARY) for f in floors]
    top_by = next((t for t in (metric_by_territory(episodes, r, PRIMARY) for r in tops) if t), None)
    ceiling = metric_by_territory(episodes, policy, "primary_ceiling")
    out: dict[str, float] = {}
    for tid, p in mine.items():
        lows = [f[tid] for f in floor_by if tid in f]
        top = top_by.get(tid) if top_by is not None else ceiling.get(tid)
        if not lows or top is None:
            continue
        norm = stats.normalised_score(p, max(lows), top)
        if norm is not None and top > max(lows):
            out[tid] = norm
    return out


def analyse(
    episodes: Sequence[EpisodeRecord],
    policies: Sequence[str] | None = None,
    suite: Any | None = None,
) -> Analysis:
    """Leaderboard rows ranked by the normalised score (raw primary where it cannot be made), funnels,
    failure modes, costs and the exploit check. ``suite`` is the family's ``PolicySuite`` (anchor, references,
    floors, probes and their twins); without it the documented defaults apply and no probe is checked."""
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
    rows: list[PolicyRow] = []
    for p in names:
        prim = metric_by_territory(episodes, p, PRIMARY)
        closed = metric_by_territory(episodes, p, "closed_value")
        norm = normalised_by_territory(episodes, p, present_floors, tops) if present_floors else {}
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
            )
        )

    def rank_key(r: PolicyRow) -> tuple[float, float, str]:
        norm = r.normalised.mean if r.normalised else float("-inf")
        return (-norm, -(r.primary.mean if r.primary else float("-inf")), r.policy)

    ranked = sorted((r for r in rows if not (r.reference or r.probe)), key=rank_key)
    probes = sorted((r for r in rows if r.probe), key=rank_key)
    refs = [r for r in rows if r.reference]
    results, verdict = exploit_check(episodes, exploits, anchor, paired)
    return Analysis(
        rows=ranked + probes + refs,
        funnels={p: funnel(episodes, p) for p in names},
        failures={p: failures(episodes, p) for p in names},
        costs={p: cost(episodes, p) for p in names},
        exploits=results,
        exploit_check=verdict,
        anchor=anchor,
        normalisation=how,
        notes=notes,
    )


def exploit_line(analysis: Analysis) -> str:
    if not analysis.exploits:
        return f"exploit check: {analysis.exploit_check}"
    failed = [r.policy for r in analysis.exploits if not r.passed]
    detail = f" ({', '.join(failed)} failed)" if failed else f" (all {len(analysis.exploits)} probes)"
    return f"exploit check: {analysis.exploit_check}{detail}"
