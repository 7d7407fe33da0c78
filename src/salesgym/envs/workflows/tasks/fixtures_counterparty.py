"""Fixtures of the ``workflows-counterparty`` pack (``counterparty/``): the scenes of the templates whose decisive
rule is in a company policy document, and of those where a simulated person acts on the apps mid-episode. Each
sets its template's scene in the seeded population and returns the instance's parameters."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import Builder, account_for, add_contact, add_lead, add_prospect, add_state
from salesgym.envs.workflows.tasks import fixtures as fx


def _other_owner(b: Builder, rng: Dice, *not_these: str) -> tuple[str, dict[str, Any]]:
    return rng.choice([o for o in b.rows("crm.owners").items() if o[0] not in not_these])


def _end(start: str, minutes: int = 30) -> str:
    moment = parse_iso(start)
    assert moment is not None
    return iso(moment + timedelta(minutes=minutes))


# --- fixtures: policies -----------------------------------------------------------------------------------------
def lead_routing(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    company_owner = comp["properties"]["hubspot_owner_id"]
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW")
    wrong, _ = _other_owner(b, rng, company_owner)  # the web form's round robin picked someone else
    b.rows("crm.contacts")[key]["properties"]["hubspot_owner_id"] = wrong
    return {"contact_id": key, **fx.person_params("contact", contact), "company": comp["properties"]["name"],
            "company_owner": company_owner}  # fmt: skip


def term_discount(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    name = comp["properties"]["name"]
    term = rng.choice((2, 3))
    pct = {2: 8, 3: 12}[term]
    list_price = int(fx.amount(rng))
    owner_id = comp["properties"]["hubspot_owner_id"]
    return {"company": name, "company_id": ckey, "deal_name": f"{name} - {term}-year platform", "term": str(term),
            "pct": str(pct), "list_price": str(list_price), "amount": str((list_price * (100 - pct) + 50) // 100),
            "owner_id": owner_id, "owner_int": int(owner_id)}  # fmt: skip


def one_sequence(b: Builder, rng: Dice) -> dict[str, Any]:
    tag = f"partner-list-{b.anchor[5:7]}{b.anchor[8:10]}"
    ckey, comp = fx.company(b, rng, with_account=True)
    account = account_for(b, comp["properties"]["name"])
    assert account is not None
    owner_id = comp["properties"]["hubspot_owner_id"]
    made = []
    for _ in range(5):
        _, contact = add_contact(b, rng, comp, ckey)
        made.append(add_prospect(b, {**contact["properties"], "hubspot_owner_id": owner_id}, account, [tag])["id"])
    rng.shuffle(made)
    busy = sorted(made[3:])
    for prospect in busy:  # active in another sequence: the policy says skip them
        add_state(b, prospect, b.sequence_ids["Exec Intro"], "active", b.anchor, mailbox=fx.mailbox_of(b, owner_id))
    return {"tag": tag, "eligible": sorted(made[:3]), "busy": busy, "sequence_id": b.sequence_ids["SQL Outbound"],
            "other_sequence": b.sequence_ids["Exec Intro"], "mailbox": fx.mailbox_of(b, owner_id),
            "owner": fx.owner_name(b, owner_id)}  # fmt: skip


def first_meeting(b: Builder, rng: Dice) -> dict[str, Any]:
    day = fx.business_day(b, rng)
    first, last = b.person(rng)
    return {"invitee_name": f"{first} {last}", "invitee_email": f"{first.lower()}.{last.lower()}@example.net",
            "tz": rng.choice(fx.TIMEZONES), "after": iso(day)[:10], "start": fx.earliest(b, "discovery", day),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['discovery']}"}  # fmt: skip


# --- fixtures: acting users -------------------------------------------------------------------------------------
def books_from_link(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="lead", lead_status="OPEN")
    p = contact["properties"]
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), comp["properties"]["name"], open_profile=True)
    day = fx.business_day(b, rng, 4, 8)  # the prospect's own preference: no tool shows it before they book
    start = fx.earliest(b, "demo", day)
    return {"contact_id": key, **fx.person_params("contact", contact), "company": comp["properties"]["name"],
            "owner_int": int(p["hubspot_owner_id"]), "lead_id": lead["lead_id"], "tz": rng.choice(fx.TIMEZONES),
            "prefers": iso(day), "start": start, "end": _end(start),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip


def owner_reassigned(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW")
    old = contact["properties"]["hubspot_owner_id"]
    new, _ = _other_owner(b, rng, old)
    first, last = b.person(rng)
    return {"contact_id": key, **fx.person_params("contact", contact), "old_owner": old, "new_owner": new,
            "new_owner_name": fx.owner_name(b, new), "colleague": f"{first} {last}",
            "due": iso(fx.business_day(b, rng, 1, 3))[:10]}  # fmt: skip


def reschedules(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="opportunity", lead_status="CONNECTED")
    day1 = fx.business_day(b, rng, 3, 5)
    day2 = day1 + timedelta(days=rng.randint(2, 4))
    while day2.weekday() >= 5:
        day2 += timedelta(days=1)
    start, start2 = fx.earliest(b, "demo", day1), fx.earliest(b, "demo", day2)
    return {"contact_id": key, **fx.person_params("contact", contact), "owner_int":
            int(contact["properties"]["hubspot_owner_id"]), "tz": rng.choice(fx.TIMEZONES), "after": iso(day1)[:10],
            "start": start, "moves_to": iso(day2), "start2": start2, "end2": _end(start2),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip
