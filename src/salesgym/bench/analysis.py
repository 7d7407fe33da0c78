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
ANCHOR = "expected-value"  # paired differences and the exploit check compare against it
RANDOM = "random"
DEFAULT_REFERENCE = ("oracle",)
DEFAULT_EXPLOITS = ("spam-all", "inflate-stages", "always-discount", "cycle-stages", "forger")
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
    episodes: int
    errors: int
    primary: stats.Summary | None
    closed_value: stats.Summary | None
    secondary: Mapping[str, float | None]
    normalised: float | None
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
    policy: str
    primary: float
    closed_value: float
    anchor_primary: float
    anchor_closed_value: float
    violations: int
    mechanism_reward: float | None  # reward earned through the exploited tools (must be <= 0), if known
    passed: bool


@dataclass(frozen=True, slots=True)
class Analysis:
    rows: list[PolicyRow]  # ranked policies first (by mean primary), then references
    funnels: dict[str, dict[str, int]]
    failures: dict[str, FailureModes]
    costs: dict[str, Cost]
    exploits: list[ExploitResult]
    exploit_check: str  # "passed" | "failed" | "not run: ..."
    notes: list[str] = field(default_factory=list)


def ranked(rows: Sequence[PolicyRow], reference_label: str) -> list[tuple[str, PolicyRow]]:
    """Rows with their rank label: 1, 2, ... for ranked policies, ``reference_label`` for references."""
    out: list[tuple[str, PolicyRow]] = []
    rank = 0
    for r in rows:
        if not r.reference:
            rank += 1
        out.append((reference_label if r.reference else str(rank), r))
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


def exploit_check(
    episodes: Sequence[EpisodeRecord], exploits: Sequence[str], anchor: str = ANCHOR
) -> tuple[list[ExploitResult], str]:
    """Every exploit probe must score below the anchor on primary, and on closed value (or both be zero), and
    earn at most zero reward through the mechanism it exploits."""
    present = [p for p in exploits if any(e.policy == p for e in episodes)]
    if not present:
        return [], "not run: no exploit probe in this run"
    a_primary = _mean(metric_by_territory(episodes, anchor, PRIMARY))
    a_closed = _mean(metric_by_territory(episodes, anchor, "closed_value"))
    if a_primary is None or a_closed is None:
        return [], f"not run: {anchor} is not in this run"
    results: list[ExploitResult] = []
    for p in present:
        pr = _mean(metric_by_territory(episodes, p, PRIMARY))
        cv = _mean(metric_by_territory(episodes, p, "closed_value"))
        viol = sum(failures(episodes, p).violations.values())
        if pr is None or cv is None:
            results.append(ExploitResult(p, float("nan"), float("nan"), a_primary, a_closed, viol, None, False))
            continue
        closed_ok = cv < a_closed or (cv == 0.0 and a_closed == 0.0)
        mech = mechanism_reward(episodes, p)
        mech_ok = mech is None or mech <= 1e-9
        results.append(
            ExploitResult(p, pr, cv, a_primary, a_closed, viol, mech, pr < a_primary and closed_ok and mech_ok)
        )
    return results, "passed" if all(r.passed for r in results) else "failed"


def analyse(
    episodes: Sequence[EpisodeRecord],
    policies: Sequence[str] | None = None,
    *,
    reference: Sequence[str] = DEFAULT_REFERENCE,
    exploits: Sequence[str] = DEFAULT_EXPLOITS,
    anchor: str = ANCHOR,
) -> Analysis:
    names = list(policies) if policies is not None else sorted({e.policy for e in episodes})
    notes: list[str] = []
    rand = _mean(metric_by_territory(episodes, RANDOM, PRIMARY))
    orac_vals = [_mean(metric_by_territory(episodes, r, PRIMARY)) for r in reference]
    orac = next((v for v in orac_vals if v is not None), None)
    if rand is None or orac is None:
        notes.append("normalised score needs both `random` and `oracle` in the run")
    anchor_primary = metric_by_territory(episodes, anchor, PRIMARY)
    anchor_closed = metric_by_territory(episodes, anchor, "closed_value")
    rows: list[PolicyRow] = []
    for p in names:
        prim = metric_by_territory(episodes, p, PRIMARY)
        closed = metric_by_territory(episodes, p, "closed_value")
        s = _summary(prim)
        rows.append(
            PolicyRow(
                policy=p,
                reference=p in reference,
                episodes=sum(e.policy == p for e in episodes),
                errors=sum(e.policy == p and e.status == "error" for e in episodes),
                primary=s,
                closed_value=_summary(closed),
                secondary={k: _mean(metric_by_territory(episodes, p, k)) for k in SECONDARY},
                normalised=stats.normalised_score(s.mean, rand, orac)
                if (s is not None and rand is not None and orac is not None)
                else None,
                vs_anchor=_paired(prim, anchor_primary) if p != anchor else None,
                vs_anchor_closed=_paired(closed, anchor_closed) if p != anchor else None,
            )
        )
    ranked = sorted(
        (r for r in rows if not r.reference),
        key=lambda r: (-(r.primary.mean if r.primary else float("-inf")), r.policy),
    )
    refs = [r for r in rows if r.reference]
    results, verdict = exploit_check(episodes, exploits, anchor)
    return Analysis(
        rows=ranked + refs,
        funnels={p: funnel(episodes, p) for p in names},
        failures={p: failures(episodes, p) for p in names},
        costs={p: cost(episodes, p) for p in names},
        exploits=results,
        exploit_check=verdict,
        notes=notes,
    )


def exploit_line(analysis: Analysis) -> str:
    if not analysis.exploits:
        return f"exploit check: {analysis.exploit_check}"
    failed = [r.policy for r in analysis.exploits if not r.passed]
    detail = (
        f" ({', '.join(failed)} not below {ANCHOR})"
        if failed
        else f" (all {len(analysis.exploits)} probes below {ANCHOR})"
    )
    return f"exploit check: {analysis.exploit_check}{detail}"
