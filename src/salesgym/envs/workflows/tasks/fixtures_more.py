"""Fixtures of more templates on one to three apps (``catalogue/templates/*.json``): each sets its template's
scene in the seeded population and returns the instance's parameters, as ``fixtures.py`` does (and with its
helpers).

Expected values (the earliest open slot, who is eligible, which leads a filter matches) are computed here from
the public scene with the replica's own rules, never read back from a replica.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import (
    COMPANIES,
    TITLES,
    TLDS,
    Builder,
    account_for,
    add_busy,
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
from salesgym.envs.workflows.tasks.fixtures import (
    TIMEZONES,
    add_booking,
    amount,
    business_day,
    company,
    earliest,
    free_start,
    mailbox_of,
    new_company,
    owner_name,
    person_params,
)

# a closed-lost deal's reason (a hidden fact): twenty, so the likeliest guess is right 1 time in 20
LOSS_REASONS = ("chose a competitor on price", "budget frozen until next fiscal year",
                "no executive sponsor after the reorganisation", "built it in-house instead",
                "security review failed on data residency", "the project was cancelled after a merger",
                "went with their incumbent vendor's bundle", "could not prove the ROI to finance",
                "the champion left the company", "procurement required an on-premise option",
                "timing: they paused all new tools this year", "integration with their ERP was missing",
                "legal would not accept our liability terms", "chose a cheaper point solution",
                "the pilot team was too small to show results", "headcount cuts removed the buying team",
                "their board froze all software spend", "a reseller offered them a bundled deal",
                "the renewal of their current contract locked them in",
                "implementation would take too long")  # fmt: skip


# --- shared helpers ---------------------------------------------------------------------------------------------
def et_uri(b: Builder, kind: str) -> str:
    return f"{scheduler.API}/event_types/{b.event_types[kind]}"


def past_start(b: Builder, rng: Dice) -> datetime:
    """A start time on the Friday before the world's anchor (a Monday): the event has already happened."""
    return (b.start - timedelta(days=3)).replace(hour=rng.randint(10, 15), minute=0)


