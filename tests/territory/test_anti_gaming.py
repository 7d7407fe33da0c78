"""Anti-gaming: stage cycling and CRM-only edits earn nothing, unauthorised discounts are penalised and
counted, management approvals depend on the deal, the score sees price, and dropping a deal earns credit only
on the buyer's own reason while never being punished (it costs only what the deal could still earn)."""

from __future__ import annotations

from typing import Any

import pytest
from salesgym_testkit import DiligentSeller, play_diligent

from salesgym.core.events import Event, EventLog
from salesgym.envs.territory import verifier
from salesgym.envs.territory.env import TerritoryEnv
from salesgym.envs.territory.evidence import EvidenceType as E
from salesgym.envs.territory.milestones import APPROVAL_EVIDENCE, AUTHORITY_MIN

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


def test_crm_steps_after_real_progress_pay_exactly_nothing() -> None:
    """Once value sits at verified milestones, CRM edits pay exactly zero and move no milestone (steps where
    a buyer's answer already on its way arrived meanwhile are set aside: that reward is the buyer's)."""
    env = _env()
    play_diligent(env, 1, DiligentSeller(), max_steps=30)
    assert env._state is not None and not env._state.terminated
    assert sum(env.score()["advances"].values()) > 0
    obs = env.observe()
    cycling_only = []
    for i in range(30):
        if obs["data"]["capacity_left"]["seller"] < 0.5:
            break
        before, n = _milestones(obs), len(env.event_log())
        obs, reward, terminated, _, _ = env.step(_crm(f"o{i % 4:03d}", STAGES[(i * 3) % len(STAGES)]))
        if terminated:
            break
        new = env.event_log()[n:]
        if any(e["kind"] == "milestone_advanced" for e in new):
            # a milestone moved: only on buyer evidence recorded in the same step, never by the CRM
            assert any(e["kind"] == "evidence_recorded" and e["actor"] != "agent" for e in new)
        else:
            assert _milestones(obs) == before
            cycling_only.append(reward)
    assert len(cycling_only) >= 10
    assert all(r == 0.0 for r in cycling_only)


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
    assert env.score()["primary"] < 0.0
    assert env.observe()["data"]["inbox"][-1]["kind"] == "violation"  # the seller is told
    _, reward, _, _, _ = env.step({"tool": "negotiate", "args": {"opportunity_id": "o000", "discount_pct": pct}})
    assert reward < 0.0
    assert env.score()["violations"] == {"unauthorised_discount": 2}


@pytest.mark.parametrize("pct", [0.0, 10.0, 15.0])
def test_discount_within_authority_is_not_a_violation(pct: float) -> None:
    env = _env()
    env.reset(seed=3)
    env.step(_proposal(pct))
    assert env.score()["violations"] == {}
    assert not [e for e in env.event_log() if e["kind"] == "violation_recorded"]


def _escalate(env: TerritoryEnv, pct: float, oid: str = "o000") -> dict[str, Any]:
    """Book management with its lead time, ask for ``pct`` and wait for the answer; returns the inbox item."""
    lead = env._world.lead_days["management"]

    def ok(action: dict[str, Any]) -> dict[str, Any]:
        info = env.step(action)[4]
        assert info["tool_result"]["status"] == "ok", info["tool_result"]
        return dict(info["tool_result"]["output"])

    booking = ok({"tool": "book_resource", "args": {"opportunity_id": oid, "resource": "management", "hours": 1,
                                                    "start_in_days": lead, "cancel_booking_id": None}})["booking_id"]
    ok({"tool": "wait", "args": {"hours": 8 * lead, "until": None}})
    ok({"tool": "escalate", "args": {"opportunity_id": oid, "purpose": "discount", "discount_pct": pct,
                                     "booking_id": booking}})
    obs = env.step({"tool": "wait", "args": {"hours": 9, "until": None}})[0]
    return next(i for i in obs["data"]["inbox"] if i["kind"] == "escalation")


def test_discount_approved_by_management_is_not_a_violation() -> None:
    env = _env()
    env.reset(seed=3)
    answer = _escalate(env, 20)
    assert answer["decision"] == "approved" and answer["discount_pct"] == 20.0
    env.step(_proposal(20.0))
    assert env.score()["violations"] == {}
    _, reward, _, _, _ = env.step({"tool": "negotiate", "args": {"opportunity_id": "o000", "discount_pct": 25}})
    assert reward < 0.0  # beyond what management approved
    assert env.score()["violations"] == {"unauthorised_discount": 1}


def test_management_weighs_the_deal_before_approving_a_deep_discount() -> None:
    """A deep discount on a deal nobody has verified is refused; the same request passes once the deal is
    verified, has a business case that addresses the buyer's pains and is under competitive pressure."""
    env = _env()
    env.reset(seed=3)
    assert _escalate(env, 35)["decision"] == "refused"
    assert not [e for e in env.event_log() if e["kind"] == "escalation_granted"]
    fresh = _env()
    fresh.reset(seed=3)
    s = fresh._state
    s.deals["o000"] = s.deals["o000"]._replace(milestone=3, business_case=0.5, pressure=0.03)  # operator side
    assert _escalate(fresh, 35)["decision"] == "approved"


