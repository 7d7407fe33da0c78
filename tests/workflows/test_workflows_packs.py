"""Template packs: an operator's workflows as data files in a directory, loaded by path and fingerprinted, so a
private split's templates, fixtures and reference solutions never ship in the package (issue 18 §7). The example
pack (``example_pack/``) is copied to a temporary folder by every test; the package has none of its templates."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import salesgym
from salesgym.envs.workflows import packs
from salesgym.envs.workflows.conformance import reference_calls, solved
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.testing import CHECKS, Case

EXAMPLE = Path(__file__).resolve().parent / "example_pack"
IDS = ("acme-demo-time-zone", "acme-owner-handover", "acme-student-close")


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "pack"))


def test_a_pack_loads_by_path_and_its_reference_solutions_pass(pack: Path) -> None:
    loaded = packs.load(pack)
    assert loaded.name == "acme-private" and tuple(sorted(loaded.templates)) == IDS
    assert not set(IDS) & set(TEMPLATES), "the example pack's templates must not be the package's"
    for template in IDS:
        for seed in (1, 2, 3):
            env = salesgym.make("workflows-v0", template=template, pack=str(pack))
            env.reset(seed=seed)
            idle = env.clone()
            reference_calls(env)
            assert solved(env) and env.hidden_truth()["pack"] == str(pack.resolve())
            idle.step({"tool": "finish_task", "args": {"summary": "done"}})
            assert not solved(idle)
    assert not (pack / "__pycache__").exists(), "loading a pack writes nothing into it"


def test_a_pack_environment_draws_only_the_packs_templates(pack: Path) -> None:
    env = salesgym.make("workflows-v0", pack=pack)
    drawn = {env.reset(seed=s)[0]["data"]["task"]["title"] for s in range(12)}
    assert drawn == {t.title for t in packs.load(pack).templates.values()}
    with pytest.raises(ValueError, match="unknown template 'crm-closed-won' in this template pack"):
        salesgym.make("workflows-v0", pack=pack, template="crm-closed-won")
    with pytest.raises(ValueError, match="no such template pack directory"):
        salesgym.make("workflows-v0", pack=pack / "missing", template=IDS[0])


@pytest.mark.parametrize("check", ["api", "replay_equals_live", "clone_independence", "confidentiality",
                                   "no_side_channel", "blind_replay", "determinism_across_processes"])
def test_the_conformance_kit_holds_on_a_pack_template(pack: Path, check: str) -> None:
    CHECKS[check](Case("workflows-v0", {"template": "acme-demo-time-zone", "pack": str(pack)}))


def test_the_fingerprint_covers_the_packs_files_and_nothing_else(pack: Path) -> None:
    first = packs.load(pack).fingerprint
    (pack / "README.md").write_text("notes of the operator")
    assert packs.load(pack).fingerprint == first
    seen = {first}
    for name in ("pack.json", "fixtures.py", "templates/acme-student-close.json"):
        path = pack / name
        original = path.read_text()
        path.write_text(original + "\n")
        now = packs.load(pack).fingerprint
        assert now not in seen, f"editing {name} must change the fingerprint"
        seen.add(now)
        path.write_text(original)
    assert packs.load(pack).fingerprint == first


def _template(pack: Path, name: str = "acme-student-close") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pack / "templates" / f"{name}.json").read_text())
    return data


def _put(pack: Path, data: dict[str, Any], name: str = "acme-student-close") -> None:
    (pack / "templates" / f"{name}.json").write_text(json.dumps(data))


def _bad_op(p: Path) -> None:
    data = _template(p)
    data["steps"][0]["assertions"][0]["op"] = "approximately"
    _put(p, data)


def _renamed(p: Path) -> None:
    (p / "templates" / "acme-student-close.json").rename(p / "templates" / "other-name.json")


BREAKAGES: list[tuple[str, Callable[[Path], None], str]] = [
    ("no pack.json", lambda p: (p / "pack.json").unlink(), "not a template pack: no pack.json"),
    ("another format", lambda p: (p / "pack.json").write_text('{"format": "v9", "name": "x"}'), "format"),
    ("bad JSON", lambda p: (p / "templates" / "acme-student-close.json").write_text("{"), "invalid JSON at line 1"),
    ("unknown field", lambda p: _put(p, {**_template(p), "colour": "red"}), "colour: Extra inputs are not permitted"),
    ("missing field", lambda p: _put(p, {k: v for k, v in _template(p).items() if k != "goal"}),
     "goal: Field required"),
    ("unknown operator", _bad_op, "steps.0.assertions.0.op"),
    ("unknown app", lambda p: _put(p, {**_template(p), "apps": ["erp"]}), "unknown app 'erp'"),
    ("unknown tool", lambda p: _put(p, {**_template(p), "solution": [{"tool": "hubspot-delete-all"}]}),
     "unknown tool(s) hubspot-delete-all"),
    ("no such fixture", lambda p: _put(p, {**_template(p), "fixture": "nowhere"}), "fixture: no function 'nowhere'"),
    ("file name and id differ", _renamed, "must match the file name"),
    ("a package template's id", lambda p: (_put(p, {**_template(p), "id": "crm-closed-won"}, "crm-closed-won"),
                                           (p / "templates" / "acme-student-close.json").unlink()),
     "is a template of the package"),
    ("fixtures that fail", lambda p: (p / "fixtures.py").write_text("raise RuntimeError('boom')\n"),
     "fixtures.py: cannot load: RuntimeError: boom"),
    ("no template", lambda p: shutil.rmtree(p / "templates"), "the pack has no template"),
]


def _by_motion(pack: Path) -> None:
    """The pack's templates regrouped into one file per motion, with an ``order`` in the manifest."""
    motions: dict[str, list[dict[str, Any]]] = {}
    for name in IDS:
        data = _template(pack, name)
        motions.setdefault(data["motion"], []).append(data)
        (pack / "templates" / f"{name}.json").unlink()
    for motion, templates in motions.items():
        (pack / "templates" / f"{motion}.json").write_text(json.dumps({"motion": motion, "templates": templates}))
    head = json.loads((pack / "pack.json").read_text())
    (pack / "pack.json").write_text(json.dumps({**head, "order": list(reversed(IDS))}))


