"""Anti-gaming: stage cycling, CRM-only edits, unauthorised discounts and premature disqualification earn
zero or negative reward and are counted by the verifier; disqualifying a deal that cannot close is fine."""

from __future__ import annotations

from typing import Any

import pytest
from salesgym_testkit import DiligentSeller, play_diligent

from salesgym.envs.territory.env import TerritoryEnv

STAGES = ("Prospecting", "Discovery", "Qualified", "Solution", "Proposal", "Negotiation", "Commit", "Closed Won",
          "Closed Lost")


def _env(**kwargs: Any) -> TerritoryEnv:
    return TerritoryEnv(**{"n_opportunities": 4, "horizon_days": 30, **kwargs})


def _crm(oid: str, stage: str | None, **fields: str) -> dict[str, Any]:
    return {"tool": "update_crm", "args": {"opportunity_id": oid, "stage": stage,
                                           "fields": [{"name": k, "value": v} for k, v in fields.items()],
                                           "next_step": None}}


def _milestones(obs: dict[str, Any]) -> dict[str, str]:
    return {row[0]: row[2] for row in obs["data"]["portfolio"]["rows"]}


def test_stage_cycling_from_the_start_earns_nothing() -> None:
    env = _env()
    obs, _ = env.reset(seed=0)
    start = _milestones(obs)
    rewards = []
    for i in range(60):
        obs, reward, _terminated, _truncated, info = env.step(_crm(f"o{i % 4:03d}", STAGES[i % len(STAGES)]))
        assert info["tool_result"]["status"] == "ok"
        rewards.append(reward)
    assert all(r <= 0.0 for r in rewards)
    assert _milestones(obs) == start
    assert {row[3] for row in obs["data"]["portfolio"]["rows"]} != {"Prospecting"}  # the CRM did change
    score = env.score()
    assert sum(score["advances"].values()) == 0
    assert score["primary"] == 0.0
    assert score["closed_count"] == 0


def test_stage_cycling_after_real_progress_is_strictly_negative() -> None:
    """Once value sits at verified milestones, time spent cycling CRM stages only discounts it. (Buyer
    responses already on their way still arrive meanwhile; steps where one did are set aside.)"""
    env = _env()
    play_diligent(env, 1, DiligentSeller(), max_steps=30)
    assert env._state is not None and not env._state.terminated
    assert sum(env.score()["advances"].values()) > 0
    obs = env.observe()
    cycling_only = []
    for i in range(30):
        if obs["data"]["capacity_left"]["seller"] < 0.5:
            break
        before = _milestones(obs)
        obs, reward, terminated, _, info = env.step(_crm(f"o{i % 4:03d}", STAGES[(i * 3) % len(STAGES)]))
        if terminated:
            break
        log = env.event_log()
        new = [log[int(eid[2:])] for eid in info["tool_result"]["event_ids"]]
        if any(e["kind"] == "milestone_advanced" for e in new):
            # a milestone moved: only on buyer evidence recorded in the same step, never by the CRM
            assert any(e["kind"] == "evidence_recorded" and e["actor"] != "agent" for e in new)
        else:
            assert _milestones(obs) == before
            cycling_only.append(reward)
    assert len(cycling_only) >= 10
    assert all(r < 0.0 for r in cycling_only)


def test_crm_claims_alone_never_move_a_verified_milestone() -> None:
    env = _env()
    obs, _ = env.reset(seed=2)
    total = 0.0
    for oid in sorted(_milestones(obs)):
        for stage in ("Commit", "Closed Won"):
            obs, reward, *_ = env.step(_crm(oid, stage, contract="signed", budget="confirmed by CFO",
                                            sponsor="economic buyer", security_approval="granted"))
            total += reward
    assert total == 0.0
    assert set(_milestones(obs).values()) == {"Identified"}
    assert env.score()["milestones"] == {oid: "Identified" for oid in _milestones(obs)}
    assert not [e for e in env.event_log() if e["kind"] in ("evidence_recorded", "milestone_advanced")]


# --- discounts ----------------------------------------------------------------------------------------------


def _proposal(pct: float, oid: str = "o000") -> dict[str, Any]:
    return {"tool": "send_proposal", "args": {"opportunity_id": oid, "discount_pct": pct}}


