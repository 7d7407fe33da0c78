"""The workflow templates, as data: each a parameterised blueprint over one to four apps, with its fixture
(``fixtures.py``), its steps and their jq assertions, the changes it may make, forbidden actions, hidden facts
and a reference solution. ``CATALOGUE`` holds them by id; ``tests/workflows`` runs every reference solution.

jq expressions see the instance's parameters as ``$name`` and the helpers of ``jqlib.PRELUDE``.
"""

from __future__ import annotations

from salesgym.envs.workflows.tasks import fixtures as fx
from salesgym.envs.workflows.tasks.model import (
    OUT,
    A,
    Catalogue,
    Change,
    F,
    FactSpec,
    Forbidden,
    P,
    Rubric,
    Step,
    Template,
)
from salesgym.envs.workflows.tasks.templates_conversational import TEMPLATES as CONVERSATIONAL

CONTACT = "contact($contact_email)"
NO_INMAIL = Forbidden("no InMail credit spent", ("send_inmail",), attempted=True)
NO_INMAIL_SENT = A("no InMail sent", ".prospecting.inmails | length", "equals", 0)
AMOUNT = FactSpec("amount", ("amount", "figure", "price", "agreed", "value", "how much"), "amount")
TZ = FactSpec("timezone", ("time zone", "timezone", "tz", "where are they", "located"), "tz")
# claims no message may make unless the request allows them: discounts, free periods, guarantees
NO_DISCOUNT = ("a discount", r"\bdiscount|\d+\s*%\s*off|\bfree (?:month|trial|upgrade)s?\b")
NO_GUARANTEE = ("a guarantee", r"\bguarantee[sd]?\b|\bpromise (?:you|that)\b")
CLAIMS = (NO_DISCOUNT, NO_GUARANTEE)


def call(tool: str, **args: object) -> dict[str, object]:
    return {"tool": tool, "args": args}


def update_contact(contact_id: object, **props: object) -> dict[str, object]:
    return call("hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": contact_id, "properties": props}])


def booked(email: str = "$contact_email", start: str = "start") -> tuple[A, ...]:
    active = f"events_of({email}) | map(select(.status == \"active\"))"
    return (A("one active booking", f"{active} | length", "equals", 1),
            A("at the expected open slot", f"{active} | .[0].start_time", "equals", P(start)),
            A("of the right event type", f"{active} | .[0].event_type", "equals", P("event_type")),
            A("invitee time zone", f"{active} | .[0].invitee.timezone", "equals", P("tz")))  # fmt: skip


def meeting_logged(contact: str = "$contact_id") -> A:
    return A("meeting logged with the booking's times",
             f'engagements("meetings"; {contact}) | map(select(.properties.hs_meeting_start_time == $start and '
             ".properties.hs_meeting_end_time == $end)) | length", "equals", 1)  # fmt: skip


def book(name: object, email: object, start: str = "start") -> dict[str, object]:
    return call("meetings-create_invitee", event_type=P("event_type"), start_time=P(start),
                invitee={"name": name, "email": email, "timezone": P("tz")})  # fmt: skip


def log_meeting(contact_ids: object, owner: object, title: str = "Demo") -> dict[str, object]:
    return call("hubspot-create-engagement", type="MEETING", ownerId=owner, associations={"contactIds": contact_ids},
                metadata={"timestamp": P("start"), "title": title, "startTime": P("start"), "endTime": P("end")})


CATALOGUE = Catalogue()

