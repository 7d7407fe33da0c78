"""How a model is told about its tools when the chat template will not do it: one renderer for every adapter.

A chat template that supports tools renders the ``tools=`` it is given (Qwen2.5 writes them into the system
message with its call format). Many do not, and drop them without a word (SmolLM2's template renders only
role and content): the model then sees no tool list and no call format. For such templates salesgym writes
them itself, in the Hermes / Qwen format every tool-call parser here reads
(:func:`salesgym.agents.llm.text_calls.parse_tool_call`):

* the system message is the task card, then the tools' OpenAI schemas in ``<tools></tools>`` and how to call
  one (:func:`system_with_tools`);
* an assistant message's calls are written into its content as ``<tool_call>{"name", "arguments"}</tool_call>``
  blocks (:func:`content_calls`), and a tool message becomes a user message in ``<tool_response>`` tags, as
  Hermes templates render it.

:func:`renders_tools` tells the two kinds of template apart by rendering a probe tool. ``ChatTokens`` (the
token-level rollout, TRL, verl), the SkyRL adapter and the SFT export's ``content`` mode all use this module.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Message = dict[str, Any]

CALL_FORMAT = (
    "Call one tool per reply, as a JSON object inside <tool_call></tool_call> tags:\n"
    '<tool_call>\n{"name": <tool name>, "arguments": <arguments object>}\n</tool_call>'
)
_PROBE = "salesgym_probe_tool_5c1d"  # a tool name no template writes unless it renders the tools it is given
PROBE_TOOLS = [{"type": "function", "function": {"name": _PROBE, "description": "probe",
                                                 "parameters": {"type": "object", "properties": {}}}}]  # fmt: skip


def tools_listing(tools: Iterable[Mapping[str, Any]]) -> str:
    """One compact JSON schema a line."""
    return "\n".join(json.dumps(t, separators=(",", ":")) for t in tools)


def system_with_tools(instructions: str, tools: Iterable[Mapping[str, Any]]) -> str:
    """The task card, then the tools' OpenAI schemas and how to call them (the Hermes / Qwen format)."""
    return f"{instructions}\n\n# Tools\n\n<tools>\n{tools_listing(tools)}\n</tools>\n\n{CALL_FORMAT}"


def call_text(name: str, arguments: Any) -> str:
    """One call as the model writes it: ``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``."""
    if isinstance(arguments, str):  # OpenAI's JSON text; a text that is not JSON stays the text
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def renders_tools(render: Callable[[list[Message], list[dict[str, Any]] | None], str]) -> bool:
    """Whether a chat template shows the tools it is given: ``render(messages, tools)`` is the template
    (a short system and user conversation) with a probe tool, and its text must name it."""
    messages = [{"role": "system", "content": "system"}, {"role": "user", "content": "user"}]
    return _PROBE in render(messages, PROBE_TOOLS)


def content_calls(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
) -> list[Message]:
    """``messages`` for a template without tool support: assistant calls written into the content (after any
    text), tool messages as ``<tool_response>`` user messages, every content a string; with ``tools``, the
    system message also lists them (:func:`system_with_tools`; one is added first when there is none)."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        if role == "assistant" and m.get("tool_calls"):
            calls = [call_text(str((c.get("function") or {}).get("name")), (c.get("function") or {}).get("arguments"))
                     for c in m["tool_calls"] if isinstance(c, Mapping)]  # fmt: skip
            text = "\n".join([text.strip(), *calls]) if text.strip() else "\n".join(calls)
            out.append({"role": "assistant", "content": text})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{text}\n</tool_response>"})
        else:
            out.append({"role": str(role), "content": text})
    if tools:
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": system_with_tools(out[0]["content"], tools)}
        else:
            out.insert(0, {"role": "system", "content": system_with_tools("", tools).lstrip()})
    return out
