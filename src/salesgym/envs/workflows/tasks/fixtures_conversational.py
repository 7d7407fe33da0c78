"""Fixtures of the conversational templates (``catalogue/templates/*.json``, e.g. ``sched-reschedule-request``,
``inmail-reply-referral``, ``crm-budget-colleague``): each sets its template's scene in the seeded population and
returns the instance's parameters. What the simulated people say is in the templates' data (``turns``, ``facts``,
``replies``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso
from salesgym.envs.workflows.population import Builder, add_contact, add_lead
from salesgym.envs.workflows.tasks import fixtures as fx


def reschedule_request(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    day1 = fx.business_day(b, rng, 3, 5)
    day2 = day1 + timedelta(days=rng.randint(2, 4))
    while day2.weekday() >= 5:
        day2 += timedelta(days=1)
    return {"invitee_name": f"{first} {last}", "invitee_email": f"{first.lower()}.{last.lower()}@example.com",
            "tz": rng.choice(fx.TIMEZONES), "after": iso(day1)[:10], "start": fx.earliest(b, "demo", day1),
            "new_day": f"{day2:%A} {day2.day} {day2:%B}",  # in words: no tool output spells a day this way
            "start2": fx.earliest(b, "demo", day2, day2 + timedelta(days=1)),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip


def inmail_referral(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    name = comp["properties"]["name"]
    contact_key, contact = add_contact(b, rng, comp, ckey, lifecycle="lead", lead_status="NEW")
    p = contact["properties"]
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), name, function="Sales", level=2, open_profile=True)
    referral = add_lead(b, rng, b.person(rng), name, function="Operations", level=3, open_profile=True)
    return {"company": name, "contact_id": contact_key, "owner_int": int(p["hubspot_owner_id"]),
            "lead_id": lead["lead_id"], "lead_first": lead["firstName"],
            "lead_name": f"{lead['firstName']} {lead['lastName']}", "referral_id": referral["lead_id"],
            "referral_first": referral["firstName"],
            "referral_name": f"{referral['firstName']} {referral['lastName']}",
            "product": rng.choice(("Pipeline Radar", "Forecast Studio", "Deal Pulse"))}  # fmt: skip


def budget_colleague(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    name = comp["properties"]["name"]
    owner_id = comp["properties"]["hubspot_owner_id"]
    decision = fx.business_day(b, rng, 14, 30)
    return {"company": name, "company_id": ckey, "deal_name": f"{name} - proposal", "budget": fx.amount(rng),
            "decision_date": iso(decision)[:10], "owner_id": owner_id, "owner_int": int(owner_id)}  # fmt: skip
