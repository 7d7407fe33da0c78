"""Steering a tiny random model into real tool calls, for the trainer tests (needs torch and transformers).

A random model would almost never write a parsable call. :class:`OneOf` lets it choose only among a few
whole candidate texts (token id lists): its own probabilities still decide which, so rewards differ and
the policy gradient is real. :class:`ChoosingClient` does it in salesgym's rollout; :func:`steered` makes a
model whose ``generate`` does it, for loops that call ``model.generate`` themselves (TRL's tool loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

torch = pytest.importorskip("torch")  # collected as a doctest module in the main venv, which has no torch
transformers = pytest.importorskip("transformers")

from salesgym.adapters.clients import Generation, TransformersClient  # noqa: E402

LogitsProcessor, LogitsProcessorList = transformers.LogitsProcessor, transformers.LogitsProcessorList


class OneOf(LogitsProcessor):
    """Each row continues one of ``candidates`` from ``start`` (the prompt length; the first call's width
    when None); a row that has finished one may only pad."""

    def __init__(self, candidates: Sequence[Sequence[int]], start: int | None = None, pad: int | None = None) -> None:
        self.candidates, self.start, self.pad = candidates, start, pad

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.start is None:
            self.start = input_ids.shape[1]
        out = torch.full_like(scores, float("-inf"))
        for row in range(input_ids.shape[0]):
            done = input_ids[row, self.start :].tolist()
            allowed = {c[len(done)] for c in self.candidates if list(c[: len(done)]) == done and len(c) > len(done)}
            if not allowed and self.pad is not None:
                allowed = {self.pad}
            out[row, sorted(allowed)] = scores[row, sorted(allowed)]
        return out


class ChoosingClient(TransformersClient):
    def __init__(self, model: Any, tokenizer: Any, candidates: list[list[int]]) -> None:
        super().__init__(model, tokenizer, temperature=1.0)
        self.candidates = candidates

    def generate(self, prompt_ids: Sequence[int], *, max_new_tokens: int, seed: int) -> Generation:
        self.generate_kwargs["logits_processor"] = LogitsProcessorList([OneOf(self.candidates, len(prompt_ids))])
        return super().generate(prompt_ids, max_new_tokens=max_new_tokens, seed=seed)


def candidate_ids(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    return [[*tokenizer.encode(t, add_special_tokens=False), tokenizer.eos_token_id] for t in texts]


def steered(model: Any, candidates: list[list[int]], pad: int) -> Any:
    """``model`` with a ``generate`` that chooses among ``candidates`` (the same weights, the same class
    otherwise: the trainer trains it as it is)."""
    base = type(model)

    class Steered(base):  # type: ignore[misc, valid-type]
        def generate(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["logits_processor"] = LogitsProcessorList([OneOf(candidates, None, pad)])
            return super().generate(*args, **kwargs)

    Steered.__name__ = base.__name__
    model.__class__ = Steered
    return model
