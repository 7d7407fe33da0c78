"""The optional language-model voice of the desk's buyers: any OpenAI-compatible chat endpoint writes the
buyer's words from (decision, reason, persona). Off by default (the canned voice needs no model).

It never decides: the rule-based buyer has already decided when it is asked, and its words are only words (the
environment caches them by the hash of what it was asked, so one combination is asked once per environment).
An endpoint that fails is a recorded buyer-side error and the decision stands (``tools.speak``); the SDK's own
retries are the only ones (``max_retries``). Needs the ``openai`` SDK (``pip install 'salesgym[llm]'``),
imported when the voice first speaks.

    >>> voice = OpenAIVoice(model="my-model", base_url="http://localhost:8000/v1")
    >>> env = DeskEnv(voice=voice)                                      # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from salesgym.envs.desk.contract import HANG_UP_REASONS, REJECT_REASONS

PROMPT = (
    "You are a prospective buyer of life insurance on a sales call. Your personality: {persona}. You have "
    "already decided: {decision}. Say it to the seller in one or two short sentences, in character. Do not "
    "change the decision, do not invent prices or terms."
)


def _decision_words(decision: str, reason: str | None) -> str:
    if decision == "reject" and reason is not None:
        return f"you reject the offer ({REJECT_REASONS[reason]})"
    if decision == "hang_up" and reason is not None:
        return f"you end the call ({HANG_UP_REASONS[reason]})"
    return {"accept": "you accept the offer"}.get(decision, decision.replace("_", " "))


class OpenAIVoice:
    """``speak(decision, reason, persona)`` through ``model`` at ``base_url`` (the key from ``api_key_env``)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        *,
        temperature: float = 0.0,
        max_tokens: int = 80,
        seed: int = 0,
        timeout_s: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        self.model, self.base_url, self.api_key_env = model, base_url, api_key_env
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self._client: Any = None

    def _chat(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as err:
                raise ImportError("the language-model voice needs the openai SDK: pip install 'salesgym[llm]'") from err
            key = os.environ.get(self.api_key_env)
            if not key:
                raise RuntimeError(f"set ${self.api_key_env} to the voice endpoint's API key")
            self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout_s,
                                         max_retries=self.max_retries)  # fmt: skip
        return self._client

    def speak(self, decision: str, reason: str | None, persona: str) -> str:
        reply = self._chat().chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": PROMPT.format(persona=persona,
                                                                  decision=_decision_words(decision, reason))}],
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )  # fmt: skip
        text = reply.choices[0].message.content
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the voice endpoint returned no text")
        return text.strip()

    def __getstate__(self) -> dict[str, Any]:  # an HTTP client does not travel to a worker or a clone's pickle
        return {**self.__dict__, "_client": None}
