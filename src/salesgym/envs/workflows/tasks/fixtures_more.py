"""Fixtures of the templates in ``templates_more.py`` (one to three apps): each sets its template's scene in the
seeded population and returns the instance's parameters, as ``fixtures.py`` does (and with its helpers).

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
    RENEWAL_PIPELINE,
    TITLES,
    Builder,
    account_for,
    add_busy,
    add_contact,
    add_deal,
    add_lead,
    add_prospect,
    add_state,
    associate_crm,
    domain_of,
    user_for_owner,
)
from salesgym.envs.workflows.tasks.fixtures import (
    EVENT_TYPE,
    SEQUENCE_IDS,
    TIMEZONES,
    abm_scene,
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

LOSS_REASONS = ("chose a competitor on price", "budget frozen until next fiscal year",
                "no executive sponsor after the reorganisation", "built it in-house instead")  # fmt: skip


# --- shared helpers ---------------------------------------------------------------------------------------------
def et_uri(kind: str) -> str:
    return f"{scheduler.API}/event_types/{EVENT_TYPE[kind]}"


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
    key, n = b.key("sequencer.mailings")
    at = b.anchor if state == "replied" else None
    b.put("sequencer.mailings", key, {"type": "mailing", "id": n, "attributes": {
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
            "owner_id": comp["properties"]["hubspot_owner_id"], "pipeline": RENEWAL_PIPELINE}  # fmt: skip


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
            "start": earliest(b, "demo", day), "event_type": et_uri("demo")}  # fmt: skip


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
            "start": earliest(b, "deep-dive", day), "event_type": et_uri("deep-dive")}  # fmt: skip


# --- tier 1: sequencer ------------------------------------------------------------------------------------------
def finish_replied(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, _ = account_scene(b, rng)
    replied, quiet = [], []
    for i in range(4):
        _, _, prospect = contact_prospect(b, rng, comp, ckey, account, ["sql"])
        state = add_state(b, prospect["id"], SEQUENCE_IDS["SQL Outbound"], "active", b.anchor)
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
    add_state(b, busy, SEQUENCE_IDS["Win-back"], "active", b.anchor)
    b.rows("sequencer.prospects")[str(opted)]["attributes"]["optedOut"] = True
    return {"tag": tag, "eligible": made[:2], "busy": busy, "opted_out": opted, "sequence_id": 6,
            **owner_params(b, owner_id)}


def optout_call_tasks(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp, account, owner_id = account_scene(b, rng)
    tag = f"trade-show-{b.anchor[5:7]}{b.anchor[8:10]}"
    made = [contact_prospect(b, rng, comp, ckey, account, [tag])[2] for _ in range(3)]
    opted = made[rng.randint(0, 2)]
    opted["attributes"]["optedOut"] = True
    due = business_day(b, rng, 1, 4)
    return {"tag": tag, "eligible": [p["id"] for p in made if p is not opted], "opted_out": opted["id"],
            "opted_name": f"{opted['attributes']['firstName']} {opted['attributes']['lastName']}",
            "due": iso(due)[:10], "due_time": iso(due.replace(hour=10)), "sequence_id": SEQUENCE_IDS["Exec Intro"],
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
    free, paid = [], []
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
