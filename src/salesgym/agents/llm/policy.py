"""``LLMPolicy``: a language model behind an OpenAI-compatible chat-completions endpoint plays any registered
environment with that environment's tools. Nothing here knows a family: the model reads the task card
(system prompt), the first observation, and after each call the observation text (as the call's ``tool``
message); it acts only through tool calls.

Every way a turn can go wrong is recorded by kind and never turned into an action silently:

``no_tool_call``
    A reply without a tool call. The model is told so (a ``user`` message) and asked again;
    ``max_no_tool_call`` such replies in a row end the episode (``StopEpisode("no_tool_call")``).
``malformed_call``
    A call whose arguments are not a JSON object or that names no tool the environment has. It is still
    sent to the environment as the model wrote it, which refuses it as one counted invalid action (the
    environment is the judge); its refusal is not counted again as ``refused_call``.
``refused_call``
    A well-formed call the environment refused (its tool result's status is ``error``).
``endpoint_error``
    No usable reply after the retries (``StopEpisode("endpoint_error: <why>")``).
``extra_tool_calls``
    A reply with more than ``max_calls_per_reply`` calls: the rest are answered "not carried out".

Several calls in one reply are carried out in order over the next turns, without asking the model again;
each result goes back as a ``tool`` message with its ``tool_call_id``. Budgets end the episode with
``StopEpisode("token_budget")`` or ``StopEpisode("wall_budget")``; a prompt that cannot fit the context
with ``StopEpisode("context_overflow: ...")``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, NoReturn

from salesgym.agents.base import Action, Policy, StopEpisode
from salesgym.agents.llm.context import (
    Block,
    CallNote,
    ContextBuilder,
    ContextOverflow,
    Conversation,
    Prompt,
    args_text,
    render_tables,
    result_text,
)
from salesgym.agents.llm.text_calls import calls_in_text
from salesgym.agents.llm.tokens import TokenEstimator, json_chars
from salesgym.core.observation_text import observation_text
from salesgym.llm.client import ChatClient, Completion, DeadlineExceeded, EndpointError
from salesgym.llm.compact_tools import compact_tools
from salesgym.llm.config import DEFAULT_CONTEXT_TOKENS, LLMConfig

FAILURE_KINDS = ("no_tool_call", "malformed_call", "refused_call", "endpoint_error", "extra_tool_calls")
DETAIL_CHARS = 200  # the most of a model's text or an error a failure record keeps
DEFAULT_SYSTEM = "You act in a simulated environment through the tools provided. Make exactly one tool call per turn."
NUDGE = "Your reply had no tool call. Reply with exactly one tool call, using the tools provided."
_PUBLISHED: dict[tuple[str | None, str], int | None] = {}  # context lengths endpoints published, per process
NOT_CARRIED_OUT = (
    "Not carried out: at most {cap} tool calls of one reply are carried out. Call it again if you still want it."
)


def sampling_seed(seed: int, trial: int = 0) -> int:
    """The seed sent to the endpoint: a one-way 32-bit digest of the episode's seed (and the trial index
    when it is not 0), so a world seed, secret-derived on private splits, never leaves the process."""
    key = f"salesgym-llm:{seed}" if trial == 0 else f"salesgym-llm:{seed}:{trial}"
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")


@dataclass
class _Call:
    """A tool call of the model's, waiting to be carried out or waiting for its result."""

    id: str
    action: Action
    block: Block
    note: CallNote
    malformed: bool
    last: bool  # the last carried-out call of its reply: the calls not carried out are answered after it


