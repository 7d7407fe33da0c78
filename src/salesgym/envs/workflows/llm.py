"""The optional language-model parts of the workflows family, over any OpenAI-compatible chat endpoint, both off
by default: a **judge** of what the agent writes (``rubric.Judge``) and a **voice** for the simulated people
(``simulator.Voice``). Neither decides what the task's rules decide:

- the judge is shown the text the agent wrote and the rubric's public wording (items to mention, claims not to
  make, criteria), never a fact's value or any other hidden expected value; it answers booleans, and only the
  verdict's pass or fail reaches the agent;
- the voice answers a question as the simulated person, from what that person knows (their hidden facts) and
  the words the rules chose; the simulator refuses an answer that drops the told value, and flags and refuses
  one that reveals a fact nobody asked for (``simulator.voiced``). Every reply goes on the event tape with the
  hash of its request (``voice_spoke``), so a replay or a clone reads it there: ``TapeVoice`` replays a recorded
  episode offline and never calls a model.

Answers are cached by the hash of the request, so one combination is asked once per object (and a score that
is computed again asks nothing). Needs the ``openai`` SDK (``pip install 'salesgym[llm]'``), imported on the first
request; the key comes from ``api_key_env``.

    >>> env = WorkflowsEnv(judge="llm", llm={"model": "m", "base_url": "http://localhost:8000/v1"})  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JUDGE_PROMPT = (
    "You grade a message a sales representative wrote. Answer with JSON only: {{\"mentions\": [...], \"claims\": "
    "[...]}}: for each item to mention, true if the message mentions it (in any wording); for each claim, true if "
    "the message makes that claim (in any wording). Extra criteria: {criteria}\n"
    "Items to mention: {mentions}\nClaims the message must not make: {claims}"
)
VOICE_PROMPT = (
    "You are {who}, a colleague or customer of a sales representative; you are {persona}. Answer their message in "
    "one or two sentences, in your own voice. What you know: {knows}. Tell only what their message asks for, and "
    "only what the rules let you say now: {rules!r}. Add no other facts, names, numbers, dates or promises.\n"
    "Their message: {question}"
)


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible chat endpoint: ``model`` at ``base_url``, its key in ``$api_key_env``."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 30.0
    max_retries: int = 2
    seed: int = 0

    @classmethod
    def of(cls, config: Mapping[str, Any] | None) -> Endpoint:
        if not isinstance(config, Mapping) or not isinstance(config.get("model"), str):
            raise ValueError('the language-model judge or voice needs llm={"model": ..., "base_url": ..., '
                             '"api_key_env": ...}')  # fmt: skip
        unknown = set(config) - {"model", "base_url", "api_key_env", "timeout_s", "max_retries", "seed"}
        if unknown:
            raise ValueError(f"unknown llm setting(s) {sorted(unknown)}")
        return cls(**dict(config))


class _Chat:
    """The project's one chat client (``salesgym.llm.client.ChatClient``: key lookup, counted retries, clear
    endpoint errors), built on first use, and a cache of answers by request hash."""

    def __init__(self, endpoint: Endpoint, max_tokens: int) -> None:
        from salesgym.llm.config import LLMConfig

        e = endpoint
        self.endpoint, self.max_tokens = endpoint, max_tokens
        self.config = LLMConfig(model=e.model, base_url=e.base_url, api_key_env=e.api_key_env, temperature=0.0,
                                top_p=None, max_tokens=max_tokens, timeout_s=e.timeout_s, max_retries=e.max_retries,
                                tool_choice=None)  # fmt: skip
        self.cache: dict[str, str] = {}
        self._client: Any = None

    def ask(self, prompt: str) -> str:
        key = hashlib.sha256(prompt.encode()).hexdigest()
        if key not in self.cache:
            if self._client is None:
                from salesgym.llm.client import ChatClient

                self._client = ChatClient(self.config)
            reply = self._client.complete([{"role": "system", "content": prompt}], [], self.endpoint.seed)
            text = reply.message.get("content")
            if not isinstance(text, str) or not text.strip():
                raise ValueError("the endpoint returned no text")
            self.cache[key] = text.strip()
        return self.cache[key]

    def __getstate__(self) -> dict[str, Any]:  # an HTTP client does not travel to a worker or a pickle
        return {**self.__dict__, "_client": None}


class OpenAIJudge(_Chat):
    """``judge(public, text)`` through the endpoint (``rubric.Judge``)."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint, max_tokens=200)

    def judge(self, public: Mapping[str, Any], text: str) -> Mapping[str, Any]:
        prompt = JUDGE_PROMPT.format(criteria=public.get("criteria") or "none",
                                     mentions=json.dumps([" or ".join(m) for m in public["must_mention"]]),
                                     claims=json.dumps([label for label, _ in public["forbidden_claims"]]))
        answer = self.ask(prompt + "\nMessage:\n" + text)
        start, end = answer.find("{"), answer.rfind("}")
        verdict = json.loads(answer[start:end + 1] if start >= 0 else answer)
        if not isinstance(verdict, dict):
            raise ValueError("the judge did not answer a JSON object")
        return verdict


class OpenAIVoice(_Chat):
    """``answer(request)`` through the endpoint (``simulator.Voice``); a request holds ``who``, ``persona``,
    ``knows`` (the person's hidden facts), ``rules`` (the rules' words) and ``question``."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint, max_tokens=120)

    def answer(self, request: Mapping[str, Any]) -> str:
        knows = "; ".join(f"{k}: {v}" for k, v in request["knows"].items()) or "nothing the apps do not hold"
        return self.ask(VOICE_PROMPT.format(who=request["who"], persona=request["persona"], knows=knows,
                                            rules=request["rules"], question=request["question"]))  # fmt: skip


class TapeVoice:
    """A voice that only replays: the replies a recorded episode's tape holds (its ``voice_spoke`` events), by
    request hash; a request the tape does not hold fails (the rules' words stand), and no model is ever called.

        >>> TapeVoice.from_log([]).replies
        {}
    """

    def __init__(self, replies: Mapping[str, str]) -> None:
        self.replies = dict(replies)

    @classmethod
    def from_log(cls, events: Sequence[Mapping[str, Any]]) -> TapeVoice:
        """The replies on an event log (``env.event_log()``)."""
        return cls({e["payload"]["request"]: e["payload"]["reply"] for e in events if e["kind"] == "voice_spoke"})

    def answer(self, request: Mapping[str, Any]) -> str:
        key = request_hash(request)
        if key not in self.replies:
            raise KeyError(f"the tape holds no reply to request {key[:12]}")
        return self.replies[key]


def request_hash(request: Mapping[str, Any]) -> str:
    """The hash a voice reply is filed under on the tape: sha256 of the request as canonical JSON."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def build(kind: str, choice: Any, llm: Mapping[str, Any] | None) -> Any:
    """The judge or voice an environment was given: None (off), ``"llm"`` (over ``llm``'s endpoint), or an object
    with the right method (``judge`` / ``paraphrase``)."""
    if choice is None or choice == "rules":
        return None
    if choice == "llm":
        endpoint = Endpoint.of(llm)
        return OpenAIJudge(endpoint) if kind == "judge" else OpenAIVoice(endpoint)
    method = "judge" if kind == "judge" else "answer"
    if not callable(getattr(choice, method, None)):
        raise ValueError(f'{kind} must be None, "rules", "llm" or an object with the method {method}()')
    return choice
