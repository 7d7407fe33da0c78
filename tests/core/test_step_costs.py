"""The cheaper spellings on the step path give what the plain definitions give: a record replaced at its fields'
positions, the proof text by orjson where it writes what the standard library writes, a keyed draw with its seed's
digits memoised, and ``emit``'s own bookkeeping (the state it builds is the one ``replay`` folds through
``apply_event``)."""

from __future__ import annotations

import json
import random
from typing import Any, NamedTuple

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.core import evidence, rng
from salesgym.core.clock import Scheduler
from salesgym.core.state import replaced


class Rec(NamedTuple):
    a: int
    b: str = "x"
    c: float | None = None
    d: tuple[int, ...] = ()


@pytest.mark.parametrize("changes", [{}, {"a": 2}, {"c": 1.5, "a": 7}, {"d": (1,), "b": "y", "c": None, "a": 0}])
def test_replaced_is_named_tuples_replace(changes: dict[str, Any]) -> None:
    record = Rec(1, "q", 2.5, (3,))
    made = replaced(record, changes)
    assert made == record._replace(**changes) and type(made) is Rec
    assert record == Rec(1, "q", 2.5, (3,))  # the old record is left as it was


def test_replaced_refuses_a_field_the_record_does_not_have() -> None:
    with pytest.raises(ValueError, match=r"Rec has no field \['e', 'z'\]"):
        replaced(Rec(1), {"a": 2, "z": 1, "e": 0})


_EDGE: list[Any] = [
    0, -1, 2**63 - 1, -(2**63) + 1, 2**63, -(2**63), 10**30, True, False, None, 0.0, -0.0, 1e-4, 9.99e-5, 1e-5,
    1e16, 9999999999999998.0, 123.45, -0.1, float("nan"), float("inf"), -float("inf"), "", "q0001", 'say "hi"',
    "back\\slash", "tab\there", "new\nline", "del\x7f", "café", "東京", "\ud800", [1, 2], {"x": 1}, (1,),
]  # fmt: skip


def _claim(r: random.Random) -> dict[Any, Any]:
    claim: dict[Any, Any] = {}
    for _ in range(r.randrange(0, 8)):
        key = r.choice(["quote_id", "plan", "coverage", "term_years", "premium", "ké", "a b", "\n", 3])
        claim[key] = r.choice([*_EDGE, round(r.uniform(0, 1e6), 2), r.randrange(-10**6, 10**6),
                               10 ** r.uniform(-6, 18), r.random()])  # fmt: skip
    return claim


def test_the_proof_text_is_the_standard_librarys() -> None:
    r = random.Random(3)
    for _ in range(20_000):
        claim = _claim(r)
        try:
            expected = evidence._json_claim_text(claim)
        except TypeError:  # mixed key types do not sort: the same error both ways
            with pytest.raises(TypeError):
                evidence._claim_text(claim)
            continue
        assert evidence._claim_text(claim) == expected, claim
    for value in _EDGE:
        assert evidence._claim_text({"v": value}) == json.dumps({"v": value}, sort_keys=True, separators=(",", ":"),
                                                                default=str)  # fmt: skip


def test_a_draw_is_the_hash_of_its_key_with_the_seed_memoised() -> None:
    r = random.Random(5)
    for _ in range(5000):
        seed = r.getrandbits(r.choice((1, 8, 32, 63)))
        key = tuple(r.choice(["offer", "gate", "L001", "a\x1fb", 3, 0, 2.5, True]) for _ in range(r.randrange(4)))
        assert rng.uniform(seed, *key) == (rng.stream_seed(seed, *key) >> 11) / float(1 << 53)
        if key:
            assert rng._SEED_TEXTS[seed] == str(seed)


@pytest.mark.parametrize(("env_id", "family", "policy"), [("desk-v0", "desk", "quote-then-fit"),
                                                         ("desk-v0", "desk", "random"),
                                                         ("territory-v0", None, "expected-value")])
def test_emit_builds_the_state_replay_builds(env_id: str, family: str | None, policy: str) -> None:
    env = salesgym.make(env_id)
    for step in Episode(env, make_policy(policy, 7, family=family), 7, 300):
        assert step.action  # a played episode: sales, refusals, callbacks, evidence
    live, replayed = env._state, env.replay()
    assert live is not None and env.state_version > 20
    assert vars(live).keys() == vars(replayed).keys()
    derived = getattr(live, "DERIVED", frozenset())  # memos the observer fills, not folded state
    for name, value in vars(live).items():
        if name in derived:
            continue
        other = getattr(replayed, name)
        if isinstance(value, Scheduler):  # compared by its pending items
            value, other = value.pending(), other.pending()
        assert repr(value) == repr(other), name
