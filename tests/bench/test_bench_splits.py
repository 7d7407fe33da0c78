"""Split manifests: hashing, clear refusals, and the family/template rules of generated splits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from salesgym.bench import splitgen
from salesgym.bench import splits as sp
from salesgym.envs.territory import splits as territory_splits

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"


@dataclass(frozen=True)
class _Tpl:
    mechanisms: tuple[str, ...]


@dataclass(frozen=True)
class _Fam:
    templates: dict[str, _Tpl] = field(default_factory=dict)


SYNTHETIC = {
    "alpha": _Fam({"a1": _Tpl(("m1",)), "a2": _Tpl(("m2",)), "a3": _Tpl(("m3",)), "a4": _Tpl(("m1", "m4"))}),
    "beta": _Fam({"b1": _Tpl(("m1",)), "b2": _Tpl(("m5",)), "b3": _Tpl(("m2",))}),
    "gamma": _Fam({"g1": _Tpl(("m1",)), "g2": _Tpl(("m6",)), "g3": _Tpl(("m3",))}),
    "public_sector": _Fam({"p1": _Tpl(("m1",)), "p2": _Tpl(("m7",)), "p3": _Tpl(("m2",))}),
}


def _generate(catalogue: object) -> dict[str, dict]:
    """The territory's public splits of ``catalogue``, sealed as ``salesgym splits generate`` seals them."""
    return splitgen.seal_plan(territory_splits.plan(scenarios=catalogue), None)  # type: ignore[arg-type]


def _write(tmp_path: Path, manifests: dict[str, dict]) -> Path:
    splitgen.write_all(manifests, tmp_path)
    return tmp_path


def _manifests(directory: Path) -> dict[str, sp.Manifest]:
    return {c.manifest.name: c.manifest for c in sp.verify_all(directory) if c.manifest is not None}


def test_generated_splits_verify_and_obey_the_rules(tmp_path: Path) -> None:
    d = _write(tmp_path, _generate(SYNTHETIC))
    checks = sp.verify_all(d)
    assert all(c.ok for c in checks), [c.message for c in checks]
    ms = _manifests(d)
    assert set(ms) == set(territory_splits.SPLIT_NAMES)
    assert territory_splits.rules(ms) == []
    train, ev, held = ms["train"], ms["eval"], ms["held-out"]
    assert not (held.templates & train.templates)
    assert "public_sector" in held.families - train.families
    assert ev.families <= train.families and not (ev.templates & train.templates)
    assert len(ms["debug"].territories) == 3
    assert all(3 <= t.n_opportunities <= 5 for t in ms["debug"].territories)
    seeds = [t.seed for m in ms.values() for t in m.territories]
    assert len(seeds) == len(set(seeds)), "seeds are disjoint across splits"


def test_generation_is_deterministic() -> None:
    assert _generate(SYNTHETIC) == _generate(SYNTHETIC)


def test_contamination_note_is_inside_the_hash(tmp_path: Path) -> None:
    manifests = _generate(SYNTHETIC)
    note = manifests["held-out"]["contamination"]
    assert note["families_unseen"] == ["public_sector"]
    assert note["templates_shared"] == []
    assert "m7" in note["mechanisms_unseen"]
    d = _write(tmp_path, manifests)
    path = d / "held-out.json"
    data = json.loads(path.read_text())
    data["contamination"]["templates_shared"] = []
    data["contamination"]["summary"] = "nothing to see"
    path.write_text(json.dumps(data))
    with pytest.raises(sp.SplitError, match="sha256 mismatch"):
        sp.load_file(path)
    readme = (d / "README.md").read_text()
    assert "Contamination vs train" in readme and "public_sector" in readme


