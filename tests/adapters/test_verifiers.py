"""The verifiers v1 adapter: a full episode through verifiers' own rollout entry point (``Env.serving`` and
``Env.run_slot``, as ``vf-eval`` runs them), its null harness (verifiers' chat loop with MCP tools) in the
subprocess runtime, the tool server launched by verifiers, and the scripted OpenAI-compatible server on
loopback as the model (runs in its own venv: ``.ci/run``)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

vf = pytest.importorskip("verifiers.v1")

from env_episodes import reference  # noqa: E402

from salesgym.adapters.tool_episode import split_tasks  # noqa: E402
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions, text_reply  # noqa: E402

KEY_VAR = "SALESGYM_SCRIPTED_KEY"


@pytest.fixture(autouse=True)
def _tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # the null harness runs its chat program with uv (installed in this venv by the extra)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv(KEY_VAR, "scripted")


def run_rollout(taskset: dict[str, Any], server: ScriptedOpenAI, max_turns: int) -> tuple[Any, Any]:
    config = vf.SingleAgentEnvConfig(
        taskset={"id": "salesgym-verifiers", **taskset},
        agent={"harness": {"id": "null"}, "runtime": {"type": "subprocess"}, "max_turns": max_turns},
    )
    env = vf.load_environment(config)
    (task,) = list(env.taskset)
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=server.base_url, api_key_var=KEY_VAR))

    async def go() -> Any:
        async with env.serving():
            return await env.run_slot(env.slots(task)[0], ctx)

    return task, asyncio.run(go())


def test_full_split_episode_through_the_rollout_entry_point_matches_in_process() -> None:
    world = split_tasks("debug", limit=1)[0]
    ref = reference(lambda: world.start().env, "territory", world.seed)
    moves = [*moves_from_actions(ref.actions), text_reply("Done.")]
    with ScriptedOpenAI({None: moves}) as server:
        task, episode = run_rollout({"split": "debug", "limit": 1}, server, max_turns=len(moves) + 5)
        requests = [r for r in server.requests if r["status"] == 200]
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    assert trace.ok, trace.errors
    # the model saw the task card, the first observation and the environment's own tool schemas
    first = requests[0]["body"]
    assert first["messages"][0] == {"role": "system", "content": task.data.system_prompt}
    assert first["messages"][1]["content"] == world.start().first_text
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    assert offered == {t["name"]: t["inputSchema"] for t in world.start().env.mcp_tools()}
    # every call reached the environment, in order, and the episode ended with the native one
    assert len(requests) >= len(ref.actions)
    assert trace.state.rewards == ref.rewards
    assert trace.state.done and trace.state.terminated
    assert trace.state.event_log_hash == ref.event_log_hash and trace.state.score == ref.score
    assert trace.rewards["episode_return"].score == pytest.approx(ref.episode_return)
    assert trace.reward == pytest.approx(ref.episode_return)
    assert trace.metrics["steps"] == len(ref.actions)
    assert trace.metrics["verifier_score"] == pytest.approx(ref.score["primary"])
    assert trace.stop_condition == "episode_over"


def test_a_registered_id_and_seed_and_a_refused_call() -> None:
    import salesgym

    env_id, seed = "desk-debug-v0", 5
    ref = reference(lambda: salesgym.make(env_id), "desk", seed)
    moves = [*moves_from_actions([{"tool": "no_such_tool", "args": {}}]), *moves_from_actions(ref.actions[:3]),
             text_reply("Stopping here.")]  # fmt: skip
    with ScriptedOpenAI({None: moves}) as server:
        task, episode = run_rollout({"env_id": env_id, "seeds": [seed], "make_kwargs": {"n_leads": 8}}, server,
                                    max_turns=20)  # fmt: skip
    assert task.data.make_kwargs == {"n_leads": 8} and task.data.name == f"{env_id}#{seed}"
    (trace,) = episode.traces
    assert episode.ok, episode.errors
    # the unknown tool is refused by verifiers' chat loop before any environment sees it; the three calls
    # after it step the world as they do in process, and the episode is not over
    assert trace.state.rewards == ref.rewards[:3] and not trace.state.done and trace.state.score is None
    assert trace.reward == pytest.approx(sum(ref.rewards[:3]))
    assert trace.stop_condition != "episode_over"
