"""The core the OpenEnv, verifiers and SkyRL adapters share, and the promise that the base package never
imports those libraries (they pin conflicting openai / mcp versions: each lives in its own venv)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from env_episodes import reference

import salesgym
from salesgym.adapters.tool_episode import OVER, ToolEpisode, split_tasks
from salesgym.bench.splits import SplitError

STACKS = ("openenv", "openenv_core", "fastmcp", "verifiers", "skyrl_gym", "skyrl", "mcp")


def test_the_base_package_and_the_registry_import_no_stack_library() -> None:
    program = (
        "import sys\n"
        # an import of any of them now raises ImportError, whether or not this venv has it
        f"sys.modules.update(dict.fromkeys({STACKS!r}))\n"
        "import salesgym, salesgym.adapters.tool_episode, salesgym.adapters.rollout\n"
        "for env_id in salesgym.registry():\n"
        "    env = salesgym.make(env_id); env.reset(seed=1); env.mcp_tools()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {STACKS!r} and sys.modules[m] is not None)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=120)


@pytest.mark.parametrize(
    ("env_id", "family", "seed"), [("desk-debug-v0", "desk", 5), ("territory-debug-v0", "territory", 3)]
)
def test_named_calls_replay_the_native_episode(env_id: str, family: str, seed: int) -> None:
    ref = reference(lambda: salesgym.make(env_id), family, seed)
    episode = ToolEpisode.start(env_id, seed)
    steps = [episode.call(a["tool"], a.get("args") or {}) for a in ref.actions]
    assert [s.reward for s in steps] == ref.rewards and episode.episode_return == pytest.approx(ref.episode_return)
    assert [s.done for s in steps] == [False] * (len(steps) - 1) + [True] and episode.terminated
    report = episode.report()
    assert report["event_log_hash"] == ref.event_log_hash and report["score"] == ref.score
    after = episode.call(ref.actions[0]["tool"], ref.actions[0].get("args") or {})
    assert after.text == OVER and after.reward == 0.0 and episode.env.event_log_hash() == ref.event_log_hash


def test_a_refused_call_is_one_invalid_action_and_the_report_waits_for_the_end() -> None:
    episode = ToolEpisode.start("territory-debug-v0", 3)
    step = episode.act("not a call")
    assert step.tool_result["status"] == "error" and not step.done and step.reward == 0.0
    assert episode.env._state.invalid_actions == 1
    assert "score" not in episode.report()


def test_split_tasks_make_the_benchmark_worlds_and_refuse_what_cannot_be_built() -> None:
    tasks = split_tasks("desk-eval", limit=2)
    assert [t.id for t in tasks] == ["desk-eval-000", "desk-eval-001"] and tasks[0].env_id == "desk-v0"
    from salesgym.bench.runner import make_env
    from salesgym.bench.splits import Territory

    native = make_env(Territory(**tasks[0].territory), None, "desk-v0")
    obs, _ = native.reset(seed=tasks[0].seed)
    assert tasks[0].start().first_text == obs["text"]
    with pytest.raises(SplitError, match="no split named"):
        split_tasks("no-such-split")
    with pytest.raises(SplitError, match="key"):
        split_tasks("test-private")  # a private split's worlds need the operator's key
