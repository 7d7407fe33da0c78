"""A model counterparty's accounting in reports: when a run's other side was played by a language model (the
desk's ``--buyer llm``), its requests, tokens and cost, apart from the policy's own model.

The family states the score keys (``REPORT_WORDS["counterparty"]``, :class:`vocabulary.Counterparty`); an episode
used a model counterparty when its score holds the model key. A run without one gets no table, no figure and no line
under ``salesgym bench``'s leaderboard, so rule-based reports and output are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from salesgym.bench.store import EpisodeRecord
from salesgym.bench.vocabulary import Counterparty

Table = tuple[list[str], list[list[str]]]


@dataclass(frozen=True, slots=True)
class Totals:
    """One policy's episodes against a model counterparty, summed."""

    models: tuple[str, ...]
    episodes: int
    requests: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None unless every episode was priced
    priced: int  # episodes with a cost


def used(metrics: Mapping[str, Any] | None, words: Counterparty | None) -> bool:
    """Whether an episode's score says a model played its counterparty."""
    return words is not None and metrics is not None and metrics.get(words.model) is not None


def _int(metrics: Mapping[str, Any], key: str) -> int:
    value = metrics.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def totals(episodes: Sequence[EpisodeRecord], policy: str, words: Counterparty) -> Totals | None:
    """``policy``'s totals over its episodes that used a model counterparty (None: none did)."""
    mine = [m for e in episodes if e.policy == policy and (m := e.metrics) is not None and used(m, words)]
    if not mine:
        return None
    costs = [c for m in mine if isinstance(c := m.get(words.cost), int | float) and not isinstance(c, bool)]
    return Totals(
        models=tuple(sorted({str(m[words.model]) for m in mine})),
        episodes=len(mine),
        requests=sum(_int(m, words.requests) for m in mine),
        failed=sum(_int(m, words.failed) for m in mine),
        prompt_tokens=sum(_int(m, words.prompt_tokens) for m in mine),
        completion_tokens=sum(_int(m, words.completion_tokens) for m in mine),
        cost=round(sum(float(c) for c in costs), 6) if len(costs) == len(mine) else None,
        priced=len(costs),
    )  # fmt: skip


def _usd(x: float | None) -> str:
    return "—" if x is None else f"${x:,.4f}"


def table(episodes: Sequence[EpisodeRecord], policies: Sequence[str], words: Counterparty | None) -> Table | None:
    """Per policy: the counterparty model, its requests, tokens and cost (None: no episode used a model)."""
    if words is None:
        return None
    found = {p: t for p in policies if (t := totals(episodes, p, words)) is not None}
    if not found:
        return None
    header = ["policy", words.title, "episodes", "requests", "failed", "requests/episode", "prompt tokens",
              "completion tokens", "tokens/episode", "$ (total)", "$/episode"]  # fmt: skip
    rows = [[p, ", ".join(t.models), str(t.episodes), str(t.requests), str(t.failed),
             f"{t.requests / t.episodes:.1f}", f"{t.prompt_tokens:,}", f"{t.completion_tokens:,}",
             f"{(t.prompt_tokens + t.completion_tokens) / t.episodes:,.0f}", _usd(t.cost),
             _usd(None if t.cost is None else t.cost / t.episodes)] for p, t in found.items()]  # fmt: skip
    return header, rows


def leaderboard_lines(episodes: Sequence[EpisodeRecord], policies: Sequence[str],
                      words: Counterparty | None) -> list[str]:  # fmt: skip
    """Under ``salesgym bench``'s leaderboard, one line per policy whose episodes a model counterparty played: its
    model, requests, tokens per episode and cost (none: no episode used a model, the output is as before)."""
    if words is None:
        return []
    lines = []
    for p in policies:
        t = totals(episodes, p, words)
        if t is None:
            continue
        tokens = f"{t.prompt_tokens / t.episodes:,.0f}/{t.completion_tokens / t.episodes:,.0f}"
        cost = "unpriced" if t.cost is None else f"{_usd(t.cost)} ({_usd(t.cost / t.episodes)}/ep)"
        lines.append(f"{words.title} {', '.join(t.models)} for {p}: {t.requests} requests ({t.failed} failed) over "
                     f"{t.episodes} episodes, tokens/ep prompt/completion {tokens}, {cost}")  # fmt: skip
    return lines


def intro(words: Counterparty) -> str:
    return (f"The {words.title} that played the other side, apart from the policies' own models (the compute cost "
            "above): requests it was sent (failed: no valid answer; the rules decided instead), the tokens its "
            f"endpoint reported and its cost at the {words.title}'s prices (— when unpriced: give its prices per "
            "million tokens).")


def figure(metrics: Mapping[str, Any] | None, words: Counterparty | None) -> tuple[str, str] | None:
    """One episode's counterparty accounting as one figure, for the episode view (None: no model played it)."""
    if not used(metrics, words):
        return None
    assert metrics is not None and words is not None
    cost = metrics.get(words.cost)
    text = (f"{metrics[words.model]} · requests {_int(metrics, words.requests)} ({_int(metrics, words.failed)} "
            f"failed) · tokens {_int(metrics, words.prompt_tokens):,} prompt / "
            f"{_int(metrics, words.completion_tokens):,} completion · "
            f"{_usd(float(cost)) if isinstance(cost, int | float) else 'unpriced'}")  # fmt: skip
    return words.title, text


def keys(words: Counterparty | None) -> frozenset[str]:
    """The score keys the figure gathers (the view leaves them out of the rest of the score)."""
    if words is None:
        return frozenset()
    return frozenset({words.model, words.requests, words.failed, words.prompt_tokens, words.completion_tokens,
                      words.cost})  # fmt: skip