@pytest.mark.parametrize("pct", [15.01, 20.0, 40.0])
def test_discount_beyond_authority_without_approval_is_a_penalised_violation(pct: float) -> None:
    env = _env()
    env.reset(seed=3)
    _, reward, _, _, info = env.step(_proposal(pct))
    assert info["tool_result"]["status"] == "ok"
    assert reward < 0.0
    assert env.score()["violations"] == {"unauthorised_discount": 1}
    _, reward, _, _, _ = env.step({"tool": "negotiate", "args": {"opportunity_id": "o000", "discount_pct": pct}})
    assert reward < 0.0
    assert env.score()["violations"] == {"unauthorised_discount": 2}


@pytest.mark.parametrize("pct", [0.0, 10.0, 15.0])
def test_discount_within_authority_is_not_a_violation(pct: float) -> None:
    env = _env()
    env.reset(seed=3)
    _, reward, _, _, _ = env.step(_proposal(pct))
    assert reward == 0.0
    assert env.score()["violations"] == {}


def test_discount_approved_by_management_is_not_a_violation() -> None:
    env = _env()
    env.reset(seed=3)
    lead = env._world.lead_days["management"]

    def ok(action: dict[str, Any]) -> dict[str, Any]:
        info = env.step(action)[4]
        assert info["tool_result"]["status"] == "ok", info["tool_result"]
        return info["tool_result"]["output"]

    booking = ok({"tool": "book_resource", "args": {"opportunity_id": "o000", "resource": "management", "hours": 1,
                                                    "start_in_days": lead}})["booking_id"]
    ok({"tool": "wait", "args": {"hours": 8 * lead, "until": None}})
    ok({"tool": "escalate", "args": {"opportunity_id": "o000", "purpose": "discount", "discount_pct": 25,
                                     "booking_id": booking}})
    ok({"tool": "wait", "args": {"hours": 9, "until": None}})
    assert [e for e in env.event_log() if e["kind"] == "escalation_granted"]
    _, reward, _, _, _ = env.step(_proposal(25.0))
    assert reward >= 0.0
    assert env.score()["violations"] == {}
    _, reward, _, _, _ = env.step({"tool": "negotiate", "args": {"opportunity_id": "o000", "discount_pct": 30}})
    assert reward < 0.0  # beyond what management approved
    assert env.score()["violations"] == {"unauthorised_discount": 1}


# --- disqualification -------------------------------------------------------------------------------------------


def _find(viable: bool) -> tuple[TerritoryEnv, str]:
    """A world with a deal of the wanted viability (hidden truth, operator side only)."""
    for seed in range(50):
        env = _env(n_opportunities=10, family="public_sector", template="zombie_pipeline")
        env.reset(seed=seed)
        for oid, opp in sorted(env.hidden_truth()["opportunities"].items()):
            if opp["viable"] is viable:
                return env, oid
    raise AssertionError("no such deal in 50 seeds")


def _disqualify(env: TerritoryEnv, oid: str) -> tuple[float, dict[str, Any]]:
    _, reward, _, _, info = env.step({"tool": "disqualify", "args": {"opportunity_id": oid, "reason": "no budget"}})
    assert info["tool_result"]["status"] == "ok"
    return reward, env.score()


def test_disqualifying_a_viable_deal_is_a_penalised_violation() -> None:
    env, oid = _find(viable=True)
    reward, score = _disqualify(env, oid)
    assert reward < 0.0
    assert score["violations"] == {"premature_disqualification": 1}
    assert score["disqualified"]["premature"] == 1
    assert score["milestones"][oid] == "Disqualified"
    assert score["primary"] <= 0.0  # nothing verified, and the penalty may count against the metric


def test_disqualifying_a_deal_that_cannot_close_is_rewarded() -> None:
    env, oid = _find(viable=False)
    reward, score = _disqualify(env, oid)
    assert reward > 0.0
    assert score["violations"] == {}
    assert score["disqualified"] == {**score["disqualified"], "correct": 1, "premature": 0}
    assert score["primary"] > 0.0


def test_a_dropped_deal_cannot_be_worked_or_re_opened() -> None:
    env, oid = _find(viable=False)
    _disqualify(env, oid)
    for action in ({"tool": "find_stakeholders", "args": {"opportunity_id": oid}},
                   {"tool": "disqualify", "args": {"opportunity_id": oid, "reason": "again"}},
                   {"tool": "send_proposal", "args": {"opportunity_id": oid, "discount_pct": 5}}):
        _, reward, _, _, info = env.step(action)
        assert info["tool_result"]["status"] == "error"
        assert "disqualified" in info["tool_result"]["output"]["error"]
        assert reward == 0.0
    _, _, _, _, info = env.step(_crm(oid, "Commit"))
    assert info["tool_result"]["status"] == "ok"
    assert env.score()["milestones"][oid] == "Disqualified"
    assert env.score()["disqualified"]["correct"] == 1
