"""Report figures as PNG bytes (matplotlib, Agg backend, imported lazily: ``pip install 'salesgym[report]'``)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.bench.analysis import PolicyRow


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def scores_with_ci(rows: Sequence[PolicyRow], title: str = "primary score (mean, 95% bootstrap CI)") -> bytes:
    """Horizontal bars of mean primary score with CI whiskers; references hatched."""
    plt = _pyplot()
    shown = [r for r in rows if r.primary is not None]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * max(len(shown), 2) + 1.2))
    ys = list(range(len(shown)))[::-1]
    means = [r.primary.mean for r in shown if r.primary]
    lows = [r.primary.mean - r.primary.ci_low for r in shown if r.primary]
    highs = [r.primary.ci_high - r.primary.mean for r in shown if r.primary]
    colors = ["#bbbbbb" if r.reference else "#3b6ea5" for r in shown]
    ax.barh(ys, means, xerr=[lows, highs], color=colors, capsize=3, ecolor="#222222")
    ax.set_yticks(ys, [f"{r.policy} (ref)" if r.reference else r.policy for r in shown])
    ax.set_xlabel("primary: value-weighted verified advances per 100 seller hours")
    ax.set_title(title)
    ax.axvline(0.0, color="#666666", linewidth=0.8)
    return _png(fig)


def funnels(data: Mapping[str, Mapping[str, int]]) -> bytes:
    """Milestone funnel per policy: total verified advances into each milestone (log scale when wide)."""
    plt = _pyplot()
    milestones: list[str] = []
    for f in data.values():
        for k in f:
            if k not in milestones:
                milestones.append(k)
    policies = list(data)
    fig, ax = plt.subplots(figsize=(max(7.5, 0.9 * len(milestones) + 2), 4.2))
    width = 0.8 / max(len(policies), 1)
    cmap = plt.get_cmap("tab20")
    for i, p in enumerate(policies):
        xs = [j + i * width for j in range(len(milestones))]
        ax.bar(xs, [data[p].get(m, 0) for m in milestones], width=width, label=p, color=cmap(i % 20))
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(milestones))], milestones, rotation=20)
    ax.set_ylabel("advances (sum over territories)")
    ax.set_title("milestone funnel per policy")
    values = [v for f in data.values() for v in f.values() if v > 0]
    if values and max(values) / max(min(values), 1) > 50:
        ax.set_yscale("log")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _png(fig)
