"""The territory's task card: what an agent is told before its first step (``env.instructions()``).

Written for a language model, in a seller's words: the goal, the rules of this world (its hours, lead times,
discount authority, what moves a deal forward, what breaks a rule), how the episode ends and how tools are
called. It is built from the world's public facts and the public contract only, so it never carries hidden
truth, reward coefficients or verifier internals (the conformance kit checks that worlds differing only in
hidden values get the same card). ``TASK_VERSION`` changes whenever the wording does; a snapshot test pins
the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    BOOKING_LEAD_MAX_DAYS,
    BOOKING_USABLE_DAYS,
    HOURS_PER_DAY,
    MEETING_LEAD_MAX_DAYS,
    MIN_BOOKING_HOURS,
    START_DATE,
    TOOL_HOURS,
)

TASK_VERSION = "territory-task/1"


def _hours(x: float) -> str:
    return f"{x:g} h"


def task_card(facts: Mapping[str, Any], invalid_action_limit: int) -> str:
    """The card for a territory with these public ``facts`` (``data["territory"]`` of its observations)."""
    cap = facts["capacity_per_week"]
    lead = facts["lead_days"]
    authority = round(100 * float(facts["discount_authority"]))
    teams = ", ".join(
        f"{name} {_hours(cap[key])}" + (f" (book {lead[key]} business days ahead)" if lead.get(key) else "")
        for key, name in (
            ("seller", "you"),
            ("se", "solution engineers"),
            ("legal", "legal"),
            ("procurement", "procurement desk"),
            ("management", "management"),
        )
    )
    costs = ", ".join(f"{tool} {hours:g}" for tool, hours in TOOL_HOURS.items())
    reviews = ", ".join(f"{k} {v}" for k, v in APPROVAL_DAYS.items())
    return f"""\
# Your task ({TASK_VERSION})

You are the account executive for a B2B sales territory of {facts["n_opportunities"]} open opportunities. \
Your time starts on {START_DATE:%a %Y-%m-%d}; you have {facts["horizon_days"]} calendar days \
({facts["business_days"]} business days of {HOURS_PER_DAY:g} hours, Monday to Friday 09:00-17:00). Goal: close as \
much contract value as you can, at the best price you can, before time runs out. Deals you cannot win are \
worth dropping so your hours go where they pay.

## How a deal moves forward
A deal climbs a ladder: Identified, Engaged, Qualified, Validated, Mobilised, Commercial, Commit, Closed. \
Only the buyer moves it, by what they do and put on the record; nothing you write (messages, CRM fields, \
stage names) counts as their word.
- Engaged: someone on the buying committee replies to you or accepts a meeting.
- Qualified: in a discovery meeting, a person with real authority confirms the budget and agrees to sponsor \
the purchase. Titles usually, not always, tell you who has authority. Budgets open at different times, and \
sponsors commit only once they have seen value for the pains they care about.
- Validated: the technical evaluation succeeds. It needs a solution-engineer booking; more hours help.
- Mobilised: the buyer agrees to a mutual action plan.
- Commercial: every review this account requires (security, legal, procurement) approves. Each review needs \
a booking of the team that staffs it (security: solution engineers) and takes business days ({reviews}).
- Commit: the buyer's procurement approves the final terms of your proposal.
- Closed: the buyer signs the contract.
Some opportunities can never close (no budget, no fit, locked into a competitor); buyers may tell you why.

## Capacity: the central trade-off
Hours per week: {teams}. Every tool except `wait` costs your own hours ({costs}); when \
this week's are gone, only `wait` works until Monday. Solution engineers, legal, procurement and management \
are booked with `book_resource` for a start day at least their lead time ahead and at most \
{BOOKING_LEAD_MAX_DAYS} business days ahead; a booking reserves hours in its start week, is used once by the \
tool that needs it within {BOOKING_USABLE_DAYS} business days, then lapses. Smallest bookings: technical \
evaluation {_hours(MIN_BOOKING_HOURS["tech_eval"])}, review {_hours(MIN_BOOKING_HOURS["review"])}, discount \
approval {_hours(MIN_BOOKING_HOURS["discount_approval"])}, executive sponsor \
{_hours(MIN_BOOKING_HOURS["executive_sponsor"])}. There are far fewer of these hours than the territory \
wants: give them to the deals most likely to close for the most value. Cancelling a booking late loses its \
hours.

## Buyers
Buyers answer in their own time (hours to days). Messages that speak to a person's real pains get answers; \
follow up promptly after a reply; too many messages, or messages with nothing new, annoy people. Meetings \
are at most {MEETING_LEAD_MAX_DAYS} business days out. Competitors and budget freezes happen on their own \
schedule.

## Price and the rules
You may offer up to {authority}% discount on your own authority; a deeper discount needs management's \
approval (`escalate`), which is a real decision and costs management hours. An offer beyond what you are \
authorised to give is a violation: it is recorded and costs you. Every point of discount lowers what a \
closed deal is worth.

## How the episode ends
At the end of the horizon, or once every opportunity is closed or dropped (`disqualify`). A call the \
environment cannot accept (unknown tool, bad arguments, a rule it breaks) changes nothing and is counted; \
{invalid_action_limit} such calls end the episode early.

## Each turn
You see the date, the hours left this week, the pipeline, new inbox items (replies, decisions, milestones \
reached) and the result of your last call. Make exactly one tool call per turn with the tools provided; \
`view_opportunity` with no id shows the whole portfolio, with an id one deal in full; `wait` (hours, \
until the next event, or until Monday) lets time pass. Arguments must match the tool's schema; use the ids \
the tools show you. Every result says `status` ok, or error with a short reason.
"""
