"""Lookups the territory's handlers share: an opportunity, a stakeholder or a booking a call may use (or the
refusal that says why not), capacity left, a finished call's outcome, a page of a long list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from salesgym.core.tools import ToolError, ToolOutcome, quote
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    BOOKING_USABLE_DAYS,
    HOURS_PER_DAY,
    TOOL_HOURS,
    VIEW_PAGE,
    stamp,
)
from salesgym.envs.territory.state import Booking
from salesgym.envs.territory.world import Opportunity, Stakeholder

USABLE_HOURS = BOOKING_USABLE_DAYS * HOURS_PER_DAY  # a booking can be used within a business week of its start



def opportunity(ctx: Ctx, oid: str, *, open_only: bool = True) -> Opportunity:
    opp = ctx.world.opportunities.get(oid)
    if opp is None:
        raise ToolError(
            f"unknown opportunity {quote(oid)}; ids look like 'o000'..'o{len(ctx.world.opportunities) - 1:03d}'"
        )
    status = ctx.state.deals[oid].status
    if open_only and status != "open":
        raise ToolError(f"opportunity {oid} is {status}; no further work is possible on it")
    return opp


def stakeholder(ctx: Ctx, sid: str, opp: Opportunity | None = None) -> Stakeholder:
    who = ctx.world.stakeholders.get(sid)
    if who is None or not ctx.state.people[sid].known:
        raise ToolError(f"unknown stakeholder {quote(sid)}; call find_stakeholders on the opportunity first")
    if opp is not None and who.opportunity_id != opp.id:
        raise ToolError(f"stakeholder {sid} belongs to {who.opportunity_id}, not {opp.id}")
    if ctx.state.people[sid].left:
        raise ToolError(f"{who.name} ({sid}) has left the company")
    return who


def usable_booking(ctx: Ctx, bid: str, opp: Opportunity, resource: str, min_hours: float) -> Booking:
    b = ctx.state.bookings.get(bid)
    if b is None or b.opportunity_id != opp.id:
        raise ToolError(f"no booking {quote(bid)} for {opp.id}; book {resource} hours with book_resource")
    if b.resource != resource:
        raise ToolError(f"booking {bid} is for {b.resource}, this needs {resource}")
    if b.status != "booked":
        raise ToolError(f"booking {bid} is already {b.status}")
    if ctx.now < b.start:
        raise ToolError(f"booking {bid} starts {stamp(b.start)}; wait until then")
    if ctx.now > b.start + USABLE_HOURS:
        raise ToolError(f"booking {bid} lapsed (it was usable for a business week from {stamp(b.start)})")
    if b.hours < min_hours:
        raise ToolError(f"booking {bid} has {b.hours}h; this needs at least {min_hours}h of {resource}")
    return b


def capacity_left(ctx: Ctx, resource: str, week: int) -> float:
    return ctx.world.capacity[resource] - ctx.state.usage.get((resource, week), 0.0)


def done(output: Mapping[str, object], tool: str, hours: float | None = None) -> ToolOutcome:
    """A finished call: its output and the seller hours it cost (the tool's documented hours by default)."""
    cost = TOOL_HOURS[tool] if hours is None else hours
    return ToolOutcome(output, cost, {"seller": cost})


def page_of(items: list[Any], page: int) -> tuple[list[Any], dict[str, int] | None]:
    """One page of a long list in a view, newest first, and what was left out (None when nothing was)."""
    newest = items[::-1]
    shown = newest[page * VIEW_PAGE : (page + 1) * VIEW_PAGE]
    if len(newest) <= VIEW_PAGE:
        return shown, None
    return shown, {"page": page, "pages": -(-len(newest) // VIEW_PAGE), "total": len(newest)}
