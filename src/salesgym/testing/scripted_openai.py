"""A real OpenAI-compatible HTTP server whose "model" is scripted, for tests, benchmarks and docs.

It serves ``POST /v1/chat/completions`` (and ``GET /v1/models``, with the model's ``max_model_len`` as vLLM
publishes it when ``context_length`` is given) on 127.0.0.1 at a free port, from a
background thread (FastAPI + uvicorn), so the whole path of a language-model policy (HTTP, the ``openai``
SDK, tool-call parsing, errors, retries, context, token accounting) runs without a network or a model::

    with ScriptedOpenAI({sampling_seed(7): [tool_call("wait", {"hours": 2.0, "until": None})]}) as server:
        policy = LLMPolicy(7, model="scripted", base_url=server.base_url)

**Scripts.** A script is a list of moves keyed by the request's ``seed`` (``None`` for requests without
one); each request takes the next move of its script. A move is plain JSON data, best made with the helpers:

=======================================  ===============================================================
``tool_call(name, args)``                one tool call (``args`` a dict, sent as its JSON text)
``tool_calls((name, args), ...)``        several tool calls in one reply
``text_reply(text)``                     a plain-text reply without a tool call
``malformed(name, raw)``                 a call whose arguments text is ``raw`` (not JSON, as given)
``unknown_tool(name, args)``             a call of a tool the request did not offer
``http_error(status)``                   an HTTP error (500, 429, ...) with an OpenAI error body
``drop()``                               the connection closes in the middle of the response
``token_reply(ids, logprobs)``           for ``/v1/completions``: generated token ids (and their logprobs)
=======================================  ===============================================================

**Streaming.** A chat request with ``"stream": true`` gets the same answer as server-sent events, the way
OpenAI streams it: one chunk with the whole message (text and tool calls), one with the finish reason, the
usage when ``stream_options.include_usage`` is set, then ``data: [DONE]``.

**Token-level completions.** ``POST /v1/completions`` takes a prompt of token ids, as vLLM does, and answers
a ``token_reply`` move the way vLLM does: ``choices[0].token_ids`` (and top-level ``prompt_token_ids``) when
the request asks ``return_token_ids``; with ``logprobs``, ``logprobs.token_logprobs`` and ``logprobs.tokens``,
each ``"token_id:<id>"`` when the request asks ``return_tokens_as_token_ids``. It shares the scripts (by
``seed``) and the records with the chat route; usage counts ids.

As data: ``{"calls": [{"name", "arguments": dict | str}], "text": str | None}``, ``{"status": int,
"message": str}`` or ``{"drop": true}``; any move may add ``"delay_s"`` (seconds before the answer). A
request with no script, or past the end of its script, gets HTTP 400 saying so.

**Usage.** Deterministic token counts, a stand-in for a tokenizer: :func:`count_tokens` counts runs of up
to 8 letters, of up to 3 digits, and every other non-space character. The prompt is the request's tools
then messages as compact JSON; ``prompt_tokens_details.cached_tokens`` is the count of the longest prefix it
shares with the previous request of the same script, ``prompt_tokens`` that plus the count of the rest;
``completion_tokens`` the count of the reply's text and calls.

**Records.** ``requests`` holds every request received, in order: its ``seed``, ``body`` (the JSON sent:
messages, tools, sampling parameters), the ``move`` served, the HTTP ``status``, the ``usage`` returned and
the arrival time ``t`` (``time.monotonic``); ``requests_for(seed)`` those since that seed's script was set.

:func:`script_of` builds the script of a baseline by playing it in process.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

Move = dict[str, Any]
ScriptKey = int | None

_TOKEN = re.compile(r"[A-Za-z]{1,8}|[0-9]{1,3}|[^\sA-Za-z0-9]")
# a safety net only: a busy machine can take more than 10 s to start it; a server that fails says so at once
START_TIMEOUT_S = 300.0


def count_tokens(text: str) -> int:
    """The scripted server's token count of ``text`` (see the module docstring)."""
    return len(_TOKEN.findall(text))


