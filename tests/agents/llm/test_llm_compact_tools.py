"""``tool_schemas="compact"``: the request shows the short tool list (a model with a small context can play a
workflows task), the environment still judges every call against its full schema, and a bad value is refused."""

from __future__ import annotations

import pytest
from llm_helpers import Baseline, llm, run, scripted_server

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.agents.llm import sampling_seed
from salesgym.llm.compact_tools import compact_tools
from salesgym.llm.config import LLMConfig
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions

server = scripted_server  # the module's scripted server (a fixture)
SMALL = {"context_tokens": 8192, "max_tokens": 256}  # SmolLM2-135M's window and the CLI test's reply length


@pytest.fixture(scope="module")
def task() -> Baseline:
    """A workflows task its reference solves: the full tool list does not fit 8,192 tokens, the compact one does."""
    kwargs = {"template": "crm-inbound-sql"}
    env = salesgym.make("workflows-v0", **kwargs)
    env.reset(seed=1)
    episode = Episode(env, make_policy("reference", 1, env.hidden_truth(), "workflows"), 1)
    actions = [step.action for step in episode]
    return Baseline("workflows-v0", kwargs, 1, actions, env.score(), env.event_log_hash(), episode.end)


def _bodies(server: ScriptedOpenAI, seed: int) -> list[dict[str, object]]:
    return [r["body"] for r in server.requests_for(sampling_seed(seed))]


def test_the_full_tool_list_does_not_fit_a_small_context(task: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, task.seed, moves_from_actions(task.actions), **SMALL)
    episode = run(task.env(), policy, task.seed)
    assert episode.end is not None and episode.end.startswith("stopped: context_overflow: the task card and the tool")
    assert _bodies(server, task.seed) == []


def test_the_compact_list_fits_the_same_small_context(task: Baseline, server: ScriptedOpenAI) -> None:
    env = task.env()
    policy = llm(server, task.seed, moves_from_actions(task.actions), tool_schemas="compact", **SMALL)
    run(env, policy, task.seed)
    bodies = _bodies(server, task.seed)
    assert bodies and bodies[0]["tools"] == compact_tools(env.tool_schemas())
    assert policy.episode_record()["max_prompt_tokens_estimated"] <= (8192 - 256) * 0.95


def test_a_task_is_solved_with_the_compact_list(task: Baseline) -> None:
    env = task.env()
    with ScriptedOpenAI() as fresh:  # the same world seed as the other tests: a server of its own
        policy = llm(fresh, task.seed, moves_from_actions(task.actions), tool_schemas="compact")
        run(env, policy, task.seed)
        bodies = _bodies(fresh, task.seed)
    assert len(bodies) == len(task.actions)
    assert all(b["tools"] == compact_tools(env.tool_schemas()) for b in bodies)
    assert env.score()["primary"] == task.score["primary"] == 1.0  # the same calls, judged the same way


def test_the_environment_still_checks_calls_against_the_full_schema(task: Baseline, server: ScriptedOpenAI) -> None:
    """The compact list leaves out limits and flags; a call that breaks the full schema is refused as before."""
    first = task.actions[0]
    bad = {"tool": first["tool"], "args": {**first["args"], "no_such_argument": 1}}
    env = task.env()
    policy = llm(server, task.seed + 1, moves_from_actions([bad]), tool_schemas="compact")
    run(env, policy, task.seed + 1, max_steps=1)
    assert policy.episode_record()["failures"]["refused_call"] == 1
    assert [e["kind"] for e in env.event_log()].count("invalid_action") == 1


def test_an_unknown_tool_schemas_value_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_schemas must be full or compact, got 'short'"):
        LLMConfig(model="m", tool_schemas="short")  # type: ignore[arg-type]
