"""Memoised parts of the observation (the shared portfolio rows, remembered text) never go stale or leak
between an environment and its clones."""

from __future__ import annotations

import json
from typing import Any

import salesgym
from salesgym.core.observation_text import json_text as _compact_json


def _row(obs: dict[str, Any], oid: str) -> tuple[Any, ...]:
    return next(tuple(r) for r in obs["data"]["portfolio"]["rows"] if r[0] == oid)


def _crm(stage: str) -> dict[str, Any]:
    return {"tool": "update_crm", "args": {"opportunity_id": "o001", "stage": stage, "fields": [], "next_step": None}}


def test_portfolio_rows_show_a_change_on_the_step_that_made_it() -> None:
    env = salesgym.make("territory-v0", n_opportunities=5, horizon_days=30)
    obs, _ = env.reset(seed=4)
    assert _row(obs, "o001")[3] == "Prospecting"
    obs, *_ = env.step(_crm("Proposal"))
    assert _row(obs, "o001")[3] == "Proposal"
    obs, *_ = env.step({"tool": "wait", "args": {"hours": 1.0, "until": None}})
    assert _row(obs, "o001")[3] == "Proposal"


def test_a_clone_changing_a_row_leaves_the_original_view_alone() -> None:
    env = salesgym.make("territory-v0", n_opportunities=5, horizon_days=30)
    env.reset(seed=4)
    env.step({"tool": "view_opportunity", "args": {}})  # the shared rows are built
    twin = env.clone()
    twin_obs, *_ = twin.step(_crm("Negotiation"))
    obs, *_ = env.step({"tool": "wait", "args": {"hours": 1.0, "until": None}})
    assert _row(twin_obs, "o001")[3] == "Negotiation"
    assert _row(obs, "o001")[3] == "Prospecting"
    assert env.replay().digest() == env._state.digest()
    assert twin.replay().digest() == twin._state.digest()


def test_observation_text_is_the_same_after_other_episodes_ran() -> None:
    # the text memos are process-wide; a fresh run and a run after other territories must read the same
    def texts(seed: int) -> list[str]:
        env = salesgym.make("territory-v0", n_opportunities=5, horizon_days=30)
        env.reset(seed=seed)
        out = []
        for hours in (1.0, 8.0, 40.0, 2.5):
            obs, *_ = env.step({"tool": "wait", "args": {"hours": hours, "until": None}})
            out.append(obs["text"])
        return out

    first = texts(9)
    for other in (1, 2, 3):
        texts(other)
    assert texts(9) == first


def test_output_json_falls_back_where_orjson_refuses() -> None:
    # tool arguments cannot carry lone surrogates (pydantic refuses them), so no output holds one today;
    # the encoder still must not raise if one ever does
    value = {"note": "call back \udc80 Friday", "n": [1, 2.5, None]}
    assert _compact_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert _compact_json({"a": "plain", "b": [1, 2.5]}) == '{"a":"plain","b":[1,2.5]}'


def _ok(env: Any, tool: str, **args: Any) -> dict[str, Any]:
    info = env.step({"tool": tool, "args": args})[4]
    assert info["tool_result"]["status"] == "ok", info["tool_result"]
    return dict(info["tool_result"]["output"])


def test_crm_records_keep_a_bounded_number_of_fields() -> None:
    """A CRM record keeps at most MAX_CRM_FIELDS fields: rewriting them is fine, the next new one is refused,
    so 500 updates cannot grow the deal's view."""
    from salesgym.envs.territory.contract import MAX_CRM_FIELDS

    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=90)
    env.reset(seed=1)
    fields = [{"name": f"f{i:02d}", "value": "x" * 500} for i in range(MAX_CRM_FIELDS)]
    _ok(env, "update_crm", opportunity_id="o001", stage=None, fields=fields, next_step="n" * 500)
    size = len(json.dumps(_ok(env, "view_opportunity", opportunity_id="o001", page=0)))
    refused = env.step({"tool": "update_crm", "args": {"opportunity_id": "o001", "stage": None, "next_step": None,
                                                        "fields": [{"name": "one_more", "value": "y"}]}})[4]
    assert refused["tool_result"]["status"] == "error" and "at most" in refused["tool_result"]["output"]["error"]
    for i in range(500):
        if env.observe()["data"]["capacity_left"]["seller"] < 0.2:
            env.step({"tool": "wait", "args": {"hours": None, "until": "next_week"}})
        field = {"name": f"f{i % MAX_CRM_FIELDS:02d}", "value": "z" * 500}
        env.step({"tool": "update_crm", "args": {"opportunity_id": "o001", "stage": None, "next_step": None,
                                                  "fields": [field]}})
    assert len(json.dumps(_ok(env, "view_opportunity", opportunity_id="o001", page=0))) <= size


def test_a_deals_view_pages_its_meetings_and_says_how_many_more() -> None:
    """Hundreds of meetings on one deal: the view shows a page (newest first), says how many there are and how
    to page, and every page stays small."""
    from salesgym.envs.territory.contract import VIEW_PAGE

    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=90)
    env.reset(seed=1)
    people = [p["id"] for p in _ok(env, "find_stakeholders", opportunity_id="o002")["stakeholders"]]
    made: list[str] = []
    while len(made) < 150:
        if env.observe()["data"]["capacity_left"]["seller"] < 0.6:
            env.step({"tool": "wait", "args": {"hours": None, "until": "next_week"}})
            continue
        out = _ok(env, "schedule_meeting", opportunity_id="o002", stakeholder_ids=people[:1], agenda="a", in_days=5)
        made.append(out["meeting_id"])
    first = _ok(env, "view_opportunity", opportunity_id="o002", page=0)
    assert [m["id"] for m in first["meetings"]] == made[::-1][:VIEW_PAGE]
    assert first["more"]["meetings"] == {"page": 0, "pages": 15, "total": 150}
    second = _ok(env, "view_opportunity", opportunity_id="o002", page=1)
    assert [m["id"] for m in second["meetings"]] == made[::-1][VIEW_PAGE : 2 * VIEW_PAGE]
    assert len(json.dumps(first)) < 8000 and len(env.observe()["text"]) < 9000
