"""The ``workflows-counterparty`` pack: templates whose decisive rule is in a company policy document, and
templates where a simulated person acts on the apps mid-episode, with their fixtures. The package ships it by
name (``WorkflowsEnv(pack="workflows-counterparty")``); it is not in the package's catalogue, so the frozen
splits (cut over that catalogue) and every seed's draw stay as they were.

Policy templates (the request names the policy; the rule that decides the outcome is only in the document,
``policy_docs/``):

- ``policy-lead-routing``: route an inbound contact: the owner is the company's owner (account-based routing), the
  status Open, the lifecycle untouched;
- ``policy-term-discount``: open a deal for a multi-year commitment at the term discount (8% or 12% off list), with
  a note stating it;
- ``policy-one-sequence``: enrol a tagged list, skipping prospects active in another sequence;
- ``policy-first-meeting``: a first meeting is a Discovery Call, whatever the request calls it.

Acting-user templates (``users.py``):

- ``user-books-from-link``: the prospect books through the single-use link the agent sent by InMail; the agent
  logs the booking it did not make, at the time the prospect chose;
- ``user-owner-reassigned``: a colleague reassigns the contact's owner during the task (at a minute of the
  sandbox clock); the follow-up task must go to the new owner;
- ``user-reschedules``: the customer moves the demo the agent booked to another day; the CRM meeting must hold the
  new time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso, parse_iso
from salesgym.envs.workflows.population import Builder, account_for, add_contact, add_lead, add_prospect, add_state
from salesgym.envs.workflows.tasks import fixtures as fx
from salesgym.envs.workflows.tasks.model import OUT, A, Act, Change, F, Forbidden, P, Step, Template

PACK = "workflows-counterparty"
NO_BOOKING_FOR_THEM = Forbidden("no booking on their behalf", ("meetings-create_invitee",), attempted=True)


def call(tool: str, **args: object) -> dict[str, object]:
    return {"tool": tool, "args": args}


def active(email: str) -> str:
    return f'events_of({email}) | map(select(.status == "active"))'


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


# --- templates --------------------------------------------------------------------------------------------------
CONTACT = "contact($contact_email)"
DEAL_NOTES = ('. as $doc | [deal_named($deal_name) | .id] | map(. as $d | $doc | linked("deals"; $d; "notes"; 213)[] '
              '| . as $n | $doc | crm("notes"; $n) | .properties.hs_note_body)')


def meeting_at(start: str, end: str) -> tuple[A, ...]:
    meetings = 'engagements("meetings"; $contact_id)'
    return (A("one CRM meeting on the contact", f"{meetings} | length", "equals", 1),
            A("at the booking's start and end", f"{meetings} | .[0].properties | [.hs_meeting_start_time, "
              ".hs_meeting_end_time]", "equals", [P(start), P(end)]))  # fmt: skip


def _booked(email: str, start: str) -> tuple[A, ...]:
    return (A("one active booking", f"{active(email)} | length", "equals", 1),
            A("at the expected slot", f"{active(email)} | .[0].start_time", "equals", P(start)),
            A("of the expected event type", f"{active(email)} | .[0].event_type", "equals", P("event_type")))


POLICY_TEMPLATES: tuple[Template, ...] = (
    Template(
        "policy-lead-routing", "inbound", "Route an inbound lead by the policy",
        "The contact is owned by its company's owner, with lead status Open and its lifecycle stage untouched.",
        "{contact_name} ({contact_email}) from {company} filled in our pricing form. Route them in the CRM "
        "according to our lead-routing policy.",
        ("crm",), lead_routing,
        (Step("crm", "route the contact as the policy says", ("read_policy", "hubspot-search-objects",
                                                              "hubspot-batch-update-objects"),
              (A("owned by the company's owner", f"{CONTACT} | .properties.hubspot_owner_id", "equals",
                 P("company_owner")),
               A("lead status Open", f"{CONTACT} | .properties.hs_lead_status", "equals", "OPEN"),
               A("lifecycle untouched", f"{CONTACT} | .properties.lifecyclestage", "equals",
                 "marketingqualifiedlead"))),),
        (Change("crm.contacts", ("update",), P("contact_id"), ("hubspot_owner_id", "hs_lead_status")),),
        (call("read_policy", name="lead-routing"),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=[
             {"id": P("contact_id"), "properties": {"hubspot_owner_id": P("company_owner"),
                                                    "hs_lead_status": "OPEN"}}])),
        requester_role="the revenue operations lead", mechanisms=("policy", "owner_ids"), policies=("lead-routing",),
    ),
    Template(
        "policy-term-discount", "pipeline", "Price a multi-year deal by the policy",
        "A new-business deal at Contract Sent on the company carries the term-discounted amount, with a note "
        "stating the discount and the term.",
        "{company} is signing a {term}-year commitment at a list price of ${list_price}. Open a new-business deal "
        "named \"{deal_name}\" in the Sales Pipeline at Contract Sent, associated to {company}, and price and "
        "document it as our discounting policy says.",
        ("crm",), term_discount,
        (Step("crm", "open the deal at the policy's price", ("read_policy", "hubspot-batch-create-objects"),
              (A("one deal", "[deal_named($deal_name)] | length", "equals", 1),
               A("Sales Pipeline, Contract Sent", "deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage]", "equals", ["default", "contractsent"]),
               A("the term-discounted amount", "deal_named($deal_name) | (.properties.amount | tonumber) == ($amount "
                 "| tonumber)"),
               A("on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")))),
         Step("crm", "note the discount on the deal", ("hubspot-create-engagement",),
              (A("a note stating the discount and the term", f'{DEAL_NOTES} | join(" ")', "matches",
                 F(r"(?s)(?=.*\b{pct}\s*%)(?=.*\b{term}[- ]year)")),))),
        (Change("crm.deals", most=1), Change("crm.associations"), Change("crm.notes", most=1)),
        (call("read_policy", name="discounting"),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "contractsent",
                             "amount": P("amount"), "hubspot_owner_id": P("owner_id")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"dealIds": [OUT(1, ".results[0].id | tonumber")]},
              metadata={"timestamp": P("today"), "body": F("Term discount: {pct}% for a {term}-year commitment "
                                                           "(list ${list_price}).")})),
        requester_role="the account executive", mechanisms=("policy", "stage_in_pipeline"), policies=("discounting",),
    ),
    Template(
        "policy-one-sequence", "outbound", "Sequence a list by the policy",
        "Every tagged prospect not active in another sequence has one state in the sequence from the owner's "
        "mailbox; those active elsewhere have none and keep their other sequence.",
        "Enrol the prospects tagged \"{tag}\" in the \"SQL Outbound\" sequence from {owner}'s mailbox, following "
        "our sequencing policy.",
        ("sequencer",), one_sequence,
        (Step("sequencer", "enrol those the policy allows", ("read_policy", "prospect_search",
                                                             "sequence_state_search", "sequence_add_prospects"),
              (A("each eligible prospect enrolled once", "every($eligible; . as $p | $doc | states($p; $sequence_id) "
                 "| length == 1)"),
               A("from the owner's mailbox", "every($eligible; . as $p | $doc | states($p; $sequence_id) | "
                 ".[0] | rel(\"mailbox\") == $mailbox)"),
               A("nobody active elsewhere enrolled", "[$busy[] as $p | $doc | states($p; $sequence_id)[]] | length",
                 "equals", 0),
               A("their other sequence left running", "[$busy[] as $p | $doc | states($p; $other_sequence)[] | "
                 ".attributes.state] | unique", "equals", ["active"]))),),
        (Change("sequencer.sequence_states", most=P("eligible")),),
        (call("read_policy", name="sequencing"),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("eligible"),
              mailboxId=P("mailbox"))),
        mechanisms=("policy", "sequence_exclusivity"), policies=("sequencing",),
    ),
    Template(
        "policy-first-meeting", "scheduling", "Book a first meeting by the policy",
        "The new prospect has one active Discovery Call at its earliest open slot.",
        "{invitee_name} <{invitee_email}> (time zone {tz}) is a new prospect who wants a first meeting with us, a "
        "quick demo of the product. Book them the earliest slot on or after {after}, as our meeting policy says.",
        ("scheduler",), first_meeting,
        (Step("scheduler", "book the meeting the policy calls for", ("read_policy", "event_types-list_event_types",
                                                                     "event_types-list_event_type_available_times",
                                                                     "meetings-create_invitee"),
              (*_booked("$invitee_email", "start"),
               A("in their time zone", f"{active('$invitee_email')} | .[0].invitee.timezone", "equals", P("tz")))),),
        (Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1)),
        (call("read_policy", name="meeting-hygiene"),
         call("meetings-create_invitee", event_type=P("event_type"), start_time=P("start"),
              invitee={"name": P("invitee_name"), "email": P("invitee_email"), "timezone": P("tz")})),
        forbidden=(Forbidden("no cancellations", ("meetings-cancel_event",)),),
        mechanisms=("policy", "open_slots"), policies=("meeting-hygiene",),
    ),
)

USER_TEMPLATES: tuple[Template, ...] = (
    Template(
        "user-books-from-link", "scheduling", "Send a booking link, then log what they booked",
        "The prospect booked a demo through the single-use link the agent sent by InMail, and the CRM contact has "
        "that demo as a meeting at the time they chose.",
        "{contact_name} at {company} (Sales Navigator lead {lead_id}) wants to pick their own time for a 30 Minute "
        "Demo. Create a single-use scheduling link for the demo and send it to them by InMail. Once they have "
        "booked, log the demo on their CRM contact ({contact_email}) as a MEETING titled \"Demo\" with the "
        "booking's start and end time, owned by the contact's owner. Do not book for them.",
        ("prospecting", "scheduler", "crm"), books_from_link,
        (Step("prospecting", "send the link", ("scheduling_links-create_single_use_scheduling_link", "send_inmail"),
              (A("one InMail to the lead", "[.prospecting.inmails[] | select(.lead_id == $lead_id)] | length",
                 "equals", 1),)),
         Step("scheduler", "they book through it", ("meetings-list_events",),
              (A("the link was used", "[.scheduler.scheduling_links[] | select(.used_by != null)] | length", "equals",
                 1),
               *_booked("$contact_email", "start"))),
         Step("crm", "log what they booked", ("hubspot-create-engagement",), meeting_at("start", "end"))),
        (Change("prospecting.inmails", most=1), Change("prospecting.credits", ("update",), None, ("available",)),
         Change("scheduler.scheduling_links", most=1), Change("crm.meetings", most=1), Change("crm.associations")),
        (call("scheduling_links-create_single_use_scheduling_link", owner=P("event_type")),
         call("send_inmail", recipient_urn=F("urn:li:fs_salesProfile:{lead_id}"), subject="Pick a time for a demo",
              body=OUT(0, '"Here is a link to pick a time for our 30 minute demo: " + .resource.booking_url')),
         call("meetings-list_events", invitee_email=P("contact_email"), status="active"),
         call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": OUT(2, ".collection[0].start_time"), "title": "Demo",
                        "startTime": OUT(2, ".collection[0].start_time"),
                        "endTime": OUT(2, ".collection[0].end_time")})),
        forbidden=(NO_BOOKING_FOR_THEM,),
        actions=(Act("books", "{contact_name}", "book_from_link",
                     {"name": P("contact_name"), "email": P("contact_email"), "timezone": P("tz"),
                      "after": P("prefers")}, after=("send_inmail",),
                     says="Thanks for the link! I've picked a time for the demo.", actor_key="prospect"),),
        requester_role="the account executive", mechanisms=("acting_user", "single_use_link", "inmail_credits"),
    ),
    Template(
        "user-owner-reassigned", "inbound", "Qualify a lead whose owner changes under you",
        "The contact is a sales-qualified lead in progress, and its follow-up call task is owned by the owner a "
        "colleague reassigned it to mid-task.",
        "{contact_name} ({contact_email}) asked us to call them back. Make them a sales-qualified lead with lead "
        "status In Progress, then create a CALL task on the contact, subject \"Call back {contact_name}\", due "
        "{due}, owned by the contact's owner. Leave the contact's owner as it is.",
        ("crm",), owner_reassigned,
        (Step("crm", "qualify the contact", ("hubspot-search-objects", "hubspot-batch-update-objects"),
              (A("sales-qualified", f"{CONTACT} | .properties.lifecyclestage", "equals", "salesqualifiedlead"),
               A("in progress", f"{CONTACT} | .properties.hs_lead_status", "equals", "IN_PROGRESS"),
               A("the colleague's reassignment stands", f"{CONTACT} | .properties.hubspot_owner_id", "equals",
                 P("new_owner")))),
         Step("crm", "a call task for the contact's current owner", ("hubspot-batch-read-objects",
                                                                      "hubspot-create-engagement"),
              (A("one task on the contact", 'engagements("tasks"; $contact_id) | length', "equals", 1),
               A("owned by the new owner", 'engagements("tasks"; $contact_id) | .[0].properties.hubspot_owner_id',
                 "equals", P("new_owner")),
               A("a call, due on the day", 'engagements("tasks"; $contact_id) | .[0].properties | '
                 '(.hs_task_type == "CALL" and (.hs_timestamp | startswith($due)))')))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage", "hs_lead_status")),
         Change("crm.tasks", most=1), Change("crm.associations")),
        (call("hubspot-search-objects", objectType="contacts",
              filterGroups=[{"filters": [{"propertyName": "email", "operator": "EQ", "value": P("contact_email")}]}]),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=[
             {"id": P("contact_id"), "properties": {"lifecyclestage": "salesqualifiedlead",
                                                    "hs_lead_status": "IN_PROGRESS"}}]),
         call("hubspot-batch-read-objects", objectType="contacts", inputs=[{"id": P("contact_id")}]),
         call("hubspot-create-engagement", type="TASK",
              ownerId=OUT(2, ".results[0].properties.hubspot_owner_id | tonumber"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("due"), "subject": F("Call back {contact_name}"), "taskType": "CALL"})),
        actions=(Act("reassign", "{colleague}", "reassign_owner",
                     {"object": "contacts", "id": P("contact_id"), "owner_id": P("new_owner")}, at=1.5,
                     says="Heads-up: I've just moved {contact_name} to {new_owner_name} (territory change). Anything "
                     "new on them goes to {new_owner_name} now.", actor_key="colleague"),),
        requester_role="the sales manager", mechanisms=("acting_user", "owner_ids", "engagement_association"),
    ),
    Template(
        "user-reschedules", "scheduling", "Book a demo and keep the CRM in line when they move it",
        "The customer's first booking (the earliest demo) was moved by the customer; the CRM meeting holds the "
        "time of the booking they moved it to.",
        "Book {contact_name} <{contact_email}> (time zone {tz}) into the earliest available 30 Minute Demo on or "
        "after {after}, and log it on their CRM contact as a MEETING titled \"Demo\" with the booking's start and "
        "end time, owned by the contact's owner. Watch your inbox: when you finish, the CRM must match the "
        "calendar. Never cancel a customer's booking.",
        ("scheduler", "crm"), reschedules,
        (Step("scheduler", "book the earliest demo", ("event_types-list_event_type_available_times",
                                                      "meetings-create_invitee"),
              (A("the first booking was the earliest slot, moved by the customer", "events_of($contact_email) | "
                 'map(select(.status == "canceled")) | map([.start_time, .cancellation.canceler_type])', "equals",
                 [[P("start"), "invitee"]]),
               A("one active booking, where they moved it", f"{active('$contact_email')} | map(.start_time)",
                 "equals", [P("start2")]))),
         Step("crm", "log the demo at its current time", ("meetings-list_events", "hubspot-create-engagement"),
              meeting_at("start2", "end2"))),
        (Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1),
         Change("crm.meetings", most=1), Change("crm.associations")),
        (call("meetings-create_invitee", event_type=P("event_type"), start_time=P("start"),
              invitee={"name": P("contact_name"), "email": P("contact_email"), "timezone": P("tz")}),
         call("meetings-list_events", invitee_email=P("contact_email"), status="active"),
         call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": OUT(1, ".collection[0].start_time"), "title": "Demo",
                        "startTime": OUT(1, ".collection[0].start_time"),
                        "endTime": OUT(1, ".collection[0].end_time")})),
        forbidden=(Forbidden("never cancel a customer's booking", ("meetings-cancel_event",), attempted=True),),
        actions=(Act("moves", "{contact_name}", "reschedule", {"email": P("contact_email"), "after": P("moves_to")},
                     after=("meetings-create_invitee",), when=f"{active('$contact_email')} | length == 1",
                     says="Something came up, so I moved our demo to another day with the reschedule link in the "
                     "invite. See you then!", actor_key="customer"),),
        requester_role="the account executive", mechanisms=("acting_user", "open_slots", "engagement_association"),
    ),
)

TEMPLATES: dict[str, Template] = {}
for _template in (*POLICY_TEMPLATES, *USER_TEMPLATES):
    _template.check()
    TEMPLATES[_template.id] = _template