def _motion_file(pack: Path, motion: str = "inbound") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pack / "templates" / f"{motion}.json").read_text())
    return data


def _order(pack: Path, order: list[str]) -> None:
    head = json.loads((pack / "pack.json").read_text())
    (pack / "pack.json").write_text(json.dumps({**head, "order": order}))


def _moved(p: Path) -> None:
    (p / "templates" / "inbound.json").rename(p / "templates" / "outbound.json")


def _other_motion(p: Path) -> None:
    data = _motion_file(p)
    data["templates"][1]["motion"] = "hygiene"
    (p / "templates" / "inbound.json").write_text(json.dumps(data))


def _twice(p: Path) -> None:
    data = _motion_file(p)
    data["templates"].append(data["templates"][0])
    (p / "templates" / "inbound.json").write_text(json.dumps(data))


MOTION_BREAKAGES: list[tuple[str, Callable[[Path], None], str]] = [
    ("motion file named unlike its motion", _moved, "motion 'inbound' must match the file name (outbound.json)"),
    ("a template of another motion", _other_motion, "templates.1.motion: acme-student-close is 'hygiene'"),
    ("an id defined twice", _twice, "id 'acme-demo-time-zone' is defined twice in the pack"),
    ("an empty motion file", lambda p: (p / "templates" / "inbound.json").write_text(
        '{"motion": "inbound", "templates": []}'), "templates: List should have at least 1 item"),
    ("order misses a template", lambda p: _order(p, list(IDS[:2])), "order: misses acme-student-close"),
    ("order repeats a template", lambda p: _order(p, [*IDS, IDS[0]]), "order: lists acme-demo-time-zone twice"),
    ("order names no template", lambda p: _order(p, [*IDS, "acme-ghost"]), "order: names no template acme-ghost"),
]


