"""What a family's benchmark report calls its numbers: the primary score, the second score every leaderboard
shows (``closed_value`` in ``env.score()``: closed value, converted MRR, partial score), the other columns, the
secondary metrics and the funnel, if any.

Each family states them in its own folder, as plain data its spec carries (``FamilySpec.report_words``, e.g.
``salesgym/envs/desk/report_words.py``), read here into a typed :class:`Vocabulary`. A run of a family not
registered here (an old or foreign run) gets :data:`NEUTRAL` words that claim nothing about what its scores
measure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True, slots=True)
class Metric:
    key: str  # a key of env.score()
    title: str  # a report's column title
    short: str = ""  # the terminal leaderboard's column title


@dataclass(frozen=True, slots=True)
class Funnel:
    key: str  # a key of env.score() holding {stage: count}
    title: str
    intro: str
    axis: str  # what a stage is called on the plot


@dataclass(frozen=True, slots=True)
class Counterparty:
    """A model that plays the other side (the desk's buyer), apart from the policy's own model: score keys of its
    model name, requests, failed requests, prompt and completion tokens and cost in USD (None: unpriced)."""

    title: str  # what the report calls it ("buyer model")
    model: str
    requests: str
    failed: str
    prompt_tokens: str
    completion_tokens: str
    cost: str


@dataclass(frozen=True, slots=True)
class Vocabulary:
    unit: str  # one scored item: territory, desk, task
    units: str
    primary: str  # what the primary score is
    primary_axis: str  # the scores plot's axis
    closed: Metric  # the second score (env.score()["closed_value"]); its `means` says what the column holds
    closed_means: str
    columns: tuple[Metric, ...]  # more leaderboard columns: means of these score keys
    secondary: tuple[Metric, ...]  # the secondary-metrics table
    funnel: Funnel | None
    counterparty: Counterparty | None = None  # a family whose other side may be a model states its score keys

    def speak(self, text: str) -> str:
        """The benchmark's generic text (it says "territory" for a split's item) in this family's word.

        >>> for_family("workflows").speak("averaged over territories, per territory")
        'averaged over tasks, per task'
        """
        return text.replace("territories", self.units).replace("territory", self.unit)


NEUTRAL = Vocabulary(
    unit="territory", units="territories", primary="the environment's verified score",
    primary_axis="primary score", closed=Metric("closed_value", "closed", "closed"),
    closed_means="the mean of the environment's closed_value score", columns=(),
    secondary=(Metric("closed_value", "closed"), Metric("invalid_actions", "invalid actions")), funnel=None,
)  # fmt: skip
KEYS = frozenset({"unit", "primary", "primary_axis", "closed", "columns", "secondary", "funnel"})
OPTIONAL_KEYS = frozenset({"counterparty"})


def parse(words: Mapping[str, Any], where: str) -> Vocabulary:
    """A family's ``REPORT_WORDS``; a missing or unknown key is a ``ValueError`` naming ``where``."""
    if not KEYS <= set(words) <= KEYS | OPTIONAL_KEYS:
        missing, unknown = sorted(KEYS - set(words)), sorted(set(words) - KEYS - OPTIONAL_KEYS)
        raise ValueError(f"{where}: REPORT_WORDS needs exactly {sorted(KEYS)}, and may have "
                         f"{sorted(OPTIONAL_KEYS)} (missing {missing}, unknown {unknown})")  # fmt: skip
    unit, units = words["unit"]
    closed = words["closed"]
    funnel = words["funnel"]
    return Vocabulary(
        unit=unit, units=units, primary=words["primary"], primary_axis=words["primary_axis"],
        closed=Metric("closed_value", closed["title"], closed["short"]), closed_means=closed["means"],
        columns=tuple(Metric(c["key"], c["title"], c.get("short", c["title"])) for c in words["columns"]),
        secondary=tuple(Metric(c["key"], c["title"]) for c in words["secondary"]),
        funnel=Funnel(funnel["key"], funnel["title"], funnel["intro"], funnel["axis"]) if funnel else None,
        counterparty=_counterparty(words["counterparty"], where) if words.get("counterparty") else None,
    )  # fmt: skip


def _counterparty(words: Mapping[str, Any], where: str) -> Counterparty:
    needed = set(Counterparty.__slots__)
    if set(words) != needed or not all(isinstance(v, str) and v for v in words.values()):
        raise ValueError(f"{where}: REPORT_WORDS counterparty needs exactly {sorted(needed)}, each a non-empty text")
    return Counterparty(**words)


@cache
def for_family(family: str | None) -> Vocabulary:
    """The vocabulary the registered family ``family`` states (its spec's ``report_words``), or :data:`NEUTRAL`."""
    import salesgym

    try:
        spec = salesgym.family_named(family or "")
    except ValueError:  # not registered here
        return NEUTRAL
    return parse(spec.report_words, f"family {spec.name!r} (report_words)")


def for_env(env_id: str) -> Vocabulary:
    from salesgym.bench.runner import family_of

    try:
        return for_family(family_of(env_id))
    except ValueError:  # not registered here
        return NEUTRAL