# --- moves ---------------------------------------------------------------------------------------------


def tool_call(name: str, args: Mapping[str, Any] | str | None = None) -> Move:
    return {"calls": [{"name": name, "arguments": {} if args is None else args}]}


def tool_calls(*calls: tuple[str, Mapping[str, Any] | str]) -> Move:
    return {"calls": [{"name": name, "arguments": args} for name, args in calls]}


def text_reply(text: str) -> Move:
    return {"text": text}


def malformed(name: str, raw: str = '{"broken": ') -> Move:
    return {"calls": [{"name": name, "arguments": raw}]}


def unknown_tool(name: str = "teleport", args: Mapping[str, Any] | None = None) -> Move:
    return tool_call(name, args or {})


def http_error(status: int = 500, message: str = "scripted failure") -> Move:
    return {"status": status, "message": message}


def drop() -> Move:
    return {"drop": True}


def token_reply(ids: Sequence[int], logprobs: Sequence[float] | None = None, finish: str = "stop") -> Move:
    return {"token_ids": list(ids), "logprobs": None if logprobs is None else list(logprobs), "finish": finish}


def delayed(move: Move, seconds: float) -> Move:
    return {**move, "delay_s": seconds}


def moves_from_actions(actions: Iterable[Any], per_reply: int = 1) -> list[Move]:
    """Tool-call moves that make these actions (``{"tool", "args"}`` dicts or their JSON text), ``per_reply``
    calls to a reply."""
    calls = []
    for action in actions:
        a = json.loads(action) if isinstance(action, str) else action
        calls.append({"name": a.get("tool", a.get("name")), "arguments": a.get("args", a.get("arguments")) or {}})
    return [{"calls": calls[i : i + per_reply]} for i in range(0, len(calls), per_reply)]


def script_of(
    env_factory: Callable[[], Any], policy: str, seed: int, *, family: str | None = None, per_reply: int = 1,
    max_steps: int = 50_000,
) -> list[Move]:  # fmt: skip
    """The moves that replay registered policy ``policy``'s episode at ``seed`` in ``env_factory()``."""
    from salesgym.agents import make_policy
    from salesgym.agents.base import Episode

    episode = Episode(env_factory(), make_policy(policy, seed, family=family), seed, max_steps)
    return moves_from_actions((step.action for step in episode), per_reply)


# --- the server ----------------------------------------------------------------------------------------


