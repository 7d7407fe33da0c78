"""Safe text for the episode views: every string shown is data, never markup (control characters written out,
long texts cut with a note), and compact renderings of numbers and JSON values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CALL_LIMIT = 200  # characters of a call, an inbox item, a message before a cut
OUTPUT_LIMIT = 80  # characters of a tool's output on the result line


def clean(text: object) -> str:
    """``text`` with every control or format character (ANSI escapes, NUL, bidi overrides...) written out as
    ``\\x1b``-style escapes; newlines and tabs stay.

    >>> clean("ok\\x1b[31m red\\x00")
    'ok\\\\x1b[31m red\\\\x00'
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c in "\n\t" else _escape_char(c) for c in s)


def _escape_char(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def cut(text: str, limit: int, lines: int | None = None) -> tuple[str, int]:
    """The first ``limit`` characters (and at most ``lines`` lines) of ``text``, and how many were left out."""
    head = text[:limit]
    if lines is not None:
        head = "\n".join(head.split("\n")[:lines])
    return head, len(text) - len(head)


def compact(value: object) -> str:
    """Compact JSON of ``value`` (any object: what JSON cannot hold is written by ``str``), cleaned."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clean(text)


def number(x: object) -> str:
    """``86.662801`` -> ``86.66``, ``15.0`` -> ``15``, ``1234567`` -> ``1,234,567``; other values as text."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return clean(x)
    if isinstance(x, int):
        return f"{x:,}"
    text = f"{x:,.2f}" if abs(x) < 1000 else f"{x:,.0f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def clean_scalar(value: object) -> str:
    return clean(value) if isinstance(value, str) else compact(value)


def as_dict(x: object) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def as_list(x: object) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else []


def cut_note(left: int) -> str:
    return f" … +{left:,} chars" if left else ""