# --- tier 1: CRM ------------------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "crm-inbound-sql", "inbound", "Qualify an inbound demo request",
        "The inbound contact is a sales-qualified lead in progress, owned by the right region's owner, with the "
        "request noted.",
        "{contact_name} ({contact_email}) asked for a demo through the website. Qualify the contact in the CRM: "
        "make them a sales-qualified lead with lead status In Progress, assign them to the owner of the {region} "
        "team, and log a note on the contact saying they requested a demo.",
        ("crm",), fx.inbound_sql,
        (Step("crm", "qualify and route the contact", ("hubspot-search-objects", "hubspot-list-owners",
                                                      "hubspot-batch-update-objects"),
              (A("exactly one contact with the email", f"[{CONTACT}] | length", "equals", 1),
               A("sales-qualified", f"{CONTACT} | .properties.lifecyclestage", "equals", "salesqualifiedlead"),
               A("in progress", f"{CONTACT} | .properties.hs_lead_status", "equals", "IN_PROGRESS"),
               A("owned by the region's owner", f"{CONTACT} | .properties.hubspot_owner_id", "equals",
                 P("owner_id")))),
         Step("crm", "note the demo request", ("hubspot-create-engagement",),
              (A("a note on the contact", 'engagements("notes"; $contact_id) | length', "gte", 1),
               A("the note mentions the demo", 'engagements("notes"; $contact_id) | map(.properties.hs_note_body) '
                 '| join(" ")', "matches", "(?i)demo")))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage", "hs_lead_status", "hubspot_owner_id")),
         Change("crm.notes", most=1), Change("crm.associations")),
        (update_contact(P("contact_id"), lifecyclestage="salesqualifiedlead", hs_lead_status="IN_PROGRESS",
                        hubspot_owner_id=P("owner_id")),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("today"), "body": "Requested a demo through the website."})),
        mechanisms=("owner_ids", "engagement_association"),
        rubrics=(Rubric("the note", 'engagements("notes"; $contact_id)[] | .properties.hs_note_body', 2,
                        must_mention=(("demo", "demonstration"),), forbidden_claims=CLAIMS, max_len=1000),),
    ),
    Template(
        "crm-dedupe-inbound", "hygiene", "Update, don't duplicate",
        "The person is in the CRM once, with the job title from the form.",
        "A form fill came in from {form_email} ({contact_name}, job title \"{title}\"). Make sure they are in the "
        "CRM with that job title. If they already exist, update the existing contact: never create a duplicate.",
        ("crm",), fx.dedupe_inbound,
        (Step("crm", "find the existing contact and update it", ("hubspot-search-objects",
                                                                 "hubspot-batch-update-objects"),
              (A("one contact with the email", f"[{CONTACT}] | length", "equals", 1),
               A("the existing record", f"{CONTACT} | .id", "equals", P("contact_id")),
               A("job title from the form", f"{CONTACT} | .properties.jobtitle", "equals", P("title")))),),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)),),
        (call("hubspot-search-objects", objectType="contacts",
              filterGroups=[{"filters": [{"propertyName": "email", "operator": "EQ", "value": P("form_email")}]}]),
         update_contact(OUT(0, ".results[0].id"), jobtitle=P("title"))),
        mechanisms=("unique_email",),
    ),
    Template(
        "crm-renewal-negotiation", "pipeline", "Move a renewal to negotiation",
        "The renewal deal is at Negotiation in the Renewals pipeline with the agreed amount.",
        "The {company} renewal is moving forward: put its renewal deal in the Negotiation stage of the Renewals "
        "pipeline and set its amount to the figure {requester} agreed with the customer (ask {requester}).",
        ("crm",), fx.renewal_negotiation,
        (Step("crm", "progress the deal", ("hubspot-list-pipelines", "hubspot-search-objects",
                                           "hubspot-batch-update-objects"),
              (A("Negotiation stage", 'crm("deals"; $deal_id) | .properties.dealstage', "equals",
                 P("stage_negotiation")),
               A("Renewals pipeline", 'crm("deals"; $deal_id) | .properties.pipeline', "equals",
                 P("renewal_pipeline")),
               A("the agreed amount", 'crm("deals"; $deal_id) | (.properties.amount | tonumber) == ($amount | '
                 "tonumber)"))),),
        (Change("crm.deals", ("update",), P("deal_id"), ("dealstage", "amount")),),
        (call("ask_requester", question="What amount did you agree with the customer?"),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"),
                       "properties": {"dealstage": P("stage_negotiation"), "amount": P("amount")}}])),
        facts=(AMOUNT,), requester_role="the account executive", mechanisms=("stage_in_pipeline", "hidden_fact"),
    ),
    Template(
        "crm-lifecycle-reset", "hygiene", "Correct a lifecycle stage",
        "A contact wrongly marked customer is back to lead, status open.",
        "{contact_name} ({contact_email}) at {company} was marked a customer by mistake. Set their lifecycle stage "
        "back to Lead and their lead status to Open.",
        ("crm",), fx.lifecycle_reset,
        (Step("crm", "reset the lifecycle stage (clear it first: it never moves backwards)",
              ("hubspot-batch-update-objects",),
              (A("lifecycle is lead", f"{CONTACT} | .properties.lifecyclestage", "equals", "lead"),
               A("status open", f"{CONTACT} | .properties.hs_lead_status", "equals", "OPEN"))),),
        (Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage", "hs_lead_status")),),
        (update_contact(P("contact_id"), lifecyclestage=""),
         update_contact(P("contact_id"), lifecyclestage="lead", hs_lead_status="OPEN")),
        mechanisms=("lifecycle_no_backwards",),
    ),
    Template(
        "crm-closed-won", "pipeline", "Close a won deal",
        "The deal is closed won with its close date and signed amount, and the signature is noted on the deal.",
        "{company} signed! Mark the {company} new-business deal Closed Won with close date {close_date} and the "
        "signed amount ({requester} has it: ask), and log a note on the deal saying the contract was signed, for how "
        "much.",
        ("crm",), fx.closed_won,
        (Step("crm", "close the deal", ("hubspot-batch-update-objects",),
              (A("closed won", 'crm("deals"; $deal_id) | .properties.dealstage', "equals", "closedwon"),
               A("close date", 'crm("deals"; $deal_id) | .properties.closedate | startswith($close_date)'),
               A("signed amount", 'crm("deals"; $deal_id) | (.properties.amount | tonumber) == ($amount | tonumber)'))),
         Step("crm", "note the signature on the deal", ("hubspot-create-engagement",),
              (A("a note on the deal", '. as $doc | linked("deals"; $deal_id; "notes"; 213) | map(. as $n | $doc '
                 '| crm("notes"; $n) | .properties.hs_note_body) | join(" ")', "matches", "(?i)sign"),))),
        (Change("crm.deals", ("update",), P("deal_id"), ("dealstage", "closedate", "amount")),
         Change("crm.notes", most=1), Change("crm.associations")),
        (call("ask_requester", question="What was the signed amount?"),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "closedwon", "closedate": P("close_date"),
                                                          "amount": P("amount")}}]),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"dealIds": [P("deal_id_int")]},
              metadata={"timestamp": P("today"), "body": F("Contract signed for ${amount}.")})),
        facts=(AMOUNT,), requester_role="the account executive", mechanisms=("closed_won_closedate", "hidden_fact"),
        rubrics=(Rubric("the signature note", '. as $doc | linked("deals"; $deal_id; "notes"; 213)[] as $n | $doc | '
                        'crm("notes"; $n) | .properties.hs_note_body', 2, must_mention=(("signed", "signature"),),
                        facts=(("signed amount", P("amount")),), forbidden_claims=CLAIMS, max_len=1000),),
    ),
)

