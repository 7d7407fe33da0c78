"""The shared core of the four-app scenes (``fixtures_tier4.py``): ``scene`` (a company with its sequencer
account, a person with a Sales Navigator profile and, as the scene asks, a CRM contact and a prospect, the
company owner's user and mailbox, and an open slot of an event type computed with the scheduler's own rule),
``quiet`` (the population's other senior leads at the scene's company demoted, so searches are unambiguous),
past and future bookings, extra sequences, locked users, and the names and durations they use.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler, sequencer
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import (
    TITLES,
    Builder,
    account_for,
    add_contact,
    add_lead,
    add_prospect,
    user_for_owner,
)
from salesgym.envs.workflows.tasks.fixtures import (
    TIMEZONES,
    business_day,
    company,
    earliest,
    mailbox_of,
    owner_name,
)

EXCLUSIVE = "Enterprise Nurture"  # exclusive across all sequences
DISABLED = "Cold Outbound Q1"  # not enabled
COVER_TEAM = 10  # reps added to the population where a hidden fact names one of them
# where a hidden fact names a sequence, half of these join the population
PLAYBOOKS = ("Ops Leaders Intro", "Q2 Outbound", "Conference Follow-up", "Trial Nurture", "Partner Referral",
             "Champion Intro", "Board Deck Follow-up", "Security Review Prep", "Pricing Page Visitors",
             "Competitive Displacement", "Customer Story Share", "New Region Launch", "Analyst Report Follow-up",
             "Webinar No-shows", "Expansion Plays", "Executive Briefing", "Roadshow Invite", "Product Launch",
             "Renewal Save", "Integration Partners", "ROI Calculator", "Holiday Check-in", "Event Invite EMEA",
             "Event Invite NA")  # fmt: skip
EVENT_NAMES = {"demo": "30 Minute Demo", "discovery": "Discovery Call", "deep-dive": "Technical Deep Dive"}
DURATION = {"demo": 30, "discovery": 30, "deep-dive": 60}
SQL_STAGE = "salesqualifiedlead"
GEOGRAPHY_REGION = {"Germany": 0, "United States": 1, "Canada": 2, "Singapore": 3}


# --- the shared core --------------------------------------------------------------------------------------------
def slot(b: Builder, rng: Dice, kind: str = "demo", low: int = 3, high: int = 9, prefix: str = "") -> dict[str, Any]:
    """The earliest open slot of ``kind`` on or after a business day ``low``..``high`` days ahead."""
    day = business_day(b, rng, low, high)
    start = earliest(b, kind, day)
    moment = parse_iso(start)
    assert moment is not None
    return {f"{prefix}after": iso(day)[:10], f"{prefix}start": start,
            f"{prefix}end": iso(moment + timedelta(minutes=DURATION[kind])),
            f"{prefix}event_type": event_type_uri(b, kind), f"{prefix}event_name": EVENT_NAMES[kind]}  # fmt: skip


def event_type_uri(b: Builder, kind: str) -> str:
    return f"{scheduler.API}/event_types/{b.event_types[kind]}"


def owner_params(b: Builder, owner_id: str, prefix: str = "") -> dict[str, Any]:
    return {f"{prefix}owner_id": owner_id, f"{prefix}owner_int": int(owner_id),
            f"{prefix}owner": owner_name(b, owner_id), f"{prefix}user": user_for_owner(b, owner_id),
            f"{prefix}mailbox": mailbox_of(b, owner_id)}  # fmt: skip


def lead_params(lead: dict[str, Any], domain: str, prefix: str = "") -> dict[str, Any]:
    first, last = lead["firstName"], lead["lastName"]
    return {f"{prefix}lead_id": lead["lead_id"], f"{prefix}urn": lead["urn"], f"{prefix}first": first,
            f"{prefix}last": last, f"{prefix}name": f"{first} {last}", f"{prefix}title": lead["title"],
            f"{prefix}email": f"{first.lower()}.{last.lower()}@{domain}"}  # fmt: skip


def quiet(b: Builder, company_name: str) -> None:
    """Demote the population's Director+ leads at the company to managers, so that a search the task asks for
    finds exactly the scene's people (their CRM records keep their titles: a profile may be newer)."""
    for key, lead in list(b.rows("prospecting.leads").items()):
        if lead["company"] == company_name and lead["seniority"] in ("Director", "VP", "CXO"):
            title = TITLES[lead["function"]][1]
            b.rows("prospecting.leads")[key] = {**lead, "seniority": "Manager", "title": title,
                                                "current_title": title, "summary": f"{title} at {company_name}"}


