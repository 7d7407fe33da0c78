"""The desk's benchmark splits as data: what ``salesgym splits generate --family desk`` seals into
``splits/desk/`` (the bench adds the format, the environment id and the hash), and the rules between them.

- ``desk-train``: the default buyer variant, every lead mix, 20 leads on a one-day shift;
- ``desk-eval``: the same shape on other seeds (the default split of ``bench --family desk``);
- ``desk-transfer``: the three other buyer variants (skeptical, impulsive, analytical), trained on none;
- ``desk-scale``: the default variant at 2.5x and 5x the train pipeline (50 and 100 leads), same shift;
- a private split (``desk-test-private`` is shipped; ``private_plan``): drawn like ``desk-transfer``, its seeds
  derived from a key the operator holds, so no one else can build its desks.

A split territory's ``family`` is its buyer variant, its ``template`` the lead mix, ``n_opportunities`` the
number of leads and ``horizon_days`` the shift's days (``family.DeskScenario``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from salesgym.envs.desk.archetypes import VARIANTS
from salesgym.envs.desk.generator import LEAD_MIXES

TRAIN_LEADS = 20
SCALES = (2.5, 5.0)
PER_SPLIT = 24


def _territories(name: str, variants: tuple[str, ...], sizes: tuple[int, ...], seed_base: int) -> list[dict[str, Any]]:
    mixes = tuple(LEAD_MIXES)
    cells = [(v, m, n) for n in sizes for v in variants for m in mixes]
    return [
        {"id": f"{name}-{i:03d}", "family": v, "template": m, "seed": seed_base + i, "n_opportunities": n,
         "horizon_days": 1}
        for i, (v, m, n) in enumerate(cells[i % len(cells)] for i in range(PER_SPLIT))
    ]  # fmt: skip


def plan() -> dict[str, dict[str, Any]]:
    """Every desk split: name -> description, territories and contamination note."""
    others = tuple(v for v in VARIANTS if v != "default")
    scaled = tuple(int(TRAIN_LEADS * k) for k in SCALES)
    shapes = {
        "desk-train": ("Training desks: the default buyer variant, every lead mix, 20 leads on a one-day shift. "
                       "Never report benchmark numbers on it.", ("default",), (TRAIN_LEADS,), 110_000),
        "desk-eval": ("Evaluation desks: the train shape on other seeds. The default split of "
                      "`salesgym bench --family desk`.", ("default",), (TRAIN_LEADS,), 120_000),
        "desk-transfer": ("Transfer desks: the three buyer variants train never sees (skeptical, impulsive, "
                          "analytical), each with every lead mix.", others, (TRAIN_LEADS,), 130_000),
        "desk-scale": ("Scale desks: the default variant at 2.5x and 5x the train pipeline (50 and 100 leads) on "
                       "the same one-day shift.", ("default",), scaled, 140_000),
    }  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for name, (description, variants, sizes, seed_base) in shapes.items():
        unseen = [v for v in variants if v != "default"]
        note = {"reference": "desk-train", "variants_unseen": unseen, "sizes": list(sizes),
                "summary": (f"buyer variants unseen in train: {', '.join(unseen)}" if unseen
                            else "the train buyer variant") + f"; {', '.join(map(str, sizes))} leads"}  # fmt: skip
        out[name] = {"description": description, "territories": _territories(name, variants, sizes, seed_base),
                     "contamination": note}  # fmt: skip
    return out


PRIVATE_DESCRIPTION = ("Private test desks, drawn like desk-transfer (the buyer variants train never sees, every lead "
                       "mix). Their seeds are not in this file: they are derived from a key the operator holds, so "
                       "only a key holder can build these desks.")  # fmt: skip


def private_plan(name: str, pack: str | None = None) -> dict[str, Any]:
    """A private desk split ``name``: desk-transfer's shape (its seeds come from the key, not from here)."""
    if pack is not None:
        raise ValueError("--templates-dir: desk has no template packs")
    others = tuple(v for v in VARIANTS if v != "default")
    note = {"reference": "desk-train", "variants_unseen": list(others), "sizes": [TRAIN_LEADS],
            "summary": f"buyer variants unseen in train: {', '.join(others)}; {TRAIN_LEADS} leads"}  # fmt: skip
    return {"description": PRIVATE_DESCRIPTION, "territories": _territories(name, others, (TRAIN_LEADS,), 0),
            "contamination": note}  # fmt: skip


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """The rules between the desk's splits (``Manifest`` objects by name); an empty list means they hold."""
    problems: list[str] = []
    train = manifests.get("desk-train")
    if train is None:
        return ["no desk-train split: the rules between desk splits cannot be checked"]
    for name in ("desk-train", "desk-eval", "desk-scale"):
        m = manifests.get(name)
        if m is not None and m.families != {"default"}:
            problems.append(f"{name} must use the default buyer variant only, has {sorted(m.families)}")
    for name, m in sorted(manifests.items()):
        if m.private and "default" in m.families:
            problems.append(f"{name} is private, drawn like desk-transfer: it must not use the default buyer variant")
    transfer = manifests.get("desk-transfer")
    if transfer is not None and transfer.families != set(VARIANTS) - {"default"}:
        problems.append(f"desk-transfer must cover every other buyer variant, has {sorted(transfer.families)}")
    scale = manifests.get("desk-scale")
    train_sizes = {t.n_opportunities for t in train.layout}
    if scale is not None and {t.n_opportunities for t in scale.layout} != {int(n * k) for n in train_sizes
                                                                             for k in SCALES}:  # fmt: skip
        problems.append("desk-scale must be 2.5x and 5x the train pipeline size")
    return problems  # (seeds shared between splits are checked for every family by the bench)
