"""The exported tool schemas are pinned (docs/architecture.md, habits): any drift is a reviewed diff of the snapshot.

Regenerate after an intended change with ``SALESGYM_UPDATE_SNAPSHOTS=1 python -m pytest tests/territory``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import salesgym

SNAPSHOT = Path(__file__).resolve().parent.parent / "snapshots" / "territory_tools.json"


def _exported() -> dict[str, object]:
    env = salesgym.make("territory-debug-v0")
    return {"openai": env.tool_schemas(), "mcp": env.mcp_tools()}


def test_exported_tool_schemas_match_the_snapshot() -> None:
    current = _exported()
    text = json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
        pytest.skip(f"snapshot written to {SNAPSHOT}")
    assert SNAPSHOT.exists(), "no snapshot yet: run with SALESGYM_UPDATE_SNAPSHOTS=1"
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert [t["function"]["name"] for t in pinned["openai"]] == [t["function"]["name"] for t in current["openai"]]
    for old, new in zip(pinned["openai"], current["openai"], strict=True):
        assert new == old, f"schema of {old['function']['name']} drifted; review and update the snapshot"
    assert current["mcp"] == pinned["mcp"]


def test_the_snapshot_pins_eighteen_tools_in_contract_order() -> None:
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert len(pinned["openai"]) == 18
    assert pinned["openai"][0]["function"]["name"] == "view_opportunity"
    assert pinned["openai"][-1]["function"]["name"] == "wait"