def scene(b: Builder, rng: Dice, *, kind: str = "demo", contact: bool = True, lifecycle: str = "marketingqualifiedlead",
          lead_status: str = "NEW", jobtitle: str | None = "", prospect: bool = False, function: str | None = None,
          level: int | None = None, sequence: str = "SQL Outbound", **lead_kw: Any) -> dict[str, Any]:  # fmt: skip
    """A company with its account, a person with a profile (a CRM contact and a prospect as asked), the company
    owner's user and mailbox, the sequence's id and the earliest open slot of ``kind``. The company's other
    senior leads are demoted (``quiet``), so the person is the one a search by seniority finds."""
    ckey, comp = company(b, rng, with_account=True)
    props = comp["properties"]
    quiet(b, props["name"])
    account = account_for(b, props["name"])
    assert account is not None
    first, last = b.person(rng)
    level = level if level is not None else rng.randint(2, 4)
    function = function or rng.choice(("Engineering", "Operations", "Finance", "Marketing"))
    geography = lead_kw.pop("geography", None)
    lead = add_lead(b, rng, (first, last), props["name"], function=function, level=level, **lead_kw)
    if geography is not None:
        lead["geography"] = geography
    out: dict[str, Any] = {"company": props["name"], "company_id": ckey, "domain": props["domain"],
                           "account_id": account["id"], "sequence_id": b.sequence_ids.get(sequence),
                           "tz": rng.choice(TIMEZONES), **lead_params(lead, props["domain"]),
                           **owner_params(b, props["hubspot_owner_id"]), **slot(b, rng, kind)}  # fmt: skip
    out["contact_email"], out["contact_name"] = out["email"], out["name"]
    if contact:
        key, _ = add_contact(b, rng, comp, ckey, lifecycle=lifecycle, jobtitle=jobtitle, lead_status=lead_status,
                                  person=(first, last))  # fmt: skip
        out["contact_id"], out["contact_id_int"] = key, int(key)
    if prospect:
        attrs = {"email": out["email"], "firstname": first, "lastname": last, "jobtitle": lead["title"],
                 "company": props["name"], "hubspot_owner_id": props["hubspot_owner_id"]}  # fmt: skip
        out["prospect_id"] = add_prospect(b, attrs, account, ["inbound"])["id"]
    return out


def person_at(b: Builder, rng: Dice, company_name: str, domain: str, prefix: str, **lead_kw: Any) -> dict[str, Any]:
    """Another lead at the company (a profile only), its parameters under ``prefix``."""
    lead = add_lead(b, rng, b.person(rng), company_name, **lead_kw)
    return lead_params(lead, domain, prefix)


def crm_contact_for(b: Builder, rng: Dice, params: dict[str, Any], prefix: str, **kw: Any) -> str:
    """A CRM contact for the person under ``prefix`` (on the scene's company); its id under ``<prefix>contact_id``."""
    comp = b.rows("crm.companies")[params["company_id"]]
    key, _ = add_contact(b, rng, comp, params["company_id"], person=(params[f"{prefix}first"], params[f"{prefix}last"]),
                         **kw)  # fmt: skip
    params[f"{prefix}contact_id"], params[f"{prefix}contact_id_int"] = key, int(key)
    return key


def prospect_for(b: Builder, params: dict[str, Any], prefix: str = "", tags: tuple[str, ...] = ("inbound",),
                 opted_out: bool = False) -> int:  # fmt: skip
    account = b.rows("sequencer.accounts")[str(params["account_id"])]
    attrs = {"email": params[f"{prefix}email"], "firstname": params[f"{prefix}first"],
             "lastname": params[f"{prefix}last"], "jobtitle": params[f"{prefix}title"], "company": params["company"],
             "hubspot_owner_id": params["owner_id"]}  # fmt: skip
    pid = int(add_prospect(b, attrs, account, list(tags), opted_out)["id"])
    params[f"{prefix}prospect_id"] = pid
    return pid


def past_booking(b: Builder, kind: str, days_ago: int, hour: int, name: str, email: str, tz: str,
                 status: str = "active") -> dict[str, Any]:  # fmt: skip
    """A booking that has already started (before the sandbox's start), with its invitee."""
    et = b.rows("scheduler.event_types")[b.event_types[kind]]
    host = next(iter(b.rows("scheduler.users").values()))["uri"]
    start = (b.start - timedelta(days=days_ago)).replace(hour=hour, minute=0)
    while start.weekday() >= 5:
        start -= timedelta(days=1)
    key, _ = b.key("scheduler.scheduled_events")
    event = b.put("scheduler.scheduled_events", key,
                  {**scheduler.scheduled_event_record(key, et, start, host, b.anchor), "status": status}, "fixture")
    ikey, _ = b.key("scheduler.invitees")
    invitee = b.put("scheduler.invitees", ikey, {**scheduler.invitee_record(ikey, event, name, email, tz, b.anchor),
                                                 "status": status}, "fixture")  # fmt: skip
    return {"event": event, "invitee": invitee}


