"""The language-model policy's settings: one frozen, picklable dataclass that is plain JSON data.

Nothing here is a secret: the API key is read from the environment variable named by ``api_key_env`` when
the client is made, and never stored, recorded or sent anywhere but the endpoint's ``Authorization`` header.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

ContextStrategy = Literal["full", "window", "summary", "state"]
DEFAULT_CONTEXT_TOKENS = 32_000  # when neither the configuration nor the endpoint's /v1/models says
TOOL_CHOICES = ("auto", "required", "none")
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
ToolSchemas = Literal["full", "compact"]
STRATEGIES: tuple[str, ...] = get_args(ContextStrategy)


@dataclass(frozen=True)
class LLMConfig:
    """How :class:`~salesgym.agents.llm.LLMPolicy` talks to a chat-completions endpoint (docs/llm.md).

    Endpoint: ``model``, ``base_url`` (``None``: the SDK's default, api.openai.com), ``api_key_env`` (the
    environment variable holding the key; any value for a local server that ignores it), ``timeout_s`` per
    request, ``max_retries`` on transport errors, 429 and 5xx with exponential backoff from ``backoff_s``
    (doubling, at most ``backoff_max_s``).

    Sampling, sent with every request and recorded: ``temperature`` and ``top_p`` (``None``: not sent),
    ``max_tokens`` (sent as ``max_tokens_param``; reasoning models want ``max_completion_tokens``), the
    sampling seed (``send_seed``; derived one-way from the episode's seed and ``trial``, see
    :func:`~salesgym.agents.llm.sampling_seed`), ``tool_choice`` (``auto``, ``required``, ``none`` or a
    ``{"type": "function", ...}`` object; sent with the tools, ``None``: not sent: some servers, llama.cpp's
    among them, leave the tools out of the prompt when it is missing), ``parallel_tool_calls`` (``None``:
    not sent), ``extra_body`` (vendor-specific fields, sent as given, over everything else).

    Context: ``context`` is the strategy (``state``, ``summary``, ``window``, ``full``); ``context_tokens`` the
    endpoint's context size, which every request (prompt plus ``max_tokens``) stays within (``None``: the
    length the endpoint publishes in ``/v1/models``, else ``DEFAULT_CONTEXT_TOKENS``);
    ``window_turns`` the turns kept verbatim by ``state``, ``window`` and ``summary`` (``None``: 6 for
    ``state``, whose tables carry the rest, 12 for the others; :attr:`turns_shown`); ``digest_turns`` the
    older turns ``summary`` lists one line each (turns before those are counted by tool); ``full_drop_to`` the share
    of the prompt budget ``full`` cuts back to once it must drop old turns (so the kept prefix stays stable,
    and cacheable, for many turns).

    Budgets per episode (``None``: none): ``token_budget`` (prompt plus completion tokens as the endpoint
    reports them) and ``wall_budget_s``; when one is spent the episode ends with ``token_budget`` /
    ``wall_budget``. Failures: ``max_no_tool_call`` consecutive replies without a tool call end the episode;
    at most ``max_calls_per_reply`` tool calls of one reply are carried out. ``text_tool_calls``: a reply with no
    tool call whose text has ``<tool_call>`` blocks (a server that parses none) makes those calls
    (:mod:`salesgym.agents.llm.text_calls`). ``tool_schemas``: how a request shows the tools, ``full`` (the
    environment's schemas) or ``compact`` (each tool's name, first sentence and argument names and types:
    :mod:`salesgym.llm.compact_tools`, for a model whose context the full list does not fit; the environment
    still checks every call against its full schema).
    """

    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0

    temperature: float | None = 0.0
    top_p: float | None = 1.0
    max_tokens: int = 1024
    max_tokens_param: MaxTokensParam = "max_tokens"
    send_seed: bool = True
    trial: int = 0
    tool_choice: str | Mapping[str, Any] | None = "auto"
    parallel_tool_calls: bool | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    context: ContextStrategy = "state"
    context_tokens: int | None = None
    window_turns: int | None = None
    digest_turns: int = 120
    full_drop_to: float = 0.75

    token_budget: int | None = None
    wall_budget_s: float | None = None
    max_no_tool_call: int = 3
    max_calls_per_reply: int = 8
    text_tool_calls: bool = True
    tool_schemas: ToolSchemas = "full"

    def __post_init__(self) -> None:
        problems = []
        if self.context not in STRATEGIES:
            problems.append(f"context must be one of {', '.join(STRATEGIES)}, got {self.context!r}")
        if self.max_tokens_param not in get_args(MaxTokensParam):
            problems.append(
                f"max_tokens_param must be max_tokens or max_completion_tokens, got {self.max_tokens_param!r}"
            )
        for name in ("max_tokens", "max_no_tool_call", "max_calls_per_reply"):
            if not _is_int(getattr(self, name)) or getattr(self, name) < 1:
                problems.append(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if self.window_turns is not None and (not _is_int(self.window_turns) or self.window_turns < 1):
            problems.append(f"window_turns must be a positive integer or None, got {self.window_turns!r}")
        if self.context_tokens is not None and (not _is_int(self.context_tokens) or self.context_tokens < 1):
            problems.append(f"context_tokens must be a positive integer or None, got {self.context_tokens!r}")
        if not (self.tool_choice is None or self.tool_choice in TOOL_CHOICES or isinstance(self.tool_choice, Mapping)):
            choices = ", ".join(TOOL_CHOICES)
            got = repr(self.tool_choice)
            problems.append(f"tool_choice must be one of {choices}, a function object or None, got {got}")
        for name in ("max_retries", "digest_turns", "trial"):
            if not _is_int(getattr(self, name)) or getattr(self, name) < 0:
                problems.append(f"{name} must be a non-negative integer, got {getattr(self, name)!r}")
        if self.token_budget is not None and (not _is_int(self.token_budget) or self.token_budget < 1):
            problems.append(f"token_budget must be a positive integer or None, got {self.token_budget!r}")
        for name in ("timeout_s", "wall_budget_s"):
            value = getattr(self, name)
            if value is not None and not (_is_number(value) and value > 0):
                problems.append(f"{name} must be a positive number, got {value!r}")
        for name in ("backoff_s", "backoff_max_s"):
            if not (_is_number(getattr(self, name)) and getattr(self, name) >= 0):
                problems.append(f"{name} must be a number >= 0, got {getattr(self, name)!r}")
        if not (_is_number(self.full_drop_to) and 0.1 <= self.full_drop_to <= 1.0):
            problems.append(f"full_drop_to must be in [0.1, 1], got {self.full_drop_to!r}")
        if _is_int(self.max_tokens) and _is_int(self.context_tokens) and self.max_tokens >= (self.context_tokens or 0):
            problems.append(f"max_tokens ({self.max_tokens}) must be below context_tokens ({self.context_tokens})")
        if self.tool_schemas not in get_args(ToolSchemas):
            problems.append(f"tool_schemas must be full or compact, got {self.tool_schemas!r}")
        if not isinstance(self.extra_body, Mapping):
            problems.append("extra_body must be a mapping")
        if problems:
            raise ValueError("invalid LLMConfig: " + "; ".join(problems))
        object.__setattr__(self, "extra_body", dict(self.extra_body))  # a plain dict, as JSON data
        if isinstance(self.tool_choice, Mapping):
            object.__setattr__(self, "tool_choice", dict(self.tool_choice))

    @property
    def turns_shown(self) -> int:
        """The turns shown verbatim: ``window_turns``, else the strategy's default (6 for ``state``, else 12)."""
        if self.window_turns is not None:
            return self.window_turns
        return 6 if self.context == "state" else 12

    def replace(self, **changes: Any) -> LLMConfig:
        """A copy with ``changes``; an unknown field name is an error that lists the valid ones."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            valid = ", ".join(f.name for f in dataclasses.fields(self))
            raise TypeError(f"unknown LLMConfig field(s) {', '.join(unknown)}; valid: {valid}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every setting as JSON data (no secret is among them: the key stays in its environment variable)."""
        out = dataclasses.asdict(self)
        out["extra_body"] = dict(self.extra_body)
        if isinstance(self.tool_choice, Mapping):
            out["tool_choice"] = dict(self.tool_choice)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMConfig:
        return cls().replace(**dict(data))

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters as recorded with a run (the seed is added by the policy)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "extra_body": dict(self.extra_body),
        }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value
