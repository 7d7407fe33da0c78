"""The scored split over the shipped ``workflows-counterparty`` pack: frozen like the others, sealed with the pack's
fingerprint, run without --templates-dir (the package's copy is attached by name) or with a directory holding the
very same pack; the reference passes every task, doing nothing and random calls pass none."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from salesgym.bench import runner
from salesgym.bench import splits as sp
from salesgym.bench.splitgen import generate_family
from salesgym.cli import app
from salesgym.envs.workflows import packs
from salesgym.envs.workflows import splits as wf_splits

SPLIT = "workflows-counterparty"


def test_the_split_holds_every_pack_template_and_is_sealed_with_the_pack() -> None:
    manifest = sp.load(SPLIT)
    pack = packs.shipped()[SPLIT]
    assert manifest.pack == sp.PackRef(pack.name, pack.fingerprint)
    assert [t.template for t in manifest.territories] == [t for t in pack.templates for _ in range(3)]
    assert generate_family("workflows")[SPLIT]["sha256"] == manifest.sha256
    assert not {t.template for t in manifest.territories} & set(wf_splits.assign()["workflows-train"])
    seeds = {t.seed for name in ("workflows-train", "workflows-eval", "workflows-held-out")
             for t in sp.load(name).territories}  # fmt: skip
    assert not seeds & {t.seed for t in manifest.territories}


def test_an_entry_builds_its_shipped_pack_template_without_anything_attached() -> None:
    manifest = sp.load(SPLIT)
    entry = manifest.territories[0]
    kwargs = runner.territory_kwargs(entry, manifest.env_id)
    assert kwargs == {"template": entry.template, "pack": SPLIT}
    env = runner.make_env(entry, None, manifest.env_id)
    env.reset(seed=entry.seed)
    assert runner.territory_kwargs(sp.load("workflows-eval").territories[0], "workflows-v0").keys() == {"template"}


def test_the_shipped_pack_is_attached_by_name_and_a_changed_copy_is_refused() -> None:
    manifest = sp.load(SPLIT)
    assert sp.attach_pack(manifest, None).pack_dir == SPLIT
    assert sp.environment_problems(sp.attach_pack(manifest, None)) == []
    assert manifest.pack is not None
    stale = dataclasses.replace(manifest, pack=sp.PackRef(manifest.pack.name, "0" * 64))
    with pytest.raises(sp.SplitError, match="templates changed after the split was frozen"):
        sp.attach_pack(stale, None)


def test_a_directory_holding_the_same_pack_is_accepted_and_an_edited_one_refused(tmp_path: Path) -> None:
    copy = tmp_path / "pack"
    shutil.copytree(packs.COUNTERPARTY, copy)
    manifest = sp.attach_pack(sp.load(SPLIT), copy)
    assert manifest.pack_dir == str(copy.resolve()) and sp.environment_problems(manifest) == []
    head = json.loads((copy / "pack.json").read_text())
    (copy / "pack.json").write_text(json.dumps({**head, "description": "edited"}))
    with pytest.raises(sp.SplitError, match="fingerprint"):
        sp.attach_pack(sp.load(SPLIT), copy)


@pytest.fixture(scope="module")
def scores() -> dict[str, list[float]]:
    manifest = sp.attach_pack(sp.load(SPLIT), None)
    _, specs = runner.plan(manifest, ("reference", "idle", "random"), None, None, runner.DEFAULT_MAX_STEPS)
    out: dict[str, list[float]] = {}
    for spec in specs:
        record = runner.run_episode(spec)
        assert record.status == "ok" and record.metrics is not None, record.error
        out.setdefault(record.policy, []).append(record.metrics["primary"])
    return out


def test_the_reference_passes_every_task_and_the_floors_none(scores: dict[str, list[float]]) -> None:
    assert len(scores["reference"]) == 21 and set(scores["reference"]) == {1.0}
    assert set(scores["idle"]) == {0.0} and set(scores["random"]) == {0.0}


def test_the_cli_runs_the_split_by_name(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "--family", "workflows", "--split", SPLIT, "-p", "reference", "-p",
                                      "idle", "--episodes", "2", "--workers", "1", "--db",
                                      str(tmp_path / "runs.sqlite")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "reference" in result.output and "1.00" in result.output


def test_splits_verify_says_the_pack_is_shipped_and_refuses_a_split_sealed_over_another_copy(tmp_path: Path) -> None:
    [check] = [c for c in sp.verify_all(sp.default_splits_dir() / "workflows") if c.path.stem == SPLIT]
    assert check.ok and "shipped with the package" in check.message
    data = json.loads((sp.default_splits_dir() / "workflows" / f"{SPLIT}.json").read_text())
    data["pack"]["fingerprint"] = "1" * 64  # a split sealed over an edited copy of the pack
    sp.write_manifest(data, tmp_path / f"{SPLIT}.json")
    [stale] = sp.verify_all(tmp_path)
    assert not stale.ok and "templates changed after the split was frozen" in stale.message
