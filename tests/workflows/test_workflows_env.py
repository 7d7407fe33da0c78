"""The environment: tool schemas pinned by a snapshot, the task card, replay and clone on a real workflow,
the registry and the benchmark through the generic runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.workflows.wf_helpers import play_reference, workflow

import salesgym
from salesgym.envs.workflows.tools import APP_OF, TOOLS

SNAPSHOT = Path(__file__).parent.parent / "snapshots" / "workflows_tools.json"


def test_tool_schemas_match_the_snapshot() -> None:
    env = salesgym.make("workflows-debug-v0")
    current = {"openai": env.tool_schemas(), "mcp": env.mcp_tools()}
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert json.loads(SNAPSHOT.read_text()) == json.loads(json.dumps(current)), "tool schemas drifted: review"


def test_tool_names_follow_the_platforms() -> None:
    names = TOOLS.names()
    assert len(names) == 54 and len(set(names)) == 54  # 49 replica tools and the task's five
    for official in ("hubspot-search-objects", "hubspot-batch-create-objects", "hubspot-create-engagement",
                     "meetings-create_invitee", "event_types-list_event_type_available_times",
                     "sequence_add_prospects", "prospect_search", "sales_search_leads", "send_inmail"):
        assert official in names
    assert {APP_OF[n] for n in names} == {"crm", "prospecting", "sequencer", "scheduler", "task"}


def test_task_card_holds_the_request_and_not_the_verifier() -> None:
    env = workflow("crm-renewal-negotiation")
    card = env.instructions()
    assert env._world.task.prompt in card and "— read only for this task" not in card
    secret = env._world.secret
    assert secret.params["amount"] not in card and all(a["expr"] not in card for s in secret.steps
                                                       for a in s["assertions"])
    assert "— read only for this task" in workflow("enrich-contacts").instructions()


def test_replay_and_clone_on_a_four_app_workflow() -> None:
    env = workflow("new-exec-full-cycle")
    twin = env.clone()
    play_reference(env)
    assert env.replay().digest() == env._state.digest()
    assert twin._state.digest() != env._state.digest() and len(twin.event_log()) == 1
    play_reference(twin)
    assert twin.event_log_hash() == env.event_log_hash()


def test_bench_runs_the_family_through_the_generic_runner() -> None:
    from salesgym.bench import splits as sp
    from salesgym.bench.runner import EpisodeSpec, run_episode

    manifest = sp.load("workflows-held-out")
    assert manifest.env_id == "workflows-v0" and not sp.environment_problems(manifest)
    train = {t.template for t in sp.load("workflows-train").territories}
    assert train.isdisjoint({t.template for t in manifest.territories})
    assert {t.family for t in manifest.territories} == {"tier1", "tier2", "tier3", "tier4"}
    t = manifest.territories[-1]
    ref = run_episode(EpisodeSpec("reference", t, env_id=manifest.env_id))
    idle = run_episode(EpisodeSpec("idle", t, env_id=manifest.env_id))
    assert ref.status == "ok" and ref.metrics is not None and ref.metrics["primary"] == 1.0
    assert idle.metrics is not None and idle.metrics["primary"] == 0.0 and idle.metrics["return"] == 0.0
