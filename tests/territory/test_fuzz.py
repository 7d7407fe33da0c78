"""Fuzzing the call parser (docs/architecture.md, promises 4 and 5).

Two properties:

* **The parser accepts exactly what the exported schema accepts.** Arguments generated from each territory
  tool's exported schema and from its negations (wrong types, out of range, too long, missing and
  extra fields, null where not allowed, ...) are parsed by ``TOOLS.parse`` and validated by ``jsonschema``
  (Draft 2020-12) against ``mcp_tools()[i]["inputSchema"]`` (the OpenAI strict export is the same schema
  without the string lengths strict mode cannot express, and with every field required); the two must agree.
  A field with a default is optional in the MCP schema and may be omitted; the one documented difference: a
  call without arguments (``args`` absent, null or an empty text) means ``{}``. Handler-level
  refusals (an unknown id) are not the parser's, so parse results are compared, not step statuses.
* **No input makes a step raise, and a refused call changes nothing but one event.** Thousands of generated
  calls (JSON texts, Python objects, deep nesting, huge integers, odd keys, objects whose methods raise, valid
  calls with mutated fields, and the service's hostile-input corpus, ``salesgym.testing.hostile_input``, as call
  texts and argument texts) mixed with valid ones, against ``territory-v0`` and ``territory-debug-v0`` of
  several sizes, horizons, families and templates. ``benchmarks/fuzz_campaign.py`` runs the same generator
  for millions of calls.

A failure names the seed and the call's index; ``SALESGYM_FUZZ_SEED=<seed>`` replays that run.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import os
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from salesgym_testkit import territory_random_action

import salesgym
from salesgym.core.clock import Scheduler
from salesgym.core.env import public_event_id
from salesgym.core.state import State
from salesgym.core.tools import MAX_CALL_CHARS, MAX_REASON_CHARS, ToolError
from salesgym.envs.territory.families import FAMILIES
from salesgym.envs.territory.tools import TOOLS
from salesgym.testing.hostile import (
    Boom,
    CollidingKey,
    RaisingDict,
    RaisingInt,
    RaisingList,
    RaisingMapping,
    RaisingStr,
)
from salesgym.testing.hostile_input import WIRE

# --- 1. the parser and the exported schema agree --------------------------------------------------------------

SCHEMAS = {t["name"]: t["inputSchema"] for t in salesgym.make("territory-debug-v0").mcp_tools()}
VALIDATORS = {name: jsonschema.Draft202012Validator(schema) for name, schema in SCHEMAS.items()}
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)
PADDING = st.sampled_from([" ", "  ", "\t", "\n", " \u3000"])  # whitespace a stripping parser would remove


def _sized_text(n: int) -> st.SearchStrategy[str]:
    """Strings of exactly ``n`` characters, plain, padded with whitespace, or wholly whitespace."""
    if n <= 12:
        return st.text(min_size=n, max_size=n)
    return st.one_of(st.characters(codec="utf-8").map(lambda c: c * n),
                     st.builds(lambda core, pad: (core + pad * n)[:n], st.text(min_size=1, max_size=6), PADDING),
                     st.builds(lambda pad: (pad * n)[:n], PADDING))


def valid(node: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Instances of one schema node (the subset of JSON Schema the strict export uses)."""
    if "anyOf" in node:
        return st.one_of([valid(sub) for sub in node["anyOf"]])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node["type"]
    if kind == "null":
        return st.none()
    if kind == "string":
        lo, hi = node.get("minLength", 0), node.get("maxLength", 60)
        return st.one_of(st.text(min_size=lo, max_size=min(hi, 12)),
                         st.sampled_from(sorted({lo, hi, max(lo, hi - 1)})).flatmap(_sized_text))
    if kind in ("integer", "number"):
        lo, hi = node.get("minimum", -(10**6)), node.get("maximum", 10**6)
        ints = st.integers(math.ceil(lo), math.floor(hi))
        integral_floats = ints.map(float)  # 2.0 is an integer in JSON Schema
        if kind == "integer":
            return st.one_of(ints, integral_floats)
        return st.one_of(ints, integral_floats, st.floats(lo, hi), st.sampled_from([float(lo), float(hi)]))
    if kind == "array":
        return st.lists(valid(node["items"]), min_size=node.get("minItems", 0),
                        max_size=min(node.get("maxItems", 4), 4))
    if kind == "object":
        return st.fixed_dictionaries({k: valid(v) for k, v in node["properties"].items()})
    raise AssertionError(f"schema node not covered by the generator: {node}")


