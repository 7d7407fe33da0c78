"""The task card: what an agent is told before its first step (``env.instructions()``). Built from the task's
public part and the public contract only; twins that differ in hidden facts get the same card."""

from __future__ import annotations

from salesgym.envs.workflows import policies
from salesgym.envs.workflows.contract import APP_TITLES
from salesgym.envs.workflows.world import TaskView

TASK_VERSION = "workflows-task/2"


def _policies(task: TaskView) -> str:
    """The card's policy section: only for a task that names policies (other cards are unchanged)."""
    if not task.policies:
        return ""
    names = "\n".join(f"- `{name}`: {policies.library()[name].title}" for name in task.policies)
    return f"""## Policies
These company policies apply to this task, and you are checked against them: read them with `read_policy` \
(`list_policies` lists every policy):
{names}

"""


def task_card(task: TaskView, anchor: str, max_calls: int, invalid_action_limit: int) -> str:
    apps = "\n".join(f"- {APP_TITLES[a]}" + (" — read only for this task" if a in task.read_only else "")
                     for a in task.apps)  # fmt: skip
    return f"""\
# Your task ({TASK_VERSION}): {task.title}

Requested by {task.requester}:

> {task.prompt}

## Apps
You work in sandboxed replicas of the team's sales apps, through their tools. This task may use:
{apps}
Tools of other apps are refused, and so is any write to an app marked read only. Each app enforces its own \
platform's rules (unique contact emails, a deal stage that belongs to its pipeline, lifecycle stages that do not \
move backwards unless cleared first, no re-enrolment in a sequence, opted-out prospects refused, bookings only \
in open slots, InMail credits never below zero...); a call that breaks one is refused with the platform's error.

## How you are checked
When the episode ends, the end state of the apps is checked against the request, and so is everything you \
did: only the changes the request calls for may be made (any other change fails the task), and some actions \
are forbidden outright (shortcuts such as editing a record the request did not mention, spending credits the \
request did not ask you to spend, or booking on someone's behalf when told not to). The verdict is pass or fail; \
you are told it, and paid 1 for a pass, at the end. What you write (notes, messages, task text, replies) is read \
too: what the request asks it to say must be there, correct, and it must promise nothing the request does not \
allow.

## Asking
`ask_requester` reaches {task.requester.split(" (")[0]}, who knows facts the apps do not hold and answers when \
your question names what you need. Someone may also write to you during the task (a customer, a prospect, a \
colleague): the message appears in your inbox, and `reply_message` answers it; they too tell what they know \
when asked for it by name.

{_policies(task)}## How the episode ends
Call `finish_task` when you are done. The sandbox clock starts at {anchor}; every call takes one minute and you \
have {max_calls} calls. A call the sandbox refuses changes nothing and is counted; {invalid_action_limit} of \
them end the episode early.

## Each turn
You see the request, the clock and calls left, what you have been told, your inbox and the result of your \
last call. Make exactly one tool call per turn with the tools provided; arguments must match the tool's schema; use \
ids the tools show you. Every result says `status` ok, or error with a short reason.
"""
