"""Tool calls written in a reply's text, in the Hermes / Qwen format (``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>``): what small open models write when their server parses no tool calls (``transformers
serve`` or llama.cpp without a tool parser), and what the token-level rollout reads from generated text.

One reader for both: :func:`parse_tool_call` (the rollout's first call of a text) and :func:`calls_in_text`
(the LLM policy's: every block of a reply, as OpenAI ``tool_calls``).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

CLOSED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)  # also a block the length limit cut


def _call(body: str) -> dict[str, Any] | None:
    """``{"name", "arguments"}`` of one block's JSON, or None when it is not such an object."""
    try:
        call = json.loads(body)
    except ValueError:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    args = call.get("arguments", {})
    if isinstance(args, str):  # some models write the arguments as a JSON text
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    return {"name": call["name"], "arguments": args}


def parse_tool_call(text: str) -> tuple[Any, dict[str, Any] | None]:
    """The action a reply makes and its tool call for the transcript (None when it has none).

    The first block is the call. Text that is not such a call is sent as it is, so the environment refuses
    exactly what the model wrote (one counted invalid action)."""
    match = CLOSED.search(text)
    if match is None:
        return text, None
    call = _call(match.group(1))
    if call is None:
        return match.group(1), None
    return {"tool": call["name"], "args": call["arguments"]}, call


def calls_in_text(content: str) -> tuple[str, list[dict[str, Any]]]:
    """The reply's text without its ``<tool_call>`` blocks, and the blocks as OpenAI ``tool_calls`` (no ids).
    A block that is not a JSON call stays a call with an empty name whose arguments are its text as a JSON
    string (servers parse the arguments of the calls they are sent back), so the policy counts a malformed call
    and the environment refuses what the model wrote."""
    calls = []
    for match in TOOL_CALL.finditer(content):
        call = _call(match.group(1))
        name, arguments = (call["name"], call["arguments"]) if call else ("", match.group(1))
        arguments = json.dumps(arguments)
        calls.append({"type": "function", "function": {"name": name, "arguments": arguments}})
    return TOOL_CALL.sub("", content).strip(), calls