def invalid(node: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values that mostly break one schema node: wrong JSON type, out of range, too long or short, not in the
    enum, bad items, missing or extra properties. (Some are valid by chance; the validator is the judge.)"""
    wrong_type = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                           st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
                           st.sampled_from([[], {}, "2", "1.5", " 3 "]))
    if "anyOf" in node:
        return st.one_of(wrong_type, *(invalid(sub) for sub in node["anyOf"]))
    if "enum" in node:
        return st.one_of(wrong_type, st.sampled_from(node["enum"]).flatmap(
            lambda v: st.sampled_from([f" {v}", f"{v} ", v.upper(), v[:-1], v + "x"] if isinstance(v, str) else [v])))
    kind = node["type"]
    if kind == "null":
        return st.one_of(wrong_type, st.just(0), st.just(""), st.just("null"))
    if kind == "string":
        lo, hi = node.get("minLength", 0), node.get("maxLength", 60)
        too_long = st.sampled_from([hi + 1, hi + 7]).flatmap(_sized_text)
        out = [wrong_type, too_long]
        if lo > 0:
            out.append(st.just(""))
        return st.one_of(out)
    if kind in ("integer", "number"):
        lo, hi = node.get("minimum", -(10**6)), node.get("maximum", 10**6)
        near = st.sampled_from([lo - 1, hi + 1, lo - 0.01, hi + 0.01, 10**30, -(10**30), 2**64, 1e300])
        out = [wrong_type, near, st.booleans(), st.sampled_from([str(lo), str(hi)])]
        if kind == "integer":
            out.append(st.floats(lo, hi).filter(lambda x: not x.is_integer()))
        return st.one_of(out)
    if kind == "array":
        item = valid(node["items"])
        out = [wrong_type, st.lists(invalid(node["items"]), min_size=1, max_size=3),
               st.builds(lambda xs: tuple(xs), st.lists(item, min_size=1, max_size=2))]  # a tuple is not an array
        if "maxItems" in node:
            out.append(st.lists(item, min_size=node["maxItems"] + 1, max_size=node["maxItems"] + 2))
        if node.get("minItems", 0) > 0:
            out.append(st.just([]))
        return st.one_of(out)
    if kind == "object":
        return st.one_of(wrong_type, mutated(node))
    raise AssertionError(f"schema node not covered by the generator: {node}")


def mutated(node: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """A valid object with one thing wrong: a field invalid, a field missing, an extra field, or not an object."""
    props = sorted(node["properties"])

    def one_field(obj: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
        if not props:
            return {**obj, data.draw(st.text(min_size=1, max_size=8)): data.draw(ANY_JSON)}
        how = data.draw(st.sampled_from(["invalid", "missing", "extra", "extra_case", "any", "bytes"]))
        key = data.draw(st.sampled_from(props))
        out = dict(obj)
        if how == "invalid":
            out[key] = data.draw(invalid(node["properties"][key]))
        elif how == "missing":
            del out[key]
        elif how == "extra":
            extra = data.draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in node["properties"]))
            out[extra] = data.draw(ANY_JSON)
        elif how == "extra_case":
            out[key.upper()] = out[key]
        elif how == "any":
            out[key] = data.draw(ANY_JSON)
        else:  # Python-only: bytes are not a JSON string
            out[key] = data.draw(st.binary(max_size=6))
        return out

    return st.builds(one_field, valid(node), st.data())


def _json_data(value: Any) -> bool:
    """Whether ``value`` is JSON data (no bytes, no tuples), so its JSON text spelling can be parsed too."""
    if isinstance(value, dict):
        return all(_json_data(v) for v in value.values())
    if isinstance(value, list):
        return all(_json_data(v) for v in value)
    return value is None or isinstance(value, (str, int, float))


_NOT_JSON = object()


def _schema_accepts(tool: str, args: Any) -> bool:
    """What the exported MCP schema says of ``args``, read as the call's ``args`` is: a string is the arguments'
    JSON text, and no arguments (null, or a text of only whitespace) is ``{}``. An omitted field that has a
    default is optional in the schema itself (it means that default)."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else None
        except ValueError:
            args = _NOT_JSON
    if args is None:
        args = {}
    return args is not _NOT_JSON and VALIDATORS[tool].is_valid(args)


def _parses(call: Any) -> bool:
    try:
        TOOLS.parse(call)
    except ToolError:
        return False
    return True


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
def test_the_parser_accepts_exactly_what_the_exported_schema_accepts(tool: str) -> None:
    schema = SCHEMAS[tool]
    checked = {"accepted": 0, "refused": 0}

    @settings(max_examples=150, deadline=None, print_blob=True, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(args=st.one_of(valid(schema), mutated(schema), mutated(schema), invalid(schema)))
    def check(args: Any) -> None:
        expected = _schema_accepts(tool, args)
        got = _parses({"tool": tool, "args": args})
        assert got == expected, (f"{tool}: parser {'accepts' if got else 'refuses'} but the schema "
                                 f"{'accepts' if expected else 'refuses'} args={args!r}")
        # the JSON text spellings agree too, within the documented length of a call's text (MAX_CALL_CHARS)
        if _json_data(args) and not isinstance(args, str):  # (a str is already the arguments' text)
            text = json.dumps({"tool": tool, "args": args}, ensure_ascii=False)
            if len(text) <= MAX_CALL_CHARS:
                assert _parses(text) == expected, f"{tool}, as JSON text: {text[:300]}"
                arguments = json.dumps(args, ensure_ascii=False)
                assert _parses({"name": tool, "arguments": arguments}) == expected, f"{tool}, OpenAI spelling"
        checked["accepted" if expected else "refused"] += 1

    check()
    assert checked["accepted"] >= 10 and checked["refused"] >= 10, checked  # both sides were exercised


@pytest.mark.parametrize(("args", "accepted"), [
    ({"opportunity_id": "o000", "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": 2.0}, True),
    ({"opportunity_id": "o000", "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": 2.5}, False),
    ({"opportunity_id": "o000", "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": True}, False),
    ({"opportunity_id": "o000", "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": "2"}, False),
    ({"opportunity_id": "o000", "stakeholder_ids": ("o000s0",), "agenda": "x", "in_days": 2}, False),
    ({"opportunity_id": " " * 41, "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": 2}, False),
    ({"opportunity_id": " ", "stakeholder_ids": ["o000s0"], "agenda": "x", "in_days": 2}, True),
])
def test_edges_of_the_agreement(args: dict[str, Any], accepted: bool) -> None:
    """Integral floats are integers, booleans and numeric strings are not numbers, tuples are not arrays,
    lengths count the string as sent."""
    assert VALIDATORS["schedule_meeting"].is_valid(args) is accepted
    assert _parses({"tool": "schedule_meeting", "args": args}) is accepted
    if accepted:
        _, parsed = TOOLS.parse({"tool": "schedule_meeting", "args": args})
        assert type(parsed.in_days) is int  # type: ignore[attr-defined]


# --- 2. random calls: no step raises, a refusal changes nothing but one event ---------------------------------


class Colour(enum.Enum):
    RED = 1


class Resource(enum.StrEnum):
    SE = "se"


def deep_list(n: int) -> Any:
    return functools.reduce(lambda a, _: [a], range(n), [])


def deep_dict(n: int) -> Any:
    return functools.reduce(lambda a, _: {"a": a}, range(n), {})


def _cyclic_list() -> Any:
    a: list[Any] = []
    a.append(a)
    return a


def _cyclic_dict() -> Any:
    d: dict[str, Any] = {}
    d["d"] = d
    return d


DEPTHS = (31, 32, 33, 100, 254, 255, 1000, 5000)
NASTY_TEXT = ("\x00", "\x1b[2J\x1b[31m", "\u202e", "\ud800", "\udfff", "\u2028", "\x7f", "\x85", "é", "☃", "😀",
              "\ufeff", "'", '"', "\\", "{", "[", "", " ", "\t\n")

# weird values, by how often they are drawn (the expensive ones are rare)
JUNK: list[tuple[int, Callable[[random.Random], Any]]] = [
    (6, lambda r: r.choice([None, True, False, 0, -1, 1.5, 2.0, -0.0, 1e308, math.nan, math.inf, -math.inf])),
    (4, lambda r: r.choice(["", " ", "2", "1.5", "true", "null", "o000", " o000 ", "o000" + " " * 60])),
    (4, lambda r: "".join(r.choice(NASTY_TEXT) for _ in range(r.randint(1, 12)))),
    (3, lambda r: r.choice([2**63, 2**64, -(2**63) - 1, 10**30, 10**4300 - 1, 10**5000, -(10**5000)])),
    (3, lambda r: r.choice([b"o000", bytearray(b"x"), memoryview(b"x"), (1, 2), {1, 2}, frozenset(), 1j, object(),
                            print, type, Colour.RED, Resource.SE, Ellipsis, NotImplemented, range(3)])),
    (4, lambda r: r.choice([Boom, lambda: RaisingStr("o000"), lambda: RaisingDict(a=1), RaisingMapping,
                            lambda: RaisingList([1]), lambda: RaisingInt(3), _cyclic_list, _cyclic_dict])()),
    (2, lambda r: deep_list(r.choice(DEPTHS))),
    (2, lambda r: deep_dict(r.choice(DEPTHS))),
    (2, lambda r: [r.random() for _ in range(r.choice([7, 21, 1000]))]),
    (1, lambda r: "x" * r.choice([41, 501, 4001, 20_001, 1_000_000])),
    (1, lambda r: {str(i): i for i in range(r.choice([30, 3000]))}),
]
JUNK_WEIGHTS = [w for w, _ in JUNK]


def junk(rng: random.Random) -> Any:
    return rng.choices(JUNK, JUNK_WEIGHTS)[0][1](rng)


def junk_key(rng: random.Random) -> Any:
    return rng.choice([
        lambda: rng.choice(["evidence", "Tool", "args ", "", "\x00", "tool\x1b", "😀" * 9, "k" * 19_000,
                            "k" * 1_000_000]),
        lambda: rng.choice([1, 2.5, None, True, (1, 2), 10**5000, b"tool", frozenset()]),
        lambda: rng.choice([Boom(), RaisingStr("x")]),
    ])()


def _text(call: Any) -> str:
    return json.dumps(call, ensure_ascii=False)


def _corrupt(rng: random.Random, text: str) -> str:
    if not text:
        return "{"
    i = rng.randrange(len(text))
    return rng.choice([text[:i], text[:i] + rng.choice("{}[]\",:\\0x\x00 ") + text[i:], text[:i] + text[i + 1:],
                       text.replace('"', "'"), text + "}", "[" * rng.choice(DEPTHS) + text])


def _mutate(rng: random.Random, call: dict[str, Any]) -> Any:
    """A valid call with one thing wrong (or re-spelled)."""
    args = dict(call["args"])
    key = rng.choice(sorted(args)) if args else "x"
    how = rng.randrange(14)
    if how == 0:
        args[key] = junk(rng)
    elif how == 1:
        args.pop(key, None)
    elif how == 2:
        args[junk_key(rng)] = junk(rng)
    elif how == 3:
        return {**call, junk_key(rng): junk(rng)}
    elif how == 4:
        return {**call, "tool": junk(rng)}
    elif how == 5:
        return {**call, "name": rng.choice([call["tool"], "wait", "disqualify"])}
    elif how == 6:
        return {"tool": call["tool"], "args": args, "arguments": rng.choice([args, json.dumps(args)])}
    elif how == 7:
        return {"name": call["tool"], "arguments": rng.choice([json.dumps(args), _corrupt(rng, json.dumps(args)),
                                                              "[" * rng.choice(DEPTHS) + "]" * 3])}
    elif how == 8:
        return _corrupt(rng, _text(call))
    elif how == 9:
        args[key] = rng.choice([True, "2", b"o000", 2.0, " " * 50, str(args[key]) + " " * 60, [args[key]]])
    elif how == 10:
        return {**call, "args": junk(rng)}
    elif how == 11:
        return rng.choice([RaisingDict(call), RaisingMapping(), {**call, "args": RaisingDict(args)}])
    elif how == 12:
        return {CollidingKey("tool"): call["tool"], "args": args}
    else:
        return _text(call).encode(rng.choice(["utf-8", "utf-16", "latin-1"]), "replace")
    return {**call, "args": args}


WAIT_TEXT = '{"tool": "wait", "args": {"hours": %s, "until": null}}'


def _hostile(rng: random.Random) -> Any:
    """An item of the service's hostile-input corpus (the bytes a remote caller could send), as the call itself,
    as the text of a call's arguments, or inside a call's text, in bytes or as text."""
    item = rng.choice(WIRE)
    text = item.value.decode("utf-8", "surrogateescape")
    return rng.choice([lambda: item.value, lambda: text, lambda: {"tool": "wait", "args": text},
                       lambda: item.inside(b'{"tool": "wait", "args": ', b"}"),
                       lambda: WAIT_TEXT % text])()


def random_call(rng: random.Random, env: Any) -> tuple[str, Any]:
    """One call and the name of its kind: valid, re-spelled valid, mutated valid, or junk."""
    roll = rng.random()
    if roll < 0.35:
        return "valid", territory_random_action(env, rng)
    if roll < 0.45:
        call = territory_random_action(env, rng)
        return "valid spelling", rng.choice([_text(call), _text(call).encode(),
                                             {"name": call["tool"], "arguments": json.dumps(call["args"])},
                                             {"type": "function", "id": "call_1", "name": call["tool"],
                                              "arguments": call["args"]}])
    if roll < 0.75:
        return "mutated", _mutate(rng, territory_random_action(env, rng))
    if roll < 0.8:
        return "hostile input", _hostile(rng)
    if roll < 0.85:
        return "junk text", rng.choice([
            lambda: "[" * rng.choice(DEPTHS) + "]" * rng.choice(DEPTHS),
            lambda: '{"a":' * rng.choice(DEPTHS) + "1" + "}" * rng.choice(DEPTHS),
            lambda: WAIT_TEXT % ("9" * rng.choice([19, 20, 400, 4301, 5000])),
            lambda: WAIT_TEXT % rng.choice(["NaN", "Infinity", "1e400", "2.0", "-0", "true", '"2"']),
            lambda: '{"tool": "wait", "args": "' + "[" * rng.choice(DEPTHS) + '"}',
            lambda: '{"tool": "view_opportunity", "args": {"opportunity_id": "\\u001b[2J\\ud800"}}',
            lambda: "".join(rng.choice(NASTY_TEXT) for _ in range(rng.randint(0, 30))),
            lambda: bytes(rng.randrange(256) for _ in range(rng.randint(0, 30))),
        ])()
    return "junk", rng.choice([lambda: junk(rng), lambda: {junk_key(rng): junk(rng)},
                               lambda: {CollidingKey("tool"): "wait", "args": {"hours": 1, "until": None}},
                               lambda: {"tool": rng.choice(["wait", "view_opportunity"]),
                                        "args": {junk_key(rng): junk(rng)}},
                               lambda: {"tool": "wait", "args": {"hours": junk(rng), "until": None}}])()


# --- the checks made after every call ---------------------------------------------------------------------------

# what one invalid_action event may change
BOOKKEEPING = frozenset({"seq", "public_seq", "invalid_actions", "truncated"})
OBS_TEXT_LIMIT = 4096
REASON_JSON_LIMIT = 500


def _world_view(state: State) -> dict[str, Any]:
    """The state minus what an invalid_action changes. Containers hold immutable records, so comparing a fork
    taken before the call with the state after it is exact and costs a few pointer comparisons a record."""
    return {k: v.pending() if isinstance(v, Scheduler) else v
            for k, v in vars(state).items() if k not in BOOKKEEPING and k not in state.DERIVED}


@dataclass
class Tally:
    """What a run of calls did; ``problems`` holds one line per broken promise."""

    calls: int = 0
    ok: int = 0
    refused: int = 0
    after_end: int = 0
    raised: int = 0
    side_effects: int = 0
    episodes: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # calls by kind and outcome, e.g. "junk text: error"
    problems: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("calls", "ok", "refused", "after_end", "raised", "side_effects", "episodes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.kinds.update(other.kinds)
        self.problems += other.problems


def step_and_check(env: Any, action: Any, tally: Tally, where: str, kind: str = "call") -> bool:
    """Step ``action`` and check the promises; returns whether the episode is over afterwards."""
    state = env._state
    over = state.terminated or state.truncated
    before, n, seq, invalid = state.fork(), len(env._log), state.seq, state.invalid_actions
    tally.calls += 1
    try:
        obs, _, terminated, truncated, info = env.step(action)
    except Exception as err:  # that a step raised is what this records
        tally.raised += 1
        tally.problems.append(f"{where}: step raised {type(err).__name__}")
        return True
    result = info["tool_result"]
    tally.kinds[f"{kind}: {result['status']}"] += 1
    problems: list[str] = []
    if over:
        tally.after_end += 1
        if result["status"] != "error" or len(env._log) != n:
            problems.append("a call after the end was not a no-op error")
    elif result["status"] == "ok":
        tally.ok += 1
        # compact, except the two detail views a model asks for on purpose (the portfolio, one deal in full)
        detail = "portfolio" in result["output"] or "opportunity" in result["output"]
        if not detail and len(obs["text"].encode("utf-8", "surrogatepass")) >= OBS_TEXT_LIMIT:
            problems.append("the observation of a call is not compact")
    else:
        tally.refused += 1
        new = env._log.since(n)
        kinds = [e.kind for e in new]
        at_ceiling = invalid + 1 >= env.invalid_action_limit
        if kinds != (["invalid_action", "episode_ended"] if at_ceiling else ["invalid_action"]):
            problems.append(f"a refusal recorded {kinds}")
        s = env._state
        bookkeeping_ok = (s.seq, s.invalid_actions, s.truncated) == (seq + len(new), invalid + 1, at_ceiling)
        bookkeeping_ok = bookkeeping_ok and s.public_seq == before.public_seq + len(new)
        if not bookkeeping_ok or _world_view(s) != _world_view(before):
            tally.side_effects += 1
            problems.append("a refusal changed the state beyond its invalid_action")
        expected = [public_event_id(s.public_seq - len(new) + i) for i in range(len(new))]
        if not new or result["event_ids"] != expected or result["state_version"] != s.public_seq:
            problems.append(f"a refusal names events {result['event_ids']}")
        reason = result["output"].get("error")
        if not isinstance(reason, str) or not reason or len(reason) > MAX_REASON_CHARS:
            problems.append(f"reason is not a short string: {type(reason).__name__} of {len(str(reason))} characters")
        elif not reason.isprintable():
            problems.append(f"reason holds non-printable characters: {reason[:80]!a}")
        elif len(json.dumps(result["output"])) > REASON_JSON_LIMIT:
            problems.append(f"output is {len(json.dumps(result['output']))} characters as JSON")
        if len(obs["text"].encode("utf-8", "surrogatepass")) >= OBS_TEXT_LIMIT:
            problems.append("the observation of a refusal is not compact")
        if result["time_cost"] != 0.0 or result["resource_cost"] != {}:
            problems.append("a refusal cost something")
    tally.problems += [f"{where}: {p}" for p in problems]
    return bool(terminated or truncated)


def episode_options(rng: random.Random, sizes: tuple[int, ...],
                    horizons: tuple[int, ...]) -> tuple[str, dict[str, Any]]:
    """A registered id and its options: ``territory-debug-v0`` or ``territory-v0`` of a random shape."""
    if rng.random() < 0.15:
        return "territory-debug-v0", {"invalid_action_limit": rng.choice([5, 50, 10**9])}
    family = rng.choice(sorted(FAMILIES))
    template = rng.choice(sorted(FAMILIES[family].templates))
    return "territory-v0", {"n_opportunities": rng.choice(sizes), "horizon_days": rng.choice(horizons),
                            "family": family, "template": template, "invalid_action_limit": rng.choice([50, 10**9])}


def fuzz(seed: int, calls: int, *, sizes: tuple[int, ...], horizons: tuple[int, ...], episode_calls: int,
         max_problems: int = 20) -> Tally:
    """``calls`` generated calls over episodes of random shapes, every one checked; reproducible from ``seed``.
    Stops early once more than ``max_problems`` problems were seen."""
    rng = random.Random(seed)
    tally = Tally()
    while tally.calls < calls:
        env_id, options = episode_options(rng, sizes, horizons)
        env = salesgym.make(env_id, **options)
        episode_seed = rng.randrange(2**31)
        env.reset(seed=episode_seed)
        tally.episodes += 1
        for _ in range(min(episode_calls, calls - tally.calls)):
            i = tally.calls
            kind, action = random_call(rng, env)
            where = f"seed={seed} call #{i} ({kind}; {env_id} {options} episode seed {episode_seed})"
            if step_and_check(env, action, tally, where, kind) and rng.random() < 0.9:
                break  # mostly a new episode; sometimes keep calling a finished one
        if len(tally.problems) > max_problems:
            break
        if env.replay().digest() != env._state.digest():
            tally.problems.append(f"seed={seed}: episode {tally.episodes} does not replay to its state")
    return tally


FUZZ_SEEDS = [int(os.environ["SALESGYM_FUZZ_SEED"])] if "SALESGYM_FUZZ_SEED" in os.environ else [101, 202, 303]


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_generated_calls_never_raise_and_refusals_change_nothing_else(seed: int) -> None:
    tally = fuzz(seed, 2000, sizes=(3, 4, 5, 10, 20, 50), horizons=(30, 90, 180), episode_calls=300)
    assert not tally.problems, f"SALESGYM_FUZZ_SEED={seed} reproduces this run:\n" + "\n".join(tally.problems[:20])
    # the mix is what it claims to be: many refusals, many successes, several episodes
    assert tally.raised == 0 and tally.side_effects == 0
    assert tally.refused > 600 and tally.ok > 400 and tally.episodes >= 4, tally
    assert all(tally.kinds[f"{kind}: error"] > 20 for kind in ("mutated", "junk", "junk text", "hostile input")), (
        tally.kinds)
    assert tally.kinds["valid: ok"] > 200 and tally.kinds["valid spelling: ok"] > 50, tally.kinds
