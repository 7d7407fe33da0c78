"""Task calibration: how reliably a policy passes each task of a split, from ``n`` trials per task.

Estimators (``n`` trials of a task, ``c`` of them passed; both are unbiased for ``k <= n``):

- pass@k = 1 - C(n-c, k) / C(n, k): the probability that at least one of ``k`` attempts passes;
- pass^k = C(c, k) / C(n, k): the probability that all ``k`` attempts pass (the reliability measure).

Bands, by pass rate ``c / n``: below 10% -> ``review`` (often broken or ambiguous: read the task), 10-90% ->
``train`` (the policy sometimes solves it: a learning signal), above 90% -> ``regression`` (a check that must
keep passing). Difficulty classes by pass@3: ``hard`` when pass@3 = 0 (never solved), ``easy`` when pass@3 = 1
(three attempts always include a pass), ``medium`` otherwise; they need ``n >= 3``.

A task passes when its score says ``passed`` (the workflows verifier's verdict); for a family whose score has
no pass/fail, when its primary score reaches a threshold the caller gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from salesgym.bench.splits import Slot
from salesgym.bench.store import EpisodeRecord

REVIEW_BELOW = 0.10
REGRESSION_ABOVE = 0.90
BANDS = ("review", "train", "regression")
CLASSES = ("hard", "medium", "easy")
DIFFICULTY_K = 3
_EPS = 1e-12


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` passes in ``n`` trials: 1 - C(n-c, k) / C(n, k)."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all ``k`` attempts pass) from ``c`` passes in ``n`` trials: C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (isinstance(n, int) and isinstance(c, int) and isinstance(k, int)):
        raise TypeError("n, c and k must be ints")
    if n < 1 or not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need n >= 1, 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")


def band(rate: float) -> str:
    """``review`` below 10%, ``regression`` above 90%, else ``train``."""
    if rate < REVIEW_BELOW - _EPS:
        return "review"
    if rate > REGRESSION_ABOVE + _EPS:
        return "regression"
    return "train"


def difficulty(pass_at_3: float | None) -> str | None:
    """``hard`` (pass@3 = 0), ``easy`` (pass@3 = 1), ``medium`` between; None without three trials."""
    if pass_at_3 is None:
        return None
    if pass_at_3 <= _EPS:
        return "hard"
    if pass_at_3 >= 1.0 - _EPS:
        return "easy"
    return "medium"


def episode_passed(metrics: Mapping[str, Any] | None, threshold: float | None) -> bool | None:
    """Whether one episode passed: the score's ``passed``, else ``primary >= threshold``; None if undecidable."""
    if not metrics:
        return False
    verdict = metrics.get("passed")
    if isinstance(verdict, bool):
        return verdict
    primary = metrics.get("primary")
    if threshold is None or not isinstance(primary, int | float):
        return None
    return float(primary) >= threshold


@dataclass(frozen=True, slots=True)
class TaskCalibration:
    """One task (a split entry: a template instance) under ``n`` trials."""

    task: str
    split: str
    family: str  # the split entry's family (a workflows tier)
    template: str
    n: int
    passes: int
    errors: int  # trials that ended in an error (counted as failures)
    stopped: int  # trials the policy stopped (an endpoint down, a token budget spent; counted as failures)
    rate: float
    pass_at: Mapping[int, float]  # pass@k for k = 1..n
    pass_hat: Mapping[int, float]  # pass^k for k = 1..n
    band: str
    difficulty: str | None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["pass_at"] = {str(k): round(v, 6) for k, v in self.pass_at.items()}
        out["pass_hat"] = {str(k): round(v, 6) for k, v in self.pass_hat.items()}
        out["rate"] = round(self.rate, 6)
        return out


def calibrate_task(task: Slot, split: str, outcomes: Sequence[bool], errors: int = 0,
                   stopped: int = 0) -> TaskCalibration:  # fmt: skip
    n, c = len(outcomes), sum(outcomes)
    if n == 0:
        raise ValueError(f"task {task.id!r} has no finished trial")
    at = {k: pass_at_k(n, c, k) for k in range(1, n + 1)}
    hat = {k: pass_hat_k(n, c, k) for k in range(1, n + 1)}
    return TaskCalibration(task.id, split, task.family, task.template, n, c, errors, stopped, c / n, at, hat,
                           band(c / n), difficulty(at.get(DIFFICULTY_K)))  # fmt: skip


def calibrate_split(
    split: str, layout: Sequence[Slot], episodes: Sequence[EpisodeRecord], policy: str, threshold: float | None
) -> list[TaskCalibration]:
    """Every task of ``layout`` with the trials ``policy`` played of it (an error counts as a failed trial)."""
    by_task: dict[str, list[bool]] = {}
    errors: dict[str, int] = {}
    stopped: dict[str, int] = {}
    for e in episodes:
        if e.policy != policy:
            continue
        if e.status == "stopped":
            stopped[e.territory_id] = stopped.get(e.territory_id, 0) + 1
        if e.status == "error":
            errors[e.territory_id] = errors.get(e.territory_id, 0) + 1
            by_task.setdefault(e.territory_id, []).append(False)
            continue
        passed = episode_passed(e.metrics, threshold)
        if passed is None:
            raise ValueError("this family's score has no pass/fail verdict (`passed`): give --pass-threshold "
                             "(an episode passes when its primary score reaches it)")  # fmt: skip
        by_task.setdefault(e.territory_id, []).append(passed)
    return [calibrate_task(t, split, by_task[t.id], errors.get(t.id, 0), stopped.get(t.id, 0))
            for t in layout if t.id in by_task]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Group:
    """Tasks pooled by one key (a template, a tier): mean pass rate, mean pass@k and pass^k at ``k`` = n."""

    key: str
    tasks: int
    rate: float
    pass_at_n: float
    pass_hat_n: float
    bands: Mapping[str, int]
    classes: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rate": round(self.rate, 6), "pass_at_n": round(self.pass_at_n, 6),
                "pass_hat_n": round(self.pass_hat_n, 6)}  # fmt: skip


