"""The contamination audit's structure axis: a territory's name-free structure print (envs/territory/structure.py)
and ``salesgym splits audit``, which counts a split's world and committee structures that train has too."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from salesgym.bench import splits as sp
from salesgym.bench.structure_audit import Overlap, audit
from salesgym.cli import app
from salesgym.envs.territory.generator import generate
from salesgym.envs.territory.structure import structure, world_print
from salesgym.envs.territory.world import Opportunity, Stakeholder, TerritoryWorld

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"


def world() -> TerritoryWorld:
    return generate(7, "enterprise_security", None, 12, 30)


def renamed(w: TerritoryWorld) -> TerritoryWorld:
    """``w`` with every id and name changed and its deals in reverse order: the same graph."""
    new_opp = {oid: f"deal-{k}" for k, oid in enumerate(reversed(list(w.opportunities)))}
    new_acc = {aid: f"acct-{k}" for k, aid in enumerate(w.accounts)}
    rivals = {o.competitor: f"Rival {k}" for k, o in enumerate(w.opportunities.values()) if o.competitor}
    people: dict[str, Stakeholder] = {}
    opps: dict[str, Opportunity] = {}
    for oid in reversed(list(w.opportunities)):
        opp = w.opportunities[oid]
        ids = []
        for j, sid in enumerate(reversed(opp.stakeholder_ids)):
            p = w.stakeholders[sid]
            ids.append(f"{new_opp[oid]}-p{j}")
            people[ids[-1]] = p._replace(id=ids[-1], opportunity_id=new_opp[oid], name=f"Person {oid}{j}")
        rival = rivals.get(opp.competitor)
        opps[new_opp[oid]] = opp._replace(id=new_opp[oid], account_id=new_acc[opp.account_id],
                                          stakeholder_ids=tuple(ids), competitor=rival)  # fmt: skip
    accounts = {new_acc[a]: acc._replace(id=new_acc[a], name=f"Company {a}") for a, acc in w.accounts.items()}
    return replace(w, accounts=accounts, opportunities=opps, stakeholders=people, template="another_name", seed=99)


def with_person(w: TerritoryWorld, sid: str, **changes: object) -> TerritoryWorld:
    people = {s: w.stakeholders[s] for s in w.stakeholders}
    people[sid] = people[sid]._replace(**changes)
    return replace(w, stakeholders=people)


def with_deal(w: TerritoryWorld, oid: str, **changes: object) -> TerritoryWorld:
    return replace(w, opportunities={**w.opportunities, oid: w.opportunities[oid]._replace(**changes)})


def test_renaming_ids_names_and_order_keeps_the_print() -> None:
    w = world()
    other = renamed(w)
    assert set(other.opportunities).isdisjoint(w.opportunities)
    assert world_print(other).world == world_print(w).world
    assert sorted(world_print(other).parts) == sorted(world_print(w).parts)


def test_changing_the_graph_changes_the_print() -> None:
    w = world()
    base = world_print(w)
    opp = next(iter(w.opportunities.values()))
    person = w.stakeholders[opp.stakeholder_ids[0]]
    other_role = "blocker" if person.role != "blocker" else "user"
    honest = person.title in w.spec.titles[person.role]
    retitled = "Chief Nothing Officer" if honest else w.spec.titles[person.role][0]
    lone = next(o for o in w.opportunities.values() if o.competitor is None)
    rival = next(o for o in w.opportunities.values() if o.competitor is not None)
    changed = {
        "a member's role": with_person(w, person.id, role=other_role),
        "a title that misleads or not": with_person(w, person.id, title=retitled),
        "an approval": with_deal(w, opp.id, required_approvals=(*opp.required_approvals, "made_up_review")),
        "a competitor on a deal": with_deal(w, lone.id, competitor="Rival X"),
        "two deals sharing a competitor": with_deal(w, lone.id, competitor=rival.competitor),
        "two deals sharing an account": with_deal(w, lone.id, account_id=rival.account_id),
    }
    for what, changed_world in changed.items():
        assert world_print(changed_world).world != base.world, what
    # a member and an approval change that deal's committee print, and only it
    for what in ("a member's role", "an approval"):
        parts = world_print(changed[what]).parts
        assert [i for i, (a, b) in enumerate(zip(parts, base.parts, strict=True)) if a != b] == [0], what


def test_the_family_hook_builds_the_world_of_a_split_entry() -> None:
    t = sp.load("debug", REPO_SPLITS).territories[0]
    assert structure(t.columns, t.seed) == world_print(generate(t.seed, *t.columns))


def _manifests(eval_territories: list[dict[str, object]]) -> dict[str, sp.Manifest]:
    train = sp.load("train", REPO_SPLITS)
    planted = sp.parse(sp.seal({"format_version": 1, "name": "eval", "description": "planted",
                                "territories": eval_territories, "contamination": {}}))  # fmt: skip
    return {"train": train, "eval": planted}


def test_the_audit_reports_a_planted_overlap() -> None:
    source = sp.load("train", REPO_SPLITS).territories[4]
    copied = {**source.to_dict(), "id": "eval-000"}
    fresh = {**copied, "id": "eval-001", "seed": 123_456}
    rows = audit(_manifests([copied, fresh]), "train", structure)
    found = next(r for r in rows if isinstance(r, Overlap))
    assert (found.split, found.worlds, found.worlds_shared) == ("eval", 2, 1)
    assert found.parts_shared >= len(set(structure(source.columns, source.seed).parts))
    assert "train: the split the others are compared with" in rows
    alone = next(r for r in audit(_manifests([fresh]), "train", structure) if isinstance(r, Overlap))
    assert alone.worlds_shared == 0


def test_the_command_audits_and_refuses_an_unknown_split(tmp_path: Path) -> None:
    d = tmp_path / "splits"
    d.mkdir()
    for name in ("train", "debug"):
        shutil.copy(REPO_SPLITS / f"{name}.json", d)
    data = json.loads((d / "debug.json").read_text())
    data["territories"][0] = {**json.loads((d / "train.json").read_text())["territories"][0], "id": "debug-000"}
    sp.write_manifest(data, d / "debug.json")
    result = CliRunner().invoke(app, ["splits", "audit", "--splits-dir", str(d), "--split", "debug"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"debug: 1/3 world structures and {_parts_shared(d)}/{_parts(d)} committee " \
                                    "structures also occur in train"  # fmt: skip
    bad = CliRunner().invoke(app, ["splits", "audit", "--splits-dir", str(d), "--split", "nope"])
    assert bad.exit_code == 1 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == ["error: no split named 'nope' (available: debug, train)"]


def _parts(d: Path) -> int:
    return len({x for t in sp.load("debug", d).territories for x in structure(t.columns, t.seed).parts})


def _parts_shared(d: Path) -> int:
    train = {x for t in sp.load("train", d).territories for x in structure(t.columns, t.seed).parts}
    return len({x for t in sp.load("debug", d).territories for x in structure(t.columns, t.seed).parts} & train)


@pytest.mark.parametrize("split", ["eval", "held-out"])
def test_the_shipped_splits_share_no_world_with_train(split: str) -> None:
    rows = audit({n: sp.load(n, REPO_SPLITS) for n in ("train", split)}, "train", structure, split)
    assert [r.worlds_shared for r in rows if isinstance(r, Overlap)] == [0]


def test_a_family_without_its_train_split_is_a_one_line_error(tmp_path: Path) -> None:
    shutil.copy(REPO_SPLITS / "debug.json", tmp_path)
    result = CliRunner().invoke(app, ["splits", "audit", "--splits-dir", str(tmp_path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == ["error: territory-v0: no 'train' split to compare with"]
