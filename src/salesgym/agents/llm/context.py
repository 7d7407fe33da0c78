"""What the model is shown each request: the conversation so far, cut to fit by one of three strategies.

The conversation is the system prompt (the task card), the first observation (a user message), then
*blocks*: one model reply and what answered it, kept together so a tool call is never shown without its
tool result (chat endpoints refuse that). A reply with tool calls is followed by one ``tool`` message per
call (the observation text after the call: the environment reports the call's result in it); a reply
without a tool call is followed by the policy's request for one. A block is what the knobs call a turn.

Strategies (``LLMConfig.context``):

``full``
    Every block, as long as the prompt fits. When it no longer fits, the oldest blocks are dropped until the
    prompt is at most ``full_drop_to`` of the budget, and a note says which turns are missing; the dropped
    count only grows, so the prompt's prefix stays the same (and cacheable) until the next cut.
``window``
    The last ``window_turns`` blocks, after a user message saying how many turns are not shown and where
    things stood when the window opens (the observation text then). The latest observation is always the
    last message.
``summary``
    As ``window``, and the older turns as a deterministic digest, no model call: one line per call (turn,
    tool, its arguments cut short, the result's status and time or the refusal's reason) for the last
    ``digest_turns`` of them, and before those a count by tool. The first observation stays at the top.
``state`` (the default)
    The state instead of the transcript: the first observation and a count of the older turns by tool, the
    last ``window_turns`` blocks (6 by default), and after the latest observation the environment's own tables
    as they stand now (every ``{"columns": [...], "rows": [...]}`` in the observation's ``data``: the
    territory's portfolio, one compact line per deal), so what older turns changed is in front of the model
    without their transcript. The observation texts are the environment's diffs (new inbox items, the last
    call's result). A request's size is bounded by the window and the territory, not by the episode: it stays
    the same after a thousand turns, and everything before the tables is a prefix an endpoint can cache.

Whatever the strategy, the prompt is then fitted to the budget: ``(context_tokens - max_tokens)`` times
:data:`~salesgym.agents.llm.tokens.SAFETY`, estimated by :mod:`~salesgym.agents.llm.tokens` with the tool
schemas counted. Fitting drops the oldest shown blocks (keeping the last), then digest lines, then cuts the
longest message texts; if the task card and the tools alone do not fit, :class:`ContextOverflow`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from salesgym.agents.llm.tokens import SAFETY, TokenEstimator, json_chars
from salesgym.llm.config import DEFAULT_CONTEXT_TOKENS, LLMConfig

Message = dict[str, Any]
ARG_CHARS = 24  # the most of one argument value a digest line shows
ARGS_CHARS = 96  # the most of a call's arguments a digest line shows
STATE_CHARS = 2000  # the most of an old observation shown as "where things stood"
REASON_CHARS = 80  # the most of a refusal's reason a digest line shows
MIN_CUT_CHARS = 200  # a message text is never cut below this
CUT_NOTE_CHARS = 64  # room for the note a cut leaves ("[... 1,234 characters cut ...]"): only longer texts are cut


class ContextOverflow(Exception):
    """The task card and the tool schemas alone do not fit in the context."""


@dataclass
class CallNote:
    """One tool call as the digest shows it (``tool`` empty: a reply without a tool call)."""

    turn: int
    tool: str
    args: str
    result: str = "?"  # "ok 0.25h", "error: <reason>", "not executed"

    def line(self) -> str:
        if not self.tool:
            return f"t{self.turn} (a reply without a tool call)"
        return f"t{self.turn} {self.tool}({self.args}) -> {self.result}"


@dataclass
class Block:
    """One model reply and the messages that answer it."""

    turn: int  # the turn (1-based count of actions) the reply was made for
    messages: list[Message] = field(default_factory=list)
    chars: int = 0
    notes: list[CallNote] = field(default_factory=list)
    state: str | None = None  # the latest observation text among its messages
    deferred: list[Message] = field(default_factory=list)  # answers to calls not carried out, added last
    reminded: bool = False  # a reply without a tool call, answered by a reminder (which must stay last)

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.chars += json_chars(message)
        if message.get("role") == "tool":
            self.state = str(message.get("content", ""))


@dataclass
class Conversation:
    system: Message
    first: Message
    blocks: list[Block] = field(default_factory=list)
    tables: str = ""  # the environment's tables in the latest observation (``state``), rendered

    def state_before(self, index: int) -> str:
        """The latest observation text before block ``index`` (at most ``STATE_CHARS`` of it)."""
        text = str(self.first.get("content", ""))
        for block in reversed(self.blocks[:index]):
            if block.state is not None:
                text = block.state
                break
        return (
            text
            if len(text) <= STATE_CHARS
            else text[:STATE_CHARS] + f"… [{len(text) - STATE_CHARS:,} characters more]"
        )


@dataclass(frozen=True)
class Prompt:
    messages: list[Message]
    chars: int  # of the messages' JSON, tools excluded
    tokens: int  # estimated, tools included
    shown: int  # blocks shown verbatim
    omitted: int  # blocks before them, dropped or digested


def args_text(args: Any) -> str:
    """A call's arguments, short: ``key=value`` with each value's JSON cut to ``ARG_CHARS``."""
    if not isinstance(args, dict):
        return "(arguments that are not a JSON object)"
    parts = []
    for key, value in args.items():
        if value is None:
            continue
        if isinstance(value, str) and len(value) > ARG_CHARS:
            text = orjson.dumps(value[:ARG_CHARS] + "…").decode()  # still a quoted string
        else:
            text = orjson.dumps(value).decode()
            text = text if len(text) <= ARG_CHARS else text[:ARG_CHARS] + "…"
        parts.append(f"{key}={text}")
    joined = ", ".join(parts)
    return joined if len(joined) <= ARGS_CHARS else joined[:ARGS_CHARS] + "…"


def render_tables(observation: Mapping[str, Any]) -> str:
    """Every table in an observation's ``data`` (a mapping with ``columns`` and ``rows``), one line a row, cells
    joined by `` | ``: what the ``state`` strategy shows as the state of things. Empty when there is none."""
    data = observation.get("data")
    if not isinstance(data, Mapping):
        return ""
    out = []
    for name, value in data.items():
        if not isinstance(value, Mapping):
            continue
        columns, rows = value.get("columns"), value.get("rows")
        if not isinstance(columns, Sequence) or isinstance(columns, str) or not isinstance(rows, Sequence):
            continue
        lines = [" | ".join(map(_cell, row)) for row in rows if isinstance(row, Sequence) and not isinstance(row, str)]
        out.append(f"{name} ({len(lines)} rows): {' | '.join(map(str, columns))}\n" + "\n".join(lines))
    return "\n\n".join(out)


def _cell(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def result_text(tool_result: dict[str, Any]) -> str:
    if tool_result.get("status") == "ok":
        return f"ok {float(tool_result.get('time_cost', 0.0)):g}h"
    reason = str(tool_result.get("output", {}).get("error", "refused"))
    return f"error: {reason[:REASON_CHARS]}{'...' if len(reason) > REASON_CHARS else ''}"


def digest(blocks: Sequence[Block], keep_lines: int) -> str:
    """The digest of ``blocks``: a count by tool of the oldest calls, then the last ``keep_lines`` one a line."""
    notes = [n for b in blocks for n in b.notes]
    cut = max(0, len(notes) - keep_lines)
    old, recent = notes[:cut], notes[cut:]
    out = []
    if old:
        calls = [n for n in old if n.tool]
        tools = Counter(n.tool for n in calls)
        refused = sum(n.result.startswith("error") for n in calls)
        by_tool = ", ".join(f"{t} {c}" for t, c in sorted(tools.items(), key=lambda x: (-x[1], x[0])))
        out.append(
            f"t{old[0].turn}-t{old[-1].turn}: {len(calls)} calls ({by_tool or 'none'}), {refused} refused, "
            f"{len(old) - len(calls)} replies without a tool call"
        )
    out.extend(n.line() for n in recent)
    return "\n".join(out)


class ContextBuilder:
    """Builds each request's messages with the configured strategy, within the token budget."""

    def __init__(self, config: LLMConfig, estimator: TokenEstimator, tools_chars: int) -> None:
        self.config = config
        self.estimator = estimator
        self.tools_chars = tools_chars
        context = config.context_tokens or DEFAULT_CONTEXT_TOKENS  # the policy passes the length it resolved
        self.limit = int((context - config.max_tokens) * SAFETY)  # prompt tokens, tools included
        self.dropped = 0  # ``full``: blocks dropped so far (never shrinks)
        self._digest: tuple[tuple[int, int], str] = ((-1, -1), "")  # the last digest made, by (start, lines)

    def tokens(self, messages: Sequence[Message]) -> int:
        return self.estimator.tokens(sum(json_chars(m) for m in messages) + self.tools_chars, len(messages))

    def build(self, conv: Conversation) -> Prompt:
        head_tokens = self.tokens([conv.system])
        if head_tokens > self.limit:
            raise ContextOverflow(
                f"the task card and the tool schemas need about {head_tokens:,} tokens; the prompt budget is "
                f"{self.limit:,} (context_tokens {self.config.context_tokens:,} minus max_tokens "
                f"{self.config.max_tokens:,}, at {SAFETY:.0%})"
            )
        if self.config.context == "full":
            start, digest_lines = self._full_start(conv), None
        else:
            start = self._window_start(len(conv.blocks))
            digest_lines = {"summary": self.config.digest_turns, "state": 0}.get(self.config.context)
        while True:
            messages = self._render(conv, start, digest_lines)
            tokens = self.tokens(messages)
            if tokens <= self.limit:
                break
            if start < len(conv.blocks) - 1:
                start += 1
                if self.config.context == "full":
                    self.dropped = start
            elif digest_lines:
                digest_lines //= 2
            else:
                messages = self._cut(messages)
                tokens = self.tokens(messages)
                break
        chars = sum(json_chars(m) for m in messages)
        return Prompt(messages, chars, tokens, len(conv.blocks) - start, start)

    def _window_start(self, n_blocks: int) -> int:
        """``window`` and ``summary``: the window moves in steps of half its size, so between steps the prompt
        up to the window (task card, digest) stays the same and an endpoint's prefix cache keeps serving it."""
        n = self.config.turns_shown
        step = max(1, n // 2)
        return max(0, n_blocks - n) // step * step

    def _full_start(self, conv: Conversation) -> int:
        """``full``: where the shown blocks start; when over budget, cut back to ``full_drop_to`` of it."""
        start = min(self.dropped, max(0, len(conv.blocks) - 1))
        fixed = json_chars(conv.system) + self.tools_chars
        head = json_chars(conv.first) if start == 0 else 200  # the note replacing the first observation
        sizes = [b.chars for b in conv.blocks]
        rest = sum(sizes[start:])
        count = 2 + sum(len(b.messages) for b in conv.blocks[start:])
        if self.estimator.tokens(fixed + head + rest, count) <= self.limit:
            return start
        target = int(self.limit * self.config.full_drop_to)
        while start < len(conv.blocks) - 1 and self.estimator.tokens(fixed + 200 + rest, count) > target:
            rest -= sizes[start]
            count -= len(conv.blocks[start].messages)
            start += 1
        self.dropped = start
        return start

    def _render(self, conv: Conversation, start: int, digest_lines: int | None) -> list[Message]:
        messages = self._history(conv, start, digest_lines)
        if self.config.context == "state" and conv.tables:  # after the latest observation: changes every turn
            turn = conv.blocks[-1].turn if conv.blocks else 0
            tables = {"role": "user", "content": f"The environment's tables after turn {turn}:\n{conv.tables}"}
            reminded = bool(conv.blocks) and conv.blocks[-1].reminded and start < len(conv.blocks)
            messages.insert(len(messages) - 1 if reminded else len(messages), tables)  # the reminder is read last
        return messages

    def _history(self, conv: Conversation, start: int, digest_lines: int | None) -> list[Message]:
        shown = [m for b in conv.blocks[start:] for m in b.messages]
        if start == 0:
            return [conv.system, conv.first, *shown]
        first_turn = conv.blocks[start].turn
        before = f"t1-t{first_turn - 1}" if first_turn > 1 else "none"
        if digest_lines is None:  # full or window: a note and where things stood
            if self.config.context == "full":
                text = f"[Turns {before} are not shown: the conversation was cut to fit the context.]"
            else:
                text = (
                    f"[Turns {before} are not shown: you see the latest turns only.]\n"
                    f"Where things stood after turn {first_turn - 1}:\n{conv.state_before(start)}"
                )
        else:
            key = (start, digest_lines)
            if self._digest[0] != key:  # blocks before the window are complete: the digest only changes with it
                self._digest = (key, digest(conv.blocks[:start], digest_lines))
            lines = self._digest[1]
            if self.config.context == "state":  # the tables after the latest observation carry the rest
                text = (
                    f"Where the episode started:\n{conv.first.get('content', '')}\n\n"
                    f"[Turns {before} are not shown, in brief:] {lines}\n"
                    "[The environment's tables as they stand now follow the latest observation.]"
                )
            else:
                text = (
                    f"Where the episode started:\n{conv.first.get('content', '')}\n\n"
                    f"[Turns {before} in brief, oldest first:]\n{lines}\n\n"
                    f"Where things stood after them:\n{conv.state_before(start)}"
                )
        return [conv.system, {"role": "user", "content": text}, *shown]

    def _cut(self, messages: list[Message]) -> list[Message]:
        """Last resort: halve the longest texts (never the system prompt) until the prompt fits. Only a text
        longer than the floor and a note can be cut, so every cut shortens the prompt and the loop ends."""
        out = [dict(m) for m in messages]
        while self.tokens(out) > self.limit:
            texts = [(len(m["content"]), i) for i, m in enumerate(out[1:], 1) if isinstance(m.get("content"), str)]
            longest = max(texts, default=(0, -1))
            if longest[0] <= MIN_CUT_CHARS + CUT_NOTE_CHARS:
                raise ContextOverflow(
                    f"the prompt does not fit in {self.limit:,} tokens even with every text cut to about "
                    f"{MIN_CUT_CHARS} characters; raise context_tokens"
                )
            i = longest[1]
            content: str = out[i]["content"]
            keep = max(MIN_CUT_CHARS, len(content) // 2)
            out[i]["content"] = content[:keep] + f"\n[... {len(content) - keep:,} characters cut to fit the context]"
        return out
