"""The family's toolbox: every replica's tools (in app order) and the task's own five, ``ask_requester`` (the
rule-based simulated colleague), ``reply_message`` (answer a message in the inbox: its sender is simulated by
the same rules, ``simulator.py``), ``list_policies`` and ``read_policy`` (the company's policy documents,
``policies.py``) and ``finish_task``. Every replica tool's successful call may deliver a scripted message
(``simulator.deliver``) and set off a simulated person's scripted action (``users.after_call``). ``APP_OF``
names each tool's app: the sandbox enforces a task's app permissions from it (``check_permission``), and the
verifier's audit reads it."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolBox, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows import outputs, policies, simulator, users
from salesgym.envs.workflows.apps import REPLICAS
from salesgym.envs.workflows.apps.common import Ctx, done
from salesgym.envs.workflows.contract import TASK_APP
from salesgym.envs.workflows.world import TaskView


class AskArgs(ToolArgs):
    question: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(
        description="what you want to know, in your own words (name the thing you need)")


class ReplyArgs(ToolArgs):
    message_id: Annotated[str, StringConstraints(min_length=1, max_length=40)] = Field(
        description="the id of a message in your inbox (data.inbox)")
    text: Annotated[str, StringConstraints(min_length=1, max_length=2000)] = Field(
        description="your reply (ask what you need to know by name)")


class NoArgs(ToolArgs):
    pass


class PolicyArgs(ToolArgs):
    name: Annotated[str, StringConstraints(min_length=1, max_length=80)] = Field(
        description="the policy's name, as list_policies shows it (e.g. lead-routing)")


class FinishArgs(ToolArgs):
    summary: Annotated[str, StringConstraints(max_length=1000)] = Field(
        "", description="what you did (your own record; it is not graded)")


def ask_requester(ctx: Ctx, a: AskArgs) -> ToolOutcome:
    """The requester tells a hidden fact when the question names it (by one of its keywords) and the fact's
    conditions hold, else nothing (``simulator.py``)."""
    return simulator.answer(ctx, simulator.REQUESTER, a.question)


def reply_message(ctx: Ctx, a: ReplyArgs) -> ToolOutcome:
    """The message's sender answers the reply by the same rules as the requester."""
    message = next((m for m in ctx.state.inbox if m["id"] == a.message_id), None)
    if message is None:
        raise ToolError(f"404 Not Found: no message {quote(a.message_id)} in your inbox")
    return simulator.answer(ctx, message["sender_key"], a.text)


def list_policies(ctx: Ctx, a: NoArgs) -> ToolOutcome:
    """The company's policy documents, and whether this task's card names each as applying."""
    applies = set(ctx.world.task.policies)
    return done({"policies": [{"name": p.name, "title": p.title, "applies_to_this_task": p.name in applies}
                              for p in policies.library().values()]})  # fmt: skip


def read_policy(ctx: Ctx, a: PolicyArgs) -> ToolOutcome:
    found = policies.library().get(a.name)
    if found is None:
        raise ToolError(f"404 Not Found: no policy {quote(a.name)} (list_policies names them: "
                        f"{', '.join(policies.library())})")  # fmt: skip
    return done({"name": found.name, "title": found.title, "text": found.text})


def finish_task(ctx: Ctx, a: FinishArgs) -> ToolOutcome:
    ctx.emit("task_finished", "agent", {"summary": a.summary})
    return done({"finished": True})


TASK_TOOLS: list[ToolSpec[Any, Ctx]] = [
    ToolSpec("ask_requester", "Ask the colleague who asked for this task a question (they know facts the apps "
             "do not hold, and answer when your question names what you need).", AskArgs, ask_requester,
             "1 minute", output=outputs.AnswerOutput),
    ToolSpec("reply_message", "Reply to a message in your inbox; its sender answers (they know facts the apps do "
             "not hold, and tell them when your reply asks for them by name).", ReplyArgs, reply_message,
             "1 minute", output=outputs.AnswerOutput),
    ToolSpec("list_policies", "List the company's policy documents (lead routing, discounting, sequencing and "
             "opt-out, meeting hygiene...) and which apply to this task.", NoArgs, list_policies, "1 minute",
             writes=False, output=outputs.PoliciesOutput),
    ToolSpec("read_policy", "Read one company policy document (Markdown) by name: the rules your work must "
             "follow.", PolicyArgs, read_policy, "1 minute", writes=False, output=outputs.PolicyOutput),
    ToolSpec("finish_task", "Declare the task done: the episode ends and the end state is verified.", FinishArgs,
             finish_task, "1 minute", output=outputs.FinishOutput),
]


def _delivering(spec: ToolSpec[Any, Ctx]) -> ToolSpec[Any, Ctx]:
    """``spec`` whose successful call then delivers the scripted messages and actions it triggers."""
    handler, name = spec.handler, spec.name

    def run(ctx: Ctx, a: Any) -> ToolOutcome:
        outcome = handler(ctx, a)
        simulator.deliver(ctx, name)
        users.after_call(ctx, name, a)
        return outcome

    return dataclasses.replace(spec, handler=run)


TOOLS: ToolBox[Ctx] = ToolBox([*(_delivering(t) for app in REPLICAS.values() for t in app.TOOLS), *TASK_TOOLS])
APP_OF: dict[str, str] = {t.name: name for name, app in REPLICAS.items() for t in app.TOOLS}
APP_OF.update({t.name: TASK_APP for t in TASK_TOOLS})
OWNER_OF_TABLE: dict[str, str] = {table: name for name, app in REPLICAS.items() for table in app.TABLES}


def _in_scope(app: str, task: TaskView) -> bool:
    """Whether ``task`` may use ``app`` at all: the task desk, and the apps the task names."""
    return app == TASK_APP or app in task.apps


def usable_tools(task: TaskView) -> frozenset[str]:
    """The tools ``task`` lets the agent call: its apps' and the task desk's (read-only apps' writes are refused
    too, but shown: the refusal says why)."""
    return frozenset(tool for tool, app in APP_OF.items() if _in_scope(app, task))


def check_permission(ctx: Ctx, tool: str) -> None:
    """A task's permission scopes, enforced by the sandbox: only its apps, and no writes to a read-only one."""
    app, task = APP_OF[tool], ctx.world.task
    if app == TASK_APP:
        return
    if not _in_scope(app, task):
        raise ToolError(f"403 Forbidden: this task has no access to the {app} app (it may use: "
                        f"{', '.join(task.apps)})")  # fmt: skip
    if app in task.read_only and TOOLS.specs[tool].writes:
        raise ToolError(f"403 Forbidden: this task may read the {app} app but not write to it")
