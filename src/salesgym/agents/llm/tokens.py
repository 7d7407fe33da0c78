"""Token estimates without a tokenizer download.

A prompt's size is estimated from the characters of its JSON (the messages and the tool schemas, as the SDK
sends them) times a tokens-per-character ratio. Before the endpoint has answered, the ratio is 1/4 (four
characters a token, the usual rule for English and JSON with BPE tokenizers). Each reply's reported
``prompt_tokens`` calibrates it: the ratio becomes the *largest* tokens-per-character seen in the episode,
the starting 1/4 included, so the estimate errs on the side of a smaller prompt and never drops below
1/4: an endpoint that counts less than it was sent (a server that leaves the tools out of the prompt
reports a third of their characters' worth) cannot talk it into under-estimating the next prompt.
The chat template adds a few tokens per message, counted as ``MESSAGE_OVERHEAD``. A margin (``SAFETY``)
covers the drift between one request's ratio and the next.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import orjson

CHARS_PER_TOKEN = 4.0  # before calibration
MESSAGE_OVERHEAD = 4  # tokens a chat template adds around each message (role markers, separators)
SAFETY = 0.95  # the share of the prompt budget the estimate may fill


def json_chars(value: Any) -> int:
    """Characters of ``value``'s compact JSON text (what is counted; non-ASCII counts once)."""
    return len(orjson.dumps(value).decode())


class TokenEstimator:
    """Estimates prompt tokens from characters; :meth:`calibrate` with what the endpoint reported."""

    def __init__(self) -> None:
        self.ratio = 1.0 / CHARS_PER_TOKEN
        self.calibrated = False

    def tokens(self, chars: int, messages: int = 0) -> int:
        return math.ceil(chars * self.ratio) + MESSAGE_OVERHEAD * messages

    def chars_for(self, tokens: int, messages: int = 0) -> int:
        """The most characters that estimate to at most ``tokens`` (with ``messages`` messages)."""
        return max(0, math.floor((tokens - MESSAGE_OVERHEAD * messages) / self.ratio))

    def calibrate(self, chars: int, messages: int, reported_tokens: int) -> None:
        """Learn from one request: ``chars`` of JSON in ``messages`` messages were ``reported_tokens``."""
        if chars <= 0 or reported_tokens <= 0:
            return
        ratio = (reported_tokens - MESSAGE_OVERHEAD * messages) / chars
        self.ratio = max(self.ratio, ratio)  # never below the starting 1/4
        self.calibrated = True


def prompt_chars(messages: Sequence[dict[str, Any]], tools_chars: int) -> int:
    return sum(json_chars(m) for m in messages) + tools_chars
