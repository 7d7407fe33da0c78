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


ROW_IN = 0.42  # inches a policy's row gets: its name and its figure stay legible at 20 policies and more


def scores_with_ci(rows: Sequence[PolicyRow], title: str = "primary score (mean, 95% bootstrap CI)",
                   axis: str = "primary score") -> bytes:
    """Horizontal bars of mean primary score with CI whiskers, one row per policy: baselines blue, exploit
    probes orange, references grey and hatched (the legend says which is which)."""
    plt = _pyplot()
    shown = [r for r in rows if r.primary is not None]
    fig, ax = plt.subplots(figsize=(8.0, ROW_IN * max(len(shown), 2) + 1.4))
    ys = list(range(len(shown)))[::-1]
    kinds = [("reference", "#bbbbbb", "//") if r.reference else ("exploit probe", "#e08a2c", "") if r.probe
             else ("policy", "#3b6ea5", "") for r in shown]
    for y, r, (_, colour, hatch) in zip(ys, shown, kinds, strict=True):
        assert r.primary is not None
        ax.barh(y, r.primary.mean, xerr=[[r.primary.mean - r.primary.ci_low], [r.primary.ci_high - r.primary.mean]],
                color=colour, hatch=hatch, edgecolor="#555555", linewidth=0.5, capsize=3, ecolor="#222222")
    ax.set_yticks(ys, [r.policy for r in shown], fontsize=9)
    ax.set_ylim(-0.7, len(shown) - 0.3)
    ax.set_xlabel(axis)
    ax.set_title(title)
    ax.axvline(0.0, color="#666666", linewidth=0.8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    from matplotlib.patches import Patch

    seen = dict.fromkeys(kinds)
    ax.legend(handles=[Patch(facecolor=c, hatch=h, edgecolor="#555555", label=k) for k, c, h in seen],
              fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: it never covers a bar
    return _png(fig)


def funnels(data: Mapping[str, Mapping[str, int]], title: str = "milestone funnel", axis: str = "milestone") -> bytes:
    """The funnel as a table of colour: a row per policy, a column per stage, each cell its count (written in
    it) shaded by the count (log scale when the counts span decades). Grouped bars for 20 policies are too thin
    to read and need 20 colours that look alike; a heat map needs none."""
    import numpy as np
    from matplotlib.colors import LogNorm, Normalize

    plt = _pyplot()
    stages: list[str] = []
    for f in data.values():
        stages += [k for k in f if k not in stages]
    policies = list(data)
    grid = np.array([[data[p].get(m, 0) for m in stages] for p in policies], dtype=float)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.95 * len(stages) + 2.5), ROW_IN * max(len(policies), 2) + 1.6))
    top = float(grid.max()) if grid.size else 0.0
    wide = top > 0 and top / max(float(grid[grid > 0].min()), 1.0) > 50
    norm = LogNorm(vmin=1, vmax=top) if wide else Normalize(vmin=0, vmax=max(top, 1.0))
    shown = np.where(grid > 0, grid, np.nan) if wide else grid
    image = ax.imshow(shown, cmap="Blues", norm=norm, aspect="auto")
    for i in range(len(policies)):
        for j in range(len(stages)):
            value = grid[i, j]
            dark = value > 0 and norm(value) > 0.6
            ax.text(j, i, f"{value:g}", ha="center", va="center", fontsize=8, color="white" if dark else "#222222")
    ax.set_xticks(range(len(stages)), stages, rotation=30, ha="right")
    ax.set_yticks(range(len(policies)), policies, fontsize=9)
    ax.set_xlabel(axis)
    ax.set_title(f"{title} per policy (sum over the run)")
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="count" + (" (log scale)" if wide else ""))
    return _png(fig)
