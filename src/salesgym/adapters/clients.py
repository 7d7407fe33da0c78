"""Model clients for the token-level rollout: token ids in, generated token ids (and their logprobs) out.

``TransformersClient`` samples from a local ``transformers`` causal LM (``salesgym[rollout]``);
``OpenAITokenClient`` asks an OpenAI-compatible server that takes token ids as the prompt and returns the
generated token ids (vLLM's ``/v1/completions`` with ``return_token_ids`` or ``return_tokens_as_token_ids``;
``salesgym[llm]``); ``ScriptedClient`` emits given texts through a tokenizer (tests, docs). Any object with
``generate`` is a client.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Generation:
    """One reply: the ids the model generated (its end-of-turn token included when it made one), the log
    probability of each under the sampling distribution (None when the client has none), and why it ended:
    ``stop`` (an end token) or ``length`` (``max_new_tokens``)."""

    ids: list[int]
    logprobs: list[float] | None
    finish: str = "stop"


class ModelClient(Protocol):
    """``generate`` gets the whole sequence so far; the rollout grows that list in place after the call, so a
    client that keeps it copies it (``list(prompt_ids)``)."""

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int, seed: int) -> Generation: ...


def turn_seed(seed: int, index: int, turn: int) -> int:
    """The sampling seed of one reply: a one-way 32-bit digest of the world seed, the copy's index in its
    group and the turn, so copies of one world sample differently and a world seed never leaves the process."""
    key = f"salesgym-rollout:{seed}:{index}:{turn}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "big")


class TransformersClient:
    """Samples from ``model`` (a ``transformers`` causal LM) on its own device, without touching the global
    random state. ``logprobs`` are of the sampled tokens under softmax(logits / temperature), what TRL's
    GRPO recomputes for the same ids; ``generate_kwargs`` go to ``model.generate`` (``logits_processor``,
    ``top_k``, ``stop_strings``, ...)."""

    def __init__(self, model: Any, tokenizer: Any, *, temperature: float = 1.0, **generate_kwargs: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.temperature = temperature
        self.generate_kwargs = generate_kwargs

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int, seed: int) -> Generation:
        import torch

        model = self.model
        device = next(model.parameters()).device
        input_ids = torch.tensor([list(prompt_ids)], device=device)
        sample = self.temperature > 0
        kwargs: dict[str, Any] = {"do_sample": sample, "top_k": 0, **self.generate_kwargs}
        if sample:
            kwargs["temperature"] = self.temperature
        was_training = model.training
        model.eval()
        try:
            with torch.random.fork_rng(devices=[] if device.type == "cpu" else [device]), torch.no_grad():
                torch.manual_seed(seed)
                out = model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    max_new_tokens=max_new_tokens,
                    return_dict_in_generate=True,
                    output_logits=True,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.tokenizer.eos_token_id,
                    **kwargs,
                )
        finally:
            model.train(was_training)
        ids = out.sequences[0, input_ids.shape[1] :].tolist()
        scale = self.temperature if sample else 1.0
        logits = torch.stack(out.logits, dim=1)[0].float() / scale  # (new tokens, vocab)
        chosen = torch.tensor(ids, device=logits.device).unsqueeze(1)
        logprobs = torch.log_softmax(logits, dim=-1).gather(1, chosen).squeeze(1).tolist()
        finish = "stop" if ids and ids[-1] == self.tokenizer.eos_token_id else "length"
        return Generation(ids, [float(x) for x in logprobs], finish)


class OpenAITokenClient:
    """An OpenAI-compatible ``/v1/completions`` endpoint with token-id prompts (vLLM, SGLang's OpenAI API).

    The request asks for the generated ids two ways vLLM knows: ``return_token_ids`` (``choices[0].token_ids``)
    and ``return_tokens_as_token_ids`` with ``logprobs`` (``logprobs.tokens`` as ``"token_id:<id>"``, their
    ``token_logprobs``); a reply with neither is an error, since re-tokenising its text would break alignment.
    The ``seed`` sent is :func:`turn_seed`'s digest, never the world seed.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        temperature: float = 1.0,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        from salesgym.llm.client import sdk_client

        self.model = model
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        # a local server ignores the key; the SDK's own two retries of a dropped connection, as a rollout wants
        self._sdk = sdk_client(base_url, api_key_env, timeout_s, key_required=False, max_retries=2)

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int, seed: int) -> Generation:
        body = {
            "model": self.model,
            "prompt": list(prompt_ids),
            "max_tokens": max_new_tokens,
            "temperature": self.temperature,
            "seed": seed,
            "logprobs": 1,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "skip_special_tokens": False,
            **self.extra_body,
        }
        reply = self._sdk.post("/completions", cast_to=object, body=body)
        return parse_completion(reply)


def parse_completion(reply: Any) -> Generation:
    """The generated ids and logprobs of a ``/v1/completions`` reply (a JSON dict), as vLLM returns them."""
    if not isinstance(reply, dict) or not reply.get("choices"):
        raise ValueError("the completion reply has no choices")
    choice = reply["choices"][0]
    lp = choice.get("logprobs") or {}
    ids = choice.get("token_ids")
    if ids is None:
        tokens = lp.get("tokens")
        if not tokens or not all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
            raise ValueError(
                "the server returned no token ids: ask it for return_token_ids (vLLM >= 0.10.2) or "
                "return_tokens_as_token_ids with logprobs"
            )
        ids = [int(t.split(":", 1)[1]) for t in tokens]
    logprobs = lp.get("token_logprobs")
    if logprobs is not None and len(logprobs) != len(ids):
        raise ValueError(f"the reply has {len(ids)} token ids and {len(logprobs)} logprobs")
    finish = "length" if choice.get("finish_reason") == "length" else "stop"
    return Generation([int(i) for i in ids], None if logprobs is None else [float(x) for x in logprobs], finish)


class ScriptedClient:
    """Emits ``texts`` in order, each encoded by ``tokenizer`` and closed with its end token; ``prompts``
    keeps every prompt it was given. ``texts`` may be a function of the turn's prompt text instead."""

    def __init__(self, tokenizer: Any, texts: Iterable[str] | Callable[[str], str]) -> None:
        self.tokenizer = tokenizer
        self._next: Callable[[str], str]
        if callable(texts):
            self._next = texts
        else:
            it = iter(list(texts))
            self._next = lambda _prompt: next(it, "")
        self.prompts: list[list[int]] = []
        self.generated: list[list[int]] = []

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int, seed: int) -> Generation:
        self.prompts.append(list(prompt_ids))
        text = self._next(self.tokenizer.decode(list(prompt_ids), skip_special_tokens=False))
        ids = [*self.tokenizer.encode(text, add_special_tokens=False), self.tokenizer.eos_token_id]
        finish = "stop"
        if len(ids) > max_new_tokens:
            ids, finish = ids[:max_new_tokens], "length"
        self.generated.append(ids)
        return Generation(ids, None, finish)
