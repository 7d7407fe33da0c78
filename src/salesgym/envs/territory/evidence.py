"""The territory's evidence kinds: what a buyer can put on the record (docs/milestones.md).

The engine signs and checks evidence of any kind a family declares (``core.evidence``); these are ours. A
member is its own string value (a ``StrEnum``), so records read back from the log compare equal to it.
"""

from __future__ import annotations

from enum import StrEnum


class EvidenceType(StrEnum):
    BUYER_REPLY = "buyer_reply"
    MEETING_ACCEPTANCE = "meeting_acceptance"
    BUDGET_CONFIRMATION = "budget_confirmation"
    AUTHORISED_SPONSOR = "authorised_sponsor"
    TECHNICAL_SUCCESS = "technical_success"
    MUTUAL_ACTION_PLAN = "mutual_action_plan"
    SECURITY_APPROVAL = "security_approval"
    LEGAL_APPROVAL = "legal_approval"
    PROCUREMENT_APPROVAL = "procurement_approval"
    CONTRACT_SIGNATURE = "contract_signature"
    DISQUALIFICATION_REASON = "disqualification_reason"


KINDS = frozenset(str(t) for t in EvidenceType)
