"""The territory's public contract: every rule, limit and cost a policy may know, in one place.

Policies (``salesgym.agents.territory``) read the world through observations and tool results; what they may
know *in advance* (the calendar, the milestone ladder, what each tool costs in seller hours, booking windows,
the minimum hours a process needs, the shape of inbox items) is here, and the environment's own modules read
these same constants, so a baseline can never silently drift from the rules. The territory's capacities,
lead times and discount authority vary by world: they arrive in every observation as ``data["territory"]``.
Nothing here is hidden truth; buyer decision rules and reward coefficients are not part of the contract.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import Literal, get_args

from salesgym.envs.territory.calendar import (
    DAYS_PER_WEEK,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    START_DATE,
    business_days,
    day_of,
    stamp,
    start_of_day,
    start_of_week,
    week_of,
)

__all__ = [
    "APPROVALS",
    "APPROVAL_DAYS",
    "APPROVAL_RESOURCE",
    "BOOKING_LEAD_MAX_DAYS",
    "BOOKING_USABLE_DAYS",
    "CRM_STAGES",
    "DAYS_PER_WEEK",
    "DISQUALIFIED",
    "HOURS_PER_DAY",
    "HOURS_PER_WEEK",
    "INBOX_FIELDS",
    "INBOX_KINDS",
    "MAX_CRM_FIELDS",
    "MEETING_LEAD_MAX_DAYS",
    "MILESTONES",
    "MIN_BOOKING_HOURS",
    "QUARTER_DAYS",
    "RESOURCES",
    "START_DATE",
    "TOOL_HOURS",
    "VIEW_PAGE",
    "CrmStage",
    "business_days",
    "day_of",
    "hours_of",
    "quarter_end_day",
    "quarter_of",
    "stamp",
    "start_of_day",
    "start_of_week",
    "week_of",
]

# -- the milestone ladder (docs/milestones.md); only buyer evidence moves a deal up it ------------------------
MILESTONES = ("Identified", "Engaged", "Qualified", "Validated", "Mobilised", "Commercial", "Commit", "Closed")
DISQUALIFIED = "Disqualified"

# -- the seller's own CRM (a notebook: it never moves a verified milestone) -----------------------------------
CrmStage = Literal[
    "Prospecting",
    "Discovery",
    "Qualified",
    "Solution",
    "Proposal",
    "Negotiation",
    "Commit",
    "Closed Won",
    "Closed Lost",
]
CRM_STAGES: tuple[str, ...] = get_args(CrmStage)
OPEN_CRM_STAGES = CRM_STAGES[:-2]  # the stages of a deal still being worked (not Closed Won / Closed Lost)
MAX_CRM_FIELDS = 20  # distinct free-form fields a CRM record keeps; setting one more is refused

# -- internal teams, bookings and the buyer processes they serve ---------------------------------------------
RESOURCES = ("seller", "se", "legal", "procurement", "management")
APPROVALS = ("security", "legal", "procurement")
APPROVAL_RESOURCE = {"security": "se", "legal": "legal", "procurement": "procurement"}  # who staffs each review
APPROVAL_DAYS = {"security": 4, "legal": 5, "procurement": 3}  # business days a buyer's review takes
MEETING_LEAD_MAX_DAYS = 15  # a meeting is at most this many business days after it was requested
BOOKING_LEAD_MAX_DAYS = 40  # a booking starts at most this many business days after it was made
BOOKING_USABLE_DAYS = 5  # and can be used for this many business days from its start
# the smallest booking each use accepts (more hours raise the odds of a technical evaluation or a review)
MIN_BOOKING_HOURS = {"tech_eval": 2.0, "review": 1.0, "discount_approval": 1.0, "executive_sponsor": 2.0}

# -- seller hours each call costs (``wait`` costs the business hours it waits, and no seller hours) -----------
TOOL_HOURS = {
    "view_opportunity": 0.05,
    "research_account": 1.5,  # 0.25 when the account was already researched
    "find_stakeholders": 1.0,
    "send_message": 0.25,
    "schedule_meeting": 0.5,
    "book_resource": 0.1,
    "run_discovery": 1.5,
    "run_technical_evaluation": 1.0,
    "build_business_case": 3.0,
    "propose_action_plan": 1.0,
    "send_proposal": 2.0,
    "negotiate": 1.0,
    "request_approval": 0.5,
    "escalate": 0.5,
    "send_contract": 0.5,
    "update_crm": 0.1,
    "disqualify": 0.25,
}
RESEARCH_AGAIN_HOURS = 0.25

# -- what the views show at most (a list that is cut says "N more" and how to page) ---------------------------
VIEW_PAGE = 10  # meetings or bookings per page of view_opportunity

# -- inbox items: ``data["inbox"]`` holds one dict per item with these keys (None where they do not apply) ----
INBOX_KINDS = (
    "reply",  # a stakeholder answered a message (evidence buyer_reply)
    "meeting_answer",  # decision accepted | declined (evidence meeting_acceptance when accepted)
    "tech_eval",  # decision passed | failed (evidence technical_success when passed)
    "action_plan",  # decision agreed | declined, reason when declined (evidence mutual_action_plan)
    "approval",  # approval = security | legal | procurement, decision approved | changes_requested
    "terms",  # decision agreed | countered, discount_pct = accepted or asked discount
    "contract",  # decision signed | stalled, reason when stalled (evidence contract_signature)
    "escalation",  # decision approved | refused (discount_pct) or met (executive sponsor)
    "competitor",  # decision demo | price_cut
    "news",  # decision freeze (until) | left (stakeholder_id)
    "milestone",  # milestone = the verified milestone the deal reached
    "violation",  # reason = the rule broken (e.g. unauthorised_discount)
)
INBOX_FIELDS = ("decision", "evidence", "milestone", "meeting_id", "stakeholder_id", "approval", "discount_pct",
                "reason", "until")


QUARTER_DAYS = 65  # business days in a quarter (13 weeks): a deal's public target quarter is when it must close


def quarter_of(day: int) -> str:
    """The target quarter a business day falls in (the first quarter starts on day 0)."""
    return f"Q{day // QUARTER_DAYS + 1} {START_DATE.year}"


@lru_cache(maxsize=64)  # the seller policies ask it of every open deal on every step
def quarter_end_day(quarter: str) -> int | None:
    """The last business day (from the start) of a target quarter such as ``"Q2 2027"``; None if malformed."""
    q = quarter.split()[0] if quarter else ""
    if not (q.startswith("Q") and q[1:].isdigit()):
        return None
    return int(q[1:]) * QUARTER_DAYS - 1


def hours_of(text: str) -> float:
    """Invert :func:`stamp` (``'Tue 2027-01-05 11:00'`` or ``'Tue 2027-01-05'``) to business hours since the
    start."""
    parts = text.split()
    date = dt.date.fromisoformat(parts[1])
    weeks, weekday = divmod((date - START_DATE).days, 7)
    hour, minute = (int(x) for x in parts[2].split(":")) if len(parts) > 2 else (9, 0)
    return (weeks * DAYS_PER_WEEK + min(weekday, DAYS_PER_WEEK - 1)) * HOURS_PER_DAY + hour - 9 + minute / 60
