"""Forgery: nothing the seller writes creates evidence, and tampered evidence in a log counts for nothing.

Each comparison runs the same scripted seller twice on the same world, once writing neutral text and once
writing claims of signatures, approvals and budgets into every free-text field it has, and checks the
verified outcome (milestones, advances, primary metric, the evidence ledger) is identical.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from salesgym_testkit import Action, DiligentSeller, Rollout, play_diligent

from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Evidence
from salesgym.envs.territory import verifier
from salesgym.envs.territory.env import TerritoryEnv
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.families import get_family

FAMILY, TEMPLATE = "midmarket_saas", "standard"
FORGED = ("CONTRACT SIGNED by the CFO today. Budget confirmed and released; the economic buyer approved the "
          "purchase and will sponsor it. Security approval, legal approval and procurement approval granted, "
          "final terms accepted. evidence: contract_signature verified_by verifier:v1 proof_ref 3f2a9c0d1e")
NEUTRAL = "Following up on our conversation."
FORGED_CALLS: tuple[Any, ...] = (
    {"tool": "update_crm", "args": {"opportunity_id": "o000", "stage": "Closed Won", "fields": [], "next_step": None},
     "evidence": {"type": "contract_signature", "subject": "o000", "source_actor": "o000s0"}},
    {"tool": "send_contract", "args": {"opportunity_id": "o000",
                                       "evidence": [{"type": "contract_signature", "proof_ref": "00" * 16}]}},
    '{"tool": "disqualify", "args": {"opportunity_id": "o001", "reason": "x"}, "proof_ref": "abc"}',
)
PLAIN_INVALID: tuple[Any, ...] = ({"tool": "no_such_tool", "args": {}},) * len(FORGED_CALLS)


def _env() -> TerritoryEnv:
    return TerritoryEnv(n_opportunities=4, horizon_days=30, family=FAMILY, template=TEMPLATE)


def _injector(calls: tuple[Any, ...], at: tuple[int, ...] = (3, 9, 15),
              dq: tuple[int, str] | None = None) -> Callable[[TerritoryEnv, int], Action | None]:
    def extra(env: TerritoryEnv, step: int) -> Action | None:
        if step in at:
            return calls[at.index(step)]  # type: ignore[no-any-return]
        if dq is not None and step == dq[0]:
            return {"tool": "disqualify", "args": {"opportunity_id": "o003", "reason": dq[1]}}
        return None

    return extra


def _verified(env: TerritoryEnv) -> dict[str, Any]:
    score = env.score()
    ledger = [(e["payload"]["evidence"]["type"], e["payload"]["evidence"]["subject"],
               e["payload"]["evidence"]["source_actor"], e["time"])
              for e in env.event_log() if e["kind"] == "evidence_recorded"]
    advanced = [(e["payload"]["opportunity_id"], e["payload"]["to"], e["time"])
                for e in env.event_log() if e["kind"] == "milestone_advanced"]
    return {"advances": score["advances"], "primary": score["primary"], "milestones": score["milestones"],
            "closed_value": score["closed_value"], "evidence_rejected": score["evidence_rejected"],
            "ledger": ledger, "advanced": advanced}


def _pair(seed: int, forged_text: str, *, dq_step: int = 30) -> tuple[TerritoryEnv, Rollout, TerritoryEnv, Rollout]:
    honest, forged = _env(), _env()
    a = play_diligent(honest, seed, DiligentSeller(lambda kind, oid: NEUTRAL),
                      extra=_injector(PLAIN_INVALID, dq=(dq_step, NEUTRAL)))
    b = play_diligent(forged, seed, DiligentSeller(lambda kind, oid: forged_text),
                      extra=_injector(FORGED_CALLS, dq=(dq_step, forged_text[:500])))
    return honest, a, forged, b


def test_forged_text_references_no_pain_keyword() -> None:
    """Precondition: the forged text must not be *relevant* outreach, or it could legitimately help."""
    keywords = {kw for p in get_family(FAMILY).pains for kw in p.keywords}
    assert not [kw for kw in keywords if kw in FORGED.lower()]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_claims_written_anywhere_move_no_milestone(seed: int) -> None:
    honest, a, forged, b = _pair(seed, FORGED)
    assert len(a.steps) == len(b.steps) > 20
    # the forged run really wrote the claims everywhere and the crafted calls were refused
    written = {s.action["tool"] for s in b.steps if isinstance(s.action, dict) and FORGED in str(s.action)}
    assert {"send_message", "schedule_meeting", "build_business_case", "update_crm"} <= written
    assert any(isinstance(s.action, dict) and s.action["tool"] == "disqualify"
               and "SIGNED" in s.action["args"]["reason"] for s in b.steps)
    for step in b.steps:
        if step.action in FORGED_CALLS:
            assert step.info["tool_result"]["status"] == "error"
    assert _verified(forged) == _verified(honest)
    assert forged.score()["advances"]["Engaged"] > 0  # the episode got far enough for the comparison to bite
    assert a.rewards == b.rewards


def test_crafted_evidence_fields_are_rejected_as_bad_input() -> None:
    env = _env()
    env.reset(seed=0)
    before = env.score()
    for call in FORGED_CALLS:
        _obs, reward, _, _, info = env.step(call)
        result = info["tool_result"]
        assert result["status"] == "error"
        assert any(word in result["output"]["error"] for word in ("unknown keys", "unknown field"))
        assert reward == 0.0
    after = env.score()
    assert after["invalid_actions"] == len(FORGED_CALLS)
    assert {k: v for k, v in after.items() if k != "invalid_actions"} == \
        {k: v for k, v in before.items() if k != "invalid_actions"}


def test_crm_fields_have_no_influence_on_the_verifier_score() -> None:
    """Two episodes identical except what the CRM says (same calls, same costs) score identically."""

    def crm_calls(content: bool) -> Callable[[TerritoryEnv, int], Action | None]:
        def extra(env: TerritoryEnv, step: int) -> Action | None:
            if step % 4 != 1:
                return None
            oid = f"o{(step // 4) % 4:03d}"
            fields = [{"name": "signature", "value": "signed by CFO"}, {"name": "budget", "value": "approved"},
                      {"name": "legal_approval", "value": "granted"}] if content else []
            return {"tool": "update_crm", "args": {"opportunity_id": oid, "stage": "Closed Won" if content else None,
                                                   "fields": fields, "next_step": "book kickoff" if content else None}}

        return extra

    plain, edited = _env(), _env()
    a = play_diligent(plain, 4, DiligentSeller(crm_fields=False), extra=crm_calls(False))
    b = play_diligent(edited, 4, DiligentSeller(crm_fields=False), extra=crm_calls(True))
    # the CRM really differs, and the seller sees its own CRM stage in the portfolio
    assert edited._state.crm != plain._state.crm
    stages = {row[3] for row in b.steps[-1].obs["data"]["portfolio"]["rows"]}
    assert "Closed Won" in stages
    assert plain.score()["advances"]["Engaged"] > 0
    assert edited.score() == plain.score()
    assert _verified(edited) == _verified(plain)
    assert a.rewards == b.rewards


# --- tampered logs ----------------------------------------------------------------------------------------------


def _played() -> TerritoryEnv:
    env = _env()
    play_diligent(env, 1, DiligentSeller())
    assert env.score()["advances"]["Engaged"] > 0
    return env


def _rescore(env: TerritoryEnv, events: list[Event]) -> dict[str, Any]:
    log = EventLog()
    for e in events:
        log.append(e)
    assert env._verifier is not None and env._world is not None
    return {**verifier.score(env._world, log, env._verifier), "verifier_key": env._key_kind}


def _events(env: TerritoryEnv) -> list[Event]:
    return list(env._log)


def _with_evidence(e: Event, **changes: Any) -> Event:
    evidence = {**e.payload["evidence"], **changes}
    return e._replace(payload={**e.payload, "evidence": evidence})


def test_rescoring_the_untouched_log_reproduces_the_score() -> None:
    env = _played()
    assert _rescore(env, _events(env)) == env.score()
    assert env.score()["evidence_rejected"] == 0


@pytest.mark.parametrize("tamper", ["claim", "type", "subject", "timestamp", "source_actor", "proof_swap"])
def test_altered_evidence_is_rejected(tamper: str) -> None:
    env = _played()
    events = _events(env)
    idx = [i for i, e in enumerate(events) if e.kind == "evidence_recorded"]
    assert len(idx) >= 2
    first, other = events[idx[0]], events[idx[1]]
    ev = first.payload["evidence"]
    opp = env._world.opportunities[ev["subject"]]
    change: dict[str, Any] = {
        "claim": {"claim": {**ev["claim"], "statement": "contract signed"}},
        "type": {"type": "contract_signature"},
        "subject": {"subject": "o003" if ev["subject"] != "o003" else "o002"},
        "timestamp": {"timestamp": ev["timestamp"] - 1.0},
        "source_actor": {"source_actor": next(s for s in opp.stakeholder_ids if s != ev["source_actor"])},
        "proof_swap": {"proof_ref": other.payload["evidence"]["proof_ref"]},
    }[tamper]
    events[idx[0]] = _with_evidence(first, **change)
    assert _rescore(env, events)["evidence_rejected"] == 1


def test_every_evidence_record_altered_means_no_verified_milestone() -> None:
    env = _played()
    events = [_with_evidence(e, claim={"statement": "forged"}) if e.kind == "evidence_recorded" else e
              for e in _events(env)]
    score = _rescore(env, events)
    n = sum(1 for e in events if e.kind == "evidence_recorded")
    assert score["evidence_rejected"] == n > 0
    assert sum(score["advances"].values()) == 0
    assert set(score["milestones"].values()) <= {"Identified", "Disqualified"}


def test_injected_evidence_is_rejected_and_moves_nothing() -> None:
    env = _played()
    events = _events(env)
    honest = _rescore(env, events)
    last = events[-1]
    world = env._world
    opp = world.opportunities["o000"]
    signer = opp.stakeholder_ids[0]
    forged_types = [EvidenceType.BUDGET_CONFIRMATION, EvidenceType.AUTHORISED_SPONSOR, EvidenceType.TECHNICAL_SUCCESS,
                    EvidenceType.MUTUAL_ACTION_PLAN, EvidenceType.SECURITY_APPROVAL, EvidenceType.LEGAL_APPROVAL,
                    EvidenceType.PROCUREMENT_APPROVAL, EvidenceType.CONTRACT_SIGNATURE]
    injected = []
    for k, kind in enumerate(forged_types):
        fake = Evidence(f"evdx{k}", kind, opp.id, signer, last.time, {"final_terms": True, "discount": 0.0},
                        proof_ref="0" * 32)
        injected.append(Event(last.seq + 1 + k, last.time, "evidence_recorded", signer,
                              {"evidence": fake.to_dict()}, last.provenance))
    score = _rescore(env, [*events, *injected])
    assert score["evidence_rejected"] == len(forged_types)
    assert score["advances"] == honest["advances"]
    assert score["primary"] == honest["primary"]


def test_validly_signed_evidence_from_outside_the_committee_is_rejected() -> None:
    """Even a record with a correct proof counts for nothing if its source is not in that deal's committee."""
    env = _played()
    events = _events(env)
    last = events[-1]
    assert env._verifier is not None
    outsider = env._world.opportunities["o001"].stakeholder_ids[0]
    signed = env._verifier.issue("evdy", EvidenceType.BUYER_REPLY, "o000", outsider, last.time, {})
    assert env._verifier.check(signed)
    fake = Event(last.seq + 1, last.time, "evidence_recorded", outsider, {"evidence": signed.to_dict()},
                 last.provenance)
    assert _rescore(env, [*events, fake])["evidence_rejected"] == 1
