"""The step's shared parts: the result dict built in one go, public ids from one shared list, the parser's
fast path for the plain call, and ``emit``'s copy (made unless the payload is handed over)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.core.test_tools import BOX, GOOD

import salesgym
from salesgym.core import env as core_env
from salesgym.core.env import public_event_id, public_event_ids
from salesgym.core.tools import ToolError, ToolResult, result_dict


def test_result_dict_is_the_tool_results_dict() -> None:
    resources, output = {"seller": 0.25}, {"a": 1}
    made = result_dict("ok", 12, 0.25, resources, ["e000010", "e000011"], output)
    assert made == {"status": "ok", "state_version": 12, "time_cost": 0.25, "resource_cost": {"seller": 0.25},
                    "event_ids": ["e000010", "e000011"], "output": {"a": 1}}  # fmt: skip
    assert made == ToolResult("ok", 12, 0.25, resources, ("e000010", "e000011"), output).to_dict()
    assert made["resource_cost"] is not resources and made["output"] is not output  # the caller's are not shared


def test_public_event_ids_are_the_formatted_ids_and_fresh_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    for first, end in ((0, 0), (0, 3), (5, 9), (998, 1003), (17, 17)):
        ids = public_event_ids(first, end)
        assert ids == [public_event_id(i) for i in range(first, end)]
        ids.append("x")  # a caller's list is its own
        assert public_event_ids(first, end) == [public_event_id(i) for i in range(first, end)]
    monkeypatch.setattr(core_env, "PUBLIC_IDS_KEPT", 10)
    kept = len(core_env._PUBLIC_IDS)
    assert public_event_ids(kept + 5, kept + 20) == [public_event_id(i) for i in range(kept + 5, kept + 20)]
    assert len(core_env._PUBLIC_IDS) == kept  # past the bound nothing more is kept


@pytest.mark.parametrize("action", [
    {"tool": "echo", "args": GOOD},
    {"tool": "echo", "args": {**GOOD, "times": 5}},  # invalid arguments: the same refusal
    {"tool": "nope", "args": GOOD},
    {"tool": "echo", "args": json.dumps(GOOD)},
    {"tool": "echo", "args": None},
    {"tool": 3, "args": GOOD},
    {"args": GOOD, "tool": "echo"},
])  # fmt: skip
def test_the_plain_call_parses_as_the_general_path_does(action: dict[str, Any]) -> None:
    def outcome(call: object) -> object:
        try:
            spec, args = BOX.parse(call)
        except ToolError as err:
            return ("error", err.reason)
        return (spec.name, args.model_dump())

    general = {**action, "type": "function"}  # an extra allowed key takes the general path
    assert outcome(action) == outcome(general) == outcome(json.dumps(action))


def test_emit_copies_the_payload_unless_it_is_handed_over() -> None:
    env = salesgym.make("desk-v0", n_leads=3, shift_days=1)
    env.reset(seed=1)
    ctx = env._ctx()
    kept = {"lead_id": "L000", "note": "hi"}
    copied = ctx.emit("note_added", "agent", kept)
    assert copied.payload == kept and copied.payload is not kept
    handed = {"lead_id": "L000", "note": "again"}
    assert ctx.emit("note_added", "agent", handed, owned=True).payload is handed
