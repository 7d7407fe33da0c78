"""What the rollout's per-turn path does less of, with its ids unchanged: the token cache keeps one int object per
id across all the lists it holds, and the chat frame of an answer is found by the message's shape without sorting
its fields again."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("transformers")

from token_fakes import make_tokenizer

from salesgym.adapters.chat_tokens import ChatTokens
from salesgym.adapters.token_cache import cache_for

TEXT = 'Pipeline: Engaged 3 | Last: ok (0.25h) {"sent_to":"o002s4","note":"replies, if any, arrive"}\nday 0, 22 left'


def test_the_cache_holds_one_int_object_per_id() -> None:
    tok = make_tokenizer()
    cache = cache_for(tok)
    assert cache is not None
    ids = cache.encode(TEXT)
    assert ids == list(tok.backend_tokenizer.encode(TEXT, add_special_tokens=False).ids)
    again = cache.encode(TEXT.replace("Engaged 3", "Engaged 4").replace("o002s4", "o003s1"))
    # the same words in pieces of their own (each piece and chunk is encoded once, by its own tokenizer call)
    words = cache.encode("replies,arrive.replies;arrive: Pipeline! Engaged? replies-arrive")
    objects: dict[int, Any] = {}
    shared = 0
    for i in [*ids, *again, *words]:
        if i > 256:  # ints up to 256 are one object in CPython anyway
            shared += i in objects
            assert objects.setdefault(i, i) is i
    assert shared > 10


def test_an_answers_frame_is_found_by_its_shape() -> None:
    chat = ChatTokens(make_tokenizer(), [])
    answer = {"role": "tool", "tool_call_id": "call_0", "content": TEXT}
    expected = chat._rendered([answer])  # the template rendered whole: what the frame must reproduce
    assert chat.env_text([answer]) == expected
    frame = chat._frames[("tool", ("role", "tool_call_id"))]
    assert chat._shapes == {("tool", "role", "tool_call_id", "content"): frame}
    reordered = {"content": TEXT, "tool_call_id": "call_0", "role": "tool"}  # another shape, the same frame
    assert chat.env_text([reordered]) == expected
    assert len(chat._frames) == 1 and len(chat._shapes) == 2
