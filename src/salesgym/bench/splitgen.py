"""Generate the split manifests from the scenario catalogue (run once; the JSON files are then frozen).

Splits are cut by *family and template*, never by seed:

- one whole family (``public_sector`` by default) is held out: none of its templates appear in train;
- in every other family, templates go, in declaration order, to train (all but the last two), eval (the
  second to last) and held-out (the last). With 3 templates per family that is one of each.

So ``eval`` shares families with ``train`` but no template, and ``held-out`` has unseen templates and at
least one unseen family. Seeds are disjoint ranges per split; sizes are drawn from a fixed-seed generator.
Each manifest carries a generated contamination note (what it shares with train, down to mechanisms).

A private split (:func:`generate_private`) is drawn like ``held-out`` (its templates and families), but its
territories carry no seed: seeds are derived from an operator-held key (see :mod:`salesgym.bench.splits`),
and only the key's public fingerprint is sealed into the manifest.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from salesgym.bench.splits import (
    FORMAT_VERSION,
    LITE_OF,
    NAME_PATTERN,
    PRIVATE_FORMAT_VERSION,
    SPLIT_NAMES,
    KeyedSeeding,
    PackRef,
    SplitKey,
    Territory,
    seal,
    write_manifest,
)


class TemplateLike(Protocol):
    @property
    def mechanisms(self) -> Sequence[str]: ...


class FamilyLike(Protocol):
    @property
    def templates(self) -> Mapping[str, TemplateLike]: ...


class Placed(Protocol):
    """A territory or a seedless slot: what the contamination note looks at."""

    @property
    def family(self) -> str: ...

    @property
    def template(self) -> str: ...


Catalogue = Mapping[str, FamilyLike]

DEFAULT_HELD_OUT_FAMILY = "public_sector"


@dataclass(frozen=True, slots=True)
class SplitShape:
    """How many territories a split has and how big they are."""

    description: str
    per_template: int  # territories per template in the split's pool (cycled through the pool)
    sizes: tuple[int, ...]  # n_opportunities choices
    horizons: tuple[int, ...]  # horizon_days choices
    seed_base: int
    count: int | None = None  # a fixed total instead of per_template x templates


SHAPES: dict[str, SplitShape] = {
    "train": SplitShape(
        "Training territories: the first templates of every family except the held-out one; larger and "
        "longer worlds. Never report benchmark numbers on it.",
        per_template=6,
        sizes=(10, 20, 30, 50),
        horizons=(30, 90),
        seed_base=10_000,
    ),
    "eval": SplitShape(
        "Evaluation territories: the families of train with templates train never sees. The default split "
        "of `salesgym bench`.",
        per_template=8,
        sizes=(10, 12, 15, 18, 20),
        horizons=(30,),
        seed_base=20_000,
    ),
    "held-out": SplitShape(
        "Held-out territories: templates never in train, including every template of a family never in "
        "train. Tests generalisation to unseen markets and mechanisms.",
        per_template=4,
        sizes=(10, 12, 15, 18, 20),
        horizons=(30,),
        seed_base=30_000,
    ),
    "debug": SplitShape(
        "Three tiny territories (3-5 opportunities, 30 days) drawn from train templates: a smoke test for "
        "CI and development, not a benchmark.",
        per_template=1,
        sizes=(3, 4, 5),
        horizons=(30,),
        seed_base=40_000,
        count=3,
    ),
}

# lite cuts of eval and held-out: the same templates, fewer and smaller territories, so a language model's
# episode stays within a few hundred turns and a modest token budget (docs/benchmark.md has the figures)
SHAPES["eval-lite"] = SplitShape(
    "A lite cut of eval (its templates; 3 territories each, 10-12 opportunities, 30 days) for language-model "
    "agents: an episode is about two hundred turns.",
    per_template=3,
    sizes=(10, 12),
    horizons=(30,),
    seed_base=50_000,
)
SHAPES["held-out-lite"] = SplitShape(
    "A lite cut of held-out (its templates, one territory each, 10-12 opportunities, 30 days) for "
    "language-model agents.",
    per_template=1,
    sizes=(10, 12),
    horizons=(30,),
    seed_base=60_000,
)

PRIVATE_SHAPE = SplitShape(
    "Private test territories, drawn like held-out (templates never in train, including a family never in "
    "train). Their seeds are not in this file: they are derived from a key the operator holds, so only a "
    "key holder can build these worlds.",
    per_template=4,
    sizes=(10, 12, 15, 18, 20),
    horizons=(30,),
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


def _territories(name: str, pool: Sequence[tuple[str, str]], shape: SplitShape) -> list[Territory]:
    rng = _rng(name)
    out: list[Territory] = []
    count = shape.count if shape.count is not None else shape.per_template * len(pool)
    for i in range(count):
        fam, tpl = pool[i % len(pool)]
        out.append(
            Territory(
                id=f"{name}-{i:03d}",
                family=fam,
                template=tpl,
                seed=shape.seed_base + i,
                n_opportunities=int(rng.choice(shape.sizes)),
                horizon_days=int(rng.choice(shape.horizons)),
            )
        )
    return out


def _debug_pool(train: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The first train template of each family, so the debug split touches several families."""
    seen: dict[str, tuple[str, str]] = {}
    for fam, tpl in train:
        seen.setdefault(fam, (fam, tpl))
    return list(seen.values())


