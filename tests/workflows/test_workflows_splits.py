"""The workflows splits: whole templates held out by a keyed hash of their id, stable when templates are added."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from salesgym.envs.workflows import splits
from salesgym.envs.workflows.tasks.templates import TEMPLATES

SPLITS = Path(__file__).resolve().parents[2] / "splits" / "workflows"


def test_every_template_is_in_exactly_one_split_and_held_out_covers_every_tier() -> None:
    placed = splits.assign()
    every = [t for names in placed.values() for t in names]
    assert sorted(every) == sorted(TEMPLATES)
    for name in ("workflows-eval", "workflows-held-out"):
        assert {TEMPLATES[t].tier for t in placed[name]} == {1, 2, 3, 4}, name
    four = [t for t in TEMPLATES if TEMPLATES[t].tier == 4]
    for name, low, high in (("workflows-eval", 0.1, 0.3), ("workflows-held-out", 0.1, 0.3), ("workflows-train", 0.5,
                                                                                              0.8)):  # fmt: skip
        share = sum(1 for t in placed[name] if TEMPLATES[t].tier == 4) / len(four)
        assert low <= share <= high, (name, share)


def test_adding_templates_moves_no_existing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    before = {t: name for name, names in splits.assign().items() for t in names}
    model = next(t for t in TEMPLATES.values() if t.tier == 4)
    for i in range(30):
        new = dataclasses.replace(model, id=f"added-later-{i}")
        monkeypatch.setitem(splits.TEMPLATES, new.id, new)
    after = {t: name for name, names in splits.assign().items() for t in names}
    assert {t: after[t] for t in before} == before
    assert {after[f"added-later-{i}"] for i in range(30)} == set(splits.SEED_BASES)  # the hash spreads them


def test_the_share_is_a_keyed_hash_of_the_id_alone() -> None:
    assert splits.share("crm-closed-won") == splits.share("crm-closed-won")
    assert 0.0 <= splits.share("x") < 1.0 and splits.share("x") != splits.share("y")


def test_the_split_files_are_the_generated_ones() -> None:
    placed = splits.assign()
    for name, names in placed.items():
        manifest = json.loads((SPLITS / f"{name}.json").read_text())
        listed = list(dict.fromkeys(t["template"] for t in manifest["territories"]))
        assert listed == names, f"{name} is stale: run `salesgym splits generate --family workflows --force`"