def invitee_of(b: Builder, event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return next((k, i) for k, i in b.rows("scheduler.invitees").items() if i["event"] == event["uri"])


def end_of(start: str, minutes: int) -> str:
    moment = parse_iso(start)
    assert moment is not None
    return iso(moment + timedelta(minutes=minutes))


def add_mailing(b: Builder, prospect: int, state: str, subject: str, body: str) -> None:
    key, _ = b.key("sequencer.mailings")
    at = b.anchor if state == "replied" else None
    b.put("sequencer.mailings", key, {"type": "mailing", "id": int(key), "attributes": {
        "mailingType": "sequence", "state": state, "subject": subject, "bodyText": body, "repliedAt": at},
        "relationships": {"prospect": {"data": {"type": "prospect", "id": prospect}}}}, "fixture")  # fmt: skip


def account_scene(b: Builder, rng: Dice) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """A CRM company that has a sequencer account: (key, company, account, owner id)."""
    ckey, comp = company(b, rng, with_account=True)
    account = account_for(b, comp["properties"]["name"])
    assert account is not None
    return ckey, comp, account, comp["properties"]["hubspot_owner_id"]


def contact_prospect(b: Builder, rng: Dice, comp: dict[str, Any], ckey: str, account: dict[str, Any],
                     tags: list[str], **contact: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:  # fmt: skip
    key, record = add_contact(b, rng, comp, ckey, **contact)
    return key, record, add_prospect(b, record["properties"], account, tags)


def other_company(b: Builder, rng: Dice, not_key: str) -> tuple[str, dict[str, Any]]:
    return rng.choice([(k, c) for k, c in b.rows("crm.companies").items() if k != not_key])


def owner_params(b: Builder, owner_id: str) -> dict[str, Any]:
    return {"owner_id": owner_id, "owner_int": int(owner_id), "owner": owner_name(b, owner_id),
            "owner_email": b.rows("crm.owners")[owner_id]["email"], "user": user_for_owner(b, owner_id),
            "mailbox": mailbox_of(b, owner_id)}  # fmt: skip


def lead_email(lead: dict[str, Any], domain: str) -> str:
    return f"{lead['firstName'].lower()}.{lead['lastName'].lower()}@{domain}"


# --- tier 1: CRM ------------------------------------------------------------------------------------------------
def close_lost(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    deal = add_deal(b, ckey, comp, f"{name} - pilot", "default", "presentationscheduled", amount(rng))
    return {"deal_id": deal, "company": name, "reason": rng.choice(LOSS_REASONS),
            "owner_int": int(comp["properties"]["hubspot_owner_id"])}  # fmt: skip


def fix_owner(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    right = comp["properties"]["hubspot_owner_id"]
    others = [o for o in b.rows("crm.owners") if o != right]
    wrong = []
    for i in range(3):
        key, contact = add_contact(b, rng, comp, ckey)
        if i < 2:
            contact["properties"]["hubspot_owner_id"] = rng.choice(others)
            wrong.append(key)
    elsewhere = other_company(b, rng, ckey)
    decoy, record = add_contact(b, rng, elsewhere[1], elsewhere[0])
    if elsewhere[1]["properties"]["hubspot_owner_id"] != right:
        record["properties"]["hubspot_owner_id"] = right  # a mismatch at another company: not this task's
    return {"company": comp["properties"]["name"], "company_id": ckey, "wrong_ids": wrong, "decoy_id": decoy,
            "decoy_owner": record["properties"]["hubspot_owner_id"], "owner": owner_name(b, right),
            "owner_id": right, "updates": [{"id": k, "properties": {"hubspot_owner_id": right}} for k in wrong]}


def open_renewal(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    won = add_deal(b, ckey, comp, f"{name} - new business", "default", "closedwon", amount(rng),
                   closedate=iso(b.start - timedelta(days=330))[:10])
    year = int(b.anchor[:4]) + 1
    return {"company": name, "company_id": ckey, "won_id": won, "deal_name": f"{name} - renewal {year}",
            "amount": amount(rng), "close_date": iso(b.start + timedelta(days=35))[:10],
            "owner_id": comp["properties"]["hubspot_owner_id"], "pipeline": b.renewal["pipeline"]}  # fmt: skip


def mql_promote(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW")
    add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW")
    add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="CONNECTED")
    add_contact(b, rng, comp, ckey, lifecycle="lead", lead_status="NEW")
    other = other_company(b, rng, ckey)
    add_contact(b, rng, other[1], other[0], lifecycle="marketingqualifiedlead", lead_status="NEW")
    targets = sorted(k for k, c in b.rows("crm.contacts").items() if c["properties"]["company"] == name
                     and c["properties"]["lifecyclestage"] == "marketingqualifiedlead"
                     and c["properties"]["hs_lead_status"] == "NEW")  # fmt: skip
    return {"company": name, "targets": targets,
            "updates": [{"id": k, "properties": {"lifecyclestage": "salesqualifiedlead", "hs_lead_status": "OPEN"}}
                        for k in targets]}  # fmt: skip


# --- tier 1: scheduler ------------------------------------------------------------------------------------------
def no_show_rebook(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    name, email, tz = f"{first} {last}", f"{first.lower()}.{last.lower()}@example.net", rng.choice(TIMEZONES)
    old = add_booking(b, "demo", past_start(b, rng), name, email, tz)
    ikey, invitee = invitee_of(b, old)
    day = business_day(b, rng, 1, 5)
    return {"invitee_name": name, "invitee_email": email, "tz": tz, "old_day": old["start_time"][:10],
            "old_uri": old["uri"], "old_invitee": invitee["uri"], "old_invitee_id": ikey, "after": iso(day)[:10],
            "start": earliest(b, "demo", day), "event_type": et_uri(b, "demo")}  # fmt: skip


def double_booking(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    name, email, tz = f"{first} {last}", f"{first.lower()}@{rng.choice(('umbra.io', 'northwind.com'))}", \
        rng.choice(TIMEZONES)  # fmt: skip
    keep = add_booking(b, "discovery", free_start(b, "discovery", business_day(b, rng, 1, 3)), name, email, tz)
    drop = add_booking(b, "discovery", free_start(b, "discovery", business_day(b, rng, 5, 8)), name, email, tz)
    drop_key = scheduler.uuid_of(drop["uri"])
    return {"invitee_name": name, "invitee_email": email, "keep_id": scheduler.uuid_of(keep["uri"]),
            "drop_id": drop_key, "drop_invitee": invitee_of(b, drop)[0], "keep_start": keep["start_time"],
            "drop_start": drop["start_time"]}  # fmt: skip


def deep_dive_length(b: Builder, rng: Dice) -> dict[str, Any]:
    day = business_day(b, rng)
    short = parse_iso(earliest(b, "demo", day))
    assert short is not None
    add_busy(b, short + timedelta(minutes=30), short + timedelta(minutes=60))  # a half-hour gap: too short
    first, last = b.person(rng)
    return {"invitee_name": f"{first} {last}", "invitee_email": f"{first.lower()}.{last.lower()}@example.com",
            "tz": rng.choice(TIMEZONES), "after": iso(day)[:10], "gap": iso(short),
            "start": earliest(b, "deep-dive", day), "event_type": et_uri(b, "deep-dive")}  # fmt: skip


# --- tier 1: sequencer ------------------------------------------------------------------------------------------
def finish_replied(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    replied, quiet = [], []
    for i in range(4):
        _, _, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"])
        state = add_state(b, prospect["id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)
        if i < 2:
            add_mailing(b, prospect["id"], "replied", "Re: quick question", rng.choice((
                "Thanks, we are looking at this now - let's talk.", "Please take me off this, not relevant.")))
            replied.append(state["id"])
        else:
            add_mailing(b, prospect["id"], "delivered", "Quick question", "Hi - would a short call make sense?")
            quiet.append(state["id"])
    return {"company": comp["properties"]["name"], "account_id": account["id"], "replied": replied,
            "quiet": quiet, "replied_keys": [str(s) for s in replied]}  # fmt: skip


def exclusive_nurture(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    tag = f"ent-{b.anchor[5:7]}{b.anchor[8:10]}"
    made = [contact_prospect(b, rng, comp, ckey, account, [tag])[2]["id"] for _ in range(4)]
    busy, opted = made[2], made[3]
    add_state(b, busy, b.sequence_ids["Win-back"], "active", b.anchor)
    b.rows("sequencer.prospects")[str(opted)]["attributes"]["optedOut"] = True
    return {"tag": tag, "eligible": made[:2], "busy": busy, "opted_out": opted,
            "sequence_id": b.sequence_ids["Enterprise Nurture"], **owner_params(b, owner_id)}


def optout_call_tasks(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    tag = f"trade-show-{b.anchor[5:7]}{b.anchor[8:10]}"
    made = [contact_prospect(b, rng, comp, ckey, account, [tag])[2] for _ in range(3)]
    opted = made[rng.randint(0, 2)]
    opted["attributes"]["optedOut"] = True
    due = business_day(b, rng, 1, 4)
    return {"tag": tag, "eligible": [p["id"] for p in made if p is not opted], "opted_out": opted["id"],
            "opted_name": f"{opted['attributes']['firstName']} {opted['attributes']['lastName']}",
            "due": iso(due)[:10], "due_time": iso(due.replace(hour=10)), "sequence_id": b.sequence_ids["Exec Intro"],
            **owner_params(b, owner_id)}  # fmt: skip


# --- tier 1: prospecting ----------------------------------------------------------------------------------------
def inmail_free(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp = company(b, rng)
    name = comp["properties"]["name"]
    key, _ = b.key("prospecting.lists")
    list_name = f"{name.split()[0]} champions"
    b.put("prospecting.lists", key, {"id": key, "name": list_name, "type": "LEAD", "shared": False}, "fixture")
    reach = [(1, False), (3, True), (2, False), (3, False)]
    rng.shuffle(reach)
    free: list[dict[str, Any]] = []
    paid: list[dict[str, Any]] = []
    for degree, open_profile in reach:
        lead = add_lead(b, rng, b.person(rng), name, degree=degree, open_profile=open_profile)
        b.put("prospecting.list_members", f"{key}:{lead['lead_id']}", {"list_id": key, "lead_id": lead["lead_id"],
              "saved_at": b.anchor}, "fixture")  # fmt: skip
        (free if degree == 1 or open_profile else paid).append(lead)
    return {"company": name, "list_id": key, "list_name": list_name, "free": sorted(x["lead_id"] for x in free),
            "free_urns": [x["urn"] for x in free], "paid_urns": [x["urn"] for x in paid],
            "credits": b.rows("prospecting.credits")["inmail"]["available"],
            "subject": f"{name.split()[0]} x our team: customer round-table",
            "body": "We are hosting a small customer round-table next month and would love your view. Interested?"}


def list_topup(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp = new_company(b, rng, with_account=False)
    name = comp["properties"]["name"]
    targets = [add_lead(b, rng, b.person(rng), name, function="Sales", level=level) for level in (2, 3, 4)]
    add_lead(b, rng, b.person(rng), name, function="Sales", level=1)
    add_lead(b, rng, b.person(rng), name, function="Marketing", level=3)
    key, _ = b.key("prospecting.lists")
    list_name = f"{name.split()[0]} sales leaders"
    b.put("prospecting.lists", key, {"id": key, "name": list_name, "type": "LEAD", "shared": False}, "fixture")
    already = targets[rng.randint(0, 2)]
    b.put("prospecting.list_members", f"{key}:{already['lead_id']}", {"list_id": key, "lead_id": already["lead_id"],
          "saved_at": b.anchor}, "fixture")  # fmt: skip
    missing = [t["lead_id"] for t in targets if t is not already]
    return {"company": name, "list_id": key, "list_name": list_name, "already": already["lead_id"],
            "targets": sorted(t["lead_id"] for t in targets), "missing": missing}


# --- tier 2 -----------------------------------------------------------------------------------------------------
def left_company_cleanup(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    stayed, left = [], None
    for i in range(3):
        key, contact = add_contact(b, rng, comp, ckey, lead_status="OPEN")
        p = contact["properties"]
        if i == 1:
            new_name = rng.choice([c[0] for c in COMPANIES if c[0] != name])
            add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"],
                     left_for=(new_name, rng.choice(TITLES["Finance"])))
            left = {"id": key, "new_company": new_name, **person_params("left", contact)}
        else:
            add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"])
            stayed.append(key)
    assert left is not None
    return {"company": name, "left_id": left["id"], "left_name": left["left_name"],
            "new_company": left["new_company"], "stayed": stayed,
            "owner_int": int(comp["properties"]["hubspot_owner_id"])}  # fmt: skip


def company_from_account(b: Builder, rng: Dice) -> dict[str, Any]:
    used = {c["properties"]["name"] for c in b.rows("crm.companies").values()}
    name, industry = rng.choice([c for c in COMPANIES if c[0] not in used])
    headcount = rng.choice((180, 640, 2300, 5400))
    add_prospecting_account(b, name, industry, headcount)
    domain = domain_of(name, rng.choice(TLDS))
    owner_id = rng.choice(list(b.rows("crm.owners")))
    stub = {"properties": {"domain": domain, "name": name, "country": "Germany", "hubspot_owner_id": owner_id}}
    key, contact = add_contact(b, rng, stub, "", associate=False, lifecycle="lead")
    return {"company": name, "domain": domain, "industry": industry, "headcount": str(headcount),
            "contact_id": key, **person_params("contact", contact)}  # fmt: skip


def inmail_open_profile(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    people = []
    for reach in rng.sample(((3, True), (3, False)), 2):
        key, contact = add_contact(b, rng, comp, ckey)
        p = contact["properties"]
        lead = add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=p["jobtitle"], degree=reach[0],
                        open_profile=reach[1])
        people.append({"contact_id": key, "name": f"{p['firstname']} {p['lastname']}", "lead_id": lead["lead_id"],
                       "urn": lead["urn"], "free": reach[1]})  # fmt: skip
    free = next(x for x in people if x["free"])
    paid = next(x for x in people if not x["free"])
    return {"company": name, "name1": people[0]["name"], "name2": people[1]["name"], "free_id": free["contact_id"],
            "free_urn": free["urn"], "free_lead": free["lead_id"], "paid_urn": paid["urn"],
            "paid_id": paid["contact_id"], "credits": b.rows("prospecting.credits")["inmail"]["available"],
            "owner_int": int(comp["properties"]["hubspot_owner_id"])}  # fmt: skip


def optout_sync(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    opted, kept = [], []
    for i in range(3):
        key, _, prospect = contact_prospect(b, rng, comp, ckey, account, ["newsletter"], lead_status="OPEN")
        if i < 2:
            prospect["attributes"]["optedOut"] = True
            opted.append(key)
        else:
            kept.append(key)
    return {"company": comp["properties"]["name"], "opted": opted, "kept": kept,
            "updates": [{"id": k, "properties": {"hs_lead_status": "UNQUALIFIED"}} for k in opted]}  # fmt: skip


def won_stop_outreach(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    name = comp["properties"]["name"]
    deal = add_deal(b, ckey, comp, f"{name} - platform", "default", "closedwon", amount(rng),
                    closedate=iso(b.start - timedelta(days=1))[:10])
    contacts, states, other = [], [], None
    for seq in ("Exec Intro", "SQL Outbound"):
        key, _, prospect = contact_prospect(b, rng, comp, ckey, account, ["deal"], lifecycle="opportunity")
        associate_crm(b, "deals", deal, "contacts", key, 3)
        contacts.append(key)
        states.append(add_state(b, prospect["id"], b.sequence_ids[seq], "active", b.anchor)["id"])
    _, _, bystander = contact_prospect(b, rng, comp, ckey, account, ["deal"], lifecycle="lead")  # not on the deal
    other = add_state(b, bystander["id"], b.sequence_ids["Exec Intro"], "active", b.anchor)["id"]
    return {"company": name, "deal_id": deal, "contact_ids": contacts, "states": states, "other_state": other,
            "state_keys": [str(s) for s in states],
            "updates": [{"id": k, "properties": {"lifecyclestage": "customer"}} for k in contacts]}  # fmt: skip


def existing_prospect(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="OPEN")
    p = contact["properties"]
    prospect = add_prospect(b, {**p, "email": p["email"].upper()}, account, ["q1-import"])  # another spelling
    return {"contact_id": key, **person_params("contact", contact), "prospect_id": prospect["id"],
            "sequence_id": b.sequence_ids["Exec Intro"], **owner_params(b, owner_id)}  # fmt: skip


def no_show_followup(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="CONNECTED")
    p = contact["properties"]
    event = add_booking(b, "demo", past_start(b, rng), f"{p['firstname']} {p['lastname']}", p["email"],
                        rng.choice(TIMEZONES))
    ikey, invitee = invitee_of(b, event)
    due = business_day(b, rng, 1, 3)
    return {"contact_id": key, **person_params("contact", contact), "start": event["start_time"],
            "end": event["end_time"], "invitee": invitee["uri"], "invitee_id": ikey, "due": iso(due)[:10],
            "due_time": iso(due.replace(hour=9)), "owner_int": int(p["hubspot_owner_id"])}  # fmt: skip


def week_demos(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    booked, canceled = [], []
    for i in range(3):
        key, contact = add_contact(b, rng, comp, ckey, lead_status="ATTEMPTED_TO_CONTACT")
        p = contact["properties"]
        event = add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)),
                            f"{p['firstname']} {p['lastname']}", p["email"], rng.choice(TIMEZONES))
        if i == 2:
            b.rows("scheduler.scheduled_events")[scheduler.uuid_of(event["uri"])]["status"] = "canceled"
            b.rows("scheduler.invitees")[invitee_of(b, event)[0]]["status"] = "canceled"
            canceled.append(key)
        else:
            booked.append(key)
    first, last = b.person(rng)
    add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)), f"{first} {last}",
                f"{first.lower()}@not-in-crm.org", "UTC")  # an invitee who is no contact
    week_end = b.start + timedelta(days=5)
    return {"company": comp["properties"]["name"], "booked": booked, "canceled": canceled,
            "week_end": iso(week_end)[:10],
            "updates": [{"id": k, "properties": {"hs_lead_status": "CONNECTED"}} for k in booked]}  # fmt: skip


def changed_jobs_sequence(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp = new_company(b, rng, with_account=True)
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    account = account_for(b, name)
    assert account is not None
    targets = [add_lead(b, rng, b.person(rng), name, function="Sales", level=lvl, changed_jobs=True)
               for lvl in (3, 4)]  # fmt: skip
    add_lead(b, rng, b.person(rng), name, function="Sales", level=3, changed_jobs=False)
    add_lead(b, rng, b.person(rng), name, function="Finance", level=4, changed_jobs=True)
    people = [{"lead_id": t["lead_id"], "first": t["firstName"], "last": t["lastName"], "title": t["title"],
               "email": lead_email(t, domain)} for t in targets]  # fmt: skip
    return {"company": name, "domain": domain, "account_id": account["id"], "people": people,
            "emails": sorted(x["email"] for x in people), "sequence_id": b.sequence_ids["Exec Intro"],
            **owner_params(b, comp["properties"]["hubspot_owner_id"])}  # fmt: skip


def inmail_link(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp = company(b, rng)
    lead = add_lead(b, rng, b.person(rng), comp["properties"]["name"], function="Engineering", level=2, degree=1,
                    open_profile=False)
    return {"company": comp["properties"]["name"], "name": f"{lead['firstName']} {lead['lastName']}",
            "lead_id": lead["lead_id"], "urn": lead["urn"], "event_type": et_uri(b, "deep-dive"),
            "credits": b.rows("prospecting.credits")["inmail"]["available"]}  # fmt: skip


def reply_reschedule(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    _, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["webinar"])
    p = contact["properties"]
    tz = rng.choice(TIMEZONES)
    old = add_booking(b, "discovery", free_start(b, "discovery", business_day(b, rng, 1, 3)),
                      f"{p['firstname']} {p['lastname']}", p["email"], tz)
    day = business_day(b, rng, 6, 10)
    add_state(b, prospect["id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)
    add_mailing(b, prospect["id"], "replied", "Re: our discovery call",
                f"Something came up - could we move our discovery call to {day.strftime('%A %d %B %Y')}? "
                "Any time that day works.")
    return {**person_params("contact", contact), "tz": tz, "old_id": scheduler.uuid_of(old["uri"]),
            "old_invitee": invitee_of(b, old)[0], "day": iso(day)[:10],
            "start": earliest(b, "discovery", day, day + timedelta(days=1)), "event_type": et_uri(b, "discovery")}


def booked_finish(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    booked, others = [], []
    for i in range(3):
        _, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"])
        state = add_state(b, prospect["id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
        p = contact["properties"]
        if i == 2:
            others.append(state)
            event = add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)),
                                f"{p['firstname']} {p['lastname']}", p["email"], "UTC")
            b.rows("scheduler.scheduled_events")[scheduler.uuid_of(event["uri"])]["status"] = "canceled"
            b.rows("scheduler.invitees")[invitee_of(b, event)[0]]["status"] = "canceled"
            continue
        add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)), f"{p['firstname']} {p['lastname']}",
                    p["email"], "UTC")
        booked.append(state)
    _, _, quiet = contact_prospect(b, rng, comp, ckey, account, ["sql"])
    others.append(add_state(b, quiet["id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"])
    return {"company": comp["properties"]["name"], "account_id": account["id"], "booked": booked, "others": others,
            "booked_keys": [str(s) for s in booked]}  # fmt: skip


def deal_presentation(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    deal = add_deal(b, ckey, comp, f"{name} - data platform", "default", "qualifiedtobuy", amount(rng))
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="opportunity")
    associate_crm(b, "deals", deal, "contacts", key, 3)
    day = business_day(b, rng)
    start = earliest(b, "deep-dive", day)
    p = contact["properties"]
    return {"deal_id": deal, "company": name, "contact_id": key, **person_params("contact", contact),
            "after": iso(day)[:10], "start": start, "end": end_of(start, 60), "tz": rng.choice(TIMEZONES),
            "owner_int": int(p["hubspot_owner_id"]), "event_type": et_uri(b, "deep-dive")}  # fmt: skip


# --- tier 3 -----------------------------------------------------------------------------------------------------
def _person_row(lead: dict[str, Any], domain: str) -> dict[str, Any]:
    return {"lead_id": lead["lead_id"], "first": lead["firstName"], "last": lead["lastName"], "title": lead["title"],
            "email": lead_email(lead, domain)}  # fmt: skip


def list_to_sequence(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    key, _ = b.key("prospecting.lists")
    list_name = f"{name.split()[0]} buying committee"
    b.put("prospecting.lists", key, {"id": key, "name": list_name, "type": "LEAD", "shared": False}, "fixture")
    people = []
    for _ in range(3):
        lead = add_lead(b, rng, b.person(rng), name, function=rng.choice(("Operations", "Finance")), level=2)
        b.put("prospecting.list_members", f"{key}:{lead['lead_id']}", {"list_id": key, "lead_id": lead["lead_id"],
              "saved_at": b.anchor}, "fixture")  # fmt: skip
        people.append(_person_row(lead, domain))
    known = people[rng.randint(0, 2)]
    known_id, _ = add_contact(b, rng, comp, ckey, jobtitle=known["title"], person=(known["first"], known["last"]))
    new = [x for x in people if x is not known]
    return {"company": name, "company_id": ckey, "domain": domain, "list_id": key, "list_name": list_name,
            "people": people, "emails": [x["email"] for x in people], "known_id": known_id, "new": new,
            "account_id": account["id"], "sequence_id": b.sequence_ids["Exec Intro"], **owner_params(b, owner_id)}


def champion_left(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    taken = {lead["title"] for lead in b.rows("prospecting.leads").values() if lead["company"] == name}
    old_title = rng.choice([t for ts in TITLES.values() for t in ts[1:4] if t not in taken])
    deal = add_deal(b, ckey, comp, f"{name} - expansion", "default", "qualifiedtobuy", amount(rng))
    champ_id, champ = add_contact(b, rng, comp, ckey, jobtitle=old_title, lifecycle="opportunity")
    associate_crm(b, "deals", deal, "contacts", champ_id, 3)
    p = champ["properties"]
    new_company_name = rng.choice([c[0] for c in COMPANIES if c[0] != name])
    new_title = rng.choice(TITLES["Operations"][2:])
    add_lead(b, rng, (p["firstname"], p["lastname"]), name, title=old_title, left_for=(new_company_name, new_title),
             changed_jobs=False)
    successor = add_lead(b, rng, b.person(rng), name, title=old_title, changed_jobs=True)
    return {"company": name, "company_id": ckey, "domain": domain, "deal_id": deal, "champ_id": champ_id,
            **person_params("champ", champ), "old_title": old_title, "new_company": new_company_name,
            "new_title": new_title, "successor": _person_row(successor, domain),
            "successor_email": lead_email(successor, domain), "account_id": account["id"],
            "sequence_id": b.sequence_ids["Exec Intro"], **owner_params(b, owner_id)}  # fmt: skip


def no_show_winback(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    key, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"], lifecycle="salesqualifiedlead",
                                              lead_status="CONNECTED")
    add_state(b, prospect["id"], b.sequence_ids["SQL Outbound"], "finished", b.anchor)
    p = contact["properties"]
    event = add_booking(b, "demo", past_start(b, rng), f"{p['firstname']} {p['lastname']}", p["email"], "UTC")
    ikey, invitee = invitee_of(b, event)
    return {"contact_id": key, **person_params("contact", contact), "prospect_id": prospect["id"],
            "invitee": invitee["uri"], "invitee_id": ikey, "sql_id": b.sequence_ids["SQL Outbound"],
            "sequence_id": b.sequence_ids["Win-back"], **owner_params(b, owner_id)}  # fmt: skip


def booked_opportunity(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    key, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"], lifecycle="salesqualifiedlead")
    state = add_state(b, prospect["id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)
    p = contact["properties"]
    event = add_booking(b, "demo", free_start(b, "demo", business_day(b, rng, 1, 4)),
                        f"{p['firstname']} {p['lastname']}", p["email"], rng.choice(TIMEZONES))
    name = comp["properties"]["name"]
    return {"contact_id": key, "company_id": ckey, **person_params("contact", contact), "company": name,
            "state_id": state["id"], "start": event["start_time"], "end": event["end_time"],
            "deal_name": f"{name} - New Business", "amount": amount(rng), **owner_params(b, owner_id)}  # fmt: skip


def not_interested(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    name = comp["properties"]["name"]
    key, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["exec"], lifecycle="opportunity",
                                              lead_status="IN_PROGRESS")
    state = add_state(b, prospect["id"], b.sequence_ids["Exec Intro"], "active", b.anchor)
    add_mailing(b, prospect["id"], "replied", "Re: introduction", "Thanks, but we are not interested after all. "
                "Please cancel our call and close this out.")
    p = contact["properties"]
    event = add_booking(b, "discovery", free_start(b, "discovery", business_day(b, rng, 2, 6)),
                        f"{p['firstname']} {p['lastname']}", p["email"], "UTC")
    deal = add_deal(b, ckey, comp, f"{name} - analytics", "default", "appointmentscheduled", amount(rng))
    associate_crm(b, "deals", deal, "contacts", key, 3)
    return {"contact_id": key, **person_params("contact", contact), "company": name, "state_id": state["id"],
            "event_id": scheduler.uuid_of(event["uri"]), "invitee_id": invitee_of(b, event)[0], "deal_id": deal,
            "deal_name": f"{name} - analytics", **owner_params(b, owner_id)}  # fmt: skip


def mql_fasttrack(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    key, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["webinar"],
                                              lifecycle="marketingqualifiedlead", lead_status="NEW")
    state = add_state(b, prospect["id"], b.sequence_ids["Webinar Follow-up"], "active", b.anchor)
    day = business_day(b, rng)
    return {"contact_id": key, **person_params("contact", contact), "state_id": state["id"], "after": iso(day)[:10],
            "start": earliest(b, "demo", day), "tz": rng.choice(TIMEZONES), "event_type": et_uri(b, "demo")}


def inbound_seniority(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="marketingqualifiedlead", lead_status="NEW", jobtitle="")
    p = contact["properties"]
    level = rng.randint(0, 4)
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"], function=rng.choice(list(TITLES)),
                    level=level)
    kind = "deep-dive" if level >= 2 else "demo"
    day = business_day(b, rng)
    return {"contact_id": key, **person_params("contact", contact), "first": p["firstname"], "last": p["lastname"],
            "company": p["company"], "title": lead["title"], "senior": level >= 2, "after": iso(day)[:10],
            "start": earliest(b, kind, day), "tz": rng.choice(TIMEZONES), "event_type": et_uri(b, kind),
            "event_name": "Technical Deep Dive" if level >= 2 else "30 Minute Demo"}  # fmt: skip


def exec_link(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, jobtitle=rng.choice(("VP Finance", "VP Operations", "CFO")))
    p = contact["properties"]
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"], title=p["jobtitle"], degree=3,
                    open_profile=True)
    return {"contact_id": key, **person_params("contact", contact), "company": p["company"],
            "lead_id": lead["lead_id"], "urn": lead["urn"], "event_type": et_uri(b, "demo"),
            "credits": b.rows("prospecting.credits")["inmail"]["available"],
            "owner_int": int(p["hubspot_owner_id"])}  # fmt: skip


def new_hire_link(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp, account, owner_id = account_scene(b, rng)
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    lead = add_lead(b, rng, b.person(rng), name, function="Operations", level=3, changed_jobs=True, degree=1)
    return {"company": name, "domain": domain, **_person_row(lead, domain), "urn": lead["urn"],
            "name": f"{lead['firstName']} {lead['lastName']}", "account_id": account["id"],
            "event_type": et_uri(b, "discovery"), "credits": b.rows("prospecting.credits")["inmail"]["available"],
            "sequence_id": b.sequence_ids["Exec Intro"], **owner_params(b, owner_id)}  # fmt: skip


def enrich_optout(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    ids, titles, prospects, opted = [], {}, [], None
    for i in range(3):
        key, contact, prospect = contact_prospect(b, rng, comp, ckey, account, ["enrich"], jobtitle="")
        p = contact["properties"]
        lead = add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"])
        ids.append(key)
        titles[key] = lead["title"]
        if i == 2:
            prospect["attributes"]["optedOut"] = True
            opted = {"contact_id": key, "name": f"{p['firstname']} {p['lastname']}", "prospect": prospect["id"]}
        else:
            prospects.append(prospect["id"])
    assert opted is not None
    due = business_day(b, rng, 1, 3)
    return {"company": comp["properties"]["name"], "contact_ids": ids, "titles": titles,
            "updates": [{"id": k, "properties": {"jobtitle": v}} for k, v in titles.items()],
            "eligible": prospects, "opted_out": opted["prospect"], "opted_id": opted["contact_id"],
            "opted_name": opted["name"], "due": iso(due)[:10], "due_time": iso(due.replace(hour=9)),
            "sequence_id": b.sequence_ids["SQL Outbound"], **owner_params(b, owner_id)}  # fmt: skip


def expansion_finance(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = new_company(b, rng, with_account=True)  # a fresh account: its only leaders are the scene's
    name, domain = comp["properties"]["name"], comp["properties"]["domain"]
    account = account_for(b, name)
    assert account is not None
    owner_id = comp["properties"]["hubspot_owner_id"]
    add_deal(b, ckey, comp, f"{name} - platform", "default", "closedwon", amount(rng),
             closedate=iso(b.start - timedelta(days=90))[:10])
    leaders = [add_lead(b, rng, b.person(rng), name, function="Finance", level=lvl) for lvl in (2, 3, 4)]
    add_lead(b, rng, b.person(rng), name, function="Finance", level=1)
    people = [_person_row(x, domain) for x in leaders]
    known = people[0]
    known_id, known_contact = add_contact(b, rng, comp, ckey, jobtitle=known["title"],
                                          person=(known["first"], known["last"]))
    known_prospect = add_prospect(b, known_contact["properties"], account, ["q1-import"])
    return {"company": name, "company_id": ckey, "domain": domain, "people": people,
            "emails": [x["email"] for x in people], "known_id": known_id, "known_prospect": known_prospect["id"],
            "new": people[1:], "account_id": account["id"], "sequence_id": b.sequence_ids["Exec Intro"],
            **owner_params(b, owner_id)}  # fmt: skip


def locked_rep_handoff(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    key, contact = add_contact(b, rng, comp, ckey, lifecycle="salesqualifiedlead", lead_status="NEW")
    b.rows("sequencer.users")[str(user_for_owner(b, owner_id))]["attributes"]["locked"] = True  # on leave
    backup_id = rng.choice([o for o in b.rows("crm.owners") if o != owner_id])
    p = contact["properties"]
    day = business_day(b, rng)
    backup = owner_params(b, backup_id)
    return {"contact_id": key, **person_params("contact", contact), "first": p["firstname"], "last": p["lastname"],
            "company": p["company"], "account_id": account["id"], "owner": owner_name(b, owner_id),
            "backup": backup["owner"], "backup_id": backup_id, "backup_email": backup["owner_email"],
            "user": backup["user"], "mailbox": backup["mailbox"], "sequence_id": b.sequence_ids["SQL Outbound"],
            "after": iso(day)[:10], "start": earliest(b, "discovery", day), "tz": rng.choice(TIMEZONES),
            "event_type": et_uri(b, "discovery")}  # fmt: skip


# --- more single- and two-app scenes ----------------------------------------------------------------------------
def attempted_call_tasks(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = company(b, rng)
    name = comp["properties"]["name"]
    for status in ("ATTEMPTED_TO_CONTACT", "ATTEMPTED_TO_CONTACT", "CONNECTED", "OPEN"):
        add_contact(b, rng, comp, ckey, lead_status=status)
    other = other_company(b, rng, ckey)
    add_contact(b, rng, other[1], other[0], lead_status="ATTEMPTED_TO_CONTACT")
    targets = sorted(k for k, c in b.rows("crm.contacts").items() if c["properties"]["company"] == name
                     and c["properties"]["hs_lead_status"] == "ATTEMPTED_TO_CONTACT")  # fmt: skip
    due = business_day(b, rng, 1, 4)
    return {"company": name, "targets": targets, "target_ints": [int(t) for t in targets], "due": iso(due)[:10],
            "due_time": iso(due.replace(hour=9)), "owner_int": int(comp["properties"]["hubspot_owner_id"])}


def sick_day(b: Builder, rng: Dice) -> dict[str, Any]:
    day = business_day(b, rng, 2, 6)
    victims: list[str] = []
    kept: list[str] = []
    for kind, when in (("demo", day), ("discovery", day), ("demo", business_day(b, rng, 8, 10))):
        first, last = b.person(rng)
        event = add_booking(b, kind, free_start(b, kind, when), f"{first} {last}",
                            f"{first.lower()}.{last.lower()}@example.org", rng.choice(TIMEZONES))
        (victims if when == day else kept).append(scheduler.uuid_of(event["uri"]))
    invitees = [k for k, i in b.rows("scheduler.invitees").items() if scheduler.uuid_of(i["event"]) in victims]
    return {"day": iso(day)[:10], "victims": victims, "kept": kept, "victim_invitees": invitees}


def prospects_no_upsert(b: Builder, rng: Dice) -> dict[str, Any]:
    _, comp, account, owner_id = account_scene(b, rng)
    domain = comp["properties"]["domain"]
    people = []
    for i in range(3):
        first, last = b.person(rng)
        person = {"first": first, "last": last, "email": f"{first.lower()}.{last.lower()}@{domain}"}
        if i == 1:
            existing = add_prospect(b, {"email": person["email"], "firstname": first, "lastname": last,
                                        "hubspot_owner_id": owner_id}, account, ["newsletter"])  # fmt: skip
            person["existing"] = existing["id"]
        people.append(person)
    names = [f"{x['first']} {x['last']} ({x['email']})" for x in people]
    return {"company": comp["properties"]["name"], "account_id": account["id"], "people": people,
            "names": f"{names[0]}, {names[1]} and {names[2]}", "emails": [x["email"] for x in people],
            "existing": people[1]["existing"],
            "sequence_id": b.sequence_ids["SQL Outbound"], **owner_params(b, owner_id)}  # fmt: skip


def bounced_cleanup(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    bounced: list[dict[str, Any]] = []
    fine: list[dict[str, Any]] = []
    for i in range(3):
        key, _, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"])
        state = add_state(b, prospect["id"], b.sequence_ids["SQL Outbound"], "active", b.anchor)["id"]
        add_mailing(b, prospect["id"], "bounced" if i < 2 else "opened", "Quick question",
                    "Hi - would a short call make sense?")
        (bounced if i < 2 else fine).append({"contact_id": key, "state": state})
    return {"company": comp["properties"]["name"], "account_id": account["id"],
            "bounced_states": [x["state"] for x in bounced], "bounced_keys": [str(x["state"]) for x in bounced],
            "bounced_contacts": [x["contact_id"] for x in bounced],
            "bounced_ints": [int(x["contact_id"]) for x in bounced], "fine_states": [x["state"] for x in fine],
            "owner_int": int(owner_id)}  # fmt: skip
