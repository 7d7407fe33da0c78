"""The ``partial_reward`` training ablation: the final reward is the verifier's partial score measured from where
the task started; the score is the verifier's as ever, and the benchmark refuses the ablation."""

from __future__ import annotations

from typing import Any

import pytest
from wf_helpers import params, step, workflow

from salesgym.bench import runner
from salesgym.envs.workflows.tasks.model import resolve

# crm-inbound-sql: 10 checks and 3 global ones; 1 check holds before any call, its first reference call passes 3
TEMPLATE = "crm-inbound-sql"


def reference_rewards(env: Any, stop: int) -> list[float]:
    """The rewards of the reference solution's first ``stop`` calls."""
    secret, outputs, rewards = env._world.secret, [], []
    for action in secret.solution[:stop]:
        _, reward, _, _, info = env.step(resolve(action, secret.params, outputs))
        outputs.append(info["tool_result"]["output"])
        rewards.append(reward)
    return rewards


def finished(calls: int, **kwargs: object) -> tuple[float, dict[str, object]]:
    """(the return, the score) of the reference solution's first ``calls`` calls and ``finish_task``."""
    env = workflow(TEMPLATE, **kwargs)
    paid = sum(reference_rewards(env, calls))
    result = step(env, "finish_task", summary="done")
    assert result["terminated"]
    return paid + result["reward"], env.score()


def test_a_partly_done_task_pays_its_share_of_the_checks_passed_since_the_start() -> None:
    reward, report = finished(1, ablation="partial_reward")
    assert report["assertions"] == {"passed": 4, "total": 10} and not report["passed"]
    assert reward == pytest.approx((4 - 1) / (13 - 4), abs=1e-4)  # 3 of the 9 points the start left open
    plain, plain_report = finished(1)
    assert plain == 0.0  # without the ablation the same episode pays the verdict
    assert {k: v for k, v in report.items() if k != "training_ablations"} == plain_report  # the score is unchanged
    assert report["training_ablations"] == ["partial_reward"] and "training_ablations" not in plain_report


def test_nothing_done_pays_0_and_a_pass_pays_1() -> None:
    reward, report = finished(0, ablation="partial_reward")
    assert reward == 0.0 and report["partial"] > 0  # the raw partial score would have paid doing nothing
    reward, report = finished(2, ablation="partial_reward")
    assert report["passed"] and reward == pytest.approx(1.0)


def test_a_cut_episode_earns_the_progress_its_tables_show() -> None:
    env = workflow(TEMPLATE, ablation="partial_reward")
    (first,) = reference_rewards(env, 1)
    assert first == pytest.approx(1 / 3, abs=1e-4) and not env._state.terminated
    assert step(env, "hubspot-list-owners")["reward"] == 0.0  # a read changes nothing


def test_a_violation_pays_0() -> None:
    env = workflow(TEMPLATE, ablation="partial_reward")
    paid = sum(reference_rewards(env, 1))
    other = next(k for k in env._state.rows("crm.contacts") if k != params(env)["contact_id"])
    paid += step(env, "hubspot-batch-update-objects", objectType="contacts",
                 inputs=[{"id": other, "properties": {"jobtitle": "Edited"}}])["reward"]  # a record not the task's
    assert paid == 0.0  # the tables show the violation at once
    paid += step(env, "finish_task", summary="done")["reward"]
    assert env.score()["violations"] and paid == 0.0


def test_an_unknown_ablation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown ablation"):
        workflow(TEMPLATE, ablation="no_gravity")


def test_the_benchmark_refuses_it() -> None:
    with pytest.raises(runner.BenchError, match="training ablation"):
        runner.validate_ablation("partial_reward", "workflows-v0")
