"""Every template is a BrowserGym task: BrowserGym's own ``BrowserEnv`` (its Chromium launch, its observation
extraction, its ``HighLevelActionSet`` and its chat) runs a four-app task and gets the verdict salesgym's own
environment and the tool path give for the same instance."""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.agents.workflows_ui.reference import UIReference
from salesgym.agents.workflows_ui.sweep import check
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.webapps.control import outcome

TEMPLATE, SEED = "new-exec-full-cycle", 1  # four apps, prospecting read only


def test_every_template_is_registered_as_a_browsergym_task() -> None:
    from salesgym.adapters import browsergym

    assert [f"browsergym/salesgym.workflows.{t}" for t in TEMPLATES] == browsergym.IDS
    assert all(i in gym.registry for i in browsergym.IDS)
    assert browsergym.register() == browsergym.IDS  # idempotent


def _action(step: Any, page: Any, port_origin: dict[str, str]) -> str:
    """The BrowserGym action string for one blueprint step (the element's bid read from the page)."""
    if step.kind == "goto":
        app, path = step.target.split("//", 1)[1].split(".", 1)[0], step.target.split("/", 3)[3]
        return f"goto({port_origin[app] + '/' + path!r})"
    bid = page.get_attribute(f"#{step.target}", "bid")
    assert bid, f"#{step.target} has no bid on {page.url}"
    if step.kind == "fill":
        return f"fill({bid!r}, {str(step.value)!r})"
    if step.kind == "select":
        return f"select_option({bid!r}, {str(step.value)!r})"
    return f"click({bid!r})"


@pytest.mark.campaign  # minutes on a loaded machine: BrowserGym's own Chromium and observation extraction
def test_a_four_app_task_through_browsergyms_browserenv_gets_salesgyms_verdict() -> None:
    from browsergym.core.action.highlevel import HighLevelActionSet

    from salesgym.adapters import browsergym  # noqa: F401  (registers the tasks)

    actions = HighLevelActionSet(subsets=["chat", "infeas", "bid", "nav"], multiaction=False)
    env = gym.make(f"browsergym/salesgym.workflows.{TEMPLATE}", headless=True, pre_observation_delay=0.05,
                   action_mapping=actions.to_python_code)  # fmt: skip
    try:
        obs, info = env.reset(seed=SEED)
        task = env.unwrapped.task
        assert TEMPLATE in info["task_info"]["template"] and "Mark the task done" in obs["goal"]
        assert obs["url"].startswith("http://task.localhost:") and obs["axtree_object"]["nodes"]
        obs, reward, terminated, *_ = env.step("send_msg_to_user('Why is this needed?')")
        assert obs["chat_messages"][-1]["role"] == "user" and not terminated  # the requester answered in the chat
        agent = UIReference(SEED, task.run.env.hidden_truth())
        agent.reset({}, [{"type": "function", "function": {"name": "fill"}}], "")
        steps = 0
        while agent.next_form() and not terminated:
            before = len(task.run.calls)
            for step in list(agent.actions):
                if step.kind == "check" and env.unwrapped.page.is_checked(f"#{step.target}"):
                    continue
                for _attempt in range(4):  # BrowserGym's actions wait 500 ms: on a loaded machine, try again
                    calls, url = len(task.run.calls), env.unwrapped.page.url
                    obs, reward, terminated, _, info = env.step(_action(step, env.unwrapped.page,
                                                                                task.run.origins))
                    steps += 1
                    done = len(task.run.calls) > calls or env.unwrapped.page.url != url
                    if not obs["last_action_error"] or (step.kind == "click" and done):
                        break
                else:
                    raise AssertionError((step, obs["last_action_error"]))
            agent.actions.clear()
            agent.took([c.public() for c in task.run.calls[before:]])
        assert terminated and reward == 1.0 and info["task_info"]["verdict"] == "pass", steps
        browsergym_verdict = outcome(task.run.env.score())
    finally:
        env.close()
    ours = check(TEMPLATE, SEED)
    assert ours.passed and ours.same_verdict
    tool = salesgym.make("workflows-v0", template=TEMPLATE)
    tool.reset(seed=SEED)
    for _ in rollout(tool, make_policy("reference", SEED, tool.hidden_truth(), "workflows"), seed=SEED):
        pass
    assert browsergym_verdict == outcome(tool.score())


def test_the_tasks_cheat_solves_it_through_the_page() -> None:
    from salesgym.adapters import browsergym  # noqa: F401

    env = gym.make("browsergym/salesgym.workflows.crm-inbound-sql", headless=True, pre_observation_delay=0.0)
    try:
        env.reset(seed=3)
        task = env.unwrapped.task
        task.cheat(env.unwrapped.page, env.unwrapped.chat.messages)
        _, reward, terminated, *_ = env.step("noop(0)")
        assert terminated and reward == 1.0
    finally:
        env.close()


def test_after_stop_browsers_asyncio_runs_on_the_thread_and_a_new_env_starts_afresh() -> None:
    from salesgym.adapters.browsergym import stop_browsers

    for _ in range(2):  # the second round: a stopped Playwright starts again on the next reset
        env = gym.make("browsergym/salesgym.workflows.crm-inbound-sql", headless=True, pre_observation_delay=0.0)
        try:
            env.reset(seed=3)
            refused = asyncio.sleep(0)
            with pytest.raises(RuntimeError, match=r"another loop is running|running event loop"):
                asyncio.run(refused)  # what a live Playwright does to this thread
            refused.close()
        finally:
            env.close()
        stop_browsers()
        assert asyncio.run(asyncio.sleep(0, "ran")) == "ran"


@pytest.mark.parametrize("bad", ["no-such-template"])
def test_an_unknown_template_is_refused(bad: str) -> None:
    from salesgym.adapters.browsergym import WorkflowsBrowserTask

    with pytest.raises(ValueError, match="unknown template"):
        WorkflowsBrowserTask(1, bad)
