"""Adding a family is one folder and one registration: the stall family (``stall_env.py``, ``stall_family.py``,
``stall_policies.py`` beside this file, outside the package) registers one id and gets the conformance kit, the
benchmark (splits generated, verified, played and reported through the CLI), an adapter and the service, with no
line of the package naming it. A spec that leaves out a required field is refused, by the type checker and at
run time."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import stall_family
import stall_policies
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import salesgym
from salesgym.adapters.tool_episode import split_tasks
from salesgym.agents import suite
from salesgym.bench import splits as sp
from salesgym.cli import app
from salesgym.core.family import FamilySpec, SplitColumns
from salesgym.serve.app import create_app
from salesgym.serve.auth import Tokens
from salesgym.serve.store import Store
from salesgym.testing.conformance import CHECKS, Case

ID = "stall-v0"
HERE = Path(__file__).resolve().parent
AGENT, OPERATOR = "agent-token-aaaaaaaaaaaaaaaa", "operator-token-oooooooooooooo"


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    """The one registration (taken back afterwards, so the other tests see the package's families only)."""
    salesgym.register(ID, "stall_env:StallEnv", spec="stall_family:SPEC")
    yield
    del salesgym._REGISTRY[ID]


@pytest.fixture(scope="module")
def splits_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stall's splits, written by ``salesgym splits generate --family stall`` from its plan."""
    root = tmp_path_factory.mktemp("splits")
    result = CliRunner().invoke(app, ["splits", "generate", "--family", "stall", "--out", str(root / "stall")])
    assert result.exit_code == 0, result.output
    return root


def test_the_registration_is_all_the_package_knows() -> None:
    assert salesgym.family(ID) is stall_family.SPEC
    assert "stall" in salesgym.families() and salesgym.family_ids("stall") == [ID]
    assert suite("stall") is stall_policies.SUITE
    for path in Path(salesgym.__file__).parent.rglob("*.py"):  # no line of the package names the family
        text = path.read_text(encoding="utf-8")
        assert not any(name in text for name in ("stall_", "stall-", '"stall"')), path


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_the_conformance_kit_runs_every_check(check: str) -> None:
    CHECKS[check](Case(ID))


def test_splits_are_sealed_verified_and_their_entries_typed(splits_dir: Path) -> None:
    manifest = sp.load("stall-eval", splits_dir)
    assert manifest.env_id == ID and len(manifest.territories) == 3
    entry = manifest.territories[0]
    scenario = stall_family.SPEC.scenario(entry.columns)
    assert scenario == stall_family.StallScenario("village", "honey", 6, 8)
    assert scenario.columns() == entry.columns == SplitColumns("village", "honey", 6, 8)
    result = CliRunner().invoke(app, ["splits", "verify", "--splits-dir", str(splits_dir / "stall")])
    assert result.exit_code == 0, result.output
    # the family's own split rules are what verify checks
    broken = sp.Manifest("stall-eval", "", (sp.Territory("e-0", "village", "honey", 1, 2, 8),), None, "x", env_id=ID)
    assert stall_family.SPEC.split_rules({"stall-train": sp.load("stall-train", splits_dir), "stall-eval": broken})


def test_the_benchmark_plays_and_reports_it_in_its_own_words(splits_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sp.ENV_VAR, str(splits_dir))  # the report reads the split's layout for its breakdowns
    db = tmp_path / "runs.sqlite"
    run = CliRunner().invoke(app, ["bench", "--family", "stall", "--splits-dir", str(splits_dir), "--db", str(db),
                                   "--workers", "1"])
    assert run.exit_code == 0, run.output
    assert "stall-eval" in run.output and "oracle" in run.output and "descending" in run.output
    run_id = re.findall(r"stall-eval-[0-9a-f]{10}", run.output)[-1]
    report = CliRunner().invoke(app, ["report", run_id, "--db", str(db), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    md = (tmp_path / "report" / "report.md").read_text()
    assert "revenue" in md and "stalls" in md and "territor" not in md.lower()
    assert "## By buyers" in md  # the breakdown tables name the stored columns in the family's words


def test_an_adapter_plays_a_split_task(splits_dir: Path) -> None:
    task = split_tasks("stall-eval", splits_dir)[0]
    episode = task.start()
    assert episode.tool_names() == ["list_buyers", "offer", "wait"]
    step = episode.call("offer", {"buyer_id": "ada", "price": 1.0})
    assert step.tool_result["status"] == "ok" and step.reward == 1.0


def test_the_service_serves_it(splits_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sp.ENV_VAR, str(splits_dir))
    auth = {"Authorization": f"Bearer {AGENT}"}
    with TestClient(create_app(Store(tmp_path / "s.sqlite"), Tokens(agents=(AGENT,), operator=OPERATOR))) as c:
        assert ID in json.dumps(c.get("/envs", headers=auth).json())
        created = c.post("/sessions", json={"env_id": ID, "seed": 3}, headers=auth).json()
        sid, version = created["session_id"], created["state_version"]
        step = c.post(f"/sessions/{sid}/step", headers=auth, json={
            "state_version": version, "action": {"tool": "offer", "args": {"buyer_id": "bo", "price": 2.0}}}).json()
        assert step["info"]["tool_result"]["status"] == "ok", step
        listed = c.get("/benchmark/stall-eval", headers=auth)
        assert listed.status_code == 200 and "stall-eval-000" in listed.text
        refused = c.post("/runs", json={"env_id": ID, "seed": 1}, headers=auth)
        assert refused.status_code == 422 and refused.json()["error"] == "no_verifier_api"


def test_a_spec_missing_a_field_is_refused_at_run_time() -> None:
    with pytest.raises(TypeError, match="split_rules"):
        FamilySpec(name="x", scenario=stall_family.StallScenario.read, catalogue=stall_family.catalogue,  # type: ignore[call-arg]
                   split_plan=stall_family.plan, default_split="x-eval", split_prefix="x-", policies="m:SUITE",
                   report_words={}, scenario_words={})


@pytest.mark.skipif(shutil.which("mypy") is None and not (Path(sys.executable).parent / "mypy").exists(),
                    reason="mypy is not installed")
def test_the_type_checker_names_what_a_family_left_out(tmp_path: Path) -> None:
    source = tmp_path / "half_family.py"
    source.write_text("from salesgym.core.family import FamilySpec\n\n"
                      "SPEC = FamilySpec(name='half', default_split='half-eval', split_prefix='half-',\n"
                      "                  policies='m:SUITE', report_words={}, scenario_words={})\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout
    for field in ("scenario", "catalogue", "split_plan", "split_rules"):
        assert f'Missing named argument "{field}"' in done.stdout, done.stdout