def _scored_with(env: TerritoryEnv, oid: str, discount: float) -> dict[str, Any]:
    """The score of a log in which the deal's economic buyer signed every milestone's evidence, Commit and
    Closed on terms at ``discount`` (evidence signed operator-side, as the buyers would have)."""
    opp, w = env._world.opportunities[oid], env._world
    signer = next(sid for sid in opp.stakeholder_ids if w.stakeholders[sid].authority >= AUTHORITY_MIN)
    kinds = [(E.BUYER_REPLY, {}), (E.BUDGET_CONFIRMATION, {}), (E.AUTHORISED_SPONSOR, {}), (E.TECHNICAL_SUCCESS, {}),
             (E.MUTUAL_ACTION_PLAN, {}), *((APPROVAL_EVIDENCE[a], {}) for a in opp.required_approvals),
             (E.PROCUREMENT_APPROVAL, {"final_terms": True, "discount": discount}),
             (E.CONTRACT_SIGNATURE, {"discount": discount})]
    log = EventLog()
    log.append(next(iter(env._log)))
    for i, (kind, claim) in enumerate(kinds, start=1):
        ev = env._verifier.issue(f"evd{i}", kind, oid, signer, float(i), claim)
        log.append(Event(i, float(i), "evidence_recorded", signer, {"evidence": ev.to_dict()}, "test"))
    return verifier.score(w, log, env._verifier)


def test_the_primary_sees_price_a_deeper_discount_on_the_same_progress_scores_less() -> None:
    env = _env()
    env.reset(seed=3)
    oid = next(o for o, opp in sorted(env._world.opportunities.items()) if opp.viable)
    scores = [_scored_with(env, oid, d) for d in (0.0, 0.1, 0.3)]
    assert {s["milestones"][oid] for s in scores} == {"Closed"}  # the same progress each time
    primaries = [s["primary"] for s in scores]
    assert primaries[0] > primaries[1] > primaries[2] > 0
    assert [s["closed_value"] for s in scores] == sorted((s["closed_value"] for s in scores), reverse=True)
    assert scores[2]["mean_discount"] == 0.3


# --- disqualification -------------------------------------------------------------------------------------------


def _find(viable: bool, dead: bool = False) -> tuple[TerritoryEnv, str]:
    """A world with a deal of the wanted viability (hidden truth, operator side only); ``dead``: viable but its
    decision deadline has passed by the time the clock is moved past it."""
    for seed in range(50):
        env = _env(n_opportunities=10, family="public_sector", template="zombie_pipeline")
        env.reset(seed=seed)
        for oid, opp in sorted(env.hidden_truth()["opportunities"].items()):
            if opp["viable"] is viable and (not dead or opp["deadline_day"] < 18):
                return env, oid
    raise AssertionError("no such deal in 50 seeds")


def _disqualify(env: TerritoryEnv, oid: str) -> tuple[float, dict[str, Any]]:
    _, reward, _, _, info = env.step({"tool": "disqualify", "args": {"opportunity_id": oid, "reason": "no budget"}})
    assert info["tool_result"]["status"] == "ok"
    return reward, env.score()


def test_dropping_a_viable_deal_earns_nothing_and_costs_only_the_deal() -> None:
    env, oid = _find(viable=True)
    reward, score = _disqualify(env, oid)
    assert reward == 0.0
    assert score["violations"] == {} and score["primary"] == 0.0
    assert score["disqualified"]["still_closable"] == 1 and score["disqualified"]["backed"] == 0
    assert score["milestones"][oid] == "Disqualified"


def test_dropping_a_dead_deal_after_its_deadline_is_not_punished() -> None:
    env, oid = _find(viable=True, dead=True)
    deadline = env.hidden_truth()["opportunities"][oid]["deadline_day"]
    while env._state.now < (deadline + 1) * 8:
        env.step({"tool": "wait", "args": {"hours": 40, "until": None}})
    reward, score = _disqualify(env, oid)
    assert reward == 0.0 and score["penalties"] == 0.0 and score["violations"] == {}
    assert score["disqualified"]["still_closable"] == 0


def test_dropping_without_the_buyers_reason_earns_no_credit_even_if_the_deal_is_dead() -> None:
    """Credit needs the buyer's own reason on record: blanket drops (or drops guessed from hidden truth) earn
    nothing, so dropping every deal scores what doing nothing scores."""
    env, oid = _find(viable=False)
    reward, score = _disqualify(env, oid)
    assert reward == 0.0 and score["primary"] == 0.0 and score["disqualification_credit"] == 0.0
    for other in sorted(env._world.opportunities):
        if other != oid:
            _disqualify(env, other)
    assert env.score()["primary"] == 0.0


def _play_to_a_buyer_reason() -> tuple[TerritoryEnv, str]:
    """A diligent seller until some buyer gives a disqualification reason in discovery."""
    for seed in range(20):
        env = _env(n_opportunities=10, family="public_sector", template="zombie_pipeline")
        seller = DiligentSeller()
        env.reset(seed=seed)
        for _ in range(400):
            reasons = [e["payload"]["evidence"]["subject"] for e in env.event_log() if e["kind"] == "evidence_recorded"
                       and e["payload"]["evidence"]["type"] == "disqualification_reason"]
            open_ones = [o for o in reasons if env._state.deals[o].status == "open"]
            if open_ones:
                return env, open_ones[0]
            _, _, terminated, truncated, _ = env.step(seller.act(env))
            if terminated or truncated:
                break
    raise AssertionError("no buyer gave a disqualification reason in 20 seeds")


def test_dropping_a_deal_on_the_buyers_reason_earns_credit_in_reward_and_score() -> None:
    env, oid = _play_to_a_buyer_reason()
    before = env.score()
    reward, after = _disqualify(env, oid)
    assert reward > 0.0
    assert after["disqualification_credit"] > before["disqualification_credit"]
    assert after["primary"] > before["primary"]
    assert after["disqualified"]["backed"] == before["disqualified"]["backed"] + 1


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
