"""Scores broken down by scenario: the mean primary of each policy per value of each scenario dimension of a
split (family, template, size, horizon) that takes more than one value in it.

A territory split's families and templates, the desk's buyer variants (its transfer split) and pipeline sizes
(its scale split) all come out of this one table maker; an environment class may name its dimensions in its own
words (``FamilySpec.scenario_words``, e.g. the desk calls a family a buyer variant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from salesgym.bench.splits import Slot
from salesgym.bench.store import EpisodeRecord

DIMENSIONS = ("family", "template", "n_opportunities", "horizon_days")
WORDS = {"family": "family", "template": "template", "n_opportunities": "opportunities", "horizon_days": "days"}


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One dimension: ``values`` its values in split order, ``cells[policy][value]`` the mean primary (None where
    the policy has no finished episode there), ``territories[value]`` how many territories have that value."""

    dimension: str
    title: str
    values: tuple[str, ...]
    territories: Mapping[str, int]
    cells: Mapping[str, Mapping[str, float | None]]


def breakdowns(
    layout: Sequence[Slot],
    episodes: Sequence[EpisodeRecord],
    policies: Sequence[str],
    words: Mapping[str, str] | None = None,
) -> list[Breakdown]:
    """Every dimension of ``layout`` (the split's territories) with more than one value, in ``DIMENSIONS`` order."""
    names = {**WORDS, **(words or {})}
    value_of = {d: {t.id: str(getattr(t, d)) for t in layout} for d in DIMENSIONS}
    out: list[Breakdown] = []
    for d in DIMENSIONS:
        values = tuple(dict.fromkeys(value_of[d].values()))
        if len(values) < 2:
            continue
        sums: dict[tuple[str, str], list[float]] = {}
        for e in episodes:
            v = value_of[d].get(e.territory_id)
            primary = (e.metrics or {}).get("primary")
            if v is not None and isinstance(primary, int | float) and e.status != "error":
                sums.setdefault((e.policy, v), []).append(float(primary))
        cells = {p: {v: (sum(x) / len(x) if (x := sums.get((p, v))) else None) for v in values} for p in policies}
        counts = {v: sum(1 for t in layout if str(getattr(t, d)) == v) for v in values}
        out.append(Breakdown(d, f"By {names[d]}", values, counts, cells))
    return out


def tag_breakdowns(
    layout: Sequence[Slot], episodes: Sequence[EpisodeRecord], policies: Sequence[str], tags: Mapping[str, str]
) -> list[Breakdown]:
    """Breakdowns by a list a task's score carries (``tags``: score key -> word), a task counting once for each
    of its values: the workflows family's apps (a task on the CRM and the scheduler counts for both)."""
    ids = [t.id for t in layout]
    out: list[Breakdown] = []
    for key, word in tags.items():
        of: dict[str, tuple[str, ...]] = {}
        for e in episodes:
            found = (e.metrics or {}).get(key)
            if e.territory_id not in of and isinstance(found, list):
                of[e.territory_id] = tuple(str(v) for v in found)
        values = tuple(dict.fromkeys(v for tid in ids for v in of.get(tid, ())))
        if len(values) < 2:
            continue
        sums: dict[tuple[str, str], list[float]] = {}
        for e in episodes:
            primary = (e.metrics or {}).get("primary")
            if e.territory_id in of and isinstance(primary, int | float) and e.status != "error":
                for v in of[e.territory_id]:
                    sums.setdefault((e.policy, v), []).append(float(primary))
        cells = {p: {v: (sum(x) / len(x) if (x := sums.get((p, v))) else None) for v in values} for p in policies}
        counts = {v: sum(1 for tid in ids if v in of.get(tid, ())) for v in values}
        out.append(Breakdown(key, f"By {word}", values, counts, cells))
    return out
