"""The territory's benchmark splits as data: what ``salesgym splits generate`` seals into ``splits/`` (the bench
adds the format and the hash; the territory's manifests name no ``env_id``, they predate ids), and the rules between
them are ``bench/splits.rule_violations``'s.

Splits are cut by *family and template*, never by seed:

- one whole family (``public_sector`` by default) is held out: none of its templates appear in train;
- in every other family, templates go, in declaration order, to train (all but the last two), eval (the
  second to last) and held-out (the last). With 3 templates per family that is one of each.

So ``eval`` shares families with ``train`` but no template, and ``held-out`` has unseen templates and at
least one unseen family. Seeds are disjoint ranges per split; sizes are drawn from a fixed-seed generator.
Each manifest carries a generated contamination note (what it shares with train, down to mechanisms).

A private split (:func:`private_plan`) is drawn like ``held-out`` (its templates and families), but its
territories carry no seed: seeds are derived from an operator-held key (``bench/splits.py``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

SPLIT_NAMES = ("train", "eval", "held-out", "debug", "eval-lite", "held-out-lite", "eval-quick", "held-out-quick")
# a lite or quick split is a smaller cut of its parent's templates (lite: a language model's episode fits a modest
# budget; quick: every horizon tier in a minute's run)
LITE_OF = {"eval-lite": "eval", "held-out-lite": "held-out", "eval-quick": "eval", "held-out-quick": "held-out"}


class TemplateLike(Protocol):
    @property
    def mechanisms(self) -> Sequence[str]: ...


class FamilyLike(Protocol):
    @property
    def templates(self) -> Mapping[str, TemplateLike]: ...


class Placed(Protocol):
    """A territory or a seedless slot (``bench/splits.py``): what the contamination note looks at."""

    @property
    def family(self) -> str: ...

    @property
    def template(self) -> str: ...


Catalogue = Mapping[str, FamilyLike]

DEFAULT_HELD_OUT_FAMILY = "public_sector"


@dataclass(frozen=True, slots=True)
class Tier:
    """Territories of one horizon: ``per_template`` per template of the split's pool (cycled through the pool),
    or ``count`` in all, their sizes drawn from ``sizes``."""

    horizon_days: int
    sizes: tuple[int, ...]  # n_opportunities choices
    per_template: int = 1
    count: int | None = None  # a fixed number instead of per_template x templates


@dataclass(frozen=True, slots=True)
class SplitShape:
    """How many territories a split has and how big they are: its horizon tiers, in order."""

    description: str
    tiers: tuple[Tier, ...]
    seed_base: int


# Horizon tiers of the scored splits: a month of 10-20 deals, a quarter of 30-60, a half-year of 30-100 (sized by
# cost; the differences they can separate are in docs/benchmark.md, "How many territories").
MONTH, QUARTER, HALF_YEAR = (10, 12, 15, 18, 20), (30, 40, 50, 60), (30, 50, 70, 100)

SHAPES: dict[str, SplitShape] = {
    "train": SplitShape(
        "Training territories: the first templates of every family except the held-out one, at every horizon "
        "tier. Never report benchmark numbers on it.",
        (Tier(30, (10, 20, 30, 50), 2), Tier(90, QUARTER, 2), Tier(180, HALF_YEAR, 2)),
        seed_base=10_000,
    ),
    "eval": SplitShape(
        "Evaluation territories: the families of train with templates train never sees, in three horizon tiers "
        "(30 days and 10-20 opportunities, 90 days and 30-60, 180 days and 30-100). The scored split: "
        "`salesgym bench --split eval`.",
        (Tier(30, MONTH, 8), Tier(90, QUARTER, 4), Tier(180, HALF_YEAR, 4)),
        seed_base=20_000,
    ),
    "held-out": SplitShape(
        "Held-out territories: templates never in train, including every template of a family never in "
        "train, in eval's three horizon tiers. Tests generalisation to unseen markets and mechanisms.",
        (Tier(30, MONTH, 4), Tier(90, QUARTER, 2), Tier(180, HALF_YEAR, 2)),
        seed_base=30_000,
    ),
    "debug": SplitShape(
        "Three tiny territories (3-5 opportunities, 30 days) drawn from train templates: a smoke test for "
        "CI and development, not a benchmark.",
        (Tier(30, (3, 4, 5), count=3),),
        seed_base=40_000,
    ),
}

# lite cuts of eval and held-out: the same templates, fewer and smaller month-long territories, so a language
# model's episode stays within a few hundred turns and a modest token budget (docs/benchmark.md has the figures)
SHAPES["eval-lite"] = SplitShape(
    "A lite cut of eval (its templates; 3 territories each, 10-12 opportunities, 30 days) for language-model "
    "agents: an episode is about two hundred turns.",
    (Tier(30, (10, 12), 3),),
    seed_base=50_000,
)
SHAPES["held-out-lite"] = SplitShape(
    "A lite cut of held-out (its templates, one territory each, 10-12 opportunities, 30 days) for "
    "language-model agents.",
    (Tier(30, (10, 12), 1),),
    seed_base=60_000,
)
# quick cuts: every tier, the smallest sizes, a few territories: what `salesgym bench` runs by default (about a
# minute on two cores) and what the test suite checks the benchmark's promises on
SHAPES["eval-quick"] = SplitShape(
    "A quick cut of eval (its templates, one territory each per tier: 10-12 opportunities over 30 days, 30 over "
    "90 and over 180): the default of `salesgym bench`, about a minute on two cores. Not the scored split.",
    (Tier(30, (10, 12), 1), Tier(90, (30,), 1), Tier(180, (30,), 1)),
    seed_base=70_000,
)
SHAPES["held-out-quick"] = SplitShape(
    "A quick cut of held-out (three territories per tier, cycling through its templates so every one appears: "
    "10-12 opportunities over 30 days, 30 over 90 and over 180). Not the scored split.",
    (Tier(30, (10, 12), count=3), Tier(90, (30,), count=3), Tier(180, (30,), count=3)),
    seed_base=80_000,
)

PRIVATE_SHAPE = SplitShape(
    "Private test territories, drawn like held-out (templates never in train, including a family never in "
    "train, in its three horizon tiers). Their seeds are not in this file: they are derived from a key the "
    "operator holds, so only a key holder can build these worlds.",
    SHAPES["held-out"].tiers,
    seed_base=0,  # unused: seeds come from the key
)


def assign_templates(catalogue: Catalogue, held_out_family: str | None = None) -> dict[str, list[tuple[str, str]]]:
    """``{split: [(family, template), ...]}`` for train, eval and held-out, by the rules of this module."""
    families = list(catalogue)
    if len(families) < 2:
        raise ValueError("need at least two families to hold one out")
    held_family = held_out_family or (DEFAULT_HELD_OUT_FAMILY if DEFAULT_HELD_OUT_FAMILY in catalogue else families[-1])
    if held_family not in catalogue:
        raise ValueError(f"held-out family {held_family!r} is not in the catalogue ({', '.join(families)})")
    out: dict[str, list[tuple[str, str]]] = {"train": [], "eval": [], "held-out": []}
    for fam in families:
        names = list(catalogue[fam].templates)
        if fam == held_family:
            out["held-out"].extend((fam, t) for t in names)
            continue
        if len(names) < 3:
            raise ValueError(f"family {fam!r} needs at least 3 templates (train, eval, held-out), has {len(names)}")
        out["train"].extend((fam, t) for t in names[:-2])
        out["eval"].append((fam, names[-2]))
        out["held-out"].append((fam, names[-1]))
    return out


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode("utf-8")))


def _territories(name: str, pool: Sequence[tuple[str, str]], shape: SplitShape) -> list[dict[str, Any]]:
    """The split's territories, tier by tier; templates cycle through the pool across tiers (so a tier of
    ``count`` territories picks up where the last one stopped), sizes are drawn from a generator seeded by the
    split's name."""
    rng = _rng(name)
    out: list[dict[str, Any]] = []
    for tier in shape.tiers:
        count = tier.count if tier.count is not None else tier.per_template * len(pool)
        for _ in range(count):
            i = len(out)
            fam, tpl = pool[i % len(pool)]
            out.append({"id": f"{name}-{i:03d}", "family": fam, "template": tpl, "seed": shape.seed_base + i,
                        "n_opportunities": int(rng.choice(tier.sizes)), "horizon_days": tier.horizon_days})
    return out


