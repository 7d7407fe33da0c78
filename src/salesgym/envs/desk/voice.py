"""The optional language-model voice of the desk's buyers: any OpenAI-compatible chat endpoint writes the
buyer's words from (decision, reason, persona). Off by default (the canned voice needs no model).

It never decides: the rule-based buyer has already decided when it is asked, and its words are only words (the
environment caches them by the hash of what it was asked, so one combination is asked once per environment).
An endpoint that fails is a recorded buyer-side error and the decision stands (``tools.speak``); the shared
client's counted retries are the only ones (``max_retries``). Needs the ``openai`` SDK (``pip install
'salesgym[llm]'``), imported when the voice first speaks.

    >>> voice = OpenAIVoice(model="my-model", base_url="http://localhost:8000/v1")
    >>> env = DeskEnv(voice=voice)                                      # doctest: +SKIP
"""

from __future__ import annotations

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
    """``speak(decision, reason, persona)`` through ``model`` at ``base_url`` (the key from ``api_key_env``), over
    the project's one chat client (``agents.llm.client.ChatClient``: counted retries, clear endpoint errors)."""

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
        from salesgym.llm.config import LLMConfig

        self.config = LLMConfig(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                                top_p=None, max_tokens=max_tokens, timeout_s=timeout_s, max_retries=max_retries,
                                tool_choice=None)  # fmt: skip
        self.seed = seed
        self._client: Any = None

    def speak(self, decision: str, reason: str | None, persona: str) -> str:
        if self._client is None:
            from salesgym.llm.client import ChatClient

            self._client = ChatClient(self.config)
        prompt = PROMPT.format(persona=persona, decision=_decision_words(decision, reason))
        reply = self._client.complete([{"role": "system", "content": prompt}], [], self.seed)
        text = reply.message.get("content")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the voice endpoint returned no text")
        return text.strip()

    def __getstate__(self) -> dict[str, Any]:  # an HTTP client does not travel to a worker or a clone's pickle
        return {**self.__dict__, "_client": None}
