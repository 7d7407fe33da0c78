"""Milestone rules: which buyer evidence moves an opportunity to which milestone (docs/milestones.md).

One function, :func:`reached`, is used both by the live simulation (to show the seller its verified
milestone) and by the private verifier (for the authoritative score), so the two can never disagree.
Rules consult hidden truth (who really holds authority, which approvals this account requires); the
evidence passed in must already be proof-checked by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable

from salesgym.core.evidence import Evidence, EvidenceType
from salesgym.envs.territory.world import Opportunity, TerritoryWorld

MILESTONES = ("Identified", "Engaged", "Qualified", "Validated", "Mobilised", "Commercial", "Commit", "Closed")
DISQUALIFIED = "Disqualified"
AUTHORITY_MIN = 0.65  # budget confirmation and sponsorship count only from people who really hold authority

E = EvidenceType
APPROVAL_EVIDENCE = {"security": E.SECURITY_APPROVAL, "legal": E.LEGAL_APPROVAL, "procurement": E.PROCUREMENT_APPROVAL}


def _first(
    evidence: Iterable[Evidence],
    kind: EvidenceType,
    world: TerritoryWorld,
    *,
    authority: bool = False,
    final_terms: bool = False,
) -> float | None:
    times = [
        e.timestamp
        for e in evidence
        if e.type is kind
        and (not authority or world.stakeholders[e.source_actor].authority >= AUTHORITY_MIN)
        and (not final_terms or bool(e.claim.get("final_terms")))
    ]
    return min(times) if times else None


def reached(world: TerritoryWorld, opp: Opportunity, evidence: Iterable[Evidence]) -> list[float]:
    """Times at which each milestone was reached, in order (index 0, Identified, at time 0).

    Milestones are sequential: each needs its own evidence *and* the previous milestone; its time is the
    later of the two. Evidence from anyone outside this opportunity's buying committee is ignored.
    """
    own = [e for e in evidence if e.subject == opp.id and e.source_actor in opp.stakeholder_ids]
    times = [0.0]

    def step(*needed: float | None) -> bool:
        if any(t is None for t in needed):
            return False
        times.append(max([times[-1], *(t for t in needed if t is not None)]))
        return True

    engaged = [
        t for t in (_first(own, E.BUYER_REPLY, world), _first(own, E.MEETING_ACCEPTANCE, world)) if t is not None
    ]
    if not step(min(engaged) if engaged else None):
        return times
    if not step(
        _first(own, E.BUDGET_CONFIRMATION, world, authority=True),
        _first(own, E.AUTHORISED_SPONSOR, world, authority=True),
    ):
        return times
    if not step(_first(own, E.TECHNICAL_SUCCESS, world)):
        return times
    if not step(_first(own, E.MUTUAL_ACTION_PLAN, world)):
        return times
    if not step(*(_first(own, APPROVAL_EVIDENCE[a], world) for a in opp.required_approvals)):
        return times
    if not step(_first(own, E.PROCUREMENT_APPROVAL, world, final_terms=True)):
        return times
    step(_first(own, E.CONTRACT_SIGNATURE, world))
    return times
