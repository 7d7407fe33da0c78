"""The strict reader every body and MCP message goes through (``serve/wire.py``): the corpus refused with a reason,
good JSON read exactly as Python reads it, and a refused JSON-RPC message's id found without parsing it."""

from __future__ import annotations

import json

import pytest

from salesgym.serve.wire import MAX_DEPTH, Envelope, WireError, envelope, read_json
from salesgym.testing.hostile_input import WIRE, Hostile

REFUSED_BY_THE_READER = [h for h in WIRE if h.kind not in ("size", "content_type")]  # those are transport limits


@pytest.mark.parametrize("item", REFUSED_BY_THE_READER, ids=str)
def test_every_item_is_refused_with_a_one_line_reason(item: Hostile) -> None:
    with pytest.raises(WireError) as refused:
        read_json(item.inside(b'{"jsonrpc": "2.0", "id": 7, "params": {"arguments": ', b"}}"))
    reason = str(refused.value)
    assert reason and "\n" not in reason and len(reason) < 200 and reason.isprintable()


@pytest.mark.parametrize("text", [
    '{"a": [1, 2.5, -3, true, null, "x"]}', '"\\ud83d\\ude00 and \\u00e9"', '{"a": {"b": {"c": []}}}',
    json.dumps({"n": 10**99, "m": -(10**99), "f": 1.7976931348623157e308}), '"a\\"b\\\\c"', "[]", "{}", "0",
    "[" * MAX_DEPTH + "]" * MAX_DEPTH, json.dumps({"k" * 1000: "v" * 100_000}),
])
def test_good_json_is_read_as_python_reads_it(text: str) -> None:
    assert read_json(text.encode()) == json.loads(text)


def test_depth_is_counted_exactly() -> None:
    with pytest.raises(WireError):
        read_json(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    with pytest.raises(WireError):
        read_json(b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1))


@pytest.mark.parametrize(("data", "expected"), [
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ' + b"[" * 5000, Envelope(True, 5, True)),
    (b'{"params": {"id": 1, "a": ["}", "\\"", {"id": 2}]}, "method": "x", "id": "r-1"}', Envelope(True, "r-1", True)),
    (b'{"method": "notifications/x", "params": NaN}', Envelope(False, None, True)),
    (b'{"id": null, "method": "x"}', Envelope(True, None, True)),
    (b'{"id": ' + b"9" * 5000 + b', "method": "x"}', Envelope(False, None, True)),
    (b'{"id": 1.5, "method": "x"}', Envelope(False, None, True)),
    (b"[1, 2]", Envelope()), (b"\xff\xfe{", Envelope()), (b"", Envelope()), (b'{"id": "\\u0000"}', Envelope()),
])
def test_a_messages_id_is_found_without_reading_it(data: bytes, expected: Envelope) -> None:
    assert envelope(data) == expected
