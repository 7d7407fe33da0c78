"""The workflows benchmark splits as data, cut by template: what ``salesgym splits generate --family workflows``
seals into ``splits/workflows/`` (the bench adds the format, the environment id and the hash), and the rules
between them.

Whole templates are held out. Each template's place is fixed by a keyed hash of its id alone
(``share(id)``, in [0, 1)): below ``EVAL_SHARE`` it goes to ``workflows-eval``, below ``EVAL_SHARE +
HELD_OUT_SHARE`` to ``workflows-held-out``, else to ``workflows-train``, so adding templates later never moves an
existing one (about 20% eval, 20% held out per tier). A tier whose hash draws put no template in held-out (or in
eval) lends its lowest-hash train template there (only while the tier is that small: the one case where a new
template can move an old one), so held-out covers every tier and eval every tier with three templates or more;
eval and held-out share no template with train. A split entry's
``family`` is its tier (``tier1``..``tier4``), ``template`` the template id, ``n_opportunities`` the number of
apps and ``horizon_days`` is 1 (unused); ``family.WorkflowsScenario`` turns it into ``template=...``.

A private split (``private_plan``; ``workflows-test-private`` is shipped) lists no seeds: they are derived from a
key the operator holds. It is drawn like held-out, or, cut over a template pack (``packs.py``), holds every
template of the pack, whose reference solutions must pass before the split is sealed: then the package carries
none of its templates, fixtures or solutions.

A public split over a pack the package ships (``SHIPPED_PACK_SPLITS``: ``workflows-counterparty``) holds every
template of that pack, seeds listed, and is sealed with the pack's name and fingerprint: the benchmark attaches the
package's copy by name, and refuses the split once the pack's files change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from salesgym.envs.workflows import packs
from salesgym.envs.workflows.tasks.model import Template
from salesgym.envs.workflows.tasks.templates import TEMPLATES

SEEDS_PER_TEMPLATE = 3
SPLIT_KEY = "workflows-split/1"  # changing it re-cuts every split
EVAL_SHARE, HELD_OUT_SHARE = 0.2, 0.2
SEED_BASES = {"workflows-train": 310_000, "workflows-eval": 320_000, "workflows-held-out": 330_000}
DESCRIPTIONS = {
    "workflows-train": "Training tasks: about 60% of the templates of each tier, by a keyed hash of the template id. "
    "Never report benchmark numbers on it.",
    "workflows-eval": "Evaluation tasks: about 20% of the templates of each tier, none of them in train. The default "
    "split of `salesgym bench --family workflows`.",
    "workflows-held-out": "Held-out tasks: about 20% of the templates of each tier (every tier covered), never in "
    "train or eval.",
}

# public splits over a pack the package ships (``packs.shipped``): split -> (pack, first seed); outside the keyed
# draw above, so they move no catalogue template
SHIPPED_PACK_SPLITS = {"workflows-counterparty": ("workflows-counterparty", 340_000)}
SHIPPED_PACK_DESCRIPTIONS = {
    "workflows-counterparty": "Counterparty tasks: every template of the shipped pack workflows-counterparty "
    "(decisive rules in company policy documents; simulated people who act on the apps mid-episode), "
    f"{SEEDS_PER_TEMPLATE} seeds each. Scored like workflows-eval: `salesgym bench --family workflows --split "
    "workflows-counterparty`.",
}


def share(template_id: str) -> float:
    """The template's keyed hash in [0, 1): its place in the splits depends on nothing else."""
    digest = hashlib.sha256(f"{SPLIT_KEY}:{template_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign() -> dict[str, list[str]]:
    """Template ids per split, each in declaration order (see the module docstring)."""
    out: dict[str, list[str]] = {name: [] for name in SEED_BASES}
    for tier in (1, 2, 3, 4):
        names = [t for t, spec in TEMPLATES.items() if spec.tier == tier]
        place = {t: _place(share(t)) for t in names}
        train = sorted((t for t in names if place[t] == "workflows-train"), key=share)
        for split, needed, keep in (("workflows-held-out", 1, 0), ("workflows-eval", 3, 1)):
            if len(names) >= needed and split not in place.values() and len(train) > keep:
                place[train.pop(0)] = split  # a small tier lends its lowest-hash train template
        for t in names:
            out[place[t]].append(t)
    return out


def _place(value: float) -> str:
    if value < EVAL_SHARE:
        return "workflows-eval"
    return "workflows-held-out" if value < EVAL_SHARE + HELD_OUT_SHARE else "workflows-train"


def plan() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    train = set(assign()["workflows-train"])
    for name, templates in assign().items():
        entries = [
            {"id": f"{name}-{i:03d}", "family": f"tier{TEMPLATES[t].tier}", "template": t,
             "seed": SEED_BASES[name] + i, "n_opportunities": TEMPLATES[t].tier, "horizon_days": 1}
            for i, t in enumerate(t for t in templates for _ in range(SEEDS_PER_TEMPLATE))
        ]  # fmt: skip
        unseen = sorted(set(templates) - train)
        note = {"reference": "workflows-train", "templates_unseen": unseen,
                "summary": f"{len(unseen)}/{len(set(templates))} templates unseen in train"}  # fmt: skip
        out[name] = {"description": DESCRIPTIONS[name], "territories": entries, "contamination": note}
    for name, (pack_name, base) in SHIPPED_PACK_SPLITS.items():
        out[name] = shipped_pack_plan(name, pack_name, base, train)
    return out


def shipped_pack_plan(name: str, pack_name: str, seed_base: int, train: set[str]) -> dict[str, Any]:
    """A public split holding every template of the shipped pack ``pack_name``, sealed with the pack's name and
    fingerprint (the benchmark attaches the shipped pack itself and refuses it once the pack's files changed)."""
    pack = packs.shipped()[pack_name]
    entries = [
        {"id": f"{name}-{i:03d}", "family": f"tier{pack.templates[t].tier}", "template": t, "seed": seed_base + i,
         "n_opportunities": pack.templates[t].tier, "horizon_days": 1}
        for i, t in enumerate(t for t in pack.templates for _ in range(SEEDS_PER_TEMPLATE))
    ]  # fmt: skip
    unseen = sorted(set(pack.templates) - train)
    note = {"reference": "workflows-train", "templates_unseen": unseen,
            "summary": f"{len(unseen)}/{len(pack.templates)} templates unseen in train, all from the shipped "
                       f"template pack {pack.name!r}"}  # fmt: skip
    return {"description": SHIPPED_PACK_DESCRIPTIONS[name], "territories": entries, "contamination": note,
            "pack": {"name": pack.name, "fingerprint": pack.fingerprint}}


PRIVATE_DESCRIPTION = ("Private test tasks, drawn like workflows-held-out (templates never in train, every tier). "
                       "Their seeds are not in this file: they are derived from a key the operator holds, so only a "
                       "key holder can build these tasks.")  # fmt: skip
PACK_DESCRIPTION = ("Private test tasks over the operator's template pack {pack!r}: templates, fixtures and reference "
                    "solutions the package does not carry, {n} seeds each. Their seeds are derived from a key the "
                    "operator holds; bench runs them with the pack (--templates-dir).")  # fmt: skip
CHECK_SEED = 1  # a pack's reference solutions are played on this seed before a split is cut over it


def private_plan(name: str, pack: str | None = None) -> dict[str, Any]:
    """A private split ``name`` (seeds come from the operator's key): held-out's templates, or every template of
    the pack at ``pack``, each of whose reference solutions must pass (``ValueError`` names one that does not)."""
    catalogue: Mapping[str, Template] = TEMPLATES
    templates, description, source = assign()["workflows-held-out"], PRIVATE_DESCRIPTION, ""
    if pack is not None:
        loaded = packs.load(pack)
        catalogue, templates = loaded.templates, list(loaded.templates)
        description = PACK_DESCRIPTION.format(pack=loaded.name, n=SEEDS_PER_TEMPLATE)
        source = f", all from the template pack {loaded.name!r}"
        _reference_passes(pack, templates)
    entries = [
        {"id": f"{name}-{i:03d}", "family": f"tier{catalogue[t].tier}", "template": t, "seed": None,
         "n_opportunities": catalogue[t].tier, "horizon_days": 1}
        for i, t in enumerate(t for t in templates for _ in range(SEEDS_PER_TEMPLATE))
    ]  # fmt: skip
    unseen = sorted(set(templates) - set(assign()["workflows-train"]))
    note = {"reference": "workflows-train", "templates_unseen": unseen,
            "summary": f"{len(unseen)}/{len(set(templates))} templates unseen in train{source}"}  # fmt: skip
    return {"description": description, "territories": entries, "contamination": note}


def _reference_passes(pack: str, templates: list[str]) -> None:
    import salesgym
    from salesgym.envs.workflows.conformance import reference_calls, solved

    for template in templates:
        env = salesgym.make("workflows-v0", template=template, pack=pack)
        env.reset(seed=CHECK_SEED)
        reference_calls(env)
        if not solved(env):
            raise ValueError(f"template {template!r} of the pack: its reference solution fails on seed {CHECK_SEED}; "
                             "fix the template before cutting a split over it")


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """The rules between the workflows splits (``Manifest`` objects by name); empty when they hold."""
    train = manifests.get("workflows-train")
    if train is None:
        return ["no workflows-train split: the rules between workflows splits cannot be checked"]
    problems: list[str] = []
    seen = {t.template for t in train.layout}
    for name, m in sorted(manifests.items()):
        if name != "workflows-train" and seen & {t.template for t in m.layout}:
            shared = sorted(seen & {t.template for t in m.layout})
            problems.append(f"{name} shares templates with workflows-train: {shared}")
    held = manifests.get("workflows-held-out")
    if held is not None and {t.family for t in held.layout} != {"tier1", "tier2", "tier3", "tier4"}:
        problems.append("workflows-held-out must cover every tier")
    return problems  # (seeds shared between splits are checked for every family by the bench)
