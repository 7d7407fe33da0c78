"""The desk's task card and tool schemas are pinned (a change is a reviewed diff); the card states this
desk's public facts and nothing hidden.

Regenerate after an intended change with ``SALESGYM_UPDATE_SNAPSHOTS=1 python -m pytest tests/desk``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import salesgym
from salesgym.envs.desk.archetypes import ARCHETYPES, VARIANTS
from salesgym.envs.desk.instructions import TASK_VERSION
from salesgym.envs.desk.variants import hidden_variant

SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots"


def _check(path: Path, text: str) -> None:
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"snapshot written to {path}")
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed: review it (and bump the version)"


def test_the_task_card_matches_the_snapshot() -> None:
    env = salesgym.make("desk-v0")
    _, info = env.reset(seed=7)
    _check(SNAPSHOTS / "desk_task_card.md", env.instructions())
    assert info["instructions"] == env.instructions() and TASK_VERSION in env.instructions()


def test_the_tool_schemas_match_the_snapshot() -> None:
    env = salesgym.make("desk-debug-v0")
    text = json.dumps({"openai": env.tool_schemas(), "mcp": env.mcp_tools()}, indent=2, sort_keys=True) + "\n"
    _check(SNAPSHOTS / "desk_tools.json", text)


def test_the_card_states_public_facts_only() -> None:
    env = salesgym.make("desk-v0", n_leads=50, shift_days=3, variant="skeptical")
    env.reset(seed=1)
    card = env.instructions()
    assert "50 leads" in card and "1440 minutes" in card and "3 day(s)" in card
    for word in [*(a.name for a in ARCHETYPES), *VARIANTS]:
        assert word not in card.replace("-", "_").lower().split(), word
    twin = salesgym.make("desk-v0", n_leads=50, shift_days=3)
    twin.start_world(hidden_variant(env._world, 1))
    assert twin.instructions() == card


def test_the_environment_card_is_the_class_docstring() -> None:
    from salesgym.envs.desk.env import DeskEnv

    card = (Path(__file__).resolve().parents[2] / "docs" / "desk.md").read_text(encoding="utf-8")
    doc = DeskEnv.__doc__ or ""
    for section in ("Description", "Tools", "Observation", "Reward", "Episode end", "Arguments", "Version history"):
        assert f"\n    {section}\n" in doc and f"## {section}" in card, section
        body = doc.split(f"\n    {section}\n", 1)[1].split("\n\n", 1)[0]
        assert " ".join(x.strip() for x in body.splitlines()) in card, section
