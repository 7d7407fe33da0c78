"""What each browser action returns, as JSON (``ToolSpec.output``): the action's name once it was carried out
(what it did shows in the next page), and for a message to the requester, their answer."""

from __future__ import annotations

from salesgym.core.tools import ToolOutput


class Done(ToolOutput):
    done: str


class Answered(Done):
    answer: str
