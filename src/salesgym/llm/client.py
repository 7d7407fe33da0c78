"""A thin client over the ``openai`` SDK's chat completions, with counted retries: the one client of the LLM
policy and of the desk's language-model counterparties (its buyer and its voice).

The SDK is imported when a client is made, never by ``import salesgym``. The SDK's own retries are off:
each retry here is counted and its error kept, so a run shows how often the endpoint failed. Transport
errors (connection refused or dropped, timeouts), 408, 409, 429 and 5xx are retried with exponential
backoff; any other HTTP error, or a reply that is not a chat completion, is an :class:`EndpointError` at once.

:meth:`ChatClient.probe` asks the endpoint's ``GET /models`` once, before any request: whether it answers at
all, and the context length it publishes for the model, where it publishes one (:func:`published_context`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from salesgym.llm.config import LLMConfig

RETRY_STATUS = frozenset({408, 409, 429})  # and every 5xx
ERROR_CHARS = 300  # the most of an endpoint's error text kept
PROBE_TIMEOUT_S = 10.0  # the most one ``GET /models`` may take
# where servers publish a model's context length in ``/v1/models``: vLLM and SGLang (max_model_len), OpenRouter
# and LM Studio (context_length, max_context_length); llama.cpp's server publishes only its training context
# (``meta.n_ctx_train``), not the one it serves with, and Ollama and transformers' server publish none
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window")


class EndpointError(Exception):
    """The endpoint did not give a usable reply (after the retries it allows)."""

    def __init__(self, reason: str, errors: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.errors = list(errors)  # one text per failed attempt, the last one included

    @property
    def requests(self) -> int:
        return max(1, len(self.errors))


class DeadlineExceeded(Exception):
    """The episode's wall-time budget ran out while waiting for the endpoint."""

    def __init__(self, errors: Sequence[str] = ()) -> None:
        super().__init__("wall_budget")
        self.errors = list(errors)

    @property
    def requests(self) -> int:
        return len(self.errors)


@dataclass(frozen=True)
class EndpointInfo:
    """What ``GET /models`` said: ``unreachable`` (why no answer came: refused connection, timeout), ``refused``
    (the endpoint's words when it answered 401 or 403: the key is wrong), the context length it publishes for
    the model (None when it publishes none; any other HTTP error is taken as a server without the route)."""

    unreachable: str | None = None
    refused: str | None = None
    context_tokens: int | None = None


def published_context(listing: object, model: str) -> int | None:
    """The context length a ``/v1/models`` listing publishes for ``model`` (or for its only model), if any."""
    data = listing.get("data") if isinstance(listing, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, Mapping)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        for key in CONTEXT_KEYS:
            value = entry.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """One answered request: the assistant message as plain data, what it cost, the retries before it."""

    message: dict[str, Any]
    usage: Usage
    latency_s: float  # of the request that answered
    finish_reason: str | None
    errors: list[str] = field(default_factory=list)  # one text per failed attempt before it (each was retried)

    @property
    def requests(self) -> int:
        return len(self.errors) + 1


def ensure_sdk() -> Any:
    """The ``openai`` module, or an ImportError saying how to install it (a runner can call this before any
    episode; the policy calls it when it makes its client)."""
    try:
        import openai
    except ImportError as exc:  # the extra is optional
        raise ImportError("the LLM policy needs the openai SDK: pip install 'salesgym[llm]'") from exc
    return openai


def sdk_client(base_url: str | None, api_key_env: str, timeout_s: float, *, key_required: bool = True,
               max_retries: int = 0) -> Any:  # fmt: skip
    """The SDK's client for an endpoint, its key read from ``api_key_env``; by default no retries of its own (the
    chat client retries itself, classifying each failure). Without the variable: an error saying what to set, or
    (``key_required`` false, the token-level adapters, which talk to local servers) a placeholder key such servers
    ignore."""
    key = os.environ.get(api_key_env)
    if not key and key_required:
        raise RuntimeError(
            f"set the environment variable {api_key_env} to the endpoint's API key "
            "(any value for a local server that ignores it), or name another with api_key_env"
        )
    return ensure_sdk().OpenAI(base_url=base_url, api_key=key or "unused", max_retries=max_retries, timeout=timeout_s)


def request_body(
    c: LLMConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None
) -> dict[str, Any]:
    """The JSON body :meth:`ChatClient.complete` posts for this configuration (no key needed: a counterparty
    hashes it to look its reply up on an episode's tape before it makes a client)."""
    body: dict[str, Any] = {"model": c.model, "messages": messages}
    if tools:  # a request without tools (a counterparty's structured reply) sends none: some servers refuse []
        body["tools"] = tools
    body[c.max_tokens_param] = c.max_tokens
    optional = {"temperature": c.temperature, "top_p": c.top_p, "seed": seed,
                "tool_choice": c.tool_choice if tools else None,  # a server may refuse it without tools
                "parallel_tool_calls": c.parallel_tool_calls}  # fmt: skip
    body.update({k: v for k, v in optional.items() if v is not None})
    body.update(c.extra_body)
    return body


