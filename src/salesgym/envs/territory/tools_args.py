"""The territory tools' typed arguments: what a call may say, and the exported input schemas."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from salesgym.core.tools import Strip, ToolArgs
from salesgym.envs.territory.contract import (
    BOOKING_LEAD_MAX_DAYS,
    BOOKING_USABLE_DAYS,
    HOURS_PER_DAY,
    MEETING_LEAD_MAX_DAYS,
    VIEW_PAGE,
    CrmStage,
)

# lengths are checked on the string as sent (as the exported schema does), then it is stripped
Id = Annotated[str, StringConstraints(min_length=1, max_length=40), Strip]
Text = Annotated[str, StringConstraints(max_length=4000), Strip]
ShortText = Annotated[str, StringConstraints(max_length=500), Strip]
Resource = Literal["se", "legal", "procurement", "management"]
Approval = Literal["security", "legal", "procurement"]
USABLE_HOURS = BOOKING_USABLE_DAYS * HOURS_PER_DAY  # a booking can be used within a business week of its start

OPP = "opportunity id, e.g. 'o003' (see the portfolio)"




class ViewArgs(ToolArgs):
    opportunity_id: Id | None = Field(None, description=OPP + "; omit (null) to list the whole portfolio")
    page: int = Field(0, ge=0, le=1000, description=f"page of the meetings and bookings lists ({VIEW_PAGE} each, "
                      "newest first); 0 for the first")


class AccountArgs(ToolArgs):
    account_id: Id = Field(description="account id, e.g. 'a003' (shown by view_opportunity)")


class OppArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)


class MessageArgs(ToolArgs):
    stakeholder_id: Id = Field(description="stakeholder id from find_stakeholders, e.g. 'o003s1'")
    subject: ShortText = Field(description="subject line")
    body: Text = Field(description="message text; reference the account's researched facts to be relevant")


class MeetingArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    stakeholder_ids: list[Id] = Field(min_length=1, max_length=6, description="invitees (1-6 known stakeholders)")
    agenda: Text = Field(description="agenda; relevant topics raise acceptance")
    in_days: int = Field(ge=1, le=MEETING_LEAD_MAX_DAYS, description="business days from today until the meeting")


class BookArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    resource: Resource | None = Field(None, description="internal team to book; null when cancelling")
    hours: float | None = Field(None, ge=0.5, le=16, description="hours to book; null when cancelling")
    start_in_days: int | None = Field(
        None, ge=0, le=BOOKING_LEAD_MAX_DAYS, description="business days until the booking starts; null when cancelling"
    )
    cancel_booking_id: Id | None = Field(None, description="set to cancel this booking instead of booking")


class MeetingIdArgs(ToolArgs):
    meeting_id: Id = Field(description="meeting id from schedule_meeting, e.g. 'm000123'")


class BookingUseArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    booking_id: Id = Field(description="an SE booking for this opportunity that has started")


class CaseArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    summary: Text = Field(description="the value case; it persuades when it addresses the economic buyer's pains")


class PlanArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    sponsor_id: Id = Field(description="the buyer-side sponsor who owns the plan")
    close_in_days: int = Field(ge=5, le=180, description="business days from today to the planned signature")


class PriceArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    discount_pct: float = Field(ge=0, le=60, description="discount off list price, in percent")


class ApprovalArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    kind: Approval = Field(description="which review to start")
    booking_id: Id = Field(
        description="a started booking: security uses SE, legal uses legal, procurement uses procurement"
    )


class EscalateArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    purpose: Literal["discount", "executive_sponsor"] = Field(description="what to ask management for")
    discount_pct: float | None = Field(None, ge=0, le=60, description="for purpose=discount: the discount to approve")
    booking_id: Id = Field(description="a started management booking for this opportunity")


class CrmField(ToolArgs):
    name: Id
    value: ShortText


class CrmArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    stage: CrmStage | None = Field(
        None, description="CRM stage (your own forecast; it does not move verified milestones)"
    )
    fields: list[CrmField] = Field(default_factory=list, max_length=20, description="free-form CRM fields to set")
    next_step: ShortText | None = Field(None, description="next step note")


class DisqualifyArgs(ToolArgs):
    opportunity_id: Id = Field(description=OPP)
    reason: ShortText = Field(description="why this deal cannot close")


class WaitArgs(ToolArgs):
    hours: float | None = Field(None, ge=0.25, le=80, description="business hours to wait; null to use 'until'")
    until: Literal["next_event", "next_week"] | None = Field(
        None, description="wait until the next scheduled buyer response, or until Monday; null to use 'hours'"
    )
