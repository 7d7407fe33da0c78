"""The tools a world lets the agent call (``env.usable_tools()``): a workflows task's apps' tools and the task
desk's, exactly the tools the sandbox does not refuse for permission, so a prompt that shows only these
(``RolloutConfig(tools="usable")``) hides nothing the agent could use; families that do not narrow say None."""

from __future__ import annotations

import pytest

import salesgym
from salesgym.adapters.rollout import RolloutConfig, shown_tools
from salesgym.core.tools import ToolError
from salesgym.envs.workflows.contract import TASK_APP
from salesgym.envs.workflows.tools import APP_OF

TEMPLATES = ("crm-inbound-sql", "pros-abm-list", "sched-earliest-demo", "seq-webinar-followup",
             "outbound-locked-mailbox")  # one app each, then four apps  # fmt: skip


def _names(schemas: list[dict]) -> set[str]:
    return {s["function"]["name"] for s in schemas}


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_usable_tools_are_exactly_those_not_refused_for_permission(template: str) -> None:
    env = salesgym.make("workflows-v0", template=template)
    env.reset(seed=0)
    usable = env.usable_tools()
    task = env.observe()["data"]["task"]
    assert usable == {t for t, app in APP_OF.items() if app == TASK_APP or app in task["apps"]}
    assert {"finish_task", "ask_requester"} <= usable
    ctx = env._ctx()  # the sandbox's permission check, as a step makes it once the arguments are valid
    for tool in sorted(_names(env.tool_schemas())):
        if tool in usable:
            env.family.precheck(ctx, tool)
        else:
            with pytest.raises(ToolError, match="403 Forbidden: this task has no access"):
                env.family.precheck(ctx, tool)


def test_a_prompt_shows_the_usable_tools_or_all_of_them() -> None:
    env = salesgym.make("workflows-v0", template="crm-inbound-sql")
    env.reset(seed=0)
    everything, usable = _names(env.tool_schemas()), env.usable_tools()
    assert usable is not None and len(usable) < len(everything) / 2
    assert _names(shown_tools(env, RolloutConfig())) == everything
    assert _names(shown_tools(env, RolloutConfig(tools="usable"))) == usable
    assert _names(shown_tools(env, RolloutConfig(tools="usable", tool_schemas="compact"))) == usable
    with pytest.raises(ValueError, match="tools must be 'all' or 'usable'"):
        RolloutConfig(tools="some")  # type: ignore[arg-type]


@pytest.mark.parametrize("env_id", ["territory-debug-v0", "desk-debug-v0"])
def test_families_that_do_not_narrow_show_every_tool(env_id: str) -> None:
    env = salesgym.make(env_id)
    env.reset(seed=0)
    assert env.usable_tools() is None
    assert shown_tools(env, RolloutConfig(tools="usable")) == env.tool_schemas()
