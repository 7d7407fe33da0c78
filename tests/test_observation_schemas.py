"""The exported models of what an agent receives are pinned like the tool schemas: an observation's ``data`` of
each family (``env.observation_schema()``) and each tool's output alone (``ToolSpec.output_schema()``; the MCP
``outputSchema``, which wraps it, is in the tool snapshots). Any drift is a reviewed diff of the snapshot.

Regenerate after an intended change with
``SALESGYM_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_observation_schemas.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

import salesgym

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
IDS = ("territory-debug-v0", "desk-debug-v0", "workflows-debug-v0")
SCHEMA_IDS = (*IDS, "workflows-ui-debug-v0")  # the browser family's schemas need no browser; its episodes do


def _exported(env_id: str) -> dict[str, object]:
    env = salesgym.make(env_id)
    return {"observation_data": env.observation_schema(),
            "tool_outputs": {name: spec.output_schema() for name, spec in env.toolbox.specs.items()}}


@pytest.mark.parametrize("env_id", SCHEMA_IDS)
def test_the_observation_and_output_schemas_match_the_snapshot(env_id: str) -> None:
    current = _exported(env_id)
    for schema in (current["observation_data"], *current["tool_outputs"].values()):  # type: ignore[attr-defined]
        jsonschema.Draft202012Validator.check_schema(schema)
    path = SNAPSHOTS / f"{salesgym.family(env_id).name.replace('-', '_')}_outputs.json"
    text = json.dumps(current, indent=1, sort_keys=True) + "\n"
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"snapshot written to {path}")
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text), f"{path.name} drifted: review it"


@pytest.mark.parametrize("env_id", IDS)
def test_the_first_observation_validates_against_its_exported_schema(env_id: str) -> None:
    env = salesgym.make(env_id)
    obs, _ = env.reset(seed=0)
    jsonschema.validate(json.loads(json.dumps(obs["data"])), env.observation_schema())
