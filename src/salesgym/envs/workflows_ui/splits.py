"""The computer-use benchmark splits as data: the workflows family's template split (``envs/workflows/splits.py``:
whole templates held out by a keyed hash of their ids) crossed with the apps' looks (``webapps/variants.py``),
two of which never appear in train. What ``salesgym splits generate --family workflows-ui`` seals into
``splits/workflows-ui/``.

- ``workflows-ui-train``: the train templates, once in each train look (default, dark, compact);
- ``workflows-ui-eval``: the eval templates in the default look, two seeds each;
- ``workflows-ui-held-out``: the held-out templates in the default look;
- ``workflows-ui-held-out-look``: the eval templates again (other seeds) in the two looks train never shows
  (reworded labels; reworded, dark, compact and with reversed columns): eval's pass rate minus this one's is the
  drop on a UI the agent never saw.

An entry's ``template`` is ``<template>.<look>``; the family's typed entry (``family.py``, ``UIScenario``) splits
it. A browser episode costs far more than a tool episode, so the UI splits hold fewer seeds than the tool splits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from salesgym.envs.workflows.splits import assign
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.webapps.variants import HELD_OUT_LOOKS, TRAIN_LOOKS

SEED_BASES = {"workflows-ui-train": 410_000, "workflows-ui-eval": 420_000, "workflows-ui-held-out": 430_000,
              "workflows-ui-held-out-look": 440_000}  # fmt: skip
DESCRIPTIONS = {
    "workflows-ui-train": "Computer-use training tasks: the workflows train templates, once in each train look "
    "(default, dark, compact). Never report benchmark numbers on it.",
    "workflows-ui-eval": "Computer-use evaluation tasks: the workflows eval templates (none in train) in the default "
    "look, two seeds each. The default split of `salesgym bench --family workflows-ui`.",
    "workflows-ui-held-out": "Computer-use held-out tasks: the workflows held-out templates in the default look.",
    "workflows-ui-held-out-look": "The eval templates in the two looks train never shows (reworded labels; and dark, "
    "compact, reworded, columns reversed): compare with workflows-ui-eval for the drop on an unseen UI.",
}


def layout() -> dict[str, list[tuple[str, str, int]]]:
    """(template, look, seeds) per split, in order."""
    by_split = assign()
    return {
        "workflows-ui-train": [(t, look, 1) for t in by_split["workflows-train"] for look in TRAIN_LOOKS],
        "workflows-ui-eval": [(t, "default", 2) for t in by_split["workflows-eval"]],
        "workflows-ui-held-out": [(t, "default", 1) for t in by_split["workflows-held-out"]],
        "workflows-ui-held-out-look": [(t, look, 1) for t in by_split["workflows-eval"] for look in HELD_OUT_LOOKS],
    }


def plan() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    cut = layout()
    train = {t for t, _, _ in cut["workflows-ui-train"]}
    for name, rows in cut.items():
        entries = [{"id": f"{name}-{i:03d}", "family": f"tier{TEMPLATES[t].tier}", "template": f"{t}.{look}",
                    "seed": SEED_BASES[name] + i, "n_opportunities": TEMPLATES[t].tier, "horizon_days": 1}
                   for i, (t, look) in enumerate((t, look) for t, look, n in rows for _ in range(n))]  # fmt: skip
        templates = {t for t, _, _ in rows}
        unseen = sorted(templates - train)
        note = {"reference": "workflows-ui-train", "templates_unseen": unseen,
                "looks": sorted({look for _, look, _ in rows}),
                "summary": f"{len(unseen)}/{len(templates)} templates unseen in train"}  # fmt: skip
        out[name] = {"description": DESCRIPTIONS[name], "territories": entries, "contamination": note}
    return out


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """The rules between the UI splits (``Manifest`` objects by name); empty when they hold."""
    train = manifests.get("workflows-ui-train")
    if train is None:
        return ["no workflows-ui-train split: the rules between the computer-use splits cannot be checked"]
    problems: list[str] = []
    seen = {t.template.partition(".")[0] for t in train.territories}
    looks = {t.template.partition(".")[2] for t in train.territories}
    for name in ("workflows-ui-eval", "workflows-ui-held-out", "workflows-ui-held-out-look"):
        m = manifests.get(name)
        shared = sorted(seen & {t.template.partition(".")[0] for t in m.territories}) if m is not None else []
        if shared:
            problems.append(f"{name} shares templates with workflows-ui-train: {shared}")
    unseen = manifests.get("workflows-ui-held-out-look")
    if unseen is not None and looks & {t.template.partition(".")[2] for t in unseen.territories}:
        problems.append("workflows-ui-held-out-look uses a look of workflows-ui-train")
    held = manifests.get("workflows-ui-held-out")
    if held is not None and {t.family for t in held.territories} != {"tier1", "tier2", "tier3", "tier4"}:
        problems.append("workflows-ui-held-out must cover every tier")
    return problems
