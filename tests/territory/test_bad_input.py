"""Bad input is data, not a crash (docs/architecture.md, promise 5).

Every class of bad call returns ``status="error"`` with a reason, records exactly one ``invalid_action``
event and changes nothing else; a hypothesis state machine mixes random valid and invalid calls and
checks the invariants after every step.
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from salesgym_testkit import TOOL_NAMES, territory_random_action

from salesgym.core.env import public_event_id
from salesgym.envs.territory.env import TerritoryEnv

MB = "x" * 1_000_000
OBS_TEXT_LIMIT = 4096


def _env(**kwargs: Any) -> TerritoryEnv:
    return TerritoryEnv(**{"n_opportunities": 4, "horizon_days": 30, **kwargs})


def _wait(hours: Any = 1, until: Any = None) -> dict[str, Any]:
    return {"tool": "wait", "args": {"hours": hours, "until": until}}


class Boom:
    """Printing it raises (and so would comparing it)."""

    def _raise(self, *_: object) -> Any:
        raise RuntimeError("boom")

    __repr__ = __str__ = __format__ = __eq__ = _raise
    __hash__ = object.__hash__


BAD_CALLS: dict[str, Any] = {
    # not a call at all
    "none": None,
    "int": 7,
    "float": 2.5,
    "bool": True,
    "list": [{"tool": "wait", "args": {"hours": 1, "until": None}}],
    "empty_dict": {},
    "bytes_not_utf8": b"\xff\xfe\x00",
    # malformed JSON text
    "empty_string": "",
    "truncated_json": '{"tool": "wait", "args": {"hours": 1',
    "json_array": "[1, 2, 3]",
    "json_number": "42",
    "single_quotes": "{'tool': 'wait'}",
    "args_not_json": {"tool": "wait", "args": "{hours: 1}"},
    # unknown tools
    "unknown_tool": {"tool": "hack_the_crm", "args": {}},
    "tool_not_a_string": {"tool": ["wait"], "args": {}},
    "missing_tool": {"args": {"hours": 1}},
    "unicode_tool": {"tool": "wáit☃", "args": {}},
    # wrong types / values
    "args_is_list": {"tool": "wait", "args": [1, None]},
    "hours_is_string": _wait(hours="one"),
    "hours_is_nan": _wait(hours=float("nan")),
    "hours_is_inf": _wait(hours=float("inf")),
    "hours_negative": _wait(hours=-3),
    "hours_huge_int": _wait(hours=10**100),
    "both_wait_modes": _wait(hours=1, until="next_week"),
    "neither_wait_mode": _wait(hours=None, until=None),
    "bad_literal": _wait(hours=None, until="forever"),
    "in_days_is_float_string": {"tool": "schedule_meeting", "args": {"opportunity_id": "o000",
                                                                     "stakeholder_ids": ["o000s0"],
                                                                     "agenda": "x", "in_days": "two"}},
    "stakeholder_ids_not_list": {"tool": "schedule_meeting", "args": {"opportunity_id": "o000",
                                                                      "stakeholder_ids": "o000s0",
                                                                      "agenda": "x", "in_days": 2}},
    "discount_out_of_range": {"tool": "send_proposal", "args": {"opportunity_id": "o000", "discount_pct": 99}},
    # missing / extra fields
    "missing_field": {"tool": "send_message", "args": {"stakeholder_id": "o000s0", "subject": "hi"}},
    "missing_all_fields": {"tool": "research_account", "args": {}},
    "extra_arg_field": {"tool": "research_account", "args": {"account_id": "a000", "priority": "high"}},
    "extra_call_key": {"tool": "research_account", "args": {"account_id": "a000"}, "force": True},
    # ids that do not exist or belong elsewhere
    "unknown_opportunity": {"tool": "find_stakeholders", "args": {"opportunity_id": "o999"}},
    "unknown_account": {"tool": "research_account", "args": {"account_id": "a999"}},
    "unfound_stakeholder": {"tool": "send_message", "args": {"stakeholder_id": "o000s0", "subject": "hi",
                                                             "body": "hello"}},
    "unknown_meeting": {"tool": "run_discovery", "args": {"meeting_id": "m123456"}},
    "unknown_booking": {"tool": "run_technical_evaluation", "args": {"opportunity_id": "o000",
                                                                      "booking_id": "b000001"}},
    "negotiate_before_proposal": {"tool": "negotiate", "args": {"opportunity_id": "o000", "discount_pct": 5}},
    "id_too_long": {"tool": "find_stakeholders", "args": {"opportunity_id": "o" * 41}},
    # oversized strings
    "call_1mb": MB,
    "body_1mb": {"tool": "send_message", "args": {"stakeholder_id": "o000s0", "subject": "hi", "body": MB}},
    "tool_name_1mb": {"tool": MB, "args": {}},
    "crm_value_1mb": {"tool": "update_crm", "args": {"opportunity_id": "o000", "stage": None,
                                                     "fields": [{"name": "n", "value": MB}], "next_step": None}},
    "json_call_with_1mb_body": json.dumps({"tool": "disqualify", "args": {"opportunity_id": "o000", "reason": MB}}),
    # nesting, huge numbers and objects that raise: refused before anything decodes, reads or prints them
    "deep_json_array_text": "[" * 1000 + "]" * 1000,
    "deep_json_in_args_text": '{"tool": "wait", "args": "' + "[" * 1000 + "]" * 1000 + '"}',
    "deep_json_object_text": '{"a":' * 1000 + "1" + "}" * 1000,
    "deep_list_argument": _wait(hours=functools.reduce(lambda a, _: [a], range(5000), [])),
    "int_of_5000_digits": _wait(hours=10**5000),
    "int_of_5000_digits_as_call_key": {"tool": "wait", 10**5000: 1},
    "argument_whose_repr_raises": _wait(hours=Boom()),
    "call_key_whose_repr_raises": {"tool": "wait", Boom(): 1},
    # names that are huge or hold control characters: the reason quotes a short, escaped excerpt
    "unknown_call_key_1mb": {"tool": "wait", "args": {"hours": 1, "until": None}, MB: 1},
    "unknown_argument_name_1mb": {"tool": "wait", "args": {MB: 1}},
    "unknown_argument_name_19k_as_json_text": json.dumps({"tool": "wait", "args": {"k" * 19_000: 1}}),
    "ansi_escape_in_an_id": {"tool": "view_opportunity", "args": {"opportunity_id": "\x1b[2J\x1b[31mx"}},
    # what the exported strict schema refuses, the parser refuses
    "bool_where_a_number_is_expected": {"tool": "send_proposal",
                                        "args": {"opportunity_id": "o000", "discount_pct": True}},
    "numeric_string_where_a_number_is_expected": _wait(hours="2"),
    "id_padded_past_max_length": {"tool": "view_opportunity", "args": {"opportunity_id": "o000" + " " * 100}},
    "bytes_as_a_string_argument": {"tool": "view_opportunity", "args": {"opportunity_id": b"o000"}},
    "both_tool_and_name": {"tool": "view_opportunity", "name": "disqualify", "args": {}},
    "both_args_and_arguments": {"tool": "wait", "args": {"hours": 1, "until": None},
                                "arguments": '{"hours": 80, "until": null}'},
}


# bad only in a fresh episode: a random valid call may make them valid (a proposal sent, a stakeholder found)
STATE_DEPENDENT = frozenset({"negotiate_before_proposal", "unfound_stakeholder", "unknown_booking", "unknown_meeting"})


def _new_events(env: TerritoryEnv, before: int) -> list[dict[str, Any]]:
    return env.event_log()[before:]


def assert_error_changed_nothing(env: TerritoryEnv, action: Any, before_len: int, before_digest: str,
                                 before_snapshot: dict[str, Any], obs: dict[str, Any], info: dict[str, Any],
                                 replay: bool = True) -> None:
    result = info["tool_result"]
    assert result["status"] == "error", result
    reason = result["output"]["error"]
    assert isinstance(reason, str) and reason.strip()
    assert len(json.dumps(result["output"])) <= 500  # never echoes a huge input
    assert reason.isprintable()  # nor control characters (an ANSI escape, a NUL) from it
    new = _new_events(env, before_len)
    assert [e["kind"] for e in new if e["kind"] != "episode_ended"] == ["invalid_action"]
    if len(new) == 2:  # only when this error reached the invalid-action ceiling
        assert new[1]["payload"]["truncated"] is True
    # one public event: the refusal (and the episode's end at the ceiling), numbered among public events only
    first = result["state_version"] - len(new)  # the refusal (and any end) are the only public events
    assert result["event_ids"] == [public_event_id(first + i) for i in range(len(new))]
    assert result["state_version"] == info["state_version"] == env.state_version
    assert result["time_cost"] == 0.0 and result["resource_cost"] == {}
    # the state differs only by the recorded event: replaying the log without it gives the old state
    if replay:
        assert env.replay(env.event_log()[:before_len]).digest() == before_digest
        assert env.replay().digest() == env._state.digest()
    after = env._state.snapshot()
    changed = {k for k in after if after[k] != before_snapshot[k]}
    assert changed <= {"seq", "public_seq", "invalid_actions", "truncated"}
    # the observation says so
    assert obs["data"]["last_result"]["status"] == "error"
    assert "Last: error" in obs["text"]
    assert len(obs["text"].encode()) < OBS_TEXT_LIMIT


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_call_is_an_error_with_a_reason_and_changes_nothing_else(name: str) -> None:
    env = _env()
    env.reset(seed=1)
    env.step(_wait(2))  # not at the very start
    action = BAD_CALLS[name]
    before_len, before_digest, snap = len(env.event_log()), env._state.digest(), env._state.snapshot()
    obs, reward, terminated, truncated, info = env.step(action)
    assert reward == 0.0
    assert not terminated and not truncated
    assert_error_changed_nothing(env, action, before_len, before_digest, snap, obs, info)
    json.dumps(env.event_log())  # the log stays plain JSON data
    env.event_log_hash()


@pytest.mark.parametrize("action", ['{"tool": "wait", "args": {"hours": 2, "until": null}}',
                                    b'{"tool": "wait", "args": {"hours": 2, "until": null}}',
                                    {"name": "wait", "arguments": '{"hours": 2, "until": null}'},
                                    {"type": "function", "id": "call_1", "name": "wait",
                                     "arguments": {"hours": 2, "until": None}}],
                         ids=["json_text", "json_bytes", "openai_style_string_args", "openai_style_dict_args"])
def test_the_accepted_call_spellings_all_work(action: Any) -> None:
    env = _env()
    env.reset(seed=1)
    _, _, _, _, info = env.step(action)
    assert info["tool_result"]["status"] == "ok"
    assert info["tool_result"]["output"] == {"waited": "hours"} and info["tool_result"]["time_cost"] == 2.0


def test_the_invalid_action_ceiling_truncates_the_episode() -> None:
    env = _env(invalid_action_limit=5)
    env.reset(seed=0)
    for i in range(5):
        _, _, terminated, truncated, info = env.step(None)
        assert info["tool_result"]["status"] == "error"
        assert truncated is (i == 4) and terminated is False
    assert env.score()["truncated"] is True and env.score()["invalid_actions"] == 5
    n = len(env.event_log())
    _, _, _, truncated, info = env.step(_wait())
    assert truncated and info["tool_result"]["status"] == "error"
    assert "reset" in info["tool_result"]["output"]["error"]
    assert len(env.event_log()) == n  # calls after the end change nothing at all


@pytest.mark.parametrize("action", [{"tool": "wait\ud800", "args": {}}, {"tool": "\udfff"}], ids=["high", "low"])
def test_lone_surrogates_in_a_tool_name_do_not_break_the_log(action: Any) -> None:
    env = _env()
    env.reset(seed=0)
    _, _, _, _, info = env.step(action)
    assert info["tool_result"]["status"] == "error"
    json.dumps(env.event_log())
    env.event_log_hash()
    assert env.replay().digest() == env._state.digest()


@pytest.mark.parametrize("payload", ["\ud800", "\udfff"])
def test_lone_surrogates_in_json_text_and_free_text_do_not_break_the_log(payload: str) -> None:
    env = _env()
    env.reset(seed=0)
    env.step({"tool": "update_crm", "args": {"opportunity_id": "o000", "stage": None,
                                             "fields": [{"name": "note", "value": "a" + payload}],
                                             "next_step": None}})
    env.step('{"tool": "wait\\ud800", "args": {}}')
    env.event_log_hash()
    assert env.replay().digest() == env._state.digest()


# --- hypothesis: random valid and invalid calls ------------------------------------------------------------------

JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=3), max_leaves=8)
SURELY_BAD = st.one_of(
    st.none(), st.integers(), st.floats(), st.booleans(), st.lists(JSONISH, max_size=3),
    st.text(max_size=40).filter(lambda t: not t.lstrip().startswith("{")),  # never a JSON object
    st.builds(lambda name, args: {"tool": name, "args": args},
              st.text(max_size=30).filter(lambda t: t not in TOOL_NAMES), st.dictionaries(st.text(max_size=8), JSONISH,
                                                                                         max_size=2)),
    st.builds(lambda tool, key: {"tool": tool, "args": {key: 1}}, st.sampled_from(TOOL_NAMES),
              st.text(min_size=1, max_size=10).filter(lambda k: k not in ("hours", "until", "opportunity_id"))),
    st.builds(lambda tool, extra: {"tool": tool, "args": {}, extra: True}, st.sampled_from(TOOL_NAMES),
              st.text(min_size=1, max_size=10).filter(lambda k: k not in ("tool", "name", "args", "arguments", "id",
                                                                          "type"))),
    st.builds(lambda oid: {"tool": "find_stakeholders", "args": {"opportunity_id": oid}},
              st.from_regex(r"\A(o9[0-9]{2}|a000|o00[4-9]|x)\Z")),
)
MAYBE_BAD = st.builds(lambda tool, args: {"tool": tool, "args": args}, st.sampled_from(TOOL_NAMES),
                      st.dictionaries(st.sampled_from(["opportunity_id", "hours", "until", "stakeholder_id", "body",
                                                       "subject", "discount_pct", "account_id", "booking_id"]),
                                      JSONISH, max_size=4))


class TerritoryCalls(RuleBasedStateMachine):
    """Random valid calls (a driver that knows existing ids) interleaved with invalid ones."""

    def __init__(self) -> None:
        super().__init__()
        self.env = _env(invalid_action_limit=30)
        self.version = -1
        self.last_action: Any = None

    @initialize(seed=st.integers(0, 3))
    def reset(self, seed: int) -> None:
        _, info = self.env.reset(seed=seed)
        self.version = self.version_before = info["state_version"]

    def _step(self, action: Any, must_fail: bool) -> None:
        env = self.env
        over = env._state.terminated or env._state.truncated
        before_len, snap = len(env.event_log()), env._state.snapshot()
        obs, reward, _terminated, _truncated, info = env.step(action)
        self.last_action = action
        result = info["tool_result"]
        assert isinstance(reward, float)
        assert result["state_version"] >= self.version
        self.version_before, self.version = self.version, result["state_version"]
        if over:
            assert result["status"] == "error" and len(env.event_log()) == before_len
            return
        if must_fail or result["status"] == "error":
            assert_error_changed_nothing(env, action, before_len, "", snap, obs, info, replay=False)
        else:
            assert result["state_version"] > self.version_before
            # compact, except the two detail views a model asks for on purpose (the portfolio, one deal in full)
            detail = "portfolio" in result["output"] or "opportunity" in result["output"]
            assert len(obs["text"].encode()) < OBS_TEXT_LIMIT or detail

    @rule(seed=st.integers(0, 2**32 - 1))
    def valid_call(self, seed: int) -> None:
        self._step(territory_random_action(self.env, random.Random(seed)), must_fail=False)

    @rule(action=SURELY_BAD)
    def invalid_call(self, action: Any) -> None:
        self._step(action, must_fail=True)

    @rule(name=st.sampled_from(sorted(set(BAD_CALLS) - STATE_DEPENDENT)))
    def known_bad_call(self, name: str) -> None:
        self._step(BAD_CALLS[name], must_fail=True)

    @rule(action=MAYBE_BAD)
    def maybe_invalid_call(self, action: Any) -> None:
        self._step(action, must_fail=False)

    @rule(as_text=st.booleans(), seed=st.integers(0, 2**32 - 1))
    def valid_call_as_json_text(self, as_text: bool, seed: int) -> None:
        action = territory_random_action(self.env, random.Random(seed))
        self._step(json.dumps(action) if as_text else action, must_fail=False)

    @precondition(lambda self: self.env._state.terminated or self.env._state.truncated)
    @rule(seed=st.integers(0, 3))
    def reset_when_over(self, seed: int) -> None:
        self.reset(seed)

    @invariant()
    def version_counts_the_events(self) -> None:
        if self.version >= 0:
            assert self.env._state.seq == len(self.env._log)
            public = self.env.family.public_events
            assert self.env.state_version == sum(e["kind"] in public for e in self.env.event_log())

    def teardown(self) -> None:
        if self.version >= 0:
            assert self.env.replay().digest() == self.env._state.digest()


TerritoryCalls.TestCase.settings = settings(max_examples=35, stateful_step_count=40, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
test_random_valid_and_invalid_calls_keep_the_invariants = TerritoryCalls.TestCase