# --- tier 1: scheduler, sequencer, prospecting -----------------------------------------------------------------
CATALOGUE.add(
    Template(
        "sched-earliest-demo", "scheduling", "Book the earliest demo",
        "The invitee has one active demo at the earliest open slot.",
        "Book {invitee_name} <{invitee_email}> (time zone {tz}) into the earliest available 30 Minute Demo on or "
        "after {after}.",
        ("scheduler",), fx.earliest_demo,
        (Step("scheduler", "find the earliest open slot and book it",
              ("event_types-list_event_types", "event_types-list_event_type_available_times",
               "meetings-create_invitee"), booked("$invitee_email")),),
        (Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1)),
        (book(P("invitee_name"), P("invitee_email")),),
        forbidden=(Forbidden("no cancellations", ("meetings-cancel_event",)),),
        mechanisms=("open_slots",),
    ),
    Template(
        "sched-reschedule", "scheduling", "Reschedule a discovery call",
        "The old booking is canceled with a reason and the invitee has the earliest slot on the new day.",
        "{invitee_name} <{invitee_email}> can't make their Discovery Call at {old_start}. Cancel it (say why) and "
        "book them the earliest Discovery Call on {day} instead (time zone {tz}).",
        ("scheduler",), fx.reschedule,
        (Step("scheduler", "cancel the old booking", ("meetings-list_events", "meetings-cancel_event"),
              (A("old booking canceled", ".scheduler.scheduled_events[] | select(.uri | endswith($old_uuid)) | "
                 ".status", "equals", "canceled"),
               A("with a reason", ".scheduler.scheduled_events[] | select(.uri | endswith($old_uuid)) | "
                 ".cancellation.reason | length", "gt", 0))),
         Step("scheduler", "book the new slot", ("event_types-list_event_type_available_times",
                                                 "meetings-create_invitee"), booked("$invitee_email"))),
        (Change("scheduler.scheduled_events", ("create",), most=1),
         Change("scheduler.scheduled_events", ("update",), P("old_uuid"), ("status", "cancellation",
                                                                            "invitees_counter")),
         Change("scheduler.invitees", ("create", "update"))),
        (call("meetings-cancel_event", uuid=P("old_uuid"), reason="The invitee asked to move the call."),
         book(P("invitee_name"), P("invitee_email"))),
        mechanisms=("open_slots", "cancel_reason"),
    ),
    Template(
        "sched-deep-dive-link", "scheduling", "Send a single-use link",
        "A single-use link for the deep dive exists; nothing is booked on the invitee's behalf.",
        "{invitee_name} wants to pick their own time for a Technical Deep Dive. Create a single-use scheduling link "
        "for that event type; do not book anything yourself.",
        ("scheduler",), fx.deep_dive_link,
        (Step("scheduler", "create the link", ("event_types-list_event_types",
                                               "scheduling_links-create_single_use_scheduling_link"),
              (A("one link for the deep dive", "[.scheduler.scheduling_links[]? | select(.owner == $event_type)] | "
                 "length", "equals", 1),)),),
        (Change("scheduler.scheduling_links", most=1),),
        (call("scheduling_links-create_single_use_scheduling_link", owner=P("event_type")),),
        forbidden=(Forbidden("no booking on their behalf", ("meetings-create_invitee",), attempted=True),),
        mechanisms=("single_use_link",),
    ),
    Template(
        "seq-webinar-followup", "outbound", "Sequence a warm list",
        "Every eligible tagged prospect has one state in the sequence from the owner's mailbox; opted-out and "
        "already-sequenced prospects have none new.",
        "Enrol every prospect tagged \"{tag}\" in the \"Webinar Follow-up\" sequence from {owner}'s mailbox. "
        "Respect opt-outs, and do not re-enrol anyone who has already been through that sequence.",
        ("sequencer",), fx.webinar_followup,
        (Step("sequencer", "enrol the eligible prospects", ("prospect_search", "sequence_search", "mailbox_search",
                                                            "sequence_add_prospects"),
              (A("each eligible prospect enrolled once", "every($eligible; . as $p | $doc | states($p; $sequence_id) "
                 "| length == 1)", "equals", True),
               A("from the owner's mailbox", "every($eligible; . as $p | $doc | states($p; $sequence_id) | "
                 ".[0] | rel(\"mailbox\") == $mailbox)", "equals", True),
               A("opted-out prospect not enrolled", "states($opted_out; $sequence_id) | length", "equals", 0),
               A("no re-enrolment", "states($repeat; $sequence_id) | length", "equals", 1))),),
        (Change("sequencer.sequence_states", most=P("eligible")),),
        (call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("eligible"),
              mailboxId=P("mailbox")),),
        forbidden=(Forbidden("never try to sequence an opted-out prospect", ("sequence_add_prospects",),
                             args=".prospectIds | index($opted_out) != null"),),
        mechanisms=("no_reenrolment", "opt_out"),
    ),
    Template(
        "pros-abm-list", "outbound", "Build an ABM lead list",
        "The list holds exactly the VP+ Engineering leaders at the account who changed jobs recently.",
        "Save every VP-level or more senior (VP, CXO) Engineering leader at {company} who changed jobs recently to "
        "the lead list \"{list_name}\" (and nobody else).",
        ("prospecting",), fx.abm_list,
        (Step("prospecting", "search with every filter and save the matches", ("sales_search_leads",
                                                                               "get_lead_lists", "save_lead"),
              (A("exactly the matching leads", "members($list_id)", "equals", P("targets")), NO_INMAIL_SENT)),),
        (Change("prospecting.list_members", most=P("targets")),),
        (call("save_lead", lead_id=P("targets.0"), list_id=P("list_id")),
         call("save_lead", lead_id=P("targets.1"), list_id=P("list_id"))),
        forbidden=(NO_INMAIL,), mechanisms=("filter_and",),
    ),
)

