"""The all-templates browser sweep (``pytest -m ui_sweep``): the UI reference passes every
template on two seeds with the tool path's verdict on every check; doing nothing and a random clicker pass none.
Each runs on two worker processes, each with its own Chromium."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from salesgym.agents.workflows_ui.sweep import sweep
from salesgym.envs.workflows.tasks.templates import TEMPLATES

pytestmark = pytest.mark.ui_sweep  # .ci/run runs them all
WORKERS = 2


@pytest.mark.parametrize("seed", [1, 2])
def test_the_ui_reference_passes_every_template_with_the_tool_paths_verdict(seed: int) -> None:
    found = list(sweep(list(TEMPLATES), [seed], workers=WORKERS))
    failing = [f"{c.template}/{c.seed}: passed={c.passed} same={c.same_verdict} {c.problem}" for c in found
               if not c.ok]  # fmt: skip
    assert len(found) == len(TEMPLATES) and not failing, "\n".join(failing)


def _floor(job: tuple[str, str, int]) -> tuple[str, bool, int]:
    from salesgym.agents import make_policy
    from salesgym.agents.base import rollout
    from salesgym.envs.workflows_ui.env import WorkflowsUIEnv

    policy_name, template, actions = job
    env = WorkflowsUIEnv(template=template, screenshot=False, axtree=False, max_actions=actions)
    try:
        policy = make_policy(policy_name, seed=3, family="workflows-ui")
        steps = sum(1 for _ in rollout(env, policy, seed=3))
        return template, bool(env.score()["passed"]), steps
    finally:
        env.close()


@pytest.mark.parametrize(("policy", "actions"), [("idle", 10), ("random", 25)])
def test_a_floor_policy_passes_no_template(policy: str, actions: int) -> None:
    from salesgym.envs.workflows_ui.browser import keep_warm

    with ProcessPoolExecutor(max_workers=WORKERS, initializer=keep_warm) as pool:  # one Chromium a worker
        results: list[Any] = list(pool.map(_floor, [(policy, t, actions) for t in TEMPLATES]))
    assert len(results) == len(TEMPLATES)
    assert [t for t, passed, _ in results if passed] == []
    assert all(steps >= 1 for _, _, steps in results)