def _mechanisms(catalogue: Catalogue, pairs: Sequence[tuple[str, str]] | set[tuple[str, str]]) -> set[str]:
    return {m for fam, tpl in pairs for m in catalogue[fam].templates[tpl].mechanisms}


def contamination(catalogue: Catalogue, split: Sequence[Placed], train: Sequence[Placed]) -> dict[str, Any]:
    """What ``split`` shares with ``train``: families, templates (``family/template``), template names, mechanisms."""
    pairs = {(t.family, t.template) for t in split}
    train_pairs = {(t.family, t.template) for t in train}
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


def generate(catalogue: Catalogue, held_out_family: str | None = None) -> dict[str, dict[str, Any]]:
    """Sealed manifest dicts for every split, keyed by split name."""
    pools = assign_templates(catalogue, held_out_family)
    pools["debug"] = _debug_pool(pools["train"])
    pools.update({lite: pools[parent] for lite, parent in LITE_OF.items()})
    terr = {name: _territories(name, pools[name], SHAPES[name]) for name in SHAPES}
    out: dict[str, dict[str, Any]] = {}
    for name, shape in SHAPES.items():
        out[name] = seal(
            {
                "format_version": FORMAT_VERSION,
                "name": name,
                "description": shape.description,
                "territories": [t.to_dict() for t in terr[name]],
                "contamination": contamination(catalogue, terr[name], terr["train"]),
            }
        )
    return out


def generate_private(
    catalogue: Catalogue, name: str, key: SplitKey, held_out_family: str | None = None
) -> dict[str, Any]:
    """A sealed private manifest ``name``: held-out's templates, sizes drawn from ``name``, seeds from ``key``."""
    if not NAME_PATTERN.fullmatch(name) or name in SPLIT_NAMES:
        raise ValueError(
            f"a private split needs its own name (letters, digits, '.', '_', '-'; not one of "
            f"{', '.join(SPLIT_NAMES)}), got {name!r}"
        )
    pools = assign_templates(catalogue, held_out_family)
    train = _territories("train", pools["train"], SHAPES["train"])
    slots = [t.slot for t in _territories(name, pools["held-out"], PRIVATE_SHAPE)]
    return seal(
        {
            "format_version": PRIVATE_FORMAT_VERSION,
            "name": name,
            "description": PRIVATE_SHAPE.description,
            "seeding": KeyedSeeding(key.key_id).to_dict(),
            "territories": [
                {
                    "id": s.id,
                    "family": s.family,
                    "template": s.template,
                    "seed": None,
                    "n_opportunities": s.n_opportunities,
                    "horizon_days": s.horizon_days,
                }
                for s in slots
            ],
            "contamination": contamination(catalogue, slots, train),
        }
    )


def _join(note: Mapping[str, Any], key: str) -> str:
    return ", ".join(note.get(key, [])) or "none"


