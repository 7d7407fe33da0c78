"""The computer-use task card: the request, the apps' addresses, how to ask, how to finish, how the task is
judged and what the budget is. Built from the task's public part only (twins with other hidden facts get the same
card)."""

from __future__ import annotations

from collections.abc import Mapping

from salesgym.envs.workflows.contract import APP_TITLES
from salesgym.envs.workflows.world import TaskView
from salesgym.webapps.origins import TEST_DOMAIN

UI_VERSION = "workflows-ui/1"
HOW_TO_ACT = {
    "browsergym": "BrowserGym's actions: by element id (the number in brackets in the accessibility tree), e.g. "
                  "click('a12'), fill('a15', 'text'), select_option('a20', 'Sales qualified lead'), goto(url), "
                  "tab actions, send_msg_to_user(text), or by coordinates (mouse_click(x, y), keyboard_type(text))",
    "bid": "BrowserGym's actions by element id (the number in brackets in the accessibility tree), e.g. "
           "click('a12'), fill('a15', 'text'), select_option('a20', 'Lead'), goto(url), send_msg_to_user(text)",
    "computer": "pixel actions on the screenshot: click(x, y), double_click(x, y), type(text), keypress(keys), "
                "scroll(x, y, scroll_x, scroll_y), drag(path), move(x, y), wait(), screenshot(), and goto(url)",
}  # fmt: skip


def task_card(task: TaskView, anchor: str, max_calls: int, invalid_action_limit: int, max_actions: int | None,
              action_set: str, origins: Mapping[str, str] | None = None) -> str:  # fmt: skip
    where = dict(origins or {app: f"http://{app}.{TEST_DOMAIN}" for app in (*task.apps, "task")})
    apps = "\n".join(f"- {APP_TITLES[a]}: {where[a]}/" + (" — read only for this task" if a in task.read_only else "")
                     for a in task.apps)  # fmt: skip
    budget = f"You have {max_actions} browser actions. " if max_actions else ""
    who = task.requester.split(" (")[0]
    return f"""\
# Your task ({UI_VERSION}): {task.title}

Requested by {task.requester}:

> {task.prompt}

## Apps
You work in a web browser, in sandboxed replicas of the team's sales apps. This task may use:
{apps}
- the task desk (this request, your conversation with {who}, your inbox, and the button that marks the task \
done): {where["task"]}/ (every app's top bar links to it)
Pages of other apps answer 403, and a change to an app marked read only is refused. Each app enforces its own \
platform's rules (unique contact emails, a deal stage that belongs to its pipeline, lifecycle stages that do not \
move backwards unless cleared first, no re-enrolment in a sequence, opted-out prospects refused, bookings only in \
open slots, InMail credits never below zero...); a form that breaks one is refused with the platform's error.

## How you are checked
When the episode ends, the end state of the apps is checked against the request, and so is everything you did: \
only the changes the request calls for may be made (any other change fails the task), and some actions are \
forbidden outright. The verdict is pass or fail; you are told it, and paid 1 for a pass, at the end. What you \
write (notes, messages, task text, replies) is read too.

## Asking
{who} knows facts the apps do not hold and answers when your question names what you need: ask on the task desk \
(or send a chat message). Someone may also write to you during the task: the message appears in the desk's inbox, \
where you reply.

## How the episode ends
Press "Mark the task done" on the task desk when you are done. The sandbox clock starts at {anchor} and moves one \
minute for each form you submit (reading pages is free); you may submit {max_calls} forms. {budget}A refused form \
or an action that cannot be done is counted; {invalid_action_limit} of them end the episode early.

## Each turn
You see a screenshot of the page (1280x800), its accessibility tree with element ids, the URL and your tabs, the \
task, the clock, what you have been told, your inbox and chat, what the page did for your last action, and the \
last action's error. Act with {HOW_TO_ACT[action_set]}: one action a turn.
"""
