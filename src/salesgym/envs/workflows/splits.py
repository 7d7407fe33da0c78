"""The workflows benchmark splits as data, cut by template: what ``salesgym splits generate --family workflows``
seals into ``splits/workflows/`` (the bench adds the format, the environment id and the hash), and the rules
between them.

In each tier, templates go in declaration order: the last to ``workflows-held-out``, the second to last to
``workflows-eval``, the rest to ``workflows-train`` (tier 4 has two: one for eval, one held out, none in
train). So eval and held-out share no template with train, and held-out covers every tier. A split entry's
``family`` is its tier (``tier1``..``tier4``), ``template`` the template id, ``n_opportunities`` the number of
apps and ``horizon_days`` is 1 (unused); ``WorkflowsEnv.scenario_kwargs`` turns it into ``template=...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from salesgym.envs.workflows.tasks.templates import TEMPLATES

SEEDS_PER_TEMPLATE = 3
SEED_BASES = {"workflows-train": 310_000, "workflows-eval": 320_000, "workflows-held-out": 330_000}
DESCRIPTIONS = {
    "workflows-train": "Training tasks: the first templates of each tier (every tier but the fourth). Never report "
    "benchmark numbers on it.",
    "workflows-eval": "Evaluation tasks: one template per tier that train never sees. The default split of "
    "`salesgym bench --family workflows`.",
    "workflows-held-out": "Held-out tasks: the last template of every tier, never in train or eval.",
}


def assign() -> dict[str, list[str]]:
    """Template ids per split (see the module docstring)."""
    out: dict[str, list[str]] = {name: [] for name in SEED_BASES}
    for tier in (1, 2, 3, 4):
        names = [t for t, spec in TEMPLATES.items() if spec.tier == tier]
        out["workflows-held-out"].append(names[-1])
        if len(names) >= 2:
            out["workflows-eval"].append(names[-2])
        out["workflows-train"].extend(names[:-2])
    return out


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
    return out


def rules(manifests: Mapping[str, Any]) -> list[str]:
    """The rules between the workflows splits (``Manifest`` objects by name); empty when they hold."""
    train = manifests.get("workflows-train")
    if train is None:
        return ["no workflows-train split: the rules between workflows splits cannot be checked"]
    problems: list[str] = []
    seen = {t.template for t in train.territories}
    for name in ("workflows-eval", "workflows-held-out"):
        m = manifests.get(name)
        if m is not None and seen & {t.template for t in m.territories}:
            shared = sorted(seen & {t.template for t in m.territories})
            problems.append(f"{name} shares templates with workflows-train: {shared}")
    held = manifests.get("workflows-held-out")
    if held is not None and {t.family for t in held.territories} != {"tier1", "tier2", "tier3", "tier4"}:
        problems.append("workflows-held-out must cover every tier")
    return problems  # (seeds shared between splits are checked for every family by the bench)
