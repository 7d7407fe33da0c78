"""Milestone rules: which buyer evidence moves an opportunity to which milestone (docs/milestones.md).

The same functions are used by the live simulation (to show the seller its verified milestone) and by the
private verifier (for the authoritative score), so the two can never disagree: each keeps, per deal, the
earliest time of every qualifying key (:func:`qualifying_keys`, :func:`earliest`) as evidence arrives, and
derives the milestones' times from it (:func:`times_from_first`); :func:`reached` does the same over a ledger.
Rules consult hidden truth (who really holds authority, which approvals this account requires); the
evidence passed in must already be proof-checked by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from salesgym.core.evidence import Evidence
from salesgym.envs.territory.contract import DISQUALIFIED, MILESTONES
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.world import Opportunity, TerritoryWorld

__all__ = ["AUTHORITY_MIN", "DISQUALIFIED", "MILESTONES", "earliest", "final_discount", "first_times",
           "qualifying_keys", "reached", "times_from_first"]

COMMIT = MILESTONES.index("Commit")
AUTHORITY_MIN = 0.65  # budget confirmation and sponsorship count only from people who really hold authority

E = EvidenceType
APPROVAL_EVIDENCE = {"security": E.SECURITY_APPROVAL, "legal": E.LEGAL_APPROVAL, "procurement": E.PROCUREMENT_APPROVAL}


# The highest milestone each evidence type can help reach: evidence of a type whose milestones are all behind
# a deal already cannot move it, which spares the live view a re-derivation on every reply.
DECIDES = {
    E.BUYER_REPLY: 1, E.MEETING_ACCEPTANCE: 1, E.BUDGET_CONFIRMATION: 2, E.AUTHORISED_SPONSOR: 2,
    E.TECHNICAL_SUCCESS: 3, E.MUTUAL_ACTION_PLAN: 4, E.SECURITY_APPROVAL: 5, E.LEGAL_APPROVAL: 5,
    E.PROCUREMENT_APPROVAL: 6, E.CONTRACT_SIGNATURE: 7, E.DISQUALIFICATION_REASON: 0,
}  # fmt: skip


# the evidence keys each milestone after Identified needs (Commercial's depend on the account's approvals)
ENGAGED = (str(E.BUYER_REPLY), str(E.MEETING_ACCEPTANCE))  # either one
BEFORE_COMMERCIAL = (
    (str(E.BUDGET_CONFIRMATION), str(E.AUTHORISED_SPONSOR)),  # Qualified
    (str(E.TECHNICAL_SUCCESS),),  # Validated
    (str(E.MUTUAL_ACTION_PLAN),),  # Mobilised
)
APPROVAL_KEYS = {approval: str(kind) for approval, kind in APPROVAL_EVIDENCE.items()}
AFTER_COMMERCIAL = (("procurement_final",), (str(E.CONTRACT_SIGNATURE),))  # Commit, Closed


def qualifying_keys(world: TerritoryWorld, opp: Opportunity, e: Evidence) -> tuple[str, ...]:
    """The milestone keys one evidence record counts for on ``opp``: its type, plus ``"procurement_final"`` for a
    procurement approval on final terms; none when it is not about this opportunity, not from its buying
    committee, or a budget confirmation or sponsorship from someone without real authority."""
    if e.subject != opp.id or e.source_actor not in opp.stakeholder_ids:
        return ()
    kind = e.type
    # budget confirmations and sponsorships count only from people with real authority (looked up for them alone)
    senior_only = kind in (E.BUDGET_CONFIRMATION, E.AUTHORISED_SPONSOR)
    if senior_only and world.stakeholders[e.source_actor].authority < AUTHORITY_MIN:
        return ()
    if kind == E.PROCUREMENT_APPROVAL and e.claim.get("final_terms"):
        return (kind, "procurement_final")
    return (kind,)


def earliest(first: Mapping[str, float], keys: Iterable[str], t: float) -> Mapping[str, float]:
    """``first`` (qualifying key -> its earliest time) once ``keys`` also appeared at ``t``: a new mapping when that
    moves a time, else ``first`` itself, so records that hold it are replaced only on a change, never mutated."""
    if all(k in first and first[k] <= t for k in keys):
        return first
    moved = dict(first)
    for k in keys:
        if k not in moved or t < moved[k]:
            moved[k] = t
    return moved


def first_times(world: TerritoryWorld, opp: Opportunity, evidence: Iterable[Evidence]) -> Mapping[str, float]:
    """One pass over the ledger: the earliest time each key of :func:`qualifying_keys` appeared."""
    first: Mapping[str, float] = {}
    for e in evidence:
        first = earliest(first, qualifying_keys(world, opp, e), e.timestamp)
    return first


def times_from_first(opp: Opportunity, first: Mapping[str, float]) -> list[float]:
    """Times at which each milestone was reached, in order (index 0, Identified, at time 0), given the earliest
    time of each qualifying key (:func:`first_times`). Milestones are sequential: each needs its own evidence
    *and* the previous milestone; its time is the later of the two."""
    engaged = [first[k] for k in ENGAGED if k in first]
    times = [0.0]
    if not engaged:
        return times
    times.append(min(engaged))
    for keys in (*BEFORE_COMMERCIAL, [APPROVAL_KEYS[a] for a in opp.required_approvals], *AFTER_COMMERCIAL):
        if any(k not in first for k in keys):
            break
        times.append(max([times[-1], *(first[k] for k in keys)]))
    return times


def reached(world: TerritoryWorld, opp: Opportunity, evidence: Iterable[Evidence]) -> list[float]:
    """Times at which each milestone was reached, in order (index 0, Identified, at time 0). Evidence from anyone
    outside this opportunity's buying committee is ignored."""
    return times_from_first(opp, first_times(world, opp, evidence))


def final_discount(opp: Opportunity, evidence: Iterable[Evidence], top: int) -> float:
    """The discount on the final terms that a deal at milestone ``top`` was verified on: the signature's for
    Closed, the first procurement approval of the final terms for Commit, none below Commit."""
    if top < COMMIT:
        return 0.0
    committee = opp.stakeholder_ids
    wanted = E.CONTRACT_SIGNATURE if top > COMMIT else E.PROCUREMENT_APPROVAL
    first: Evidence | None = None
    for e in evidence:
        if (e.type == wanted and e.subject == opp.id and e.source_actor in committee
                and (top > COMMIT or e.claim.get("final_terms")) and (first is None or e.timestamp < first.timestamp)):
            first = e
    return float(first.claim.get("discount", 0.0)) if first is not None else 0.0