# --- tier 2 -----------------------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "enrich-contacts", "hygiene", "Enrich contacts from profiles",
        "Each contact lacking a job title has the title of its Sales Navigator profile; no credit spent.",
        "Three contacts at {company} have no job title in the CRM. Fill in each one's job title from their Sales "
        "Navigator profile. Do not spend InMail credits.",
        ("prospecting", "crm"), fx.enrich_contacts,
        (Step("prospecting", "look up each profile", ("sales_search_leads", "get_sales_profile"), (NO_INMAIL_SENT,)),
         Step("crm", "write the titles", ("hubspot-search-objects", "hubspot-batch-update-objects"),
              (A("titles from the profiles", "every($contact_ids; . as $c | $doc | crm(\"contacts\"; $c) | "
                 ".properties.jobtitle == $titles[$c])", "equals", True),))),
        (Change("crm.contacts", ("update",), P("contact_ids"), ("jobtitle",)),),
        (call("sales_search_leads", company=[P("company")]),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates"))),
        read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("read_only_app", "enrichment"),
    ),
    Template(
        "meeting-to-deal", "pipeline", "Turn a booking into an opportunity",
        "The demo is logged with its times, a new-business deal is open at Appointment Scheduled, associated to "
        "the contact and company, and the contact is an opportunity.",
        "{contact_name} ({contact_email}) has a 30 Minute Demo booked. In the CRM: log the meeting on their contact "
        "with the booking's exact start and end times, open a deal named \"{deal_name}\" in the Sales Pipeline at "
        "Appointment Scheduled associated to the contact and to {company}, and make the contact an opportunity.",
        ("scheduler", "crm"), fx.meeting_to_deal,
        (Step("scheduler", "read the booking", ("meetings-list_events",),
              (A("the booking is untouched", "events_of($contact_email) | map(select(.status == \"active\")) | "
                 ".[0].start_time", "equals", P("start")),)),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),)),
         Step("crm", "open the deal", ("hubspot-batch-create-objects",),
              (A("one deal", "[deal_named($deal_name)] | length", "equals", 1),
               A("default pipeline, Appointment Scheduled", "deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage]", "equals", ["default", "appointmentscheduled"]),
               A("associated to the contact", 'deal_linked($deal_name; "contacts"; 3)', "contains", P("contact_id")),
               A("associated to the company", 'deal_linked($deal_name; "companies"; 5)', "contains",
                 P("company_id")),
               A("contact is an opportunity", f"{CONTACT} | .properties.lifecyclestage", "equals", "opportunity")))),
        (Change("crm.meetings", most=1), Change("crm.deals", most=1), Change("crm.associations"),
         Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage",))),
        (log_meeting([P("contact_id_int")], P("owner_int")),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled",
                             "hubspot_owner_id": P("owner_id")},
              "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         update_contact(P("contact_id"), lifecyclestage="opportunity")),
        read_only=("scheduler",), mechanisms=("association_types", "stage_in_pipeline"),
    ),
    Template(
        "sql-handoff", "inbound", "Hand SQLs to outbound",
        "Each SQL is a prospect on its company's account, in SQL Outbound from its owner's mailbox, and "
        "attempted-to-contact in the CRM.",
        "{name1} and {name2} just became sales-qualified leads. Hand them to outbound: create each as a prospect in "
        "the sequencer on their company's account (create the account if it does not exist yet), add them to the "
        "\"SQL Outbound\" sequence from their CRM owner's mailbox, and set their CRM lead status to Attempted to "
        "contact.",
        ("crm", "sequencer"), fx.sql_handoff,
        (Step("sequencer", "create prospects on the right accounts", ("account_search", "account_create",
                                                                     "prospect_create"),
              (A("one prospect each", "every($emails; . as $e | [$doc | prospect($e)] | length == 1)", "equals", True),
               A("first on its existing account", "prospect($people[0].email) | rel(\"account\")", "equals",
                 P("people.0.account_id")),
               A("second on a new account with its domain", ". as $d | prospect($people[1].email) | rel(\"account\") "
                 "as $a | $d.sequencer.accounts[] | select(.id == $a) | .attributes.domain", "equals",
                 P("people.1.domain")))),
         Step("sequencer", "sequence them", ("mailbox_search", "sequence_add_prospects"),
              (A("one active SQL Outbound state from the owner's mailbox", "every($people; . as $p | $doc | "
                 "prospect($p.email) | .id as $pid | $doc | states($pid; $sequence_id) | map(select(.attributes.state "
                 "== \"active\" and rel(\"mailbox\") == $p.mailbox)) | length == 1)", "equals", True),)),
         Step("crm", "mark them attempted", ("hubspot-batch-update-objects",),
              (A("attempted to contact", "every($contact_ids; . as $c | $doc | crm(\"contacts\"; $c) | "
                 ".properties.hs_lead_status == \"ATTEMPTED_TO_CONTACT\")", "equals", True),))),
        (Change("sequencer.accounts", most=1), Change("sequencer.prospects", most=P("people")),
         Change("sequencer.sequence_states", most=P("people")),
         Change("crm.contacts", ("update",), P("contact_ids"), ("hs_lead_status",))),
        (call("account_create", name=P("people.1.company"), domain=P("people.1.domain")),
         call("prospect_create", attrs={"emails": [P("people.0.email")], "firstName": P("people.0.first"),
                                        "lastName": P("people.0.last")},
              accountId=P("people.0.account_id"), ownerId=P("people.0.user")),
         call("prospect_create", attrs={"emails": [P("people.1.email")], "firstName": P("people.1.first"),
                                        "lastName": P("people.1.last")},
              accountId=OUT(0, ".data.id"), ownerId=P("people.1.user")),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(1, ".data.id")],
              mailboxId=P("people.0.mailbox")),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(2, ".data.id")],
              mailboxId=P("people.1.mailbox")),
         call("hubspot-batch-update-objects", objectType="contacts",
              inputs=[{"id": P("people.0.contact_id"), "properties": {"hs_lead_status": "ATTEMPTED_TO_CONTACT"}},
                      {"id": P("people.1.contact_id"), "properties": {"hs_lead_status": "ATTEMPTED_TO_CONTACT"}}])),
        mechanisms=("no_upsert", "to_one_relationships"),
    ),
    Template(
        "inbound-deep-dive", "inbound", "Book an inbound deep dive",
        "The contact has the earliest deep dive in their time zone and is connected in the CRM.",
        "{contact_name} ({contact_email}) asked for a Technical Deep Dive. Book the earliest one on or after "
        "{after}; {requester} knows their time zone (ask). Then set their CRM lead status to Connected.",
        ("crm", "scheduler"), fx.inbound_deep_dive,
        (Step("scheduler", "book the deep dive", ("event_types-list_event_type_available_times",
                                                  "meetings-create_invitee"), booked()),
         Step("crm", "mark them connected", ("hubspot-batch-update-objects",),
              (A("connected", f"{CONTACT} | .properties.hs_lead_status", "equals", "CONNECTED"),))),
        (Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1),
         Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status",))),
        (call("ask_requester", question="Which time zone are they in?"),
         book(P("contact_name"), P("contact_email")),
         update_contact(P("contact_id"), hs_lead_status="CONNECTED")),
        facts=(TZ,), requester_role="the account executive", mechanisms=("open_slots", "hidden_fact"),
    ),
)