class ChatClient:
    """``complete(messages, tools, seed)`` against ``config.base_url``; ``sleep`` is injectable for backoff."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        openai = ensure_sdk()
        self.config = config
        self.sleep = sleep
        self._openai = openai
        self._completion_type = openai.types.chat.ChatCompletion
        self._sdk = sdk_client(config.base_url, config.api_key_env, config.timeout_s)

    def request_body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None
    ) -> dict[str, Any]:
        """The JSON body of the request (``extra_body`` merged in, as the SDK does)."""
        return request_body(self.config, messages, tools, seed)

    def probe(self) -> EndpointInfo:
        """``GET /models`` once, without retries: does the endpoint answer, and what context does it publish."""
        try:
            listing = self._sdk.get("/models", cast_to=object, options={"timeout": min(PROBE_TIMEOUT_S,
                                                                                       self.config.timeout_s)})
        except Exception as exc:
            error, _ = self._classify(exc)
            if error is None:
                raise
            status = getattr(exc, "status_code", None)
            if status is None:  # no answer at all: refused, dropped, timed out
                return EndpointInfo(unreachable=error)
            return EndpointInfo(refused=error if status in (401, 403) else None)
        return EndpointInfo(context_tokens=published_context(listing, self.config.model))

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        seed: int | None,
        deadline: float | None = None,
    ) -> Completion:
        """One chat completion, retried as the module docstring says; ``deadline`` is a ``time.monotonic``
        instant after which no request is started (:class:`DeadlineExceeded`)."""
        body = self.request_body(messages, tools, seed)
        errors: list[str] = []
        attempt = 0
        while True:
            timeout = self.config.timeout_s
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DeadlineExceeded(errors)
                timeout = min(timeout, left)
            began = time.monotonic()
            try:
                # the SDK's documented way to post a body as it is: ``chat.completions.create`` walks every
                # message of the body to transform it (30 ms a request at 30k tokens) and changes nothing here
                reply = self._sdk.post("/chat/completions", cast_to=self._completion_type, body=body,
                                       options={"timeout": timeout})  # fmt: skip
            except Exception as exc:
                error, retry_after = self._classify(exc)
                if error is None:
                    raise
                errors.append(error)
                if retry_after is None:
                    raise EndpointError(error, errors) from exc
                if attempt >= self.config.max_retries:
                    raise EndpointError(f"{error} (after {attempt + 1} attempts)", errors) from exc
                delay = min(self.config.backoff_max_s, self.config.backoff_s * 2**attempt)
                delay = max(delay, min(retry_after, self.config.backoff_max_s))
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise DeadlineExceeded(errors) from exc
                self.sleep(delay)
                attempt += 1
                continue
            latency = time.monotonic() - began
            return self._completion(reply, latency, errors)

    def _classify(self, exc: Exception) -> tuple[str | None, float | None]:
        """(error text, seconds to wait before a retry or None when not retried); (None, None) when ``exc``
        is not the endpoint's doing (a bug here: re-raised)."""
        openai = self._openai
        if isinstance(exc, openai.APITimeoutError):
            return "timeout", 0.0
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            return f"connection error: {type(cause).__name__ if cause else type(exc).__name__}", 0.0
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            body = exc.body
            said = body.get("message") if isinstance(body, dict) else None  # the endpoint's own words
            text = f"HTTP {status}: {_clip(said if isinstance(said, str) and said else str(exc.message))}"
            if status in RETRY_STATUS or status >= 500:
                return text, _retry_after(exc.response.headers.get("retry-after"))
            return text, None
        if isinstance(exc, openai.APIError):  # a body the SDK could not read as a completion
            return f"bad response: {_clip(str(exc))}", None
        return None, None

    @staticmethod
    def _completion(reply: Any, latency: float, errors: list[str]) -> Completion:
        choices = getattr(reply, "choices", None)
        if not choices:
            raise EndpointError("the endpoint's reply has no choices", [*errors, "no choices"])
        choice = choices[0]
        msg = choice.message
        message: dict[str, Any] = {"role": "assistant", "content": msg.content}
        calls = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.function.name, "arguments": tc.function.arguments},
            }
            for tc in (msg.tool_calls or [])
            if getattr(tc, "function", None) is not None
        ]
        if calls:
            message["tool_calls"] = calls
        usage = reply.usage
        details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
        return Completion(
            message=message,
            usage=Usage(
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
            ),
            latency_s=latency,
            finish_reason=choice.finish_reason,
            errors=errors,
        )


def _retry_after(header: str | None) -> float:
    try:
        return max(0.0, float(header)) if header else 0.0
    except ValueError:  # an HTTP date: fall back to the backoff
        return 0.0


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."
