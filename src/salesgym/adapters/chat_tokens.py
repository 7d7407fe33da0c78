"""Token ids of a chat episode, built turn by turn so they line up exactly with what the model generated.

The sequence a trainer sees is ``prompt ids`` (the task card and the first observation, rendered by the
tokenizer's chat template with the generation prompt), then for each turn the ids the model generated, as
they came out of the model, then the ids of the environment's answer. The whole transcript is never
re-tokenised: a chat template need not be *prefix-preserving* (rendering a longer conversation may change
how earlier turns look: a generation prompt that opens an empty reasoning block the rendered history does
not have, earlier reasoning stripped), and re-tokenising can merge tokens across a turn boundary. Either way
the ids trained on would differ from the ids sampled.

So only the *delta* of each environment turn is tokenised: the template renders a fixed stub conversation
(system, user, one assistant reply) with and without the new messages after it, and the text it adds, from
the end of the stub's assistant content on, is the environment's part: the template's end of the assistant
turn (less what the model already generated of it, its end-of-turn token), the new messages, and the next
generation prompt. That needs only that the stub renders the same whatever follows it. The template is not
even rendered per turn: what it writes around one message of a given role and fields is found once, from two
probe contents, and each turn's text is that frame around the content (a template that writes anything but
the content verbatim is rendered each turn instead).

Tools: a template that renders the ``tools`` it is given gets them (:func:`~salesgym.llm.tool_prompt.
renders_tools` checks); one that ignores them (SmolLM2's) gets the tool list and the call format written into
the system message, and the environment's answers as ``<tool_response>`` user messages, by the renderer every
adapter shares (:mod:`salesgym.llm.tool_prompt`). Either way the model is told what it can call.

The tokenizer is any object with the ``transformers`` tokenizer methods used here (``apply_chat_template``,
``encode``, ``decode``, ``eos_token_id``); nothing here imports ``transformers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from salesgym.adapters.token_cache import cache_for
from salesgym.llm.tool_prompt import content_calls, renders_tools

Message = dict[str, Any]
_MARK = "salesgym-assistant-reply-7f3a"  # the stub reply: text no template changes and no reply contains
# two message contents a template that writes content verbatim shows as they are: spaces, lines, JSON-ish
_PROBES = ("  salesgym probe 1\n{\"a\": [1]}\n  ", "\nsalesgym probe two\t<x>\n")


class Tokenizer(Protocol):
    """The part of a ``transformers`` tokenizer the rollout uses."""

    eos_token_id: int | None

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any: ...

    def encode(self, text: str, **kwargs: Any) -> list[int]: ...

    def decode(self, token_ids: Any, **kwargs: Any) -> str: ...


class TemplateError(ValueError):
    """The chat template cannot be used turn by turn (the stub conversation renders differently when
    messages follow it)."""


class ChatTokens:
    """Renders and tokenises one episode's turns with ``tokenizer``'s chat template.

    ``tools`` are the OpenAI function tools the prompt shows (the template's way when it renders tools,
    ``tools_in_system`` otherwise); ``template_kwargs`` go to every ``apply_chat_template`` call
    (``enable_thinking=False``, ...).
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        tools: Sequence[Mapping[str, Any]] | None = None,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        backend = getattr(tokenizer, "backend_tokenizer", None)  # transformers' fast tokenizers
        self._backend = backend if callable(getattr(backend, "encode", None)) else None
        self._cache = cache_for(tokenizer) if self._backend is not None else None
        self.tools = [dict(t) for t in tools] if tools else None
        self.kwargs = dict(template_kwargs or {})
        self.tools_in_system = self.tools is not None and not renders_tools(
            lambda messages, probe: str(self.tokenizer.apply_chat_template(
                messages, tools=probe, add_generation_prompt=False, tokenize=False, **self.kwargs))
        )  # fmt: skip
        self._stub: list[Message] = [
            {"role": "system", "content": "system"},
            {"role": "user", "content": "user"},
            {"role": "assistant", "content": _MARK},
        ]
        stub_text = self.render(self._stub, generation_prompt=False)
        at = stub_text.rfind(_MARK)
        if at < 0:
            raise TemplateError("the chat template does not render an assistant message's content")
        self._stub_text = stub_text
        self._frames: dict[tuple[str, tuple[str, ...]], tuple[str, str] | None] = {}
        self._shapes: dict[tuple[Any, ...], tuple[str, str]] = {}  # (role, *field names) -> a found frame
        self._turn_end = stub_text[at + len(_MARK) :]  # what the template puts after a reply: end token, newline
        self.eos_id = eos = tokenizer.eos_token_id  # read once: a transformers attribute look-up is slow
        self.eos_text = "" if eos is None else tokenizer.decode([eos], skip_special_tokens=False)

    def render(self, messages: Sequence[Message], *, generation_prompt: bool, tools: bool = False) -> str:
        """``messages`` through the template; with ``tools``, the tools shown (the template's way, or in the
        system message when it ignores them)."""
        if self.tools_in_system:
            messages, tools = content_calls(messages, self.tools if tools else None), False
        text = self.tokenizer.apply_chat_template(
            list(messages),
            tools=self.tools if tools else None,
            add_generation_prompt=generation_prompt,
            tokenize=False,
            **self.kwargs,
        )
        return str(text)

    def encode(self, text: str) -> list[int]:
        if self._cache is not None:  # the same ids, each word tokenised once and then looked up
            return self._cache.encode(text)
        if self._backend is not None:  # a fast tokenizer's Rust core: the same ids without transformers' wrapping
            return list(self._backend.encode(text, add_special_tokens=False).ids)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        text = self._cache.decode(ids) if self._cache is not None else None
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=False)) if text is None else text

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The first prompt: ``messages`` (system, first observation) with the tools and the generation prompt."""
        return self.encode(self.render(messages, generation_prompt=True, tools=True))

    def env_turn_ids(self, messages: Sequence[Message], generated: Sequence[int]) -> list[int]:
        """The ids that follow the model's ``generated`` ids: the end of its turn (what it did not generate of
        it), then ``messages`` (the environment's answer), then the next generation prompt."""
        end = self._turn_end
        if generated and generated[-1] == self.eos_id and end.startswith(self.eos_text):
            end = end[len(self.eos_text) :]  # the model ended its turn itself: its end token is in its ids
        return self.encode(end + self.env_text(messages))

    def env_text(self, messages: Sequence[Message]) -> str:
        """What the template writes for ``messages`` after an assistant reply, the next generation prompt
        included. One message goes through the frame its role and fields render in (found once, by rendering
        two probes); a template that writes anything but the content verbatim, or several messages, is
        rendered whole each time."""
        if len(messages) == 1:
            frame = self._frame(messages[0])
            if frame is not None:
                return frame[0] + str(messages[0]["content"]) + frame[1]
        return self._rendered(messages)

    def _rendered(self, messages: Sequence[Message]) -> str:
        full = self.render([*self._stub, *messages], generation_prompt=True)
        if not full.startswith(self._stub_text):
            raise TemplateError(
                "the chat template renders an assistant reply differently once messages follow it; "
                "the turn-by-turn token sequence cannot be built with it"
            )
        return full[len(self._stub_text) :]

    def _frame(self, message: Message) -> tuple[str, str] | None:
        """(before, after) the content of a message shaped like ``message`` (its role, its fields), or None
        when the template does not write the content verbatim between a fixed before and after."""
        content = message.get("content")
        if not isinstance(content, str):
            return None
        role = message.get("role")
        # the message's role and field names as they come (every turn's answer is the same shape): one look-up,
        # no sorting; a shape first seen goes through the sorted key, so each frame is still probed once
        shape = (role, *message) if type(role) is str else None
        frame = self._shapes.get(shape) if shape is not None else None
        if frame is not None:
            return frame
        key = (str(role), tuple(sorted(k for k in message if k != "content")))
        if key not in self._frames:
            self._frames[key] = self._probe_frame(message)
        found = self._frames[key]
        if shape is not None and found is not None:
            self._shapes[shape] = found
        return found

    def _probe_frame(self, message: Message) -> tuple[str, str] | None:
        frames = set()
        for n, probe in enumerate(_PROBES):  # every other string field differs too: a template that writes one
            fields = {k: (f"{v}-{n}" if isinstance(v, str) and k != "role" else v) for k, v in message.items()}
            text = self._rendered([{**fields, "content": probe}])
            at = text.find(probe)
            if at < 0 or text.find(probe, at + 1) >= 0:
                return None
            frames.add((text[:at], text[at + len(probe) :]))
        return frames.pop() if len(frames) == 1 else None