# --- tier 3 -----------------------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "abm-outreach", "outbound", "Account-based outreach",
        "The account's new VP+ Engineering leaders are listed, in the CRM on the company, and in Exec Intro.",
        "Start account-based outreach at {company}: find its VP-level or more senior Engineering leaders who "
        "changed jobs recently; save them to the lead list \"{list_name}\"; add each to the CRM as a contact (email "
        "firstname.lastname@{domain}, lower case, with their title from the profile) associated to the company "
        "{company}; and start each on \"Exec Intro\" as a prospect on the {company} account from {owner}'s mailbox.",
        ("prospecting", "crm", "sequencer"), fx.abm_outreach,
        (Step("prospecting", "find and list the leaders", ("sales_search_leads", "save_lead"),
              (A("exactly the matching leads", "members($list_id)", "equals", P("targets")), NO_INMAIL_SENT)),
         Step("crm", "add them as contacts on the company", ("hubspot-batch-create-objects",),
              (A("one contact each", "every($target_emails; . as $e | [$doc | contact($e)] | length == 1)", "equals",
                 True),
               A("associated to the company", "every($target_emails; . as $e | $doc | contact($e) | .id as $c | $doc "
                 "| (linked(\"contacts\"; $c; \"companies\"; 279) + linked(\"contacts\"; $c; \"companies\"; 1)) | "
                 "index($company_id) != null)", "equals", True))),
         Step("sequencer", "start Exec Intro", ("prospect_create", "sequence_add_prospects"),
              (A("one Exec Intro state each, on the account", "every($target_emails; . as $e | $doc | prospect($e) | "
                 "select(rel(\"account\") == $account_id) | .id as $pid | $doc | states($pid; $sequence_id) | "
                 "length == 1)", "equals", True),))),
        (Change("prospecting.list_members", most=P("targets")), Change("crm.contacts", ("create",), most=P("targets")),
         Change("crm.associations"),
         Change("sequencer.prospects", most=P("targets")),
         Change("sequencer.sequence_states", most=P("targets"))),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"],
              function_area=["Engineering"], changed_jobs=True),
         call("save_lead", lead_id=P("target_people.0.lead_id"), list_id=P("list_id")),
         call("save_lead", lead_id=P("target_people.1.lead_id"), list_id=P("list_id")),
         call("hubspot-batch-create-objects", objectType="contacts", inputs=[
             {"properties": {"email": P(f"target_people.{i}.email"), "firstname": P(f"target_people.{i}.first"),
                             "lastname": P(f"target_people.{i}.last"), "jobtitle": P(f"target_people.{i}.title"),
                             "company": P("company")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]}
             for i in (0, 1)]),
         *(call("prospect_create", attrs={"emails": [P(f"target_people.{i}.email")],
                                          "firstName": P(f"target_people.{i}.first"),
                                          "lastName": P(f"target_people.{i}.last")},
                accountId=P("account_id"), ownerId=P("user")) for i in (0, 1)),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(4, ".data.id"),
                                                                                   OUT(5, ".data.id")],
              mailboxId=P("mailbox"))),
        forbidden=(NO_INMAIL,), mechanisms=("filter_and", "association_types"),
    ),
    Template(
        "positive-reply", "outbound", "Book on a positive reply",
        "A discovery call is booked, outreach is finished (not deleted), and the CRM shows the connection, the "
        "meeting and a prep task due the day before.",
        "{contact_name} ({contact_email}) replied positively to our webinar sequence. Book them the earliest "
        "Discovery Call on or after {after} (time zone {tz}); finish their sequence state (finish it, do not delete "
        "it); and in the CRM set their lead status to Connected, log the meeting on their contact, and add a "
        "NOT_STARTED task \"Prep for discovery call with {contact_name}\" due the day before the call.",
        ("sequencer", "scheduler", "crm"), fx.positive_reply,
        (Step("sequencer", "stop outreach", ("emails_search", "sequence_state_search", "sequence_state_finish"),
              (A("state finished, not deleted", ".sequencer.sequence_states[] | select(.id == $state_id) | "
                 ".attributes.state", "equals", "finished"),)),
         Step("scheduler", "book the call", ("event_types-list_event_type_available_times",
                                             "meetings-create_invitee"), booked()),
         Step("crm", "record it", ("hubspot-batch-update-objects", "hubspot-create-engagement"),
              (A("connected", f"{CONTACT} | .properties.hs_lead_status", "equals", "CONNECTED"), meeting_logged(),
               A("prep task due the day before", 'engagements("tasks"; $contact_id) | map(select('
                 '.properties.hs_task_status == "NOT_STARTED" and (.properties.hs_timestamp | startswith($prep_due))'
                 ')) | length', "gte", 1)))),
        (Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt")),
         Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1),
         Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status",)), Change("crm.meetings", most=1),
         Change("crm.tasks", most=1), Change("crm.associations")),
        (call("sequence_state_finish", id=P("state_id")),
         book(P("contact_name"), P("contact_email")),
         update_contact(P("contact_id"), hs_lead_status="CONNECTED"),
         log_meeting([P("contact_id_int")], P("owner_int"), "Discovery call"),
         call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("prep_due_time"), "subject": F("Prep for discovery call with {contact_name}"),
                        "status": "NOT_STARTED"})),
        mechanisms=("finish_not_delete", "open_slots"),
        rubrics=(Rubric("the prep task", 'engagements("tasks"; $contact_id)[] | .properties.hs_task_subject', 3,
                        must_mention=("prep", "discovery call"), facts=(("contact's name", P("contact_name")),),
                        max_len=200),),
    ),
    Template(
        "dormant-winback", "re-engagement", "Re-engage a closed-lost account",
        "Whoever left the account has their new company and title in the CRM and no win-back; everyone else is "
        "in Win-back; the deal is untouched.",
        "Re-engage the contacts on the closed-lost \"{company} - platform\" deal. Check each on Sales Navigator: "
        "whoever has left {company} gets their CRM company and job title updated to their new ones and is not "
        "sequenced; everyone else goes into \"Win-back\" from {owner}'s mailbox. Do not touch the deal.",
        ("crm", "prospecting", "sequencer"), fx.dormant_winback,
        (Step("crm", "find the deal's contacts", ("hubspot-search-objects", "hubspot-list-associations"),
              (A("deal untouched", 'crm("deals"; $deal_id) | .properties.dealstage', "equals", "closedlost"),)),
         Step("prospecting", "check who left", ("sales_search_leads", "get_sales_profile"), (NO_INMAIL_SENT,)),
         Step("crm", "update whoever left", ("hubspot-batch-update-objects",),
              (A("new company", 'crm("contacts"; $left_id) | .properties.company', "equals", P("left_company")),
               A("new title", 'crm("contacts"; $left_id) | .properties.jobtitle', "equals", P("left_title")))),
         Step("sequencer", "win back the others", ("prospect_search", "sequence_add_prospects"),
              (A("the others in Win-back", "every($stayed_prospects; . as $p | $doc | states($p; $sequence_id) | "
                 "length == 1)", "equals", True),
               A("not whoever left", "states($left_prospect; $sequence_id) | length", "equals", 0)))),
        (Change("crm.contacts", ("update",), P("left_id"), ("company", "jobtitle")),
         Change("sequencer.sequence_states", most=P("stayed_prospects"))),
        (update_contact(P("left_id"), company=P("left_company"), jobtitle=P("left_title")),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("stayed_prospects"),
              mailboxId=P("mailbox"))),
        read_only=("prospecting",),
        forbidden=(Forbidden("no writes to the deal", ("hubspot-batch-update-objects",),
                             args='.objectType == "deals"', attempted=True), NO_INMAIL),
        mechanisms=("left_account", "read_only_app"),
    ),
)