class _Dropped(Response):
    """Headers promising a body, half a body, then the connection closes."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"4096")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"id": "chatcmpl-', "more_body": True})
        raise ConnectionAbortedError("scripted drop")  # uvicorn closes the connection


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slice equality: C-speed comparisons
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class ScriptedOpenAI:
    """The server (a context manager); ``base_url`` is ``http://127.0.0.1:<port>/v1`` once started."""

    def __init__(
        self,
        scripts: Mapping[ScriptKey, Sequence[Move]] | None = None,
        *,
        model: str = "scripted",
        context_length: int | None = None,
    ) -> None:
        self.model = model
        self.context_length = context_length  # published in /v1/models as vLLM does (max_model_len)
        self.requests: list[dict[str, Any]] = []
        self._scripts: dict[ScriptKey, list[Move]] = {}
        self._cursor: dict[ScriptKey, int] = {}
        self._last_prompt: dict[ScriptKey, str] = {}
        self._generation: dict[ScriptKey, int] = {}  # how many times each key's script was set
        self._lock = threading.Lock()
        for key, moves in (scripts or {}).items():
            self.script(key, moves)
        self.app = self._make_app()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- scripts and records --------------------------------------------------------------------------
    def script(self, seed: ScriptKey, moves: Sequence[Move]) -> None:
        """Set (or replace) the script of requests with this ``seed``, from its first move."""
        with self._lock:
            self._scripts[seed] = list(moves)
            self._cursor[seed] = 0
            self._last_prompt.pop(seed, None)
            self._generation[seed] = self._generation.get(seed, 0) + 1

    def requests_for(self, seed: ScriptKey) -> list[dict[str, Any]]:
        """The requests with this ``seed`` since its script was last set."""
        with self._lock:
            generation = self._generation.get(seed, 0)
            return [r for r in self.requests if r["seed"] == seed and r["generation"] == generation]

    def moves_left(self, seed: ScriptKey) -> int:
        with self._lock:
            return len(self._scripts.get(seed, [])) - self._cursor.get(seed, 0)

    @property
    def base_url(self) -> str:
        if not self.port:
            raise RuntimeError("the server is not started: use it as a context manager or call start()")
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAI:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers are not held back by Nagle (40 ms)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="critical", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1)  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"scripted-openai-{self.port}")  # fmt: skip
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scripted OpenAI server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the endpoint ---------------------------------------------------------------------------------
    def _make_app(self) -> FastAPI:
        app = FastAPI(title="scripted OpenAI-compatible model")

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            entry: dict[str, Any] = {"id": self.model, "object": "model", "owned_by": "salesgym"}
            if self.context_length is not None:
                entry["max_model_len"] = self.context_length
            return {"object": "list", "data": [entry]}

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> Response:
            arrived = time.monotonic()
            body = await request.json()
            move, status, payload = self._answer(body, arrived)
            delay = float(move.get("delay_s", 0.0)) if move else 0.0
            if delay:
                await asyncio.sleep(delay)
            if move and move.get("drop"):
                return _Dropped()
            headers = {"retry-after": "0"} if status == 429 else None
            if status == 200 and body.get("stream") is True:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return StreamingResponse(_sse_chunks(payload, usage), media_type="text/event-stream")
            return JSONResponse(payload, status_code=status, headers=headers)

        @app.post("/v1/completions")
        async def token_completions(request: Request) -> Response:
            body = await request.json()
            _move, status, payload = self._answer_tokens(body, time.monotonic())
            return JSONResponse(payload, status_code=status)

        return app

    def _take(self, key: ScriptKey, record: dict[str, Any]) -> tuple[Move | None, int, dict[str, Any]]:
        """The next move of ``key``'s script (the lock held), or the 400 answer when there is none."""
        script = self._scripts.get(key)
        if script is None:
            record["status"] = 400
            return None, 400, _error(f"no script for seed {key}", "invalid_request_error")
        index = self._cursor[key]
        if index >= len(script):
            record["status"] = 400
            return None, 400, _error(f"the script for seed {key} has no move left ({len(script)} moves)",
                                     "invalid_request_error")  # fmt: skip
        self._cursor[key] = index + 1
        record["move"], record["index"] = script[index], index
        return script[index], 200, {}

    def _answer_tokens(self, body: dict[str, Any], arrived: float) -> tuple[Move | None, int, dict[str, Any]]:
        seed = body.get("seed")
        key: ScriptKey = seed if isinstance(seed, int) else None
        prompt = body.get("prompt")
        with self._lock:
            record: dict[str, Any] = {"seed": key, "body": body, "t": arrived, "move": None, "usage": None,
                                      "generation": self._generation.get(key, 0)}  # fmt: skip
            self.requests.append(record)
            if not (isinstance(prompt, list) and all(isinstance(i, int) for i in prompt)):
                record["status"] = 400
                why = "this server's completions take a prompt of token ids"
                return None, 400, _error(why, "invalid_request_error")
            move, status, payload = self._take(key, record)
            if move is None:
                return move, status, payload
            if "status" in move:
                record["status"] = int(move["status"])
                return move, int(move["status"]), _error(str(move.get("message", "error")), "server_error")
            ids = [int(i) for i in move.get("token_ids", [])]
            usage = {"prompt_tokens": len(prompt), "completion_tokens": len(ids),
                     "total_tokens": len(prompt) + len(ids)}  # fmt: skip
            record["usage"], record["status"] = usage, 200
        choice: dict[str, Any] = {"index": 0, "text": str(move.get("text", "")), "logprobs": None,
                                  "finish_reason": move.get("finish", "stop")}  # fmt: skip
        if body.get("logprobs") is not None and move.get("logprobs") is not None:
            as_ids = bool(body.get("return_tokens_as_token_ids"))
            choice["logprobs"] = {
                "tokens": [f"token_id:{i}" if as_ids else "?" for i in ids],
                "token_logprobs": list(move["logprobs"]),
                "top_logprobs": None,
                "text_offset": None,
            }
        reply: dict[str, Any] = {"id": f"cmpl-{key}-{record['index']}", "object": "text_completion", "created": 0,
                                 "model": str(body.get("model", self.model)), "choices": [choice],
                                 "usage": usage}  # fmt: skip
        if body.get("return_token_ids"):
            choice["token_ids"] = ids
            reply["prompt_token_ids"] = prompt
        return move, 200, reply

    def _answer(self, body: dict[str, Any], arrived: float) -> tuple[Move | None, int, dict[str, Any]]:
        seed = body.get("seed")
        key: ScriptKey = seed if isinstance(seed, int) else None
        with self._lock:
            record: dict[str, Any] = {"seed": key, "body": body, "t": arrived, "move": None, "usage": None,
                                      "generation": self._generation.get(key, 0)}  # fmt: skip
            self.requests.append(record)
            move, status, payload = self._take(key, record)
            if move is None:
                return move, status, payload
            index = record["index"]
            if "status" in move or move.get("drop"):
                record["status"] = int(move.get("status", 200))
                if "status" in move:
                    return move, int(move["status"]), _error(str(move.get("message", "error")), "server_error")
                return move, 200, {}
            prompt = (orjson.dumps(body.get("tools", [])) + orjson.dumps(body.get("messages", []))).decode()
            previous = self._last_prompt.get(key, "")
            self._last_prompt[key] = prompt
            message, completion_text = self._message(move, key, index)
            shared = _common_prefix(prompt, previous)
            cached = count_tokens(prompt[:shared])
            prompt_tokens = cached + count_tokens(prompt[shared:])  # counted in two pieces: one pass
            completion_tokens = count_tokens(completion_text)
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
            record["usage"], record["status"] = usage, 200
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return (
            move,
            200,
            {
                "id": f"chatcmpl-{key}-{index}",
                "object": "chat.completion",
                "created": 0,
                "model": str(body.get("model", self.model)),
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": usage,
            },
        )

    @staticmethod
    def _message(move: Move, key: ScriptKey, index: int) -> tuple[dict[str, Any], str]:
        content = move.get("text")
        calls: list[dict[str, Any]] = []
        spoken = content or ""
        for j, call in enumerate(move.get("calls", [])):
            args = call.get("arguments", {})
            arguments = args if isinstance(args, str) else json.dumps(args)
            calls.append(
                {"id": f"call_{key}_{index}_{j}", "type": "function",
                 "function": {"name": call["name"], "arguments": arguments}}
            )  # fmt: skip
            spoken += str(call["name"]) + arguments
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return message, spoken


def _sse_chunks(completion: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """A chat completion as OpenAI streams it (``stream: true``): one delta with the whole message, one with
    the finish reason, the usage when ``stream_options.include_usage`` asks for it, then ``[DONE]``."""
    choice = completion["choices"][0]
    message = choice["message"]
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": j, **call} for j, call in enumerate(message["tool_calls"])]
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}]},
              {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"],
                                    "logprobs": None}]}]  # fmt: skip
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    for chunk in chunks:
        yield b"data: " + orjson.dumps(chunk) + b"\n\n"
    yield b"data: [DONE]\n\n"


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