@dataclass
class _Turn:
    """What the policy did to choose one action (``turn_record``)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_s: float = 0.0
    requests: int = 0
    retries: list[str] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str | None = None

    def record(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cached_tokens": self.cached_tokens,
                "latency_s": round(self.latency_s, 6),
            },
            "requests": self.requests,
            "retries": self.retries,
            "failures": self.failures,
            "tool_call_id": self.tool_call_id,
        }


class LLMPolicy(Policy):
    """A chat model as a policy: ``LLMPolicy(seed, config=None, **overrides)``; ``overrides`` are
    :class:`LLMConfig` fields (``LLMPolicy(7, model="m", base_url="http://localhost:8000/v1")``)."""

    name = "llm"

    def __init__(self, seed: int = 0, config: LLMConfig | None = None, **overrides: Any) -> None:
        super().__init__(seed)  # the seed only derives the sampling seed sent to the endpoint
        base = config or LLMConfig()
        self.config = base.replace(**overrides) if overrides else base
        if not self.config.model:
            raise ValueError("LLMPolicy needs a model: LLMPolicy(seed, model='...') or LLMConfig(model='...')")
        self._client: ChatClient | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None  # an HTTP client does not travel; the next reset makes one
        return state

    # -- episode ------------------------------------------------------------------------------------
    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        if self._client is None:  # a missing extra or API key fails here, before the first step
            self._client = ChatClient(self.config)
        c = self.config
        self._context_tokens, self._context_from = self._context(self._client)
        self._tools = list(tool_schemas) if c.tool_schemas == "full" else compact_tools(tool_schemas)
        self._tool_names = {t.get("function", {}).get("name") for t in self._tools}
        self._estimator = TokenEstimator()
        self._unfit = None if c.max_tokens < self._context_tokens else (
            f"context_overflow: max_tokens {c.max_tokens:,} leaves no room for a prompt in the "
            f"{self._context_from}'s context of {self._context_tokens:,} tokens; lower max_tokens"
        )
        fitted = c.replace(context_tokens=max(self._context_tokens, c.max_tokens + 1))  # unused when unfit
        self._builder = ContextBuilder(fitted, self._estimator, json_chars(self._tools))
        self._conv = Conversation(
            {"role": "system", "content": instructions or DEFAULT_SYSTEM},
            {"role": "user", "content": observation_text(observation)},
        )
        self._seed_sent = sampling_seed(self.seed, c.trial) if c.send_seed else None
        self._queue: deque[_Call] = deque()
        self._pending: _Call | None = None
        self._turn: _Turn | None = None
        self._actions = self._replies = self._requests = self._retries = self._no_tool_run = 0
        self._usage = Counter({"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0})
        self._latency = 0.0
        self._failures = Counter({k: 0 for k in FAILURE_KINDS})
        self._max_prompt = self._max_estimate = 0
        self._stopped: dict[str, Any] | None = None
        self._started = time.monotonic()
        self._deadline = None if c.wall_budget_s is None else self._started + c.wall_budget_s

    def act(self, observation: dict[str, Any]) -> Action:
        self._turn = _Turn()
        if self._unfit:
            self._stop(self._unfit)
        if self._pending is not None:
            self._answer(self._pending, observation_text(observation))
            self._pending = None
        if self.config.context == "state":
            self._conv.tables = render_tables(observation)
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._stop("wall_budget")
        if not self._queue:
            self._ask()
        call = self._queue.popleft()
        self._pending = call
        self._turn.tool_call_id = call.id
        self._actions += 1
        self.last_action = call.action
        return call.action

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        call = self._pending
        if call is None:
            return
        call.note.result = result_text(tool_result)
        if tool_result.get("status") != "ok" and not call.malformed:
            reason = str(tool_result.get("output", {}).get("error", ""))
            self._fail("refused_call", f"{call.action.get('tool')}: {reason}")

    def turn_record(self) -> dict[str, Any] | None:
        return None if self._turn is None else self._turn.record()

    def episode_record(self) -> dict[str, Any]:
        if not hasattr(self, "_conv"):
            return {}
        c = self.config
        usage = dict(self._usage)
        return {
            "model": c.model,
            "base_url": c.base_url,
            "sampling": {**c.sampling(), "seed": self._seed_sent, "trial": c.trial},
            "context": {
                "strategy": c.context,
                "context_tokens": self._context_tokens,
                "context_tokens_from": self._context_from,
                "window_turns": c.turns_shown,
                "digest_turns": c.digest_turns,
                "full_drop_to": c.full_drop_to,
            },
            "budgets": {"token_budget": c.token_budget, "wall_budget_s": c.wall_budget_s},
            "usage": {
                **usage,
                "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                "latency_s": round(self._latency, 6),
            },
            "requests": self._requests,
            "retries": self._retries,
            "replies": self._replies,
            "turns": self._actions,
            "failures": dict(self._failures),
            "max_prompt_tokens": self._max_prompt,
            "max_prompt_tokens_estimated": self._max_estimate,
            "tokens_per_char": round(self._estimator.ratio, 6),
            "wall_s": round(time.monotonic() - self._started, 6),
            "stopped": self._stopped,
        }

    def _context(self, client: ChatClient) -> tuple[int, str]:
        """The context size every request fits in, and where it comes from: the configuration, else what the
        endpoint publishes in ``/v1/models`` (asked once per endpoint and process), else the default."""
        c = self.config
        if c.context_tokens is not None:
            return c.context_tokens, "configuration"
        key = (c.base_url, c.model)
        if key not in _PUBLISHED:
            info = client.probe()
            if info.unreachable is not None:  # not cached: the first request will say what is wrong
                return DEFAULT_CONTEXT_TOKENS, "default"
            _PUBLISHED[key] = info.context_tokens
        published = _PUBLISHED[key]
        return (published, "endpoint") if published else (DEFAULT_CONTEXT_TOKENS, "default")

    # -- one request ----------------------------------------------------------------------------------
    def _ask(self) -> None:
        """Ask the model until it makes a tool call (queued) or the episode must stop."""
        assert self._client is not None and self._turn is not None
        c = self.config
        while True:
            prompt = self._prompt()
            used = self._usage["prompt_tokens"] + self._usage["completion_tokens"]
            if c.token_budget is not None and used + prompt.tokens > c.token_budget:
                self._stop("token_budget")
            try:
                completion = self._client.complete(prompt.messages, self._tools, self._seed_sent, self._deadline)
            except DeadlineExceeded as exc:
                self._count_requests(exc.requests, exc.errors, retried=len(exc.errors))
                self._stop("wall_budget")
            except EndpointError as exc:
                self._count_requests(exc.requests, exc.errors, retried=len(exc.errors) - 1)
                self._fail("endpoint_error", exc.reason)
                self._stop(f"endpoint_error: {exc.reason}")
            self._account(completion, prompt)
            message = completion.message
            calls = message.get("tool_calls") or []
            if not calls and c.text_tool_calls and "<tool_call>" in str(message.get("content") or ""):
                content, calls = calls_in_text(str(message["content"]))  # a server that parses no tool calls
                message = {**message, "content": content or None, "tool_calls": calls}
            self._turn.messages.append(message)
            if calls:
                self._no_tool_run = 0
                self._take(message, calls)
                return
            self._fail("no_tool_call", f"finish_reason={completion.finish_reason}: {message.get('content') or ''}")
            nudge = {"role": "user", "content": NUDGE}
            self._turn.messages.append(nudge)  # the turn's record is its part of the conversation, in order
            block = Block(self._actions + 1, reminded=True)
            block.add(message)
            block.add(nudge)
            block.notes.append(CallNote(self._actions + 1, "", ""))
            self._conv.blocks.append(block)
            self._no_tool_run += 1
            if self._no_tool_run >= c.max_no_tool_call:
                self._stop("no_tool_call")

    def _prompt(self) -> Prompt:
        try:
            prompt = self._builder.build(self._conv)
        except ContextOverflow as exc:
            self._stop(f"context_overflow: {exc}")
        self._max_estimate = max(self._max_estimate, prompt.tokens)
        return prompt

    def _take(self, message: dict[str, Any], calls: list[dict[str, Any]]) -> None:
        """Queue a reply's calls (at most ``max_calls_per_reply``); the rest are answered "not carried out"."""
        turn = self._actions + 1
        block = Block(turn)
        cap = self.config.max_calls_per_reply
        for i, tc in enumerate(calls):
            if not tc.get("id"):  # some servers leave it out; the tool message must name its call
                tc["id"] = f"call_{turn}_{i}"
        block.add(message)
        self._conv.blocks.append(block)
        carried, extra = calls[:cap], calls[cap:]
        for i, tc in enumerate(carried):
            action, problem = self._parse(tc)
            if problem is not None:
                self._fail("malformed_call", problem)
            note = CallNote(turn + i, str(action["tool"]), args_text(action["args"]))
            block.notes.append(note)
            self._queue.append(_Call(tc["id"], action, block, note, problem is not None, i == len(carried) - 1))
        if extra:
            self._fail("extra_tool_calls", f"{len(extra)} of {len(calls)} calls in one reply not carried out")
            block.deferred = [
                {"role": "tool", "tool_call_id": tc["id"], "content": NOT_CARRIED_OUT.format(cap=cap)} for tc in extra
            ]
            if self._turn is not None:  # the record answers every call of the reply (for an export)
                self._turn.messages.extend(block.deferred)

    def _parse(self, tool_call: dict[str, Any]) -> tuple[Action, str | None]:
        """The call as an action, and what is wrong with it (None when nothing is). Arguments that are not
        JSON stay the raw text, so the environment refuses exactly what the model wrote."""
        function = tool_call.get("function") or {}
        name = function.get("name")
        raw = function.get("arguments")
        problem = None
        args: Any
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            args = {}  # what the environment reads an empty argument text as
        elif isinstance(raw, str):
            try:
                args = json.loads(raw)
            except ValueError:
                args, problem = raw, f"{name}: arguments are not valid JSON: {_clip(raw)}"
        else:
            args = raw
        if problem is None and not isinstance(args, dict):
            problem = f"{name}: arguments are not a JSON object: {_clip(str(raw))}"
        if name not in self._tool_names:
            problem = f"unknown tool {_clip(str(name))}" + (f"; {problem}" if problem else "")
        return {"tool": name, "args": args}, problem

    def _answer(self, call: _Call, text: str) -> None:
        call.block.add({"role": "tool", "tool_call_id": call.id, "content": text})
        if call.last:
            for message in call.block.deferred:
                call.block.add(message)
            call.block.deferred = []

    # -- accounting ----------------------------------------------------------------------------------
    def _account(self, completion: Completion, prompt: Prompt) -> None:
        assert self._turn is not None
        u, t = completion.usage, self._turn
        t.prompt_tokens += u.prompt_tokens
        t.completion_tokens += u.completion_tokens
        t.cached_tokens += u.cached_tokens
        t.latency_s += completion.latency_s
        self._usage.update(
            {
                "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "cached_tokens": u.cached_tokens,
            }
        )
        self._latency += completion.latency_s
        self._count_requests(completion.requests, completion.errors, retried=len(completion.errors))
        self._replies += 1
        self._max_prompt = max(self._max_prompt, u.prompt_tokens)
        self._estimator.calibrate(prompt.chars + self._builder.tools_chars, len(prompt.messages), u.prompt_tokens)

    def _count_requests(self, requests: int, errors: list[str], retried: int) -> None:
        assert self._turn is not None
        self._turn.requests += requests
        self._turn.retries.extend(errors[: max(0, retried)])
        self._requests += requests
        self._retries += max(0, retried)

    def _fail(self, kind: str, detail: str) -> None:
        assert self._turn is not None
        self._failures[kind] += 1
        self._turn.failures.append({"kind": kind, "detail": _clip(detail)})

    def _stop(self, reason: str) -> NoReturn:
        self._stopped = {"reason": reason, "turn": None if self._turn is None else self._turn.record()}
        raise StopEpisode(reason)


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."