def test_tampered_manifest_is_refused_naming_the_file(tmp_path: Path) -> None:
    d = _write(tmp_path, _generate(SYNTHETIC))
    path = d / "eval.json"
    data = json.loads(path.read_text())
    data["territories"][0]["seed"] += 1
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(sp.SplitError) as info:
        sp.load("eval", d)
    assert str(path) in str(info.value) and "sha256 mismatch" in str(info.value)
    bad = [c for c in sp.verify_all(d) if not c.ok]
    assert [c.path.name for c in bad] == ["eval.json"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("territories"), "missing key(s) territories"),
        (lambda d: d.update(format_version=3), "unsupported format_version 3"),
        (lambda d: d.update(format_version=2), "format_version 2 needs a seeding object"),
        (lambda d: d.update(seeding={"kind": "keyed"}), "seeding needs format_version 2"),
        (lambda d: d["territories"][0].update(seed=2**63), "seed must be in 0..2**63-1"),
        (lambda d: d["territories"][0].update(seed=-1), "seed must be in 0..2**63-1"),
        (lambda d: d["territories"][0].update(id="a/b"), "territories[0].id must be 1-64 letters"),
        (lambda d: d.update(name=7), "name must be str"),
        (lambda d: d["territories"][0].update(seed="7"), "territories[0].seed must be int"),
        (lambda d: d["territories"][0].update(seed=True), "territories[0].seed must be int"),
        (lambda d: d["territories"][1].pop("family"), "territories[1] is missing key(s) family"),
        (lambda d: d["territories"][0].update(n_opportunities=0), "n_opportunities must be >= 1"),
        (lambda d: d["territories"][0].update(colour="red"), "unknown key(s) colour"),
        (lambda d: d["territories"].append(dict(d["territories"][0])), "duplicate territory id"),
        (lambda d: d.update(name="other"), "does not match the file name"),
        (lambda d: d.update(territories=[]), "territories is empty"),
    ],
)
def test_structural_errors_are_clear(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = _generate(SYNTHETIC)["eval"]
    mutate(data)
    path = sp.write_manifest(data, tmp_path / "eval.json")  # resealed: the structure check must catch it
    with pytest.raises(sp.SplitError) as info:
        sp.load_file(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_missing_file_and_bad_json(tmp_path: Path) -> None:
    with pytest.raises(sp.SplitError, match="not found"):
        sp.load_file(tmp_path / "nope.json")
    (tmp_path / "eval.json").write_text("{not json")
    with pytest.raises(sp.SplitError, match="invalid JSON at line 1"):
        sp.load("eval", tmp_path)
    with pytest.raises(sp.SplitError, match="no split named 'train'"):
        sp.load("train", tmp_path)
    with pytest.raises(sp.SplitError, match="does not exist"):
        sp.load("eval", tmp_path / "missing-dir")


def test_splits_dir_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sp.ENV_VAR, str(tmp_path))
    assert sp.resolve_splits_dir() == tmp_path
    assert sp.resolve_splits_dir(REPO_SPLITS) == REPO_SPLITS
    monkeypatch.delenv(sp.ENV_VAR)
    assert sp.default_splits_dir().resolve() == REPO_SPLITS.resolve()


def test_rule_violations_are_detected(tmp_path: Path) -> None:
    ms = _manifests(_write(tmp_path, _generate(SYNTHETIC)))
    leaked = sp.Manifest("eval", "", ms["eval"].territories + ms["train"].territories[:1], None, "x")
    problems = territory_splits.rules({**ms, "eval": leaked})
    assert any("eval shares template(s) with train" in p for p in problems)
    held_no_new_family = sp.Manifest(
        "held-out", "", tuple(t for t in ms["held-out"].territories if t.family != "public_sector"), None, "x"
    )
    assert any("no family that is absent" in p for p in territory_splits.rules({**ms, "held-out": held_no_new_family}))


def test_lite_splits_are_small_cuts_of_their_parents_and_obey_their_rules(tmp_path: Path) -> None:
    ms = _manifests(REPO_SPLITS)
    for lite, parent in territory_splits.LITE_OF.items():
        small, big = ms[lite], ms[parent]
        assert small.templates == big.templates and small.families == big.families  # every template, fewer worlds
        assert len(small.territories) < len(big.territories)
        # lite: month-long and small; quick: every horizon tier of its parent at the tier's smallest size
        if lite.endswith("-lite"):
            assert {t.horizon_days for t in small.territories} == {30}
            assert max(t.n_opportunities for t in small.territories) <= 12
        else:
            assert {t.horizon_days for t in small.territories} == {t.horizon_days for t in big.territories}
            assert max(t.n_opportunities for t in small.territories) <= 30
        assert not {t.seed for t in small.territories} & {t.seed for t in big.territories}
    generated = _manifests(_write(tmp_path, _generate(SYNTHETIC)))
    train_leak = sp.Manifest("eval-lite", "", generated["eval-lite"].territories + generated["train"].territories[:1],
                             None, "x")
    problems = territory_splits.rules({**generated, "eval-lite": train_leak})
    assert any("eval-lite shares template(s) with train" in p for p in problems)
    assert any("eval-lite has template(s) its parent eval lacks" in p for p in problems)
    no_new_family = sp.Manifest(
        "held-out-lite", "", tuple(t for t in generated["held-out-lite"].territories if t.family != "public_sector"),
        None, "x",
    )
    assert any("held-out-lite has no family" in p for p in territory_splits.rules({**generated,
                                                                                "held-out-lite": no_new_family}))


def test_committed_splits_verify_and_obey_the_rules() -> None:
    checks = sp.verify_all(REPO_SPLITS)
    assert all(c.ok for c in checks), [(c.path.name, c.message) for c in checks]
    ms = _manifests(REPO_SPLITS)
    assert set(territory_splits.SPLIT_NAMES) <= set(ms)
    assert territory_splits.rules(ms) == []
    assert len(ms["debug"].territories) == 3


def test_committed_splits_match_the_catalogue() -> None:
    families = pytest.importorskip("salesgym.envs.territory.families").FAMILIES
    for m in _manifests(REPO_SPLITS).values():
        assert sp.check_catalogue(m, families) == [], m.name
    ms = _manifests(REPO_SPLITS)
    for name, m in ms.items():  # a template whose mechanisms changed would make the frozen note a lie
        note = territory_splits.contamination(families, m.layout, ms["train"].layout)
        assert note == m.contamination, f"{name}: the catalogue changed since the split was frozen"


def test_a_seed_in_two_splits_is_flagged_for_every_family() -> None:
    ms = _manifests(REPO_SPLITS)
    assert sp.shared_seeds(ms) == []
    desk = {c.manifest.name: c.manifest for c in sp.verify_all(REPO_SPLITS / "desk") if c.manifest is not None}
    assert desk and sp.shared_seeds(desk) == []
    twin = sp.Manifest("desk-twin", "", desk["desk-eval"].territories[:1], None, "x")
    assert sp.shared_seeds({**desk, "desk-twin": twin}) == [
        f"desk-twin shares seed {twin.territories[0].seed} with desk-eval"]
