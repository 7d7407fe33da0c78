"""``salesgym templates list`` and ``salesgym templates show``: the catalogue (or a pack) by id, motion, tier, apps
and split, and one template's blueprint; bad input is one ``error:`` line, an unknown id or motion naming the close
matches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from salesgym.cli import app
from salesgym.envs.workflows import packs, splits
from salesgym.envs.workflows.tasks.templates import TEMPLATES

EXAMPLE = Path(__file__).resolve().parent / "example_pack"


def run(*args: str) -> Any:
    result = CliRunner().invoke(app, ["templates", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def one_error(result: Any, code: int) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == code and len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return str(lines[0])


def test_list_shows_every_template_in_the_catalogue_order_with_motion_tier_apps_and_split() -> None:
    result = run("list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["id", "motion", "tier", "apps", "split"]
    placed = {t: name.removeprefix("workflows-") for name, ids in splits.assign().items() for t in ids}
    rows = [line.split() for line in lines[1:-1]]
    assert [r[0] for r in rows] == list(TEMPLATES)
    for tid, motion, tier, apps, split in rows:
        t = TEMPLATES[tid]
        assert (motion, int(tier), split) == (t.motion, t.tier, placed[tid])
        assert apps.split(",") == [f"{a}*" if a in t.read_only else a for a in t.apps]
    assert lines[-1].startswith(f"{len(TEMPLATES)} templates")


def test_list_json_and_motion_filter() -> None:
    rows = json.loads(run("list", "--json").stdout)
    held_out = set(splits.assign()["workflows-held-out"])
    assert [r["id"] for r in rows] == list(TEMPLATES)
    assert {r["id"] for r in rows if r["held_out"]} == held_out and held_out
    assert all(r["tier"] == len(r["apps"]) and r["read_only"] == list(TEMPLATES[r["id"]].read_only) for r in rows)
    inbound = json.loads(run("list", "--motion", "inbound", "--json").stdout)
    assert [r["id"] for r in inbound] == [t.id for t in TEMPLATES.values() if t.motion == "inbound"]
    assert len(inbound) >= 10


def test_show_prints_the_blueprint_goal_prompt_steps_and_assertions() -> None:
    for tid in ("crm-inbound-sql", "crm-renewal-negotiation", "inmail-reply-referral", "handoff-rep-leaving"):
        t = TEMPLATES[tid]
        result = run("show", tid)
        assert result.exit_code == 0, result.output
        out = " ".join(result.stdout.split())  # the prompt and goal are wrapped
        for text in (t.goal, t.prompt, t.motion, *(s.objective for s in t.steps)):
            assert " ".join(text.split()) in out
        for step in t.steps:
            for a in step.assertions:
                assert f"- {a.name}: {a.expr}" in result.stdout
        for change in t.changes:
            assert f"- {change.table} (" in result.stdout
        for f in t.forbidden:
            assert f"- {f.name}: " in result.stdout
        assert f"reference solution: {len(t.solution)} call" in result.stdout


def test_show_json_is_the_template_file_of_the_data() -> None:
    data = json.loads(run("show", "crm-closed-won", "--json").stdout)
    assert data.pop("split") in ("train", "eval", "held-out")
    parsed = packs.TemplateFile.model_validate(data)
    assert packs.to_template(parsed, TEMPLATES["crm-closed-won"].fixture) == TEMPLATES["crm-closed-won"]


def test_a_pack_is_listed_and_shown_by_name_or_directory(tmp_path: Path) -> None:
    shipped = packs.builtin()["workflows-counterparty"]
    rows = json.loads(run("list", "--pack", "workflows-counterparty", "--json").stdout)
    assert [r["id"] for r in rows] == list(shipped) and all(r["split"] is None and not r["held_out"] for r in rows)
    pack = shutil.copytree(EXAMPLE, tmp_path / "pack")
    result = run("show", "acme-student-close", "--pack", str(pack))
    assert result.exit_code == 0 and "fixture: student\n" in result.stdout, result.output
    assert "crm-inbound-sql" not in run("list", "--pack", str(pack)).stdout


@pytest.mark.parametrize(("args", "code", "says"), [
    (("show", "crm-inbound-sq"), 2, "no template 'crm-inbound-sq' (did you mean crm-inbound-sql"),
    (("show", "zzzz"), 2, "no template 'zzzz' (see `salesgym templates list`)"),
    (("list", "--motion", "inbond"), 2, "no motion 'inbond' (did you mean inbound?)"),
    (("list", "--motion", "xyz"), 2, "no motion 'xyz' (one of enrichment, handoff, hygiene, inbound,"),
    (("list", "--pack", "/no/such/pack"), 1, "/no/such/pack: no such template pack directory"),
    (("show", "policy-lead-routing"), 2, "no template 'policy-lead-routing'"),  # a pack's, not the catalogue's
    (("show",), 2, "Missing argument 'ID'"),
    (("list", "--colour"), 2, "No such option: --colour"),
])  # fmt: skip
def test_bad_input_is_one_error_line(args: tuple[str, ...], code: int, says: str) -> None:
    assert says in one_error(run(*args), code)


def test_a_broken_pack_is_one_error_line(tmp_path: Path) -> None:
    pack = shutil.copytree(EXAMPLE, tmp_path / "pack")
    (pack / "templates" / "acme-student-close.json").write_text("{")
    line = one_error(run("list", "--pack", str(pack)), 1)
    assert "acme-student-close.json: invalid JSON at line 1" in line


SCHEMA_SNAPSHOT = Path(__file__).parent.parent / "snapshots" / "workflows_template_schema.json"


def test_the_printed_schema_validates_every_shipped_file_and_refuses_a_broken_one() -> None:
    """``salesgym templates schema`` is the file format for an editor: every data file of the package and of the
    example pack validates against it, and a misspelt field does not. It is snapshotted: a format change is
    reviewed (``SALESGYM_UPDATE_SNAPSHOTS=1`` rewrites it)."""
    import os

    import jsonschema

    result = run("schema")
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS"):
        SCHEMA_SNAPSHOT.write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")
    assert json.loads(SCHEMA_SNAPSHOT.read_text()) == schema, "the template file format drifted: review"
    validator = jsonschema.Draft202012Validator(schema)
    files = [*(d / "templates" for d in (packs.PACKAGE, packs.COUNTERPARTY)), EXAMPLE / "templates"]
    checked = 0
    for folder in files:
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            assert not list(validator.iter_errors(data)), path
            checked += 1
    assert checked == 8 + 4 + 3
    data = json.loads((packs.PACKAGE / "templates" / "handoff.json").read_text(encoding="utf-8"))
    data["templates"][0]["stpes"] = data["templates"][0].pop("steps")
    assert list(validator.iter_errors(data))