def test_a_pack_may_group_its_templates_by_motion_in_the_order_its_manifest_gives(pack: Path) -> None:
    """One file per motion (``templates/<motion>.json``) holds the same templates as one file each, and the
    manifest's ``order`` is the order a seed draws in; without it, by file name then as listed."""
    singles = packs.load(pack).templates
    assert list(singles) == list(IDS)  # by file name
    _by_motion(pack)
    grouped = packs.load(pack).templates
    assert list(grouped) == list(reversed(IDS))
    for t in IDS:  # (the fixtures module is run afresh for the new fingerprint: the same function, by name)
        name = grouped[t].fixture.__name__
        assert packs.to_data(grouped[t], name) == packs.to_data(singles[t], name)
    head = json.loads((pack / "pack.json").read_text())
    (pack / "pack.json").write_text(json.dumps({k: v for k, v in head.items() if k != "order"}))
    assert list(packs.load(pack).templates) == ["acme-owner-handover", "acme-demo-time-zone", "acme-student-close"]
    env = salesgym.make("workflows-v0", pack=str(pack))
    env.reset(seed=3)
    reference_calls(env)
    assert solved(env)


@pytest.mark.parametrize(("what", "breaks", "message"), MOTION_BREAKAGES, ids=[b[0] for b in MOTION_BREAKAGES])
def test_a_broken_motion_file_or_order_is_refused_in_one_line(pack: Path, what: str,
                                                              breaks: Callable[[Path], None], message: str) -> None:
    _by_motion(pack)
    breaks(pack)
    with pytest.raises(packs.PackError) as caught:
        packs.load(pack)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(pack) in str(caught.value)


def test_the_package_catalogue_and_its_shipped_pack_are_packs_by_motion() -> None:
    """The package's templates are data files of the pack format, one per motion, loaded by the pack loader."""
    shipped = packs.builtin()["workflows-counterparty"]
    for directory, templates in ((packs.PACKAGE, TEMPLATES), (packs.COUNTERPARTY, shipped)):
        files = sorted((directory / "templates").glob("*.json"))
        assert {f.stem for f in files} == {t.motion for t in templates.values()}
        for file in files:
            data = json.loads(file.read_text(encoding="utf-8"))
            assert {t["motion"] for t in data["templates"]} == {file.stem}
    assert packs.catalogue(None) is TEMPLATES


@pytest.mark.parametrize(("what", "breaks", "message"), BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_a_broken_pack_is_refused_in_one_line_naming_the_file(pack: Path, what: str,
                                                             breaks: Callable[[Path], None], message: str) -> None:
    breaks(pack)
    with pytest.raises(packs.PackError) as caught:
        packs.load(pack)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(pack) in str(caught.value)
    with pytest.raises(ValueError, match=r"template pack|pack\.json|templates|fixtures"):
        salesgym.make("workflows-v0", pack=pack, template="acme-owner-handover")


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_package_template_is_expressible_in_the_file_format(template: str) -> None:
    """The format is the one the package's own templates will move to: each of the 111 goes to JSON and back to
    the same blueprint (its fixture named as ``module:function``)."""
    spec = TEMPLATES[template]
    data = json.loads(json.dumps(packs.to_data(spec, f"{spec.fixture.__module__}:{spec.fixture.__name__}")))
    parsed = packs.TemplateFile.model_validate(data)
    assert packs.to_template(parsed, spec.fixture) == spec


def test_a_service_caller_cannot_name_a_pack(pack: Path) -> None:
    """A pack runs its own fixtures.py: the service never loads one from a path a caller gives."""
    from salesgym.serve.sessions import ServiceError, _make

    with pytest.raises(ServiceError, match="pack cannot be set by a caller"):
        _make("workflows-v0", {"template": "acme-student-close", "pack": str(pack)}, 1)
