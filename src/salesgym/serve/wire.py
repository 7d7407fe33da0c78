"""JSON from outside the process, read strictly: the one reader of the HTTP service's bodies and the MCP
server's messages (``app.py``, ``mcp_wire.py``). Python's reader takes what JSON does not define (``NaN``,
``Infinity``, lone surrogates, duplicate keys, integers of any length) and recurses once per level of nesting;
what it takes here reaches environments, jq and the record, so each of those is refused at the door, with
a one-line reason (:class:`WireError`), before anything else looks at the body:

- bytes that are not UTF-8, and text that is not one JSON value;
- nesting deeper than :data:`MAX_DEPTH` levels;
- ``NaN``, ``Infinity``, ``-Infinity`` and numbers beyond a double (``1e999``);
- integers of more than :data:`MAX_INT_DIGITS` digits;
- strings or keys holding a lone surrogate (``"\\ud800"``), which no UTF-8 text can carry;
- an object with the same key twice (readers disagree on which one counts).

:func:`envelope` finds a JSON-RPC message's ``id`` and whether it names a ``method`` without parsing it, so a
message refused here still gets its answer (a client otherwise waits forever).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64
MAX_INT_DIGITS = 100
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


class WireError(ValueError):
    """A body or message refused before it is read: ``str(err)`` is the one-line reason."""


def _no_constant(name: str) -> Any:
    raise WireError(f"{name} is not JSON (numbers are finite)")


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + 1:  # a sign and MAX_INT_DIGITS digits
        raise WireError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WireError(f"the number {text[:40]} is beyond a double")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise WireError(f"the key {twice[:40]!a} appears twice in one object")
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_int, parse_float=_float,
                            parse_constant=_no_constant)


def read_json(data: bytes) -> Any:
    """The JSON value of ``data``, or :class:`WireError` saying why it is refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WireError(f"not UTF-8 text (byte {err.start})") from None
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as err:
        raise WireError(f"not JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    _check_tree(value, surrogates=_SURROGATE_ESCAPE.search(data) is not None)
    return value


def _check_tree(value: Any, surrogates: bool) -> None:
    """Depth, and (only when the text escapes one) lone surrogates, without recursion."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise WireError(f"nested deeper than {MAX_DEPTH} levels")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                if surrogates and isinstance(key, str):
                    _text(key)
                stack.append((child, depth + 1))
        elif surrogates and isinstance(node, str):
            _text(node)


def _text(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError("a string holds a lone surrogate (\\ud800-\\udfff without its pair)") from None


# -- JSON-RPC: the id of a message that cannot be read ------------------------------------------------------------
@dataclass(frozen=True)
class Envelope:
    """What a shallow look at a message's top level found: its ``id`` (if it has a usable one) and whether it
    names a ``method`` (a message with a method and no id is a notification, which gets no answer)."""

    has_id: bool = False
    id: int | str | None = None
    has_method: bool = False


_TOKEN = re.compile(rb'\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20}(?![\d.eE])|null)')


def envelope(data: bytes, limit: int = 1 << 16) -> Envelope:
    """The top-level ``id`` and ``method`` of a JSON-RPC message, read from its first ``limit`` bytes without
    building it (each nested value is skipped by counting brackets)."""
    data = data[:limit]
    i, n = data.find(b"{"), len(data)
    if i < 0 or data[:i].strip():
        return Envelope()
    found: dict[bytes, Any] = {}
    i += 1
    while i < n and len(found) < 2:
        key = _TOKEN.match(data, i)
        if key is None or not key.group(1).startswith(b'"'):
            break
        colon = re.compile(rb"\s*:").match(data, key.end())
        if colon is None:
            break
        name = key.group(1)
        if name in (b'"id"', b'"method"'):
            value = _TOKEN.match(data, colon.end())
            found[name] = None if value is None else value.group(1)
            i = colon.end() if value is None else value.end()
            if value is None:
                i = _skip(data, i)
        else:
            i = _skip(data, colon.end())
        comma = re.compile(rb"\s*,").match(data, i)
        if comma is None:
            break
        i = comma.end()
    raw_id = found.get(b'"id"')
    ident: int | str | None = None
    if raw_id is not None:
        try:
            ident = json.loads(raw_id)
        except ValueError:
            raw_id = None
        if isinstance(ident, str) and not ident.isprintable():
            raw_id, ident = None, None
    return Envelope(raw_id is not None, ident, b'"method"' in found)


def _skip(data: bytes, i: int) -> int:
    """The index after the JSON value starting at ``i`` (or the end of ``data``), by counting brackets."""
    depth, n = 0, len(data)
    while i < n:
        c = data[i : i + 1]
        if c in b" \t\r\n" and depth == 0 and c:
            i += 1
            continue
        if depth == 0 and c in (b",", b"}", b"]"):
            return i
        if c == b'"':
            i += 1
            while i < n and data[i : i + 1] != b'"':
                i += 2 if data[i : i + 1] == b"\\" else 1
            i += 1
        elif c in (b"[", b"{"):
            depth += 1
            i += 1
        elif c in (b"]", b"}"):
            depth -= 1
            i += 1
        else:
            i += 1
    return i


def replaying(body: bytes, receive: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """An ASGI ``receive`` that hands the app the body already read (and checked) once, then the real channel."""
    delivered = False

    async def replay() -> Any:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
