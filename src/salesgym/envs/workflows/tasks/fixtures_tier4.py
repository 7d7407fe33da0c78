"""Fixtures of the four-app templates (``catalogue/templates/*.json``): each sets its template's scene in the
seeded population and returns the instance's parameters, as the fixtures of ``fixtures.py`` do.

Most scenes share a core (``scene``, in ``scenes.py`` with the other shared helpers): a company with its
sequencer account, a person with a Sales Navigator profile (and, as the scene asks, a CRM contact and a
prospect), the company owner's user and mailbox, and an open slot of an event type computed with the scheduler's
own rule. Each fixture then adds the twist its template is about (an opted-out prospect, a locked user, a left
account, a past booking, a duplicate...).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import (
    COMPANIES,
    REGIONS,
    TITLES,
    TLDS,
    Builder,
    account_for,
    add_contact,
    add_deal,
    add_lead,
    add_prospect,
    add_prospecting_account,
    add_rep,
    add_state,
    associate_crm,
    domain_of,
)
from salesgym.envs.workflows.tasks.fixtures import (
    TIMEZONES,
    amount,
    business_day,
    company,
    earliest,
    owner_name,
)
from salesgym.envs.workflows.tasks.scenes import (
    COVER_TEAM,
    DISABLED,
    EXCLUSIVE,
    GEOGRAPHY_REGION,
    PLAYBOOKS,
    SQL_STAGE,
    add_sequence,
    day_before_nine,
    event_type_uri,
    future_booking,
    lead_params,
    lock_user,
    mailing,
    new_list,
    other_company,
    other_owner,
    owner_params,
    past_booking,
    person_at,
    prospect_for,
    quiet,
    region_owner,
    save_member,
    scene,
    slot,
)


# --- inbound ----------------------------------------------------------------------------------------------------
def inbound_existing_records(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, prospect=True)
    local, domain = p["email"].split("@")
    return {**p, "form_email": f"{local.capitalize()}@{domain.upper()}"}  # the same address, another spelling


def inbound_opted_out(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng)
    prospect_for(b, p, opted_out=True)
    return {**p, "call_due": day_before_nine(p["start"])}


def inbound_exclusive(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lead_status="OPEN")
    prospect_for(b, p, tags=("nurture",))
    p["nurture_state"] = add_state(b, p["prospect_id"], b.sequence_ids[EXCLUSIVE], "active", b.anchor)["id"]
    return p


def inbound_lifecycle(b: Builder, rng: Dice) -> dict[str, Any]:
    return scene(b, rng, lifecycle="customer", lead_status="OPEN")


def inbound_new_company(b: Builder, rng: Dice) -> dict[str, Any]:
    used = {c["properties"]["name"] for c in b.rows("crm.companies").values()}
    name, industry = rng.choice([c for c in COMPANIES if c[0] not in used])  # in neither the CRM nor the sequencer
    domain, headcount = domain_of(name, rng.choice(TLDS)), 300 + 100 * rng.randint(1, 40)
    add_prospecting_account(b, name, industry, headcount)
    lead = add_lead(b, rng, b.person(rng), name, function="Operations", level=rng.randint(2, 4))
    return {"company": name, "domain": domain, "industry": industry, "headcount": str(headcount),
            "tz": rng.choice(TIMEZONES), **lead_params(lead, domain), **owner_params(b, other_owner(b, rng, "")),
            "sequence_id": b.sequence_ids["SQL Outbound"], **slot(b, rng, "demo")}  # fmt: skip


def inbound_timezone(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", lifecycle="marketingqualifiedlead", lead_status="OPEN",
              jobtitle=None, sequence="Webinar Follow-up")  # fmt: skip
    prospect_for(b, p, tags=("webinar",))
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)["id"]
    p["list_name"] = f"Inbound {b.anchor[:7]}"
    p["list_id"] = new_list(b, p["list_name"])
    return p


def inbound_referral(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lifecycle="customer", lead_status="CONNECTED", jobtitle=None)
    p.update(person_at(b, rng, p["company"], p["domain"], "ref_", function="Finance", level=rng.randint(1, 3)))
    return p


def inbound_region(b: Builder, rng: Dice) -> dict[str, Any]:
    geography = rng.choice(list(GEOGRAPHY_REGION))
    p = scene(b, rng, jobtitle=None, geography=geography)
    target = region_owner(b, GEOGRAPHY_REGION[geography])
    if target == p["owner_id"]:  # the contact must start with the wrong owner
        contact = b.rows("crm.contacts")[p["contact_id"]]
        wrong = other_owner(b, rng, target)
        contact["properties"] = {**contact["properties"], "hubspot_owner_id": wrong}
    region = REGIONS[GEOGRAPHY_REGION[geography]][0]
    return {**p, **owner_params(b, target, "new_"), "geography": geography, "region": region}


# --- outbound ---------------------------------------------------------------------------------------------------
def _target_company(b: Builder, rng: Dice) -> tuple[str, dict[str, Any], dict[str, Any]]:
    ckey, comp = company(b, rng, with_account=True)
    account = account_for(b, comp["properties"]["name"])
    assert account is not None
    quiet(b, comp["properties"]["name"])
    return ckey, comp, account


def _people(leads: list[dict[str, Any]], domain: str) -> list[dict[str, Any]]:
    return [lead_params(lead, domain) for lead in leads]


def _company_params(b: Builder, ckey: str, comp: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    props = comp["properties"]
    return {"company": props["name"], "company_id": ckey, "domain": props["domain"], "account_id": account["id"],
            **owner_params(b, props["hubspot_owner_id"])}  # fmt: skip


def free_inmails(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    reach = ((1, False), (3, True), (2, False))  # (degree, Open Profile): two free to reach, one not
    leads = [add_lead(b, rng, b.person(rng), name, function="Sales", level=3 + i % 2, degree=degree,
                      open_profile=open_profile) for i, (degree, open_profile) in enumerate(reach)]  # fmt: skip
    add_lead(b, rng, b.person(rng), name, function="Sales", level=2, degree=1)  # a decoy below VP
    add_lead(b, rng, b.person(rng), name, function="Marketing", level=4, open_profile=True)  # another function
    b.rows("prospecting.credits")["inmail"] = {**b.rows("prospecting.credits")["inmail"], "available": 0}
    people = _people(leads, comp["properties"]["domain"])
    return {**_company_params(b, ckey, comp, account), "people": people, "emails": [x["email"] for x in people],
            "free": sorted(x["lead_id"] for x in people[:2]), "paid": people[2]["lead_id"],
            "paid_email": people[2]["email"], "sequence_id": b.sequence_ids["Exec Intro"],
            "event_type": event_type_uri(b, "demo")}  # fmt: skip


def list_dedupe(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    leads = [add_lead(b, rng, b.person(rng), name, function="Finance", level=lvl) for lvl in (2, 3, 4)]
    add_lead(b, rng, b.person(rng), name, function="Finance", level=1)
    add_lead(b, rng, b.person(rng), name, function="Operations", level=3)
    people = _people(leads, comp["properties"]["domain"])
    list_name = f"{name.split()[0]}-Finance"
    list_id = new_list(b, list_name)
    save_member(b, list_id, people[0]["lead_id"])  # already saved
    key, _ = add_contact(b, rng, comp, ckey, lifecycle="lead", jobtitle="Finance Manager",
                         person=(people[1]["first"], people[1]["last"]))  # already in the CRM, an old title
    return {**_company_params(b, ckey, comp, account), "people": people, "emails": [x["email"] for x in people],
            "targets": sorted(x["lead_id"] for x in people), "list_id": list_id, "list_name": list_name,
            "known_id": key, "sequence_id": b.sequence_ids["Exec Intro"], "event_type": event_type_uri(b, "deep-dive")}


def champion_moved(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, _ = _target_company(b, rng)
    name = comp["properties"]["name"]
    nkey, ncomp = other_company(b, rng, name)
    naccount = account_for(b, ncomp["properties"]["name"])
    assert naccount is not None
    old_key, old = add_contact(b, rng, comp, ckey, lifecycle="customer", lead_status="CONNECTED")
    p = old["properties"]
    new_title = rng.choice(TITLES[rng.choice(("Engineering", "Operations"))][2:])
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"],
                    left_for=(ncomp["properties"]["name"], new_title))
    out = {**_company_params(b, nkey, ncomp, naccount), **lead_params(lead, ncomp["properties"]["domain"]),
           "old_company": name, "old_id": old_key, "old_email": p["email"], "title": new_title,
           "sequence_id": b.sequence_ids["Exec Intro"], "tz": rng.choice(TIMEZONES), **slot(b, rng, "demo")}
    return out


def locked_cover(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    leads = [add_lead(b, rng, b.person(rng), name, function="Marketing", level=lvl, changed_jobs=True)
             for lvl in (2, 4)]  # fmt: skip
    add_lead(b, rng, b.person(rng), name, function="Marketing", level=3, changed_jobs=False)
    add_lead(b, rng, b.person(rng), name, function="Marketing", level=1, changed_jobs=True)
    params = _company_params(b, ckey, comp, account)
    lock_user(b, params["user"])
    for _ in range(COVER_TEAM):
        add_rep(b, rng)
    cover = other_owner(b, rng, params["owner_id"])  # one of thirteen: a guess is right 1 time in 13
    people = _people(leads, comp["properties"]["domain"])
    return {**params, **owner_params(b, cover, "cover_"), "people": people, "emails": [x["email"] for x in people],
            "cover": f"{owner_name(b, cover)} covers {params['owner']}'s accounts while they are away",
            "sequence_id": b.sequence_ids["Exec Intro"], "tz": rng.choice(TIMEZONES), "name": people[0]["name"],
            "email": people[0]["email"], **slot(b, rng, "discovery")}  # fmt: skip


def private_sequence(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", contact=False, function="Operations", level=4)
    seq_name = f"{p['owner'].split()[0]}'s Executive Plays"
    p["sequence_id"] = add_sequence(b, seq_name, private_owner=p["user"])
    add_lead(b, rng, b.person(rng), p["company"], function="Operations", level=3)
    return {**p, "sequence_name": seq_name, "deal_name": f"{p['company']} - executive program"}


def disabled_sequence(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    leads = [add_lead(b, rng, b.person(rng), name, function="Operations", level=lvl, changed_jobs=True)
             for lvl in (3, 4)]  # fmt: skip
    add_lead(b, rng, b.person(rng), name, function="Operations", level=2, changed_jobs=True)
    people = _people(leads, comp["properties"]["domain"])
    for name in rng.sample(PLAYBOOKS, len(PLAYBOOKS) // 2):
        add_sequence(b, name)
    usable = [s for s, r in b.rows("sequencer.sequences").items() if r["attributes"]["enabled"]
              and r["attributes"]["ruleset"]["sequenceExclusivity"] == "none"]  # fmt: skip
    fallback = b.rows("sequencer.sequences")[rng.choice(usable)]  # one of sixteen: a guess is right 1 time in 16
    name = fallback["attributes"]["name"]
    return {**_company_params(b, ckey, comp, account), "people": people, "emails": [x["email"] for x in people],
            "fallback": f"Use \"{name}\" while {DISABLED} is switched off", "fallback_name": name,
            "sequence_id": fallback["id"], "disabled_id": b.sequence_ids[DISABLED],
            "tz": rng.choice(TIMEZONES),
            "name": people[1]["name"], "email": people[1]["email"], **slot(b, rng, "demo")}  # fmt: skip


def geo_campaign(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    geography = rng.choice(list(GEOGRAPHY_REGION))
    leads = []
    for lvl in (3, 4):
        lead = add_lead(b, rng, b.person(rng), name, function="Sales", level=lvl)
        lead["geography"] = geography
        leads.append(lead)
    decoy = add_lead(b, rng, b.person(rng), name, function="Sales", level=4)
    decoy["geography"] = "United Kingdom"
    low = add_lead(b, rng, b.person(rng), name, function="Sales", level=1)
    low["geography"] = geography
    region = GEOGRAPHY_REGION[geography]
    people = _people(leads, comp["properties"]["domain"])
    return {**_company_params(b, ckey, comp, account), **owner_params(b, region_owner(b, region), "region_"),
            "geography": geography, "region": REGIONS[region][0], "people": people,
            "emails": [x["email"] for x in people], "sequence_id": b.sequence_ids["Exec Intro"],
            "event_type": event_type_uri(b, "demo"), "legacy": event_type_uri(b, "legacy-intro")}  # fmt: skip


def inmail_reply(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, contact=False, sequence="Exec Intro", level=4)
    prospect_for(b, p, tags=("exec",))
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["Exec Intro"], "active", b.anchor)["id"]
    others = [add_lead(b, rng, b.person(rng), p["company"], level=4) for _ in range(2)]
    sent = b.start - timedelta(days=6)
    for lead, replied in ((others[0], False), ({"lead_id": p["lead_id"], "urn": p["urn"]}, True), (others[1], False)):
        key, _ = b.key("prospecting.inmails")
        b.put("prospecting.inmails", key, {"id": key, "recipient_urn": lead["urn"], "lead_id": lead["lead_id"],
              "subject": "Quick question", "body": "Would a short demo be useful?", "sent_at": iso(sent),
              "credit_spent": True, "replied": replied}, "fixture")  # fmt: skip
    return p


def no_credit_fallback(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", lifecycle="lead", jobtitle=None, function="Engineering", level=4,
              sequence="Exec Intro", degree=2, open_profile=False)  # fmt: skip
    b.rows("prospecting.credits")["inmail"] = {**b.rows("prospecting.credits")["inmail"], "available": 0}
    return {**p, "call_due": iso(business_day(b, rng, 1, 2).replace(hour=10))}


# --- pipeline ---------------------------------------------------------------------------------------------------
def _deal(b: Builder, rng: Dice, p: dict[str, Any], name: str, stage: str, pipeline: str = "default",
          contact: str = "contact_id") -> str:  # fmt: skip
    comp = b.rows("crm.companies")[p["company_id"]]
    deal = add_deal(b, p["company_id"], comp, name, pipeline, stage, amount(rng))
    associate_crm(b, "deals", deal, "contacts", p[contact], 3)
    p["deal_id"], p["deal_id_int"], p["deal_name"] = deal, int(deal), name
    return deal


def multi_thread(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", lifecycle="opportunity", lead_status="OPEN_DEAL", jobtitle=None,
              function="Engineering", level=2, sequence="Exec Intro")  # fmt: skip
    _deal(b, rng, p, f"{p['company']} - platform rollout", "qualifiedtobuy")
    leads = [add_lead(b, rng, b.person(rng), p["company"], function=f, level=lvl)
             for f, lvl in (("Finance", 4), ("Operations", 3))]  # fmt: skip
    add_lead(b, rng, b.person(rng), p["company"], function="Finance", level=1)
    p["people"] = _people(leads, p["domain"])
    return p


def demo_held(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", lifecycle=SQL_STAGE, lead_status="CONNECTED", jobtitle=None)
    held = past_booking(b, "demo", 3, rng.randint(10, 15), p["name"], p["email"], p["tz"])["event"]
    _deal(b, rng, p, f"{p['company']} - new business", "appointmentscheduled")
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
    p["list_name"] = "Active opportunities"
    p["list_id"] = new_list(b, p["list_name"])
    return {**p, "held_start": held["start_time"], "held_end": held["end_time"], "amount": amount(rng)}


def no_show(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="CONNECTED", jobtitle="Analyst")
    booking = past_booking(b, "demo", 2, rng.randint(9, 15), p["name"], p["email"], p["tz"])
    prospect_for(b, p)
    p["sequence_id"] = add_sequence(b, "No-show Recovery", ("email", "call"))
    return {**p, "invitee_uri": booking["invitee"]["uri"], "invitee_key": scheduler.uuid_of(booking["invitee"]["uri"]),
            "held_start": booking["event"]["start_time"],
            "held_end": booking["event"]["end_time"]}  # fmt: skip


def renewal_buyer(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", contact=False, function="Finance", level=4)
    comp = b.rows("crm.companies")[p["company_id"]]
    deal = add_deal(b, p["company_id"], comp, f"{p['company']} - renewal {b.anchor[:4]}", b.renewal["pipeline"],
                    b.renewal["due"], amount(rng))  # fmt: skip
    add_lead(b, rng, b.person(rng), p["company"], function="Finance", level=3)
    p["sequence_id"] = add_sequence(b, "Renewal Outreach", ("email", "call"))
    return {**p, "deal_id": deal, "deal_id_int": int(deal), "amount": amount(rng)}


def won_kickoff(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="deep-dive", lifecycle="opportunity", lead_status="OPEN_DEAL", jobtitle=None)
    _deal(b, rng, p, f"{p['company']} - new business", "contractsent")
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
    p["list_name"] = "Customers"
    p["list_id"] = new_list(b, p["list_name"])
    return {**p, "amount": amount(rng), "close_date": b.anchor[:10]}


def lost_champion(b: Builder, rng: Dice) -> dict[str, Any]:
    new_title = rng.choice(TITLES["Operations"][2:])
    p = scene(b, rng, lifecycle="opportunity", lead_status="OPEN_DEAL", jobtitle=None, level=3)
    moved_to = rng.choice([c[0] for c in COMPANIES if c[0] != p["company"]])
    lead = b.rows("prospecting.leads")[p["lead_id"]]
    b.rows("prospecting.leads")[p["lead_id"]] = {**lead, "left_account": True, "current_company": moved_to,
                                                 "current_title": new_title}  # fmt: skip
    _deal(b, rng, p, f"{p['company']} - platform", "decisionmakerboughtin")
    upcoming = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"])["event"]
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
    return {**p, "new_company": moved_to, "new_title": new_title, "old_uuid": scheduler.uuid_of(upcoming["uri"])}


def expansion_reply(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lifecycle="customer", lead_status="CONNECTED", jobtitle=None,
              sequence="Webinar Follow-up")  # fmt: skip
    prospect_for(b, p, tags=("customer",))
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor,
                              replied=b.anchor)["id"]  # fmt: skip
    mailing(b, p["prospect_id"], "replied", "Re: what's new this quarter",
            "Interesting - we would like to add seats for a second team. Can we talk?")
    p["list_name"] = "Expansion"
    p["list_id"] = new_list(b, p["list_name"])
    value = amount(rng)
    return {**p, "amount": value, "amount_num": int(value), "deal_name": f"{p['company']} - expansion {b.anchor[:7]}"}


def reschedule_ask(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="CONNECTED")
    old = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"], 2, 3)["event"]
    prospect_for(b, p)
    day = business_day(b, rng, 6, 10)
    start = earliest(b, "demo", day, day + timedelta(days=1))
    moment = parse_iso(start)
    assert moment is not None
    return {**p, "old_uuid": scheduler.uuid_of(old["uri"]), "old_start": old["start_time"], "start": start,
            "end": iso(moment + timedelta(minutes=30)), "day": iso(day)[:10],
            "new_day": f"They asked to move it to {day.strftime('%A')} {iso(day)[:10]}",
            "reminder_due": day_before_nine(start)}  # fmt: skip


def booking_to_deal(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, contact=False, sequence="Webinar Follow-up")
    event = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"])["event"]
    prospect_for(b, p, tags=("webinar",))
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)["id"]
    return {**p, "start": event["start_time"], "end": event["end_time"],
            "deal_name": f"{p['company']} - New Business"}  # fmt: skip



# --- re-engagement ----------------------------------------------------------------------------------------------
def _lost_account(b: Builder, rng: Dice, n: int, lifecycle: str = "opportunity") -> dict[str, Any]:
    """A closed-lost deal some months old with ``n`` contacts, each with a profile and a prospect."""
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    deal = add_deal(b, ckey, comp, f"{p['company']} - platform", "default", "closedlost", amount(rng),
                    closedate=iso(b.start - timedelta(days=200))[:10])  # fmt: skip
    people = []
    for _ in range(n):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle=lifecycle)
        c = contact["properties"]
        associate_crm(b, "deals", deal, "contacts", key, 3)
        lead = add_lead(b, rng, (c["firstname"], c["lastname"]), p["company"], title=c["jobtitle"])
        person = {**lead_params(lead, p["domain"]), "contact_id": key, "contact_id_int": int(key)}
        person["prospect_id"] = int(add_prospect(b, c, account, ["closed-lost"])["id"])
        people.append(person)
    return {**p, "deal_id": deal, "people": people}


def _leave(b: Builder, rng: Dice, lead_id: str, to: str | None = None) -> tuple[str, str]:
    lead = b.rows("prospecting.leads")[lead_id]
    company_name = to or rng.choice([c[0] for c in COMPANIES if c[0] != lead["company"]])
    title = rng.choice(TITLES[rng.choice(("Operations", "Finance"))][1:])
    b.rows("prospecting.leads")[lead_id] = {**lead, "left_account": True, "current_company": company_name,
                                            "current_title": title}  # fmt: skip
    return company_name, title


def winback_evergreen(b: Builder, rng: Dice) -> dict[str, Any]:
    p = _lost_account(b, rng, 3)
    p["sequence_id"] = add_sequence(b, "Win-back Evergreen", duplicates=True)
    for person in p["people"]:
        add_state(b, person["prospect_id"], p["sequence_id"], "finished", iso(b.start - timedelta(days=150)))
    left = p["people"][0]
    p["left_company"], p["left_title"] = _leave(b, rng, left["lead_id"])
    p["old_uuid"] = scheduler.uuid_of(future_booking(b, rng, "discovery", left["name"], left["email"],
                                                     rng.choice(TIMEZONES))["event"]["uri"])  # fmt: skip
    return {**p, "left": left, "stayed": [x["prospect_id"] for x in p["people"][1:]]}


def winback_inmail(b: Builder, rng: Dice) -> dict[str, Any]:
    p = _lost_account(b, rng, 1)
    person = p["people"][0]
    b.rows("sequencer.prospects")[str(person["prospect_id"])]["attributes"]["optedOut"] = True
    lead = b.rows("prospecting.leads")[person["lead_id"]]
    b.rows("prospecting.leads")[person["lead_id"]] = {**lead, "open_profile": True, "degree": 3}
    return {**p, **person, "event_type": event_type_uri(b, "demo"), "tag": "winback-inmail"}


def winback_reply(b: Builder, rng: Dice) -> dict[str, Any]:
    p = _lost_account(b, rng, 2, lifecycle="lead")
    person = p["people"][1]
    p["state_id"] = add_state(b, person["prospect_id"], b.sequence_ids["Win-back"], "active", b.anchor,
                              replied=b.anchor)["id"]  # fmt: skip
    mailing(b, person["prospect_id"], "replied", "Re: checking back in", "Good timing - we are revisiting this. "
            "Could we see a demo?")
    add_state(b, p["people"][0]["prospect_id"], b.sequence_ids["Win-back"], "active", b.anchor)
    p["list_name"] = "Win-back replies"
    p["list_id"] = new_list(b, p["list_name"])
    return {**p, **person, "tz": rng.choice(TIMEZONES), "new_deal": f"{p['company']} - win-back {b.anchor[:4]}",
            **slot(b, rng, "demo")}  # fmt: skip


def winback_follow(b: Builder, rng: Dice) -> dict[str, Any]:
    p = _lost_account(b, rng, 3)
    nkey, ncomp = other_company(b, rng, p["company"])
    naccount = account_for(b, ncomp["properties"]["name"])
    assert naccount is not None
    left = p["people"][0]
    _, title = _leave(b, rng, left["lead_id"], ncomp["properties"]["name"])
    add_state(b, p["people"][2]["prospect_id"], b.sequence_ids["Win-back"], "finished",
              iso(b.start - timedelta(days=90)))  # fmt: skip
    moved = {**lead_params(b.rows("prospecting.leads")[left["lead_id"]], ncomp["properties"]["domain"]),
             "title": title, "company": ncomp["properties"]["name"], "company_id": nkey, "account_id": naccount["id"],
             **owner_params(b, ncomp["properties"]["hubspot_owner_id"])}  # fmt: skip
    return {**p, "moved": moved, "left_name": left["name"], "stayed": p["people"][1]["prospect_id"],
            "repeat": p["people"][2]["prospect_id"], "winback_id": b.sequence_ids["Win-back"],
            "intro_id": b.sequence_ids["Exec Intro"], "event_type": event_type_uri(b, "demo")}  # fmt: skip


def bad_timing(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    people = []
    for _ in range(3):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="BAD_TIMING")
        c = contact["properties"]
        lead = add_lead(b, rng, (c["firstname"], c["lastname"]), p["company"], title=c["jobtitle"])
        person = {**lead_params(lead, p["domain"]), "contact_id": key}
        person["prospect_id"] = int(add_prospect(b, c, account, ["bad-timing"])["id"])
        people.append(person)
    add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="OPEN")  # not part of it
    p["left_company"], p["left_title"] = _leave(b, rng, people[0]["lead_id"])
    add_state(b, people[2]["prospect_id"], b.sequence_ids["SQL Outbound"], "finished",
              iso(b.start - timedelta(days=70)))
    return {**p, "people": people, "contact_ids": [x["contact_id"] for x in people],
            "sql_id": b.sequence_ids["SQL Outbound"], "winback_id": b.sequence_ids["Win-back"],
            "event_type": event_type_uri(b, "discovery")}  # fmt: skip


def bounced(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lifecycle=SQL_STAGE, lead_status="ATTEMPTED_TO_CONTACT", jobtitle=None)
    lead = b.rows("prospecting.leads")[p["lead_id"]]
    p["new_company"], p["new_title"] = _leave(b, rng, p["lead_id"])
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
    mailing(b, p["prospect_id"], "bounced", "Following up", "Hi - following up on my last note.")
    p["old_uuid"] = scheduler.uuid_of(future_booking(b, rng, "discovery", p["name"], p["email"], p["tz"])["event"]
                                      ["uri"])  # fmt: skip
    successor = add_lead(b, rng, b.person(rng), p["company"], title=lead["title"])
    return {**p, **lead_params(successor, p["domain"], "succ_")}


def churned_exec(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, contact=False, level=4, changed_jobs=True, sequence="Exec Intro")
    comp = b.rows("crm.companies")[p["company_id"]]
    add_deal(b, p["company_id"], comp, f"{p['company']} - renewal {int(b.anchor[:4]) - 1}", b.renewal["pipeline"],
             b.renewal["churned"], amount(rng))  # churned
    add_lead(b, rng, b.person(rng), p["company"], level=4, changed_jobs=False)
    add_lead(b, rng, b.person(rng), p["company"], level=2, changed_jobs=True)
    return {**p, "deal_name": f"{p['company']} - win-back"}


def nurture_block(b: Builder, rng: Dice) -> dict[str, Any]:
    p = _lost_account(b, rng, 1)
    person = p["people"][0]
    state = add_state(b, person["prospect_id"], b.sequence_ids[EXCLUSIVE], "active", b.anchor)
    lead = b.rows("prospecting.leads")[person["lead_id"]]
    title = rng.choice([t for t in TITLES["Operations"] if t != lead["title"]])  # promoted since the loss
    b.rows("prospecting.leads")[person["lead_id"]] = {**lead, "title": title, "current_title": title}
    person["title"] = title
    return {**p, **person, "nurture_state": state["id"], "sequence_id": b.sequence_ids["Win-back"],
            "event_type": event_type_uri(b, "discovery")}  # fmt: skip


# --- handoff ----------------------------------------------------------------------------------------------------
def sdr_to_ae(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="CONNECTED", jobtitle=None)
    past_booking(b, "discovery", 3, rng.randint(10, 15), p["name"], p["email"], p["tz"])
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor,
                              mailbox=p["mailbox"])["id"]  # fmt: skip
    ae = owner_params(b, other_owner(b, rng, p["owner_id"]), "ae_")
    p["followup_id"] = add_sequence(b, "AE Follow-up", ("email", "call"))
    p["list_name"] = f"{ae['ae_owner'].split()[0]}'s pipeline"
    p["list_id"] = new_list(b, p["list_name"])
    return {**p, **ae, "deal_name": f"{p['company']} - New Business"}


def rep_leaving(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    people = []
    for _ in range(2):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle=SQL_STAGE)
        c = contact["properties"]
        lead = add_lead(b, rng, (c["firstname"], c["lastname"]), p["company"], title=c["jobtitle"])
        person = {**lead_params(lead, p["domain"]), "contact_id": key, "contact_id_int": int(key)}
        person["prospect_id"] = int(add_prospect(b, c, account, ["q1-import"])["id"])
        person["state_id"] = add_state(b, person["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor,
                                       mailbox=p["mailbox"])["id"]  # fmt: skip
        people.append(person)
    booking = future_booking(b, rng, "demo", people[0]["name"], people[0]["email"], rng.choice(TIMEZONES))["event"]
    new = owner_params(b, other_owner(b, rng, p["owner_id"]), "new_")
    p["handoff_id"] = add_sequence(b, "Handoff Intro")
    list_name = f"{new['new_owner'].split()[0]}'s accounts"
    return {**p, **new, "people": people, "contact_ids": [x["contact_id"] for x in people],
            "state_ids": [x["state_id"] for x in people], "leads": sorted(x["lead_id"] for x in people),
            "start": booking["start_time"], "end": booking["end_time"], "list_name": list_name,
            "list_id": new_list(b, list_name)}  # fmt: skip


def territory_move(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lifecycle=SQL_STAGE, lead_status="OPEN", jobtitle=None)
    contact = b.rows("crm.contacts")[p["contact_id"]]["properties"]
    choices = [g for g, r in GEOGRAPHY_REGION.items() if g != contact["country"] and
               region_owner(b, r) != p["owner_id"]]  # fmt: skip
    geography = rng.choice(choices)
    lead = b.rows("prospecting.leads")[p["lead_id"]]
    b.rows("prospecting.leads")[p["lead_id"]] = {**lead, "geography": geography}
    prospect_for(b, p)
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor,
                              mailbox=p["mailbox"])["id"]  # fmt: skip
    target = region_owner(b, GEOGRAPHY_REGION[geography])
    return {**p, **owner_params(b, target, "new_"), "geography": geography, "intro_id": b.sequence_ids["Exec Intro"]}


def partner_private(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, contact=False)
    p["sequence_id"] = add_sequence(b, "Partner Referrals", private_owner=p["user"])
    return {**p, "partner": rng.choice(("Brightline Consulting", "Northwind Partners", "Keystone Advisory"))}


# --- enrichment and hygiene -------------------------------------------------------------------------------------
def route_by_seniority(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    people = []
    for level in (1, 3, 4):
        key, contact = add_contact(b, rng, comp, ckey, jobtitle="")
        c = contact["properties"]
        lead = add_lead(b, rng, (c["firstname"], c["lastname"]), p["company"], level=level)
        people.append({**lead_params(lead, p["domain"]), "contact_id": key, "contact_id_int": int(key)})
    top = people[2]
    return {**p, "people": people, "contact_ids": [x["contact_id"] for x in people],
            "updates": [{"id": x["contact_id"], "properties": {"jobtitle": x["title"]}} for x in people],
            "name": top["name"], "email": top["email"], "contact_id": top["contact_id"],
            "contact_id_int": top["contact_id_int"],
            "intro_id": b.sequence_ids["Exec Intro"], "sql_id": b.sequence_ids["SQL Outbound"],
            "tz": rng.choice(TIMEZONES), **slot(b, rng, "deep-dive")}  # fmt: skip


def headcount_route(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="OPEN")
    comp = b.rows("crm.companies")[p["company_id"]]
    comp["properties"] = {**comp["properties"], "numberofemployees": ""}
    headcount = rng.choice((300, 650, 900)) if rng.random() < 0.5 else rng.choice((1400, 3200, 8800))
    acc = next(a for a in b.rows("prospecting.accounts").values() if a["name"] == p["company"])
    b.rows("prospecting.accounts")[acc["account_id"]] = {**acc, "headcount": headcount}
    prospect_for(b, p, tags=("webinar",))
    p["webinar_state"] = add_state(b, p["prospect_id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)["id"]
    old = add_state(b, p["prospect_id"], b.sequence_ids["Exec Intro"], "finished", iso(b.start - timedelta(days=60)))
    big = headcount >= 1000
    return {**p, "headcount": str(headcount),
            "sequence_id": b.sequence_ids[EXCLUSIVE] if big else b.sequence_ids["SQL Outbound"],
            "webinar_expected": "finished" if big else "active",
            # the reference finishes the webinar state only when the exclusive rule needs it; else it finishes an
            # enrolment that is over already (idempotent: no change), so its calls are the same in both cases
            "finish_id": p["webinar_state"] if big else old["id"]}


def double_booking(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, jobtitle="", sequence="Webinar Follow-up")
    first = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"], 2, 4)["event"]
    second = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"], 6, 9)["event"]
    prospect_for(b, p, tags=("webinar",))
    p["state_id"] = add_state(b, p["prospect_id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)["id"]
    return {**p, "start": first["start_time"], "end": first["end_time"], "kept_uuid": scheduler.uuid_of(first["uri"]),
            "old_uuid": scheduler.uuid_of(second["uri"])}  # fmt: skip


def job_change_sweep(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    people = []
    for _ in range(3):
        key, contact = add_contact(b, rng, comp, ckey, lifecycle=SQL_STAGE, lead_status="ATTEMPTED_TO_CONTACT")
        c = contact["properties"]
        lead = add_lead(b, rng, (c["firstname"], c["lastname"]), p["company"], title=c["jobtitle"])
        person = {**lead_params(lead, p["domain"]), "contact_id": key}
        person["prospect_id"] = int(add_prospect(b, c, account, ["sweep"])["id"])
        person["state_id"] = add_state(b, person["prospect_id"], b.sequence_ids["SQL Outbound"], "active", b.anchor,
                                       mailbox=p["mailbox"])["id"]  # fmt: skip
        people.append(person)
    leaver = rng.randint(0, 2)
    new_company_name, new_title = _leave(b, rng, people[leaver]["lead_id"])
    event = future_booking(b, rng, "discovery", people[leaver]["name"], people[leaver]["email"],
                           rng.choice(TIMEZONES))["event"]  # fmt: skip
    stayed = [x for i, x in enumerate(people) if i != leaver]
    return {**p, "people": people, "leaver": people[leaver], "stayed": stayed, "new_company": new_company_name,
            "new_title": new_title, "old_uuid": scheduler.uuid_of(event["uri"])}  # fmt: skip


def wrong_account(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="OPEN", jobtitle=None)
    _, other = other_company(b, rng, p["company"])
    contact = b.rows("crm.contacts")[p["contact_id"]]
    contact["properties"] = {**contact["properties"], "company": other["properties"]["name"]}
    for key in [k for k, a in b.rows("crm.associations").items()
                if p["contact_id"] in (a["fromId"], a["toId"]) and "companies" in (a["fromObjectType"],
                                                                                   a["toObjectType"])]:  # fmt: skip
        b.rows("crm.associations").pop(key)
        b.provenance.pop(f"crm.associations/{key}", None)
    wrong = account_for(b, other["properties"]["name"])
    assert wrong is not None
    attrs = {"email": p["email"], "firstname": p["first"], "lastname": p["last"], "jobtitle": p["title"],
             "company": other["properties"]["name"], "hubspot_owner_id": p["owner_id"]}  # fmt: skip
    p["prospect_id"] = int(add_prospect(b, attrs, wrong, ["import"])["id"])
    return {**p, "wrong_company": other["properties"]["name"], "wrong_account": wrong["id"]}


def list_to_crm(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    p = _company_params(b, ckey, comp, account)
    leads = [add_lead(b, rng, b.person(rng), p["company"], level=lvl) for lvl in (2, 3, 4)]
    people = _people(leads, p["domain"])
    list_name = f"{p['company'].split()[0]}-Targets"
    list_id = new_list(b, list_name)
    for x in people:
        save_member(b, list_id, x["lead_id"])
    key, _ = add_contact(b, rng, comp, ckey, jobtitle=people[0]["title"], person=(people[0]["first"],
                                                                                  people[0]["last"]))  # fmt: skip
    attrs = {"email": people[1]["email"], "firstname": people[1]["first"], "lastname": people[1]["last"],
             "jobtitle": people[1]["title"], "company": p["company"], "hubspot_owner_id": p["owner_id"]}  # fmt: skip
    repeat = int(add_prospect(b, attrs, account, ["exec"])["id"])
    add_state(b, repeat, b.sequence_ids["Exec Intro"], "finished", iso(b.start - timedelta(days=40)))
    return {**p, "people": people, "list_name": list_name, "list_id": list_id, "known_id": key, "repeat": repeat,
            "sequence_id": b.sequence_ids["Exec Intro"], "name": people[2]["name"], "email": people[2]["email"],
            "tz": rng.choice(TIMEZONES), **slot(b, rng, "discovery")}  # fmt: skip


def cancellation_recovery(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle=SQL_STAGE, lead_status="CONNECTED", jobtitle="Analyst", sequence="Win-back")
    booked_event = future_booking(b, rng, "demo", p["name"], p["email"], p["tz"], 2, 4)
    event, invitee = booked_event["event"], booked_event["invitee"]
    cancellation = {"canceled_by": p["name"], "reason": "Budget is frozen until next quarter.",
                    "canceler_type": "invitee", "created_at": b.anchor}  # fmt: skip
    b.rows("scheduler.scheduled_events")[scheduler.uuid_of(event["uri"])] = {
        **event, "status": "canceled", "cancellation": cancellation,
        "invitees_counter": {**event["invitees_counter"], "active": 0}}  # fmt: skip
    b.rows("scheduler.invitees")[scheduler.uuid_of(invitee["uri"])] = {**invitee, "status": "canceled"}
    prospect_for(b, p)
    add_state(b, p["prospect_id"], b.sequence_ids["SQL Outbound"], "finished", b.anchor)
    return {**p, "start": event["start_time"], "end": event["end_time"], "event_type": event_type_uri(b, "demo")}


def timezone_fix(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, kind="discovery", lifecycle=SQL_STAGE, lead_status="CONNECTED", jobtitle="")
    event = future_booking(b, rng, "discovery", p["name"], p["email"], "UTC", 3, 6)["event"]
    prospect_for(b, p)
    return {**p, "old_uuid": scheduler.uuid_of(event["uri"]), "start": event["start_time"],
            "end": event["end_time"], "reminder_due": day_before_nine(event["start_time"])}  # fmt: skip


# --- more pipeline and outbound ---------------------------------------------------------------------------------
def two_stakeholders(b: Builder, rng: Dice) -> dict[str, Any]:
    p = scene(b, rng, lifecycle="opportunity", lead_status="OPEN_DEAL", jobtitle=None, function="Operations", level=3,
              sequence="Exec Intro")  # fmt: skip
    p.update(slot(b, rng, "demo", 3, 5))
    _deal(b, rng, p, f"{p['company']} - evaluation", "qualifiedtobuy")
    p.update(person_at(b, rng, p["company"], p["domain"], "eng_", function="Engineering", level=2))
    add_lead(b, rng, b.person(rng), p["company"], function="Engineering", level=1)
    p.update(slot(b, rng, "deep-dive", 8, 11, "eng_"))  # a later day than the demo (day 3-5, or the Monday after)
    return p


def teamlink_intro(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account = _target_company(b, rng)
    name = comp["properties"]["name"]
    leads = [add_lead(b, rng, b.person(rng), name, function="Engineering", level=lvl) for lvl in (3, 4, 3)]
    for i, lead in enumerate(leads):
        lead["teamlink"] = i == 1
    add_lead(b, rng, b.person(rng), name, function="Engineering", level=2)
    people = _people(leads, comp["properties"]["domain"])
    return {**_company_params(b, ckey, comp, account), "people": people, "warm": people[1],
            "cold": [people[0], people[2]], "sequence_id": b.sequence_ids["Exec Intro"],
            "due": iso(business_day(b, rng, 1, 3).replace(hour=10)), "event_type": event_type_uri(b, "deep-dive")}
