"""Every registered policy of each family plays a debug episode and everything it receives fits the exported
models: the conformance kit's random calls reach the refusals and odd corners, the policies reach the far end of
an episode (deals that close, long views that page, sales, verdicts)."""

from __future__ import annotations

import pytest

import salesgym
from salesgym.agents import make_policy, suite
from salesgym.core.tools import ErrorOutput, json_problem

IDS = ("territory-debug-v0", "desk-debug-v0", "workflows-debug-v0")


@pytest.mark.parametrize("env_id", IDS)
def test_every_policy_receives_what_the_models_describe(env_id: str) -> None:
    family = salesgym.family(env_id).name
    policies = suite(family)
    for name in policies.policies:
        env = salesgym.make(env_id)
        obs, info = env.reset(seed=1)
        truth = env.hidden_truth() if policies.reads_truth(name) else None
        policy = make_policy(name, 1, truth, family=family)
        policy.reset(obs, env.tool_schemas(), info["instructions"])
        for step in range(600):
            action = policy.act(obs)
            obs, _, terminated, truncated, info = env.step(action)
            result = info["tool_result"]
            where = f"{env_id} {name} step {step}"
            if result["status"] == "ok":
                spec, _ = env.toolbox.parse(action)
                problem = spec.output_problem(result["output"])
            else:
                problem = json_problem(ErrorOutput, result["output"])
            assert problem is None, f"{where}: {problem}"
            problem = json_problem(env.observation_model, obs["data"])
            assert problem is None, f"{where}: the observation's data: {problem}"
            policy.observe_result(result)
            if terminated or truncated:
                break
