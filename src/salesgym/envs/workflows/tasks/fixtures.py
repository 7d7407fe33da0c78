"""Fixtures: each sets one template's scene in the seeded population and returns the instance's parameters
(who, which records, which dates, the expected values computed from the public scene, the hidden facts).

A fixture reads the population through the ``Builder`` and adds the records its template needs, drawing from
its own keyed stream, so the same seed and template always give the same instance. Expected values such as
"the earliest open slot" are computed here from the scene, with the replica's own slot rule.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import crm, scheduler
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import (
    COMPANIES,
    TITLES,
    TLDS,
    Builder,
    account_for,
    add_account,
    add_contact,
    add_deal,
    add_lead,
    add_prospect,
    add_prospecting_account,
    add_state,
    associate_crm,
    domain_of,
    user_for_owner,
)

# an invitee's time zone: where it is a hidden fact, a guess of the likeliest is right 1 time in 24
TIMEZONES = ("Europe/Berlin", "America/New_York", "America/Toronto", "Asia/Singapore", "Europe/London",
             "Europe/Paris", "Europe/Madrid", "Europe/Rome", "Europe/Amsterdam", "Europe/Stockholm", "Europe/Warsaw",
             "Europe/Dublin", "Europe/Lisbon", "Europe/Zurich", "America/Los_Angeles", "America/Denver",
             "America/Sao_Paulo", "America/Mexico_City", "Asia/Tokyo", "Asia/Kolkata", "Asia/Dubai",
             "Asia/Hong_Kong", "Australia/Melbourne", "Pacific/Auckland")  # fmt: skip


# --- shared helpers ---------------------------------------------------------------------------------------------
def company(b: Builder, rng: Dice, with_account: bool | None = None) -> tuple[str, dict[str, Any]]:
    items = list(b.rows("crm.companies").items())
    if with_account is not None:
        items = [(k, c) for k, c in items if (account_for(b, c["properties"]["name"]) is not None) == with_account]
    return rng.choice(items)


def owner(b: Builder, owner_id: str) -> dict[str, Any]:
    return b.rows("crm.owners")[owner_id]


def owner_name(b: Builder, owner_id: str) -> str:
    o = owner(b, owner_id)
    return f"{o['firstName']} {o['lastName']}"


def mailbox_of(b: Builder, owner_id: str) -> int:
    user = user_for_owner(b, owner_id)
    return int(next(m["id"] for m in b.rows("sequencer.mailboxes").values() if m["attributes"]["userId"] == user))


def new_company(b: Builder, rng: Dice, with_account: bool) -> tuple[str, dict[str, Any]]:
    """A company not yet in the population, added to the CRM (and the sequencer and prospecting database)."""
    used = {c["properties"]["name"] for c in b.rows("crm.companies").values()}
    name, industry = rng.choice([c for c in COMPANIES if c[0] not in used])
    key, _ = b.key("crm.companies")
    owners = list(b.rows("crm.owners"))
    props = {"name": name, "domain": domain_of(name, rng.choice(TLDS)), "industry": industry,
             "numberofemployees": "1200", "country": "Germany", "hubspot_owner_id": rng.choice(owners)}  # fmt: skip
    record = b.put("crm.companies", key, crm.crm_object(key, props, b.anchor), "fixture")
    if with_account:
        add_account(b, record)
    add_prospecting_account(b, name, industry, 1200)
    return key, record


def business_day(b: Builder, rng: Dice, low: int = 3, high: int = 9) -> datetime:
    day = b.start + timedelta(days=rng.randint(low, high))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day.replace(hour=0, minute=0)


def earliest(b: Builder, event_type: str, after: datetime, before: datetime | None = None) -> str:
    """The earliest open slot of ``event_type`` from ``after`` (within a week, or before ``before``)."""
    busy = []
    for table in ("scheduler.busy_times", "scheduler.scheduled_events"):
        for r in b.rows(table).values():
            if r.get("status", "active") == "active":
                s, e = parse_iso(r["start_time"]), parse_iso(r["end_time"])
                assert s is not None and e is not None
                busy.append((s, e))
    et = b.rows("scheduler.event_types")[b.event_types[event_type]]
    end, window = before or after + timedelta(days=7), after
    while window < end:  # a day at a time: the first day with an open slot holds the earliest (none spans midnight)
        found = scheduler.open_slots(busy, et["duration"], window, min(window + timedelta(days=1), end), b.start)
        if found:
            return iso(found[0])
        window = (window + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    raise AssertionError("the scheduler has no open slot in a week")


def add_booking(b: Builder, event_type: str, start: datetime, name: str, email: str, tz: str) -> dict[str, Any]:
    et = b.rows("scheduler.event_types")[b.event_types[event_type]]
    host = next(iter(b.rows("scheduler.users").values()))["uri"]
    key, _ = b.key("scheduler.scheduled_events")
    event = b.put("scheduler.scheduled_events", key,
                  scheduler.scheduled_event_record(key, et, start, host, b.anchor), "fixture")
    ikey, _ = b.key("scheduler.invitees")
    b.put("scheduler.invitees", ikey, scheduler.invitee_record(ikey, event, name, email, tz, b.anchor), "fixture")
    return event


def free_start(b: Builder, event_type: str, day: datetime) -> datetime:
    text = earliest(b, event_type, day.replace(hour=0), day.replace(hour=23))
    moment = parse_iso(text)
    assert moment is not None
    return moment


def person_params(prefix: str, contact: dict[str, Any]) -> dict[str, Any]:
    p = contact["properties"]
    return {f"{prefix}_name": f"{p['firstname']} {p['lastname']}", f"{prefix}_email": p["email"]}


def amount(rng: Dice) -> str:
    """A deal amount in dollars; never a round ten, so a hidden one is not confused with a public figure."""
    value = rng.randint(4000, 90000)
    return str(value if value % 10 else value + 7)


# --- CRM --------------------------------------------------------------------------------------------------------
def inbound_sql(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW")
    owners = list(b.rows("crm.owners").items())
    target_id, target = rng.choice([o for o in owners if o[0] != contact["properties"]["hubspot_owner_id"]])
    return {"contact_id": key, **person_params("contact", contact), "region": target["teams"][0]["name"],
            "owner_id": target_id, "owner_int": int(target_id)}  # fmt: skip


def dedupe_inbound(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="customer", jobtitle="")
    title = rng.choice(TITLES[rng.choice(list(TITLES))])
    p = contact["properties"]
    local, domain = p["email"].split("@")
    form_email = f"{local[0].upper()}{local[1:]}@{domain.upper()}"  # the same address, another spelling
    return {"contact_id": key, **person_params("contact", contact), "form_email": form_email, "title": title}


def renewal_negotiation(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    deal = add_deal(b, ckey, comp, f"{name} - renewal {b.anchor[:4]}", b.renewal["pipeline"], b.renewal["due"],
                    amount(rng))
    return {"deal_id": deal, "company": name, "amount": amount(rng)}


def lifecycle_reset(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="customer", lead_status="CONNECTED")
    return {"contact_id": key, **person_params("contact", contact), "company": comp["properties"]["name"]}


def closed_won(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    deal = add_deal(b, ckey, comp, f"{name} - new business", "default", "contractsent", amount(rng))
    close = business_day(b, rng, 0, 2)
    return {"deal_id": deal, "company": name, "amount": amount(rng), "close_date": iso(close)[:10],
            "owner_int": int(comp["properties"]["hubspot_owner_id"])}  # fmt: skip


# --- scheduler --------------------------------------------------------------------------------------------------
def earliest_demo(b: Builder, rng: Dice) -> dict[str, Any]:
    day = business_day(b, rng)
    first, last = b.person(rng)
    return {"invitee_name": f"{first} {last}", "invitee_email": f"{first.lower()}.{last.lower()}@example.org",
            "tz": rng.choice(TIMEZONES), "after": iso(day)[:10], "start": earliest(b, "demo", day),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip


def reschedule(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    name, email, tz = f"{first} {last}", f"{first.lower()}@{rng.choice(('initrode.com', 'massive.io'))}", \
        rng.choice(TIMEZONES)  # fmt: skip
    day1 = business_day(b, rng, 2, 4)
    old = add_booking(b, "discovery", free_start(b, "discovery", day1), name, email, tz)
    day2 = business_day(b, rng, 6, 10)
    return {"invitee_name": name, "invitee_email": email, "tz": tz, "old_uuid": scheduler.uuid_of(old["uri"]),
            "old_start": old["start_time"], "day": iso(day2)[:10],
            "start": earliest(b, "discovery", day2, day2 + timedelta(days=1)),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['discovery']}"}  # fmt: skip


def deep_dive_link(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    return {"invitee_name": f"{first} {last}",
            "event_type": f"{scheduler.API}/event_types/{b.event_types['deep-dive']}"}  # fmt: skip


# --- sequencer --------------------------------------------------------------------------------------------------
def webinar_followup(b: Builder, rng: Dice) -> dict[str, Any]:
    tag = f"webinar-{b.anchor[5:7]}{b.anchor[8:10]}"
    ckey, comp = company(b, rng, with_account=True)
    account = account_for(b, comp["properties"]["name"])
    assert account is not None
    owner_id = comp["properties"]["hubspot_owner_id"]
    made = []
    for _ in range(5):
        _, contact = add_contact(b, rng, comp, ckey)
        made.append(add_prospect(b, {**contact["properties"], "hubspot_owner_id": owner_id}, account, [tag])["id"])
    opted, repeat = made[3], made[4]
    b.rows("sequencer.prospects")[str(opted)]["attributes"]["optedOut"] = True
    add_state(b, repeat, b.sequence_ids["Webinar Follow-up"], "finished", b.anchor)
    return {"tag": tag, "eligible": made[:3], "opted_out": opted, "repeat": repeat,
            "sequence_id": b.sequence_ids["Webinar Follow-up"], "mailbox": mailbox_of(b, owner_id),
            "owner": owner_name(b, owner_id)}  # fmt: skip


# --- prospecting ------------------------------------------------------------------------------------------------
def abm_scene(b: Builder, rng: Dice, with_account: bool) -> dict[str, Any]:
    """A target company with leads: some VP+ Engineering who changed jobs, and decoys that miss one filter."""
    ckey, comp = new_company(b, rng, with_account)
    name = comp["properties"]["name"]
    targets = []
    for level in (3, 4):  # VP, CXO
        targets.append(add_lead(b, rng, b.person(rng), name, function="Engineering", level=level, changed_jobs=True))
    add_lead(b, rng, b.person(rng), name, function="Engineering", level=3, changed_jobs=False)
    add_lead(b, rng, b.person(rng), name, function="Engineering", level=2, changed_jobs=True)
    add_lead(b, rng, b.person(rng), name, function="Sales", level=3, changed_jobs=True)
    key, _ = b.key("prospecting.lists")
    list_name = f"{name.split()[0]}-ABM"
    b.put("prospecting.lists", key, {"id": key, "name": list_name, "type": "LEAD", "shared": False}, "fixture")
    domain = comp["properties"]["domain"]
    return {"company": name, "company_id": ckey, "domain": domain, "list_id": key, "list_name": list_name,
            "targets": sorted(t["lead_id"] for t in targets),
            "target_emails": [f"{t['firstName'].lower()}.{t['lastName'].lower()}@{domain}" for t in targets],
            "target_people": [{"lead_id": t["lead_id"], "first": t["firstName"], "last": t["lastName"],
                               "title": t["title"],
                               "email": f"{t['firstName'].lower()}.{t['lastName'].lower()}@{domain}"}
                              for t in targets]}  # fmt: skip


def abm_list(b: Builder, rng: Dice) -> dict[str, Any]:
    return abm_scene(b, rng, with_account=False)


# --- two apps ---------------------------------------------------------------------------------------------------
def enrich_contacts(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    ids, titles = [], {}
    for _ in range(3):
        key, contact = add_contact(b, rng, comp, ckey, jobtitle="")
        p = contact["properties"]
        lead = add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"])
        ids.append(key)
        titles[key] = lead["title"]
    return {"company": comp["properties"]["name"], "contact_ids": ids, "titles": titles,
            "updates": [{"id": k, "properties": {"jobtitle": v}} for k, v in titles.items()]}  # fmt: skip


def meeting_to_deal(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead")
    p = contact["properties"]
    event = add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)),
                        f"{p['firstname']} {p['lastname']}", p["email"], rng.choice(TIMEZONES))
    return {"contact_id": key, "company_id": ckey, **person_params("contact", contact),
            "company": comp["properties"]["name"], "start": event["start_time"], "end": event["end_time"],
            "deal_name": f"{comp['properties']['name']} - New Business",
            "owner_int": int(p["hubspot_owner_id"]), "owner_id": p["hubspot_owner_id"]}  # fmt: skip


def sql_handoff(b: Builder, rng: Dice) -> dict[str, Any]:
    with_acc = company(b, rng, with_account=True)
    without = company(b, rng, with_account=False)
    people = []
    for ckey, comp in (with_acc, without):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="NEW")
        p = contact["properties"]
        account = account_for(b, p["company"])
        people.append({"contact_id": key, "name": f"{p['firstname']} {p['lastname']}", "email": p["email"],
                       "first": p["firstname"], "last": p["lastname"], "title": p["jobtitle"],
                       "company": p["company"], "domain": comp["properties"]["domain"],
                       "industry": comp["properties"]["industry"],
                       "account_id": None if account is None else account["id"],
                       "mailbox": mailbox_of(b, p["hubspot_owner_id"]),
                       "user": user_for_owner(b, p["hubspot_owner_id"])})  # fmt: skip
    return {"people": people, "contact_ids": [x["contact_id"] for x in people], "emails": [x["email"] for x in people],
            "sequence_id": b.sequence_ids["SQL Outbound"], "new_account_id": int(b.next_id("sequencer.accounts")),
            "name1": people[0]["name"], "name2": people[1]["name"]}  # fmt: skip


def inbound_deep_dive(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="OPEN")
    day = business_day(b, rng)
    return {"contact_id": key, **person_params("contact", contact), "after": iso(day)[:10],
            "start": earliest(b, "deep-dive", day), "tz": rng.choice(TIMEZONES),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['deep-dive']}"}  # fmt: skip


# --- three and four apps ----------------------------------------------------------------------------------------
def abm_outreach(b: Builder, rng: Dice) -> dict[str, Any]:
    params = abm_scene(b, rng, with_account=True)
    comp = b.rows("crm.companies")[params["company_id"]]
    owner_id = comp["properties"]["hubspot_owner_id"]
    account = account_for(b, params["company"])
    assert account is not None
    return {**params, "account_id": account["id"], "mailbox": mailbox_of(b, owner_id),
            "owner": owner_name(b, owner_id), "owner_id": owner_id, "sequence_id": b.sequence_ids["Exec Intro"],
            "user": user_for_owner(b, owner_id)}  # fmt: skip


def positive_reply(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng, with_account=True)
    account = account_for(b, comp["properties"]["name"])
    assert account is not None
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="ATTEMPTED_TO_CONTACT")
    p = contact["properties"]
    prospect = add_prospect(b, p, account, ["webinar"])
    state = add_state(b, prospect["id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor, replied=b.anchor)
    mkey, _ = b.key("sequencer.mailings")
    b.put("sequencer.mailings", mkey, {"type": "mailing", "id": int(mkey), "attributes": {"mailingType": "sequence",
          "state": "replied", "subject": "Re: following up on the webinar", "bodyText":
          "Thanks - yes, this looks relevant. Happy to set up a call.", "repliedAt": b.anchor},
          "relationships": {"prospect": {"data": {"type": "prospect", "id": prospect["id"]}}}}, "fixture")
    day = business_day(b, rng)
    start = earliest(b, "discovery", day)
    start_dt = parse_iso(start)
    assert start_dt is not None
    return {"contact_id": key, **person_params("contact", contact), "prospect_id": prospect["id"],
            "state_id": state["id"], "after": iso(day)[:10], "start": start,
            "end": iso(start_dt + timedelta(minutes=30)), "prep_due": iso(start_dt - timedelta(days=1))[:10],
            "prep_due_time": iso((start_dt - timedelta(days=1)).replace(hour=9, minute=0)),
            "tz": rng.choice(TIMEZONES), "owner_int": int(p["hubspot_owner_id"]),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['discovery']}"}  # fmt: skip


def dormant_winback(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng, with_account=True)
    name = comp["properties"]["name"]
    account = account_for(b, name)
    assert account is not None
    deal = add_deal(b, ckey, comp, f"{name} - platform", "default", "closedlost", amount(rng),
                    closedate=iso(b.start - timedelta(days=220))[:10])
    stayed, left, moves = [], [], {}
    for i in range(3):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle="opportunity")
        p = contact["properties"]
        associate_crm(b, "deals", deal, "contacts", key, 3)
        prospect = add_prospect(b, p, account, ["closed-lost"])
        if i == 0:
            new_company_name = rng.choice([c[0] for c in COMPANIES if c[0] != name])
            new_title = rng.choice(TITLES["Operations"])
            add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"],
                     left_for=(new_company_name, new_title))
            left.append(key)
            moves[key] = {"company": new_company_name, "jobtitle": new_title, "prospect": prospect["id"]}
        else:
            add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"])
            stayed.append({"contact_id": key, "prospect": prospect["id"]})
    owner_id = comp["properties"]["hubspot_owner_id"]
    return {"company": name, "deal_id": deal, "left_id": left[0], "left_company": moves[left[0]]["company"],
            "left_title": moves[left[0]]["jobtitle"], "left_prospect": moves[left[0]]["prospect"],
            "stayed_prospects": [s["prospect"] for s in stayed],
            "contact_ids": [left[0], *(s["contact_id"] for s in stayed)],
            "sequence_id": b.sequence_ids["Win-back"], "mailbox": mailbox_of(b, owner_id),
            "owner": owner_name(b, owner_id)}  # fmt: skip


def new_exec(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng, with_account=True)
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    account = account_for(b, name)
    assert account is not None
    lead = add_lead(b, rng, b.person(rng), name, function=rng.choice(("Engineering", "Operations", "Finance")),
                    level=4, changed_jobs=True)
    owner_id = comp["properties"]["hubspot_owner_id"]
    day = business_day(b, rng)
    start = earliest(b, "demo", day)
    start_dt = parse_iso(start)
    assert start_dt is not None
    return {"company": name, "company_id": ckey, "lead_id": lead["lead_id"], "title": lead["title"],
            "first": lead["firstName"], "last": lead["lastName"], "name": f"{lead['firstName']} {lead['lastName']}",
            "email": f"{lead['firstName'].lower()}.{lead['lastName'].lower()}@{domain}", "account_id": account["id"],
            "owner_id": owner_id, "owner_int": int(owner_id), "owner": owner_name(b, owner_id),
            "user": user_for_owner(b, owner_id), "mailbox": mailbox_of(b, owner_id),
            "sequence_id": b.sequence_ids["Exec Intro"], "after": iso(day)[:10], "start": start,
            "end": iso(start_dt + timedelta(minutes=30)), "tz": rng.choice(TIMEZONES),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip


def inbound_enterprise(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng, with_account=True)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW", jobtitle="")
    p = contact["properties"]
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"], function="Operations", level=3)
    account = account_for(b, p["company"])
    assert account is not None
    day = business_day(b, rng)
    start = earliest(b, "demo", day)
    start_dt = parse_iso(start)
    assert start_dt is not None
    owner_id = p["hubspot_owner_id"]
    return {"contact_id": key, **person_params("contact", contact), "first": p["firstname"], "last": p["lastname"],
            "company": p["company"], "title": lead["title"], "account_id": account["id"],
            "user": user_for_owner(b, owner_id), "mailbox": mailbox_of(b, owner_id), "owner_int": int(owner_id),
            "sequence_id": b.sequence_ids["SQL Outbound"], "after": iso(day)[:10], "start": start,
            "end": iso(start_dt + timedelta(minutes=30)), "tz": rng.choice(TIMEZONES),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip
