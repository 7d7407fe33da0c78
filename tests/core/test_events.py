"""Events, the append-only log and canonical hashing."""

from __future__ import annotations

import json

import pytest

from salesgym.core.events import CHUNK, Event, EventLog, SequenceGap, canonical_json, log_hash, sha256_of


def _event(seq: int, kind: str = "happened", **payload: object) -> Event:
    return Event(seq, float(seq), kind, "tester", payload, "test:0")


def _log(n: int) -> EventLog:
    log = EventLog()
    for i in range(n):
        log.append(_event(i, n=i))
    return log


def test_events_are_frozen_and_named_by_sequence() -> None:
    e = _event(7)
    assert e.id == "ev000007"
    with pytest.raises(AttributeError):
        e.seq = 8  # type: ignore[misc]


@pytest.mark.parametrize("seq", [1, 5, -1])
def test_log_refuses_a_gap_at_the_start(seq: int) -> None:
    with pytest.raises(SequenceGap):
        EventLog().append(_event(seq))


def test_log_refuses_gaps_and_repeats_later() -> None:
    log = _log(3)
    with pytest.raises(SequenceGap):
        log.append(_event(4))
    with pytest.raises(SequenceGap):
        log.append(_event(2))
    assert len(log) == 3
    log.append(_event(3))
    assert [e.seq for e in log] == [0, 1, 2, 3]


@pytest.mark.parametrize("n", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7])
def test_indexing_iteration_and_since_across_chunks(n: int) -> None:
    log = _log(n)
    assert len(log) == n
    assert [e.seq for e in log] == list(range(n))
    for i in ({0, n // 2, n - 1} if n else set()):
        assert log[i].seq == i
    if n:
        assert log[-1].seq == n - 1
    with pytest.raises(IndexError):
        log[n]
    for start in {0, n // 3, n - 1, n} - {-1}:
        assert [e.seq for e in log.since(start)] == list(range(start, n))


def test_fork_shares_frozen_chunks_and_stays_independent() -> None:
    log = _log(2 * CHUNK + 5)
    twin = log.fork()
    assert all(a is b for a, b in zip(log._chunks, twin._chunks, strict=True))  # structural sharing
    twin.append(_event(len(twin), kind="twin_only"))
    log.append(_event(len(log), kind="original_only"))
    assert log[-1].kind == "original_only" and twin[-1].kind == "twin_only"
    assert len(log) == len(twin) == 2 * CHUNK + 6
    assert log.digest() != twin.digest()
    # filling the tail into a new chunk in one does not touch the other
    for _ in range(CHUNK):
        twin.append(_event(len(twin)))
    assert len(log) == 2 * CHUNK + 6 and len(log._chunks) == 2


def test_to_dict_gives_plain_json_data() -> None:
    e = Event(0, 1.5, "met", "o000s1", {"ids": ("a", "b"), "nested": {"t": (1, 2)}}, "territory:3")
    d = e.to_dict()
    assert d == {"id": "ev000000", "seq": 0, "time": 1.5, "kind": "met", "actor": "o000s1",
                 "payload": {"ids": ["a", "b"], "nested": {"t": [1, 2]}}, "provenance": "territory:3"}
    assert json.loads(json.dumps(d)) == d


def test_canonical_json_sorts_keys_and_normalises_numbers() -> None:
    assert canonical_json({"b": 1, "a": [1.0, 2.5]}) == '{"a":[1,2.5],"b":1}'
    assert canonical_json(0.1 + 0.2) == canonical_json(0.3)
    assert canonical_json(1e-13) != canonical_json(0.0)
    assert canonical_json((1, 2)) == canonical_json([1, 2])
    assert canonical_json({"é": "☃"}) == '{"é":"☃"}'


def test_hash_is_stable_and_sensitive() -> None:
    a = {"x": [1, 2, {"y": 0.30000000000000004}], "k": "v"}
    b = {"k": "v", "x": [1, 2, {"y": 0.3}]}
    assert sha256_of(a) == sha256_of(b)
    # pinned: a change in the canonical form would change every benchmark hash
    assert canonical_json(b) == '{"k":"v","x":[1,2,{"y":0.3}]}'
    assert sha256_of(b) == "643fd08a0b369fa26d5976d9ca391d5fab7ac8f242c41421e9667bdbbafd631c"
    assert sha256_of({"k": "w", "x": [1, 2, {"y": 0.3}]}) != sha256_of(b)
    log = _log(5)
    assert log.digest() == log_hash(log.to_list()) == log.fork().digest()
    assert _log(5).digest() == log.digest() and _log(6).digest() != log.digest()
