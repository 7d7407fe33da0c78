"""docs/agents.md: the guide's agent is real code that takes the benchmark through ``--agent``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from salesgym.bench.store import Store
from salesgym.cli import app

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def _opener_source() -> str:
    match = re.search(r"```python\n# opener\.py\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert match, "docs/agents.md lost its opener.py example"
    return match.group(1)


def test_the_guides_agent_is_short() -> None:
    code = [line for line in _opener_source().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 20


def test_the_guides_agent_plays_the_debug_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "opener.py").write_text(_opener_source(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "runs.sqlite"
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "--agent", "opener:Opener", "--workers", "1",
                                      "--db", str(db)])
    assert result.exit_code == 0 and "opener" in result.output, result.output
    with Store(db, readonly=True) as store:
        run = store.runs()[-1]
        episodes = [e for e in store.episodes(run.id) if e.policy == "opener"]
        trajectories = [store.trajectory(run.id, "opener", e.territory_id) for e in episodes]
    assert len(episodes) == 3 and all(e.status == "ok" for e in episodes)
    for traj in trajectories:
        calls = [t["action"]["tool"] for t in traj["turns"]]
        refused = [t for t in traj["turns"] if t["tool_result"]["status"] == "error"]
        assert {"research_account", "find_stakeholders", "send_message"} <= set(calls) and not refused
        topics = [t["action"]["args"]["subject"] for t in traj["turns"] if t["action"]["tool"] == "send_message"]
        assert all(s != "Re: your priorities" for s in topics)  # every message names its account's news
    assert any(e.metrics and e.metrics["primary"] > 0 for e in episodes)  # someone answered