def future_booking(b: Builder, rng: Dice, kind: str, name: str, email: str, tz: str, low: int = 2,
                   high: int = 5) -> dict[str, Any]:  # fmt: skip
    """A future booking at an open slot, with its invitee."""
    day = business_day(b, rng, low, high)
    start = parse_iso(earliest(b, kind, day))
    assert start is not None
    et = b.rows("scheduler.event_types")[b.event_types[kind]]
    host = next(iter(b.rows("scheduler.users").values()))["uri"]
    key, _ = b.key("scheduler.scheduled_events")
    event = b.put("scheduler.scheduled_events", key, scheduler.scheduled_event_record(key, et, start, host, b.anchor),
                  "fixture")  # fmt: skip
    ikey, _ = b.key("scheduler.invitees")
    invitee = b.put("scheduler.invitees", ikey, scheduler.invitee_record(ikey, event, name, email, tz, b.anchor),
                    "fixture")  # fmt: skip
    return {"event": event, "invitee": invitee}


def new_list(b: Builder, name: str) -> str:
    key, _ = b.key("prospecting.lists")
    b.put("prospecting.lists", key, {"id": key, "name": name, "type": "LEAD", "shared": False}, "fixture")
    return key


def save_member(b: Builder, list_id: str, lead_id: str) -> None:
    b.put("prospecting.list_members", f"{list_id}:{lead_id}", {"list_id": list_id, "lead_id": lead_id,
                                                               "saved_at": b.anchor}, "fixture")  # fmt: skip


def add_sequence(b: Builder, name: str, steps: tuple[str, ...] = ("email",), *, duplicates: bool = False,
                 private_owner: int | None = None, exclusive: bool = False) -> int:  # fmt: skip
    """A sequence beside the population's: its ruleset may permit duplicates; private ones belong to a user."""
    key, _ = b.key("sequencer.sequences")
    n, first_user = int(key), int(next(iter(b.rows("sequencer.users"))))
    ruleset = {"permitDuplicateProspects": "allow" if duplicates else "disallow", "emailOptOutAction": "exclude",
               "sequenceExclusivity": "all_sequences" if exclusive else "none", "meetingBookedAction": "finish"}
    b.put("sequencer.sequences", key, sequencer.resource("sequence", n, {"name": name, "enabled": True, "locked": False,
          "sequenceType": "interval", "shareType": "private" if private_owner else "shared", "stepTypes": list(steps),
          "ruleset": ruleset}, owner=sequencer.ref("user", private_owner or first_user)), "fixture")  # fmt: skip
    return n


def lock_user(b: Builder, user: int) -> None:
    record = b.rows("sequencer.users")[str(user)]
    b.rows("sequencer.users")[str(user)] = {**record, "attributes": {**record["attributes"], "locked": True}}


def other_owner(b: Builder, rng: Dice, not_id: str) -> str:
    return rng.choice([k for k in b.rows("crm.owners") if k != not_id])


def region_owner(b: Builder, region: int) -> str:
    return list(b.rows("crm.owners"))[region]


def mailing(b: Builder, prospect_id: int, state: str, subject: str, body: str) -> None:
    key, _ = b.key("sequencer.mailings")
    b.put("sequencer.mailings", key, {"type": "mailing", "id": int(key), "attributes": {"mailingType": "sequence",
          "state": state, "subject": subject, "bodyText": body, "repliedAt": b.anchor if state == "replied" else None},
          "relationships": {"prospect": {"data": {"type": "prospect", "id": prospect_id}}}}, "fixture")  # fmt: skip


def day_before_nine(start: str) -> str:
    moment = parse_iso(start)
    assert moment is not None
    return iso((moment - timedelta(days=1)).replace(hour=9, minute=0))


def other_company(b: Builder, rng: Dice, not_name: str) -> tuple[str, dict[str, Any]]:
    """Another CRM company that has a sequencer account."""
    items = [(k, c) for k, c in b.rows("crm.companies").items()
             if c["properties"]["name"] != not_name and account_for(b, c["properties"]["name"]) is not None]
    return rng.choice(items)