def group(tasks: Sequence[TaskCalibration], key: str) -> list[Group]:
    """Tasks pooled by ``key`` (``template`` or ``family``), in first-seen order; a template's band counts are
    over its instances."""
    pools: dict[str, list[TaskCalibration]] = {}
    for t in tasks:
        pools.setdefault(str(getattr(t, key)), []).append(t)
    out = []
    for name, ts in pools.items():
        bands = {b: sum(t.band == b for t in ts) for b in BANDS}
        classes = {c: sum(t.difficulty == c for t in ts) for c in CLASSES}
        out.append(Group(name, len(ts), _mean([t.rate for t in ts]), _mean([t.pass_at[t.n] for t in ts]),
                         _mean([t.pass_hat[t.n] for t in ts]), bands, classes))  # fmt: skip
    return out


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def report(policy: str, trials: int, tasks: Sequence[TaskCalibration], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The calibration as JSON-able data: per task, per template, per tier (``family``) and overall."""
    return {
        "format": 1,
        "policy": policy,
        "trials": trials,
        **dict(meta),
        "definitions": {
            "pass_at": "pass@k = 1 - C(n-c,k)/C(n,k), k = 1..n (unbiased)",
            "pass_hat": "pass^k = C(c,k)/C(n,k), k = 1..n (all k attempts pass; unbiased)",
            "band": f"rate < {REVIEW_BELOW:.0%} review, {REVIEW_BELOW:.0%}-{REGRESSION_ABOVE:.0%} train, "
                    f"> {REGRESSION_ABOVE:.0%} regression",
            "difficulty": "by pass@3: 0 hard, 1 easy, otherwise medium (needs 3 or more trials)",
        },
        "summary": _summary(tasks),
        "by_tier": [g.to_dict() for g in group(tasks, "family")],
        "by_template": [g.to_dict() for g in group(tasks, "template")],
        "tasks": [t.to_dict() for t in tasks],
    }


def _summary(tasks: Sequence[TaskCalibration]) -> dict[str, Any]:
    if not tasks:
        return {"tasks": 0}
    return {
        "tasks": len(tasks),
        "rate": round(_mean([t.rate for t in tasks]), 6),
        "bands": {b: sum(t.band == b for t in tasks) for b in BANDS},
        "classes": {c: sum(t.difficulty == c for t in tasks) for c in CLASSES},
    }


def markdown(data: Mapping[str, Any]) -> str:
    """The calibration as Markdown tables: summary, per tier, per template, per task."""
    n = data["trials"]
    k3 = DIFFICULTY_K if n > DIFFICULTY_K else None  # at n = 3 the pass^n column already shows it
    lines = [f"# Calibration: `{data['policy']}`, {n} trials per task", ""]
    if data.get("splits"):
        lines += [f"Splits: {', '.join(data['splits'])}. {data.get('note', '')}".rstrip(), ""]
    s = data["summary"]
    if s.get("tasks"):
        bands = ", ".join(f"{b} {s['bands'][b]}" for b in BANDS)
        classes = ", ".join(f"{c} {s['classes'][c]}" for c in CLASSES)
        lines += [f"{s['tasks']} tasks, mean pass rate {s['rate']:.2f}; bands: {bands}"
                  + (f"; pass@3 classes: {classes}" if k3 else ""), ""]  # fmt: skip
    lines += [f"Bands: {data['definitions']['band']}. pass@k and pass^k are the unbiased estimators from n trials "
              f"(pass^{n}: all {n} attempts pass). Difficulty: {data['definitions']['difficulty']}.", ""]
    word = data.get("family_word", "family")
    for title, rows in ((f"By {word}", data["by_tier"]), ("By template", data["by_template"])):
        lines += [f"## {title}", "", f"| {title.split()[-1]} | tasks | pass rate | pass@{n} | pass^{n} | review | "
                  "train | regression |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for g in rows:
            b = g["bands"]
            lines.append(f"| `{g['key']}` | {g['tasks']} | {g['rate']:.2f} | {g['pass_at_n']:.2f} | "
                         f"{g['pass_hat_n']:.2f} | {b['review']} | {b['train']} | {b['regression']} |")  # fmt: skip
        lines.append("")
    extra = f" pass@{k3} | pass^{k3} |" if k3 else ""
    classes = n >= DIFFICULTY_K
    lines += ["## By task", "", f"| task | split | template | passes | pass rate |{extra} pass^{n} | band |"
              + (" class |" if classes else ""),
              "|---|---|---|---:|---:|" + ("---:|---:|" if k3 else "") + "---:|---|" + ("---|" if classes else "")]
    for t in data["tasks"]:
        at, hat = t["pass_at"], t["pass_hat"]
        cols = f" {at.get(str(k3), 0):.2f} | {hat.get(str(k3), 0):.2f} |" if k3 else ""
        bad = [f"{t[k]} {k}" for k in ("errors", "stopped") if t.get(k)]
        err = f" ({', '.join(bad)})" if bad else ""
        lines.append(f"| `{t['task']}` | {t['split']} | `{t['template']}` | {t['passes']}/{t['n']}{err} | "
                     f"{t['rate']:.2f} |{cols} {hat[str(t['n'])]:.2f} | "
                     f"{t['band']} |" + (f" {t['difficulty'] or '-'} |" if classes else ""))  # fmt: skip
    return "\n".join(lines) + "\n"