# --- tier 4 -----------------------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "new-exec-full-cycle", "outbound", "Work a new executive hire end to end",
        "The new executive is an SQL contact on the company, in Exec Intro on the account, booked for the earliest "
        "demo, with the meeting logged.",
        "{company} has hired a new executive who changed jobs recently: {name}. Find their profile on Sales "
        "Navigator. Add them to the CRM as a contact (email {email}, job title from the profile) associated to "
        "{company}, owned by {owner}, as a sales-qualified lead; create them as a prospect on the {company} account "
        "and start \"Exec Intro\" from {owner}'s mailbox; book them the earliest 30 Minute Demo on or after {after} "
        "(time zone {tz}); and log that meeting on their CRM contact.",
        ("prospecting", "crm", "sequencer", "scheduler"), fx.new_exec,
        (Step("prospecting", "read the profile", ("sales_search_leads", "get_sales_profile"), (NO_INMAIL_SENT,)),
         Step("crm", "create the contact", ("hubspot-batch-create-objects",),
              (A("one contact", "[contact($email)] | length", "equals", 1),
               A("title from the profile", "contact($email) | .properties.jobtitle", "equals", P("title")),
               A("SQL owned by the owner", "contact($email) | [.properties.lifecyclestage, "
                 ".properties.hubspot_owner_id]", "equals", ["salesqualifiedlead", P("owner_id")]),
               A("on the company", ". as $d | contact($email) | .id as $c | $d | linked(\"contacts\"; $c; "
                 "\"companies\"; 279) + linked(\"contacts\"; $c; \"companies\"; 1)", "contains", P("company_id")))),
         Step("sequencer", "start Exec Intro", ("prospect_create", "sequence_add_prospects"),
              (A("one active state from the owner's mailbox, on the account", ". as $d | prospect($email) | "
                 "select(rel(\"account\") == $account_id) | .id as $pid | $d | states($pid; $sequence_id) | "
                 "map(select(rel(\"mailbox\") == $mailbox)) | length", "equals", 1),)),
         Step("scheduler", "book the demo", ("event_types-list_event_type_available_times",
                                             "meetings-create_invitee"), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",),
              (A("meeting logged", ". as $d | contact($email) | .id as $c | $d | engagements(\"meetings\"; $c) | "
                 "map(select(.properties.hs_meeting_start_time == $start)) | length", "equals", 1),))),
        (Change("crm.contacts", ("create",), most=1), Change("crm.associations"), Change("crm.meetings", most=1),
         Change("sequencer.prospects", most=1),
         Change("sequencer.sequence_states", most=1), Change("scheduler.scheduled_events", most=1),
         Change("scheduler.invitees", most=1)),
        (call("get_sales_profile", lead_id=P("lead_id")),
         call("hubspot-batch-create-objects", objectType="contacts", inputs=[
             {"properties": {"email": P("email"), "firstname": P("first"), "lastname": P("last"),
                             "jobtitle": OUT(0, ".title"), "company": P("company"),
                             "lifecyclestage": "salesqualifiedlead", "hubspot_owner_id": P("owner_id")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]}]),
         call("prospect_create", attrs={"emails": [P("email")], "firstName": P("first"), "lastName": P("last")},
              accountId=P("account_id"), ownerId=P("user")),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(2, ".data.id")],
              mailboxId=P("mailbox")),
         book(P("name"), P("email")),
         log_meeting([OUT(1, ".results[0].id | tonumber")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "open_slots", "unique_email"),
    ),
    Template(
        "inbound-enterprise-4app", "inbound", "Route an enterprise inbound lead end to end",
        "The enterprise lead is enriched, an SQL, in SQL Outbound, booked for the earliest demo, meeting logged.",
        "{contact_name} ({contact_email}) at {company} filled in the enterprise demo form. Their CRM record has no "
        "job title: take it from their Sales Navigator profile. Make them a sales-qualified lead; create them as a "
        "prospect on the {company} account and add them to \"SQL Outbound\" from their CRM owner's mailbox; book "
        "the earliest 30 Minute Demo on or after {after} (time zone {tz}); and log the meeting on their contact.",
        ("crm", "prospecting", "sequencer", "scheduler"), fx.inbound_enterprise,
        (Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "enrich and qualify", ("hubspot-batch-update-objects",),
              (A("title from the profile", f"{CONTACT} | .properties.jobtitle", "equals", P("title")),
               A("sales-qualified", f"{CONTACT} | .properties.lifecyclestage", "equals", "salesqualifiedlead"))),
         Step("sequencer", "sequence them", ("prospect_create", "sequence_add_prospects"),
              (A("one SQL Outbound state from the owner's mailbox", ". as $d | prospect($contact_email) | "
                 "select(rel(\"account\") == $account_id) | .id as $pid | $d | states($pid; $sequence_id) | "
                 "map(select(rel(\"mailbox\") == $mailbox)) | length", "equals", 1),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked()),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")),
         Change("crm.meetings", most=1),
         Change("crm.associations"), Change("sequencer.prospects", most=1),
         Change("sequencer.sequence_states", most=1),
         Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1)),
        (call("sales_search_leads", keywords=F("{first} {last}"), company=[P("company")]),
         update_contact(P("contact_id"), jobtitle=OUT(0, ".elements[0].title"), lifecyclestage="salesqualifiedlead"),
         call("prospect_create", attrs={"emails": [P("contact_email")], "firstName": P("first"),
                                        "lastName": P("last")}, accountId=P("account_id"), ownerId=P("user")),
         call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(2, ".data.id")],
              mailboxId=P("mailbox")),
         book(P("contact_name"), P("contact_email")),
         log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "enrichment", "open_slots"),
    ),
)

CATALOGUE.add(*CONVERSATIONAL)  # tasks where someone replies or writes in mid-episode

TEMPLATES = CATALOGUE.templates
# more templates (templates_more.py, templates_tier4.py) register themselves into CATALOGUE when the package
# imports them, after this module, whichever module is imported first (see tasks/__init__.py)
