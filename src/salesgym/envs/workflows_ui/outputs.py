"""What each browser action returns, as JSON (``ToolSpec.output``): the action's name once it was carried out
(what it did shows in the next page), and for a message to the requester, their answer."""

from __future__ import annotations

from typing import Any

from salesgym.core.tools import ToolOutput
from salesgym.envs.workflows import outputs as wf


class Done(ToolOutput):
    done: str


class Answered(Done):
    answer: str


# --- the observation's data: the tool path's (without its last result), the browser's page and what was said ----
class Tab(ToolOutput):
    index: int
    url: str
    title: str
    active: bool


class Ending(wf.Ending):
    actions_used: int
    actions_left: int


class Observation(ToolOutput):
    task: wf.Task
    clock: wf.Clock
    told: dict[str, Any]
    inbox: list[wf.Message]
    episode: Ending
    url: str
    tabs: list[Tab]
    axtree: str
    elements: list[dict[str, Any]]  # the marked elements as the page script reports them
    focused: Any
    screenshot: str | None = None  # a base64 PNG, when screenshots are on
    chat: list[dict[str, str]]
    app_calls: list[dict[str, Any]]  # the tool calls the page made, as the tool path records them
    last_action: str
    last_action_error: str