def _debug_pool(train: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The first train template of each family, so the debug split touches several families."""
    seen: dict[str, tuple[str, str]] = {}
    for fam, tpl in train:
        seen.setdefault(fam, (fam, tpl))
    return list(seen.values())


def _mechanisms(catalogue: Catalogue, pairs: Sequence[tuple[str, str]] | set[tuple[str, str]]) -> set[str]:
    return {m for fam, tpl in pairs for m in catalogue[fam].templates[tpl].mechanisms}


def _pair(t: Placed | Mapping[str, Any]) -> tuple[str, str]:
    return (t["family"], t["template"]) if isinstance(t, Mapping) else (t.family, t.template)


def contamination(catalogue: Catalogue, split: Sequence[Placed | Mapping[str, Any]],
                  train: Sequence[Placed | Mapping[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """What ``split`` shares with ``train``: families, templates (``family/template``), template names, mechanisms."""
    pairs = {_pair(t) for t in split}
    train_pairs = {_pair(t) for t in train}
    fams, train_fams = {p[0] for p in pairs}, {p[0] for p in train_pairs}
    keys, train_keys = {f"{f}/{t}" for f, t in pairs}, {f"{f}/{t}" for f, t in train_pairs}
    names, train_names = {p[1] for p in pairs}, {p[1] for p in train_pairs}
    mechs, train_mechs = _mechanisms(catalogue, pairs), _mechanisms(catalogue, train_pairs)
    note: dict[str, Any] = {
        "reference": "train",
        "families_shared": sorted(fams & train_fams),
        "families_unseen": sorted(fams - train_fams),
        "templates_shared": sorted(keys & train_keys),
        "templates_unseen": sorted(keys - train_keys),
        "template_names_shared": sorted(names & train_names),
        "mechanisms_shared": sorted(mechs & train_mechs),
        "mechanisms_unseen": sorted(mechs - train_mechs),
    }
    note["summary"] = (
        f"shares {len(note['families_shared'])}/{len(fams)} families, {len(note['templates_shared'])}/{len(keys)} "
        f"templates and {len(note['mechanisms_shared'])}/{len(mechs)} mechanisms with train"
        + (f"; unseen families: {', '.join(note['families_unseen'])}" if note["families_unseen"] else "")
        + (f"; unseen mechanisms: {', '.join(note['mechanisms_unseen'])}" if note["mechanisms_unseen"] else "")
    )
    return note


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """The family/template rules between split manifests (``bench/splits.Manifest``); an empty list means they hold.

    - ``held-out`` contains no template seen in ``train`` and at least one family never seen in ``train``;
    - every private split is drawn like ``held-out`` and obeys the same rule;
    - ``eval`` shares families with ``train`` but no template;
    - a lite split obeys its parent's rule and uses only its parent's templates.
    """
    problems: list[str] = []
    train = manifests.get("train")
    if train is None:
        return ["no train split: the rules between splits cannot be checked"]
    for name, m in sorted(manifests.items()):
        rule = LITE_OF.get(name, name)
        if rule == "held-out" or m.private:
            leaked = sorted(m.templates & train.templates)
            if leaked:
                problems.append(f"{name} shares template(s) with train: {', '.join(leaked)}")
            if not m.families - train.families:
                problems.append(f"{name} has no family that is absent from train")
        elif rule == "eval":
            leaked = sorted(m.templates & train.templates)
            if leaked:
                problems.append(f"{name} shares template(s) with train: {', '.join(leaked)}")
            foreign = sorted(m.families - train.families)
            if foreign:
                problems.append(f"{name} has family(ies) absent from train: {', '.join(foreign)}")
        parent = manifests.get(LITE_OF.get(name, ""))
        if parent is not None and m.templates - parent.templates:
            problems.append(f"{name} has template(s) its parent {parent.name} lacks: "
                            f"{', '.join(sorted(m.templates - parent.templates))}")
    return problems


def catalogue() -> Catalogue:
    """The territory's scenario catalogue: families by name, each with its templates."""
    from salesgym.envs.territory.families import FAMILIES

    return FAMILIES


def plan(held_out_family: str | None = None, scenarios: Catalogue | None = None) -> dict[str, dict[str, Any]]:
    """Every public split of the catalogue (``scenarios``, else the territory's): name -> description,
    territories and contamination note."""
    cat = scenarios if scenarios is not None else catalogue()
    pools = assign_templates(cat, held_out_family)
    pools["debug"] = _debug_pool(pools["train"])
    pools.update({lite: pools[parent] for lite, parent in LITE_OF.items()})
    terr = {name: _territories(name, pools[name], SHAPES[name]) for name in SHAPES}
    return {name: {"description": shape.description, "territories": terr[name],
                   "contamination": contamination(cat, terr[name], terr["train"])}
            for name, shape in SHAPES.items()}  # fmt: skip


def private_plan(name: str, held_out_family: str | None = None, scenarios: Catalogue | None = None) -> dict[str, Any]:
    """A private split ``name`` as data: held-out's templates, sizes drawn from ``name``; the bench drops the seeds
    (they come from the operator's key)."""
    if name in SPLIT_NAMES:
        raise ValueError(f"a private split needs its own name (not one of {', '.join(SPLIT_NAMES)}), got {name!r}")
    cat = scenarios if scenarios is not None else catalogue()
    pools = assign_templates(cat, held_out_family)
    train = _territories("train", pools["train"], SHAPES["train"])
    drawn = _territories(name, pools["held-out"], PRIVATE_SHAPE)
    return {"description": PRIVATE_SHAPE.description, "territories": drawn,
            "contamination": contamination(cat, drawn, train)}  # fmt: skip