def readme(manifests: Mapping[str, Mapping[str, Any]]) -> str:
    """The generated ``splits/README.md``: what each split holds and its contamination note."""
    lines = [
        "# Benchmark splits",
        "",
        "Frozen manifests of the `territory` benchmark. **Do not edit the JSON files**: each carries a sha256",
        "over its canonical content and `salesgym bench` refuses a split whose hash does not match.",
        "Check them with `salesgym splits verify`. They were generated from the scenario catalogue by",
        "`salesgym splits generate` (`src/salesgym/bench/splitgen.py`); the protocol is in `docs/benchmark.md`.",
        "",
        "Splits are cut by scenario family and template, not by seed: `eval` shares families with `train`",
        "but no template; `held-out` has templates, and at least one whole family, that `train` never sees.",
        "",
        "This file is generated; the contamination notes below are copied from the manifests (inside their hash).",
        "",
        "Seeds: `public` splits list every territory's seed, so anyone can rebuild their worlds; a `private`",
        "split's seeds are derived from a key the operator holds (its fingerprint is the key id shown).",
        "",
        "| split | territories | opportunities | horizon (days) | families | templates | seeds | sha256 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in manifests.items():
        ts = m["territories"]
        sizes = sorted({t["n_opportunities"] for t in ts})
        horizons = sorted({t["horizon_days"] for t in ts})
        fams = sorted({t["family"] for t in ts})
        tpls = sorted({f"{t['family']}/{t['template']}" for t in ts})
        seeding = m.get("seeding")
        seeds = f"private (key id `{seeding['key_id']}`)" if isinstance(seeding, Mapping) else "public"
        lines.append(
            f"| `{name}` | {len(ts)} | {sizes[0]}-{sizes[-1]} | {', '.join(map(str, horizons))} | "
            f"{len(fams)} | {len(tpls)} | {seeds} | `{m['sha256'][:12]}` |"
        )
    for name, m in manifests.items():
        note = m.get("contamination") or {}
        tpls = sorted({f"{t['family']}/{t['template']}" for t in m["territories"]})
        lines += ["", f"## `{name}`", "", str(m["description"]), "", f"Templates: {', '.join(f'`{t}`' for t in tpls)}."]
        if note:
            lines += [
                "",
                f"Contamination vs train: {note.get('summary', '')}.",
                "",
                f"- families shared: {_join(note, 'families_shared')}",
                f"- families unseen in train: {_join(note, 'families_unseen')}",
                f"- templates shared: {_join(note, 'templates_shared')}",
                f"- template names also used by a train template: {_join(note, 'template_names_shared')}",
                f"- mechanisms shared: {_join(note, 'mechanisms_shared')}",
                f"- mechanisms unseen in train: {_join(note, 'mechanisms_unseen')}",
            ]
    return "\n".join(lines) + "\n"


def write_all(manifests: Mapping[str, Mapping[str, Any]], out_dir: Path | str) -> list[Path]:
    """Write the manifests and regenerate ``README.md`` over every valid manifest in ``out_dir`` (so a
    private manifest written earlier stays listed when the public ones are regenerated, and vice versa)."""
    out = Path(out_dir)
    paths = [write_manifest(m, out / f"{name}.json") for name, m in manifests.items()]
    readme_path = out / "README.md"
    readme_path.write_text(readme(manifests_in(out)), encoding="utf-8")
    return [*paths, readme_path]


def manifests_in(directory: Path) -> dict[str, dict[str, Any]]:
    """The valid manifests of a directory as raw dicts: public splits in their usual order, then the rest."""
    from salesgym.bench.splits import SplitError, load_file

    found: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            load_file(path)
        except SplitError:
            continue
        found[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    order = [n for n in SPLIT_NAMES if n in found] + sorted(n for n in found if n not in SPLIT_NAMES)
    return {n: found[n] for n in order}


def family_env_id(family: str) -> str:
    """The registered id whose environment class serves ``family`` and states its splits (``split_plan``)."""
    import salesgym

    for env_id in salesgym.registry():
        cls = salesgym.env_class(env_id)
        if getattr(cls, "FAMILY", "territory") == family and hasattr(cls, "split_plan"):
            return env_id
    raise ValueError(f"no registered environment of family {family!r} states its splits")


def generate_family(family: str) -> dict[str, dict[str, Any]]:
    """Sealed manifests of another family's splits, from its environment class's ``split_plan()`` (data): each
    names its ``env_id``; they are written to ``splits/<family>/``."""
    import salesgym

    env_id = family_env_id(family)
    planned = salesgym.env_class(env_id).split_plan()
    return {
        name: seal({"format_version": FORMAT_VERSION, "name": name, "env_id": env_id, **body})
        for name, body in planned.items()
    }


def generate_family_private(
    family: str, name: str, key: SplitKey, pack_dir: Path | str | None = None
) -> dict[str, Any]:
    """A sealed private manifest ``name`` of another family: the territories its environment class's
    ``private_plan(name, pack)`` states, without seeds (they come from ``key``), and, cut over a template pack
    (``pack_dir``), the pack's name and fingerprint, never its content."""
    import salesgym

    env_id = family_env_id(family)
    cls = salesgym.env_class(env_id)
    public = set(cls.split_plan())
    if not NAME_PATTERN.fullmatch(name) or name in public or name in SPLIT_NAMES:
        raise ValueError(f"a private split needs its own name (letters, digits, '.', '_', '-'; not one of "
                         f"{', '.join(sorted(public))}), got {name!r}")
    planner = getattr(cls, "private_plan", None)
    if planner is None:
        raise ValueError(f"family {family!r} has no private splits")
    pack = None
    if pack_dir is not None:
        load = getattr(cls, "load_pack", None)
        if load is None:
            raise ValueError(f"--templates-dir: {family} has no template packs")
        pack = load(pack_dir)
    body = planner(name, None if pack is None else str(pack.path))
    return seal({
        "format_version": PRIVATE_FORMAT_VERSION,
        "name": name,
        "env_id": env_id,
        "description": body["description"],
        "seeding": KeyedSeeding(key.key_id).to_dict(),
        "territories": [{**t, "seed": None} for t in body["territories"]],
        "contamination": body["contamination"],
        **({} if pack is None else {"pack": PackRef(pack.name, pack.fingerprint).to_dict()}),
    })


def load_catalogue() -> Catalogue:
    """The scenario catalogue of the split's environment, from the registry (imported lazily)."""
    import salesgym
    from salesgym.bench.splits import ENV_ID

    catalogue: Catalogue = salesgym.env_class(ENV_ID).scenario_catalogue()
    return catalogue
