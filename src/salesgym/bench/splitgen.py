"""Seal a family's split plan into manifests (run once; the JSON files are then frozen), and the territory
folder's README.

Each family states its splits as data in its own folder (``FamilySpec.split_plan`` / ``private_plan``: the
territory's in ``envs/territory/splits.py``, the desk's in ``envs/desk/splits.py`` ...); this module adds the format
version, the environment id (except for a family whose manifests name none) and the hash. A private split's
territories carry no seed: seeds are derived from an operator-held key (see :mod:`salesgym.bench.splits`), and only
the key's public fingerprint is sealed into the manifest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from salesgym.bench.splits import (
    FORMAT_VERSION,
    NAME_PATTERN,
    PRIVATE_FORMAT_VERSION,
    KeyedSeeding,
    PackRef,
    SplitKey,
    seal,
    write_manifest,
)
from salesgym.core.family import Pack


def seal_plan(planned: Mapping[str, Mapping[str, Any]], env_id: str | None) -> dict[str, dict[str, Any]]:
    """Sealed public manifests of a family's plan: each names ``env_id`` (None: a family whose manifests name
    none, the territory's)."""
    named = {} if env_id is None else {"env_id": env_id}
    return {name: seal({"format_version": FORMAT_VERSION, "name": name, **named, **body})
            for name, body in planned.items()}  # fmt: skip


def seal_private(body: Mapping[str, Any], name: str, key: SplitKey, env_id: str | None,
                 pack: Pack | None = None) -> dict[str, Any]:  # fmt: skip
    """A sealed private manifest of a family's private plan: its territories without seeds (they come from
    ``key``), and, cut over a template pack, the pack's name and fingerprint, never its content."""
    return seal({
        "format_version": PRIVATE_FORMAT_VERSION,
        "name": name,
        **({} if env_id is None else {"env_id": env_id}),
        "description": body["description"],
        "seeding": KeyedSeeding(key.key_id).to_dict(),
        "territories": [{**t, "seed": None} for t in body["territories"]],
        "contamination": body["contamination"],
        **({} if pack is None else {"pack": PackRef(pack.name, pack.fingerprint).to_dict()}),
    })


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
        "`salesgym splits generate` (`src/salesgym/envs/territory/splits.py`); the protocol is in `docs/benchmark.md`.",
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


def write_all(manifests: Mapping[str, Mapping[str, Any]], out_dir: Path | str, order: Sequence[str] = ()) -> list[Path]:
    """Write the manifests and regenerate ``README.md`` over every valid manifest in ``out_dir`` (so a
    private manifest written earlier stays listed when the public ones are regenerated, and vice versa)."""
    out = Path(out_dir)
    paths = [write_manifest(m, out / f"{name}.json") for name, m in manifests.items()]
    readme_path = out / "README.md"
    readme_path.write_text(readme(manifests_in(out, order or list(manifests))), encoding="utf-8")
    return [*paths, readme_path]


def manifests_in(directory: Path, order: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The valid manifests of a directory as raw dicts: those named in ``order`` first, in it, then the rest."""
    from salesgym.bench.splits import SplitError, load_file

    found: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            load_file(path)
        except SplitError:
            continue
        found[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    names = [n for n in order if n in found] + sorted(n for n in found if n not in order)
    return {n: found[n] for n in names}


def family_env_id(family: str) -> str:
    """The registered id whose family is ``family`` (its first id), the environment its manifests describe."""
    import salesgym

    salesgym.family_named(family)  # an unknown family: a ValueError naming the known ones
    return salesgym.family_ids(family)[0]


def generate_family(family: str, held_out_family: str | None = None) -> dict[str, dict[str, Any]]:
    """Sealed manifests of a family's public splits, from its spec's ``split_plan`` (data)."""
    import salesgym

    spec = salesgym.family_named(family)
    return seal_plan(spec.split_plan(held_out_family), None if spec.unnamed_manifests else family_env_id(family))


def generate_family_private(family: str, name: str, key: SplitKey, pack_dir: Path | str | None = None,
                            held_out_family: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A sealed private manifest ``name`` of a family: what its spec's ``private_plan(name, pack, held_out)``
    states, without seeds (they come from ``key``), maybe cut over the template pack at ``pack_dir``."""
    import salesgym

    spec = salesgym.family_named(family)
    public = set(spec.split_plan(None))
    if not NAME_PATTERN.fullmatch(name) or name in public:
        raise ValueError(f"a private split needs its own name (letters, digits, '.', '_', '-'; not one of "
                         f"{', '.join(sorted(public))}), got {name!r}")
    if spec.private_plan is None:
        raise ValueError(f"family {family!r} has no private splits")
    pack = None
    if pack_dir is not None:
        if spec.load_pack is None:
            raise ValueError(f"--templates-dir: {family} has no template packs")
        pack = spec.load_pack(pack_dir)
    body = spec.private_plan(name, None if pack is None else str(pack.path), held_out_family)
    return seal_private(body, name, key, None if spec.unnamed_manifests else family_env_id(family), pack)
