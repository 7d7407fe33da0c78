"""The four-app templates (tier 4), as data, registered into ``templates.CATALOGUE`` after the templates of
``templates.py``. Each needs real work in the prospecting database, the CRM, the sequencer and the scheduler,
and each is about one motion (inbound, outbound, pipeline, re-engagement, handoff, enrichment, hygiene) and a
rule that bites (see ``mechanisms``). Fixtures: ``fixtures_tier4.py``.

jq expressions see the instance's parameters as ``$name`` and the helpers of ``jqlib.PRELUDE``.
"""

from __future__ import annotations

import dataclasses

from salesgym.envs.workflows.tasks import fixtures_tier4 as fx
from salesgym.envs.workflows.tasks.model import OUT, A, Change, F, FactSpec, Forbidden, P, Step, Template
from salesgym.envs.workflows.tasks.templates import (
    AMOUNT,
    CATALOGUE,
    NO_INMAIL,
    NO_INMAIL_SENT,
    TZ,
    book,
    booked,
    call,
    log_meeting,
    meeting_logged,
    update_contact,
)

FOUR = ("prospecting", "crm", "sequencer", "scheduler")
BOOKING = (Change("scheduler.scheduled_events"), Change("scheduler.invitees"))
MEETING = (Change("crm.meetings"), Change("crm.associations"))
SEQUENCING = (Change("sequencer.prospects"), Change("sequencer.sequence_states"))
BY_EMAIL = "contact($email) | .id"  # the contact's id, for a contact the task creates


# --- assertion and call builders ----------------------------------------------------------------------------------
def prop(name: str, prop_name: str, value: object, who: str = "contact($email)") -> A:
    return A(name, f"{who} | .properties.{prop_name}", "equals", value)


def one_contact(email: str = "$email") -> A:
    return A("exactly one contact with the email", f"[contact({email})] | length", "equals", 1)


def on_company(email: str = "$email", company: str = "$company_id") -> A:
    return A("associated to the company", f". as $d | contact({email}) | .id as $c | $d | linked(\"contacts\"; $c; "
             f"\"companies\"; 279) + linked(\"contacts\"; $c; \"companies\"; 1) | index({company}) != null")


def in_sequence(email: str = "$email", seq: str = "$sequence_id", mailbox: str = "$mailbox",
                account: str | None = "$account_id", name: str = "one state in the sequence from the mailbox") -> A:
    on_account = "" if account is None else f' | select(rel("account") == {account})'
    return A(name, f". as $d | [prospect({email}){on_account}] | .[0].id as $pid | $d | states($pid; {seq}) | "
             f'map(select(rel("mailbox") == {mailbox})) | length', "equals", 1)  # fmt: skip


def no_state(pid: str, seq: str, n: int = 0, name: str = "not sequenced") -> A:
    return A(name, f"states({pid}; {seq}) | length", "equals", n)


def state_is(state_id: str, state: object = "finished", name: str = "the state is finished, not deleted") -> A:
    return A(name, f".sequencer.sequence_states[] | select(.id == {state_id}) | .attributes.state", "equals", state)


def one_prospect(email: str = "$email") -> A:
    return A("one prospect with the email", f"[prospect({email})] | length", "equals", 1)


def link_for(event_type: str = "$event_type", n: int = 1) -> A:
    return A("a single-use link for the event type",
             f"[.scheduler.scheduling_links[]? | select(.owner == {event_type})] | length", "equals", n)


def canceled(uuid: str = "$old_uuid") -> A:
    return A("the booking is canceled with a reason", f".scheduler.scheduled_events[] | select(.uri | endswith({uuid}))"
             ' | .status == "canceled" and (.cancellation.reason | length) > 0')  # fmt: skip


def logged(contact: str = BY_EMAIL, outcome: str | None = None, start: str = "$start", end: str = "$end") -> A:
    extra = "" if outcome is None else f" and .properties.hs_meeting_outcome == \"{outcome}\""
    return A("meeting logged with the booking's times" + ("" if outcome is None else f" ({outcome})"),
             f'engagements("meetings"; {contact}) | map(select(.properties.hs_meeting_start_time == {start} and '
             f".properties.hs_meeting_end_time == {end}{extra})) | length", "equals", 1)  # fmt: skip


def on_deal(deal: str = "$deal_id", start: str = "$start") -> A:
    return A("meeting logged on the deal", f'. as $d | [linked("deals"; {deal}; "meetings"; 211)[] as $m | '
             f"$d.crm.meetings[] | select(.id == $m and .properties.hs_meeting_start_time == {start})] | length",
             "equals", 1)  # fmt: skip


def meeting(contacts: object, deals: object = (), title: str = "Meeting", start: str = "start", end: str = "end",
            outcome: str | None = None, owner: str = "owner_int") -> dict[str, object]:  # fmt: skip
    metadata: dict[str, object] = {"timestamp": P(start), "title": title, "startTime": P(start), "endTime": P(end)}
    if outcome is not None:
        metadata["outcome"] = outcome
    return call("hubspot-create-engagement", type="MEETING", ownerId=P(owner),
                associations={"contactIds": contacts, "dealIds": list(deals) if isinstance(deals, tuple) else deals},
                metadata=metadata)  # fmt: skip


def deal_prop(name: str, prop_name: str, value: object, deal: str = "$deal_id") -> A:
    return A(name, f'crm("deals"; {deal}) | .properties.{prop_name}', "equals", value)


def booked_new(email: str = "$email") -> tuple[A, ...]:
    """One active booking of the task's event type at the expected slot (the invitee has an older one too)."""
    active = f"events_of({email}) | map(select(.status == \"active\" and .event_type == $event_type))"
    return (A("one active booking of the event type", f"{active} | length", "equals", 1),
            A("at the expected open slot", f"{active} | .[0].start_time", "equals", P("start")),
            A("invitee time zone", f"{active} | .[0].invitee.timezone", "equals", P("tz")))  # fmt: skip


def members(list_id: str, expected: object) -> A:
    return A("the list holds exactly the expected leads", f"members({list_id})", "equals", expected)


def create_contact(email: object = None, first: object = None, last: object = None, title: object = None,
                   company_id: object = None, **props: object) -> dict[str, object]:  # fmt: skip
    properties = {"email": email or P("email"), "firstname": first or P("first"), "lastname": last or P("last"),
                  "jobtitle": title or P("title"), **props}  # fmt: skip
    item: dict[str, object] = {"properties": properties}
    item["associations"] = [{"to": {"id": company_id or P("company_id")}, "types": [{"associationTypeId": 279}]}]
    return call("hubspot-batch-create-objects", objectType="contacts", inputs=[item])


def create_prospect(email: object = None, first: object = None, last: object = None, account: object = None,
                    user: object = None) -> dict[str, object]:  # fmt: skip
    return call("prospect_create", attrs={"emails": [email or P("email")], "firstName": first or P("first"),
                                          "lastName": last or P("last")},
                accountId=account or P("account_id"), ownerId=user or P("user"))  # fmt: skip


def enrol(prospects: object, seq: object = None, mailbox: object = None) -> dict[str, object]:
    """Add ``prospects`` (a list, or a marker of one) to the sequence from the mailbox."""
    return call("sequence_add_prospects", sequenceId=seq or P("sequence_id"), prospectIds=prospects,
                mailboxId=mailbox or P("mailbox"))


def find_lead(first: str = "first", last: str = "last") -> dict[str, object]:
    return call("sales_search_leads", keywords=F(f"{{{first}}} {{{last}}}"), company=[P("company")])


def link(event_type: object = None) -> dict[str, object]:
    return call("scheduling_links-create_single_use_scheduling_link", owner=event_type or P("event_type"))


def no_forbidden_sequence(pid: str, name: str = "never try to sequence the opted-out prospect") -> Forbidden:
    return Forbidden(name, ("sequence_add_prospects",), args=f".prospectIds | index({pid}) != null", attempted=True)


SQL = "salesqualifiedlead"


# --- inbound ------------------------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "inbound-existing-records", "inbound", "Work an inbound lead who is already on file everywhere",
        "The inbound person keeps one CRM contact and one prospect, now enriched, sales-qualified, in SQL Outbound, "
        "booked for the earliest demo with the meeting logged.",
        "A demo request came in from {form_email} ({name}, {company}). Take their job title from their Sales "
        "Navigator profile and make them a sales-qualified lead in the CRM; put them in \"SQL Outbound\" from their "
        "CRM owner's mailbox; book the earliest 30 Minute Demo on or after {after} (time zone {tz}); and log the "
        "meeting on their contact. They may already be on file: never create a second record for anyone.",
        FOUR, fx.inbound_existing_records,
        (Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "update the existing contact", ("hubspot-search-objects", "hubspot-batch-update-objects"),
              (one_contact(), A("the existing record", "contact($email) | .id", "equals", P("contact_id")),
               prop("title from the profile", "jobtitle", P("title")), prop("sales-qualified", "lifecyclestage", SQL))),
         Step("sequencer", "sequence the existing prospect", ("prospect_search", "sequence_add_prospects"),
              (one_prospect(), in_sequence())),
         Step("scheduler", "book the demo", ("event_types-list_event_type_available_times", "meetings-create_invitee"),
              booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")), *MEETING,
         Change("sequencer.sequence_states"), *BOOKING),
        (find_lead(),
         update_contact(P("contact_id"), jobtitle=OUT(0, ".elements[0].title"), lifecyclestage=SQL),
         enrol([P("prospect_id")]), book(P("name"), P("form_email")),
         log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "unique_email", "no_upsert"),
    ),
    Template(
        "inbound-opted-out-demo", "inbound", "Book an inbound demo for an opted-out prospect",
        "The opted-out inbound lead is qualified and booked, gets a call task in the sequencer instead of a "
        "sequence, and the meeting is logged.",
        "{name} ({email}) at {company} asked for a demo. Fill in their CRM job title from their Sales Navigator "
        "profile and make them a sales-qualified lead; book the earliest 30 Minute Demo on or after {after} (time "
        "zone {tz}) and log it on their contact. In the sequencer they would normally go into \"SQL Outbound\" from "
        "their owner's mailbox, but they have opted out of email: respect that, and instead create a call task for "
        "their prospect due at {call_due}.",
        FOUR, fx.inbound_opted_out,
        (Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "enrich and qualify", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")), prop("sales-qualified", "lifecyclestage", SQL))),
         Step("sequencer", "a call task, no sequence", ("prospect_search", "task_create"),
              (A("a call task due on time", "[.sequencer.tasks[]? | select(rel(\"prospect\") == $prospect_id and "
                 ".attributes.action == \"call\" and .attributes.dueAt == $call_due)] | length", "equals", 1),
               no_state("$prospect_id", "$sequence_id", name="opted-out prospect not sequenced"))),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")), *MEETING,
         Change("sequencer.tasks"), *BOOKING),
        (find_lead(),
         update_contact(P("contact_id"), jobtitle=OUT(0, ".elements[0].title"), lifecyclestage=SQL),
         call("task_create", prospectId=P("prospect_id"), action="call", dueAt=P("call_due"),
              note="Inbound demo request; opted out of email."),
         book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), forbidden=(no_forbidden_sequence("$prospect_id"), NO_INMAIL),
        mechanisms=("four_apps", "opt_out", "enrichment"),
    ),
    Template(
        "inbound-exclusive-nurture", "inbound", "Pull an inbound lead out of an exclusive nurture",
        "The nurture enrolment is finished (kept), the lead is in SQL Outbound, qualified with its title, booked "
        "for a discovery call and the meeting logged.",
        "{name} ({email}) at {company}, who is in our \"Enterprise Nurture\" sequence, just asked to talk to sales. "
        "Move them to \"SQL Outbound\" from their CRM owner's mailbox (Enterprise Nurture is exclusive: finish their "
        "nurture enrolment first, do not delete it); fill in their CRM job title from Sales Navigator and make them "
        "a sales-qualified lead; book the earliest Discovery Call on or after {after} (time zone {tz}); and log "
        "the meeting on their contact.",
        FOUR, fx.inbound_exclusive,
        (Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("sequencer", "finish the nurture, then sequence", ("sequence_state_search", "sequence_state_finish",
                                                                 "sequence_add_prospects"),
              (state_is("$nurture_state"), in_sequence())),
         Step("crm", "enrich and qualify", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")), prop("sales-qualified", "lifecyclestage", SQL))),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")), *MEETING,
         Change("sequencer.sequence_states", ("create",)),
         Change("sequencer.sequence_states", ("update",), P("nurture_state"), ("state", "finishedAt")), *BOOKING),
        (find_lead(), call("sequence_state_finish", id=P("nurture_state")), enrol([P("prospect_id")]),
         update_contact(P("contact_id"), jobtitle=OUT(0, ".elements[0].title"), lifecyclestage=SQL),
         book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("owner_int"), "Discovery call")),
        read_only=("prospecting",), mechanisms=("four_apps", "exclusive_sequence", "finish_not_delete"),
    ),
    Template(
        "inbound-mislabelled-customer", "inbound", "Qualify an inbound lead an import marked customer",
        "The lead wrongly marked customer is a sales-qualified lead (cleared first), enriched, a prospect in SQL "
        "Outbound, booked for the earliest demo, meeting logged.",
        "{name} ({email}) at {company} asked for a demo, but a list import marked them a customer by mistake. Make "
        "them a sales-qualified lead in the CRM with their job title from Sales Navigator; create them as a prospect "
        "on the {company} account owned by their CRM owner and add them to \"SQL Outbound\" from that owner's "
        "mailbox; book the earliest 30 Minute Demo on or after {after} (time zone {tz}); and log the meeting on their "
        "contact.",
        FOUR, fx.inbound_lifecycle,
        (Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "clear the stage, then qualify", ("hubspot-batch-update-objects",),
              (prop("sales-qualified", "lifecyclestage", SQL), prop("title from the profile", "jobtitle", P("title")))),
         Step("sequencer", "create and sequence the prospect", ("prospect_create", "sequence_add_prospects"),
              (one_prospect(), in_sequence())),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")), *MEETING, *SEQUENCING,
         *BOOKING),
        (find_lead(), update_contact(P("contact_id"), lifecyclestage=""),
         update_contact(P("contact_id"), lifecyclestage=SQL, jobtitle=OUT(0, ".elements[0].title")),
         create_prospect(), enrol([OUT(3, ".data.id")]), book(P("name"), P("email")),
         log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "lifecycle_no_backwards", "no_upsert"),
    ),
    Template(
        "inbound-new-company", "inbound", "Set up an inbound lead from a company new to every app",
        "The company is in the CRM with its Sales Navigator industry and headcount, the lead is a contact on it, a "
        "prospect on a new sequencer account in SQL Outbound, booked for the earliest demo, meeting logged.",
        "{name} ({email}) from {company} ({domain}) requested a demo; we have never worked with {company}. In the "
        "CRM, create the company (name, domain, and the industry and headcount of its Sales Navigator account) and "
        "the contact (job title from their profile) associated to it, owned by {owner} as a sales-qualified lead. "
        "In the sequencer, create the account (with the domain) and the prospect on it, owned by {owner}, and add "
        "them to \"SQL Outbound\" from {owner}'s mailbox. Book the earliest 30 Minute Demo on or after {after} (time "
        "zone {tz}) and log the meeting on the contact.",
        FOUR, fx.inbound_new_company,
        (Step("prospecting", "read the account and the profile", ("sales_search_accounts", "sales_search_leads"),
              (NO_INMAIL_SENT,)),
         Step("crm", "create the company and the contact", ("hubspot-batch-create-objects",),
              (A("one company with the domain, industry and headcount", "[.crm.companies[] | select(.properties.domain"
                 " == $domain) | [.properties.name, .properties.industry, .properties.numberofemployees]] == "
                 "[[$company, $industry, $headcount]]"),
               one_contact(), prop("title from the profile", "jobtitle", P("title")),
               prop("sales-qualified", "lifecyclestage", SQL), prop("owned by the owner", "hubspot_owner_id",
                                                                     P("owner_id")),
               A("on the new company", ". as $d | ([$d.crm.companies[] | select(.properties.domain == $domain) | "
                 ".id] | .[0]) as $co | $d | contact($email) | .id as $c | $d | linked(\"contacts\"; $c; "
                 "\"companies\"; 279) + linked(\"contacts\"; $c; \"companies\"; 1) | index($co) != null"))),
         Step("sequencer", "create the account and the prospect, and sequence", ("account_create", "prospect_create",
                                                                                 "sequence_add_prospects"),
              (A("prospect on an account with the domain", ". as $d | prospect($email) | rel(\"account\") as $a | "
                 "$d.sequencer.accounts[] | select(.id == $a) | .attributes.domain", "equals", P("domain")),
               in_sequence(account=None))),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (meeting_logged(BY_EMAIL),))),
        (Change("crm.companies", ("create",)), Change("crm.contacts", ("create",)), *MEETING,
         Change("sequencer.accounts"), *SEQUENCING, *BOOKING),
        (call("sales_search_accounts", keywords=P("company")), find_lead(),
         call("hubspot-batch-create-objects", objectType="companies", inputs=[
             {"properties": {"name": P("company"), "domain": P("domain"), "industry": OUT(0, ".elements[0].industry"),
                             "numberofemployees": OUT(0, ".elements[0].headcount | tostring")}}]),
         create_contact(company_id=OUT(2, ".results[0].id"), title=OUT(1, ".elements[0].title"), company=P("company"),
                        lifecyclestage=SQL, hubspot_owner_id=P("owner_id")),
         call("account_create", name=P("company"), domain=P("domain")),
         create_prospect(account=OUT(4, ".data.id")), enrol([OUT(5, ".data.id")]), book(P("name"), P("email")),
         log_meeting([OUT(3, ".results[0].id | tonumber")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "association_types", "no_upsert"),
    ),
    Template(
        "inbound-deep-dive-ask-tz", "inbound", "Book an inbound deep dive in a time zone only the AE knows",
        "The lead has the earliest deep dive in the time zone the AE gave, is connected and sales-qualified, the "
        "webinar sequence is finished, and the lead is saved to this month's inbound list.",
        "{name} ({email}) at {company}, who is in our webinar sequence, asked for a Technical Deep Dive. Book the "
        "earliest one on or after {after} ({requester} knows their time zone: ask); finish their \"Webinar "
        "Follow-up\" enrolment (do not delete it); set their CRM lead status to Connected and make them a "
        "sales-qualified lead; and save their Sales Navigator profile to the lead list \"{list_name}\".",
        FOUR, fx.inbound_timezone,
        (Step("scheduler", "book the deep dive", ("meetings-create_invitee",), booked("$email")),
         Step("sequencer", "stop the webinar follow-up", ("sequence_state_search", "sequence_state_finish"),
              (state_is("$state_id"),)),
         Step("crm", "qualify", ("hubspot-batch-update-objects",),
              (prop("connected", "hs_lead_status", "CONNECTED"), prop("sales-qualified", "lifecyclestage", SQL))),
         Step("prospecting", "save the lead", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT))),
        (*BOOKING, Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt")),
         Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status", "lifecyclestage")),
         Change("prospecting.list_members")),
        (call("ask_requester", question="Which time zone are they in?"), book(P("name"), P("email")),
         call("sequence_state_finish", id=P("state_id")),
         update_contact(P("contact_id"), hs_lead_status="CONNECTED", lifecyclestage=SQL),
         call("save_lead", lead_id=P("lead_id"), list_id=P("list_id"))),
        facts=(TZ,), requester_role="the account executive", forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "hidden_fact", "finish_not_delete"),
    ),
    Template(
        "inbound-referral-link", "inbound", "Follow up a customer's referral with a booking link",
        "The referred colleague is a CRM lead on the company with their profile title, a prospect in SQL Outbound, "
        "a single-use Discovery Call link exists, nothing is booked for them, and the referral is noted on the "
        "referrer.",
        "Our customer {name} ({email}) at {company} referred a colleague, {ref_name}. Find {ref_name} on Sales "
        "Navigator; add them to the CRM as a lead (email {ref_email}, job title from their profile) associated to "
        "{company} and owned by {owner}; log a note on {name}'s contact that they referred {ref_name}; create "
        "{ref_name} as a prospect on the {company} account owned by {owner} and add them to \"SQL Outbound\" from "
        "{owner}'s mailbox; and create a single-use Discovery Call link for them to pick a time (do not book for "
        "them).",
        FOUR, fx.inbound_referral,
        (Step("prospecting", "find the colleague", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add the colleague and note the referral", ("hubspot-batch-create-objects",
                                                                 "hubspot-create-engagement"),
              (one_contact("$ref_email"), prop("title from the profile", "jobtitle", P("ref_title"),
                                               "contact($ref_email)"),
               prop("a lead owned by the owner", "lifecyclestage", "lead", "contact($ref_email)"),
               on_company("$ref_email"),
               A("referral noted on the referrer", 'engagements("notes"; $contact_id) | map(.properties.hs_note_body) '
                 "| join(\" \") | test($ref_last)"))),
         Step("sequencer", "sequence the colleague", ("prospect_create", "sequence_add_prospects"),
              (in_sequence("$ref_email"),)),
         Step("scheduler", "a link, no booking", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),))),
        (Change("crm.contacts", ("create",)), Change("crm.notes"), Change("crm.associations"), *SEQUENCING,
         Change("scheduler.scheduling_links")),
        (find_lead("ref_first", "ref_last"),
         create_contact(P("ref_email"), P("ref_first"), P("ref_last"), OUT(0, ".elements[0].title"),
                        lifecyclestage="lead", hubspot_owner_id=P("owner_id"), company=P("company")),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("today"), "body": F("Referred their colleague {ref_name}.")}),
         create_prospect(P("ref_email"), P("ref_first"), P("ref_last")), enrol([OUT(3, ".data.id")]), link()),
        read_only=("prospecting",),
        forbidden=(Forbidden("no booking on their behalf", ("meetings-create_invitee",), attempted=True), NO_INMAIL),
        mechanisms=("four_apps", "single_use_link", "association_types"),
    ),
    Template(
        "inbound-region-routing", "inbound", "Route an inbound lead to the owner of its region",
        "The lead is owned by the owner of the region its profile is in, sales-qualified, a prospect of that owner "
        "in SQL Outbound from that owner's mailbox, booked for the earliest demo, and the meeting is logged by "
        "that owner.",
        "{name} ({email}) at {company} requested a demo. Route them by where they are: look up their location on "
        "Sales Navigator and give their CRM contact to the owner of that region's team (and make them a "
        "sales-qualified lead); create them as a prospect on the {company} account owned by that owner and add them "
        "to \"SQL Outbound\" from that owner's mailbox; book the earliest 30 Minute Demo on or after {after} (time "
        "zone {tz}); and log the meeting on the contact, owned by that owner.",
        FOUR, fx.inbound_region,
        (Step("prospecting", "read the location", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "route and qualify", ("hubspot-list-owners", "hubspot-batch-update-objects"),
              (prop("the region's owner", "hubspot_owner_id", P("new_owner_id")),
               prop("sales-qualified", "lifecyclestage", SQL))),
         Step("sequencer", "sequence from the region owner's mailbox", ("prospect_create", "mailbox_search",
                                                                        "sequence_add_prospects"),
              (in_sequence(mailbox="$new_mailbox"),
               A("owned by the region owner's user", "prospect($email) | rel(\"owner\")", "equals", P("new_user")))),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",),
              (meeting_logged(), A("by the region owner", 'engagements("meetings"; $contact_id) | .[0].properties'
                                   ".hubspot_owner_id", "equals", P("new_owner_id"))))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("hubspot_owner_id", "lifecyclestage")), *MEETING,
         *SEQUENCING, *BOOKING),
        (find_lead(),
         update_contact(P("contact_id"), hubspot_owner_id=P("new_owner_id"), lifecyclestage=SQL),
         create_prospect(user=P("new_user")), enrol([OUT(2, ".data.id")], mailbox=P("new_mailbox")),
         book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("new_owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "owner_ids", "to_one_relationships"),
    ),
)


# --- outbound -----------------------------------------------------------------------------------------------------
def people_contacts(indexes: tuple[int, ...], deal: bool = False, **props: object) -> dict[str, object]:
    """One batch creating ``people.<i>`` as contacts on the company (and the deal), title from the profile."""
    links: list[dict[str, object]] = [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]
    if deal:
        links.append({"to": {"id": P("deal_id")}, "types": [{"associationTypeId": 4}]})
    def properties(i: int) -> dict[str, object]:
        return {"email": P(f"people.{i}.email"), "firstname": P(f"people.{i}.first"),
                "lastname": P(f"people.{i}.last"), "jobtitle": P(f"people.{i}.title"), **props}

    return call("hubspot-batch-create-objects", objectType="contacts",
                inputs=[{"properties": properties(i), "associations": links} for i in indexes])


def people_prospect(i: int, user: str = "user") -> dict[str, object]:
    return create_prospect(P(f"people.{i}.email"), P(f"people.{i}.first"), P(f"people.{i}.last"), user=P(user))


def every_person(name: str, body: str, people: str = "$people") -> A:
    """``body`` holds for every person (``$x``: the person, with ``email`` and ``title``)."""
    return A(name, f"every({people}; . as $x | $doc | {body})")


PEOPLE_CONTACTS = (
    every_person("one contact each", "[contact($x.email)] | length == 1"),
    every_person("titles from the profiles", "contact($x.email) | .properties.jobtitle == $x.title"),
    every_person("each on the company", 'contact($x.email) | .id as $c | $doc | (linked("contacts"; $c; "companies"; '
                 '279) + linked("contacts"; $c; "companies"; 1)) | index($company_id) != null'),
)


def people_in_sequence(mailbox: str = "$mailbox", people: str = "$people") -> A:
    return every_person("each in the sequence once, from the mailbox, on the account",
                        'prospect($x.email) | select(rel("account") == $account_id) | .id as $pid | $doc | '
                        f'states($pid; $sequence_id) | map(select(rel("mailbox") == {mailbox})) | length == 1', people)


LINK_URLS = "[.scheduler.scheduling_links[]? | select(.owner == $event_type) | .booking_url]"

CATALOGUE.add(
    Template(
        "outbound-free-inmails", "outbound", "Reach sales leaders with free InMails and a sequence",
        "The VP+ sales leaders are CRM contacts; those reachable without a credit got an InMail carrying their own "
        "demo link; the other is in Exec Intro; no credit is spent.",
        "Reach the VP-level and more senior Sales leaders at {company}. Add each to the CRM as a contact on "
        "{company} (email firstname.lastname@{domain}, lower case, with their title from the profile). Our InMail "
        "credits are used up: send an InMail only to those we can reach for free (1st-degree connections or Open "
        "Profiles), each with its own single-use 30 Minute Demo link in the body; create the others as prospects on "
        "the {company} account owned by {owner} and put them in \"Exec Intro\" from {owner}'s mailbox.",
        FOUR, fx.free_inmails,
        (Step("prospecting", "find the leaders and InMail the free ones", ("sales_search_leads", "get_sales_profile",
                                                                          "send_inmail"),
              (A("InMails to exactly the free leads", "[.prospecting.inmails[] | .lead_id] | sort", "equals",
                 P("free")),
               A("no credit spent", "[.prospecting.inmails[] | select(.credit_spent)] | length", "equals", 0))),
         Step("scheduler", "one link per InMail", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(n=2),
               A("each InMail carries its own link", f". as $d | {LINK_URLS} as $urls | [$d.prospecting.inmails[] | "
                 ".body as $b | [$urls[] | select(. as $u | $b | contains($u))]] | (map(length == 1) | all) and "
                 "(map(.[0]) | unique | length) == 2"),)),
         Step("crm", "add the contacts", ("hubspot-batch-create-objects",), PEOPLE_CONTACTS),
         Step("sequencer", "sequence the others", ("prospect_create", "sequence_add_prospects"),
              (in_sequence("$paid_email"),
               A("the free ones are not prospects", "[$people[0:2][] | . as $x | $doc | prospect($x.email)] | "
                 "length", "equals", 0)))),
        (Change("prospecting.inmails"), Change("scheduler.scheduling_links"), Change("crm.contacts", ("create",)),
         Change("crm.associations"), *SEQUENCING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"], function_area=["Sales"]),
         people_contacts((0, 1, 2), company=P("company")), link(), link(),
         call("send_inmail", recipient_urn=P("people.0.urn"), subject="A quick demo?",
              body=OUT(2, '"Pick a time that suits you: " + .resource.booking_url')),
         call("send_inmail", recipient_urn=P("people.1.urn"), subject="A quick demo?",
              body=OUT(3, '"Pick a time that suits you: " + .resource.booking_url')),
         people_prospect(2), enrol([OUT(6, ".data.id")])),
        forbidden=(Forbidden("no InMail that costs a credit", ("send_inmail",),
                             args='.recipient_urn == ($people[2].urn)', attempted=True),),
        mechanisms=("four_apps", "inmail_credits", "single_use_link", "filter_and"),
    ),
    Template(
        "outbound-list-dedupe", "outbound", "Finish a half-built finance target list",
        "Every Director+ finance leader is in the list once, in the CRM once with the profile title (the known one "
        "updated), a prospect in Exec Intro, and a deep-dive link exists.",
        "Work the Director-level and more senior Finance leaders at {company}. Save each to the lead list "
        "\"{list_name}\" (some are saved already); make sure each is a CRM contact on {company} with their profile "
        "title (email firstname.lastname@{domain}, lower case; some are in the CRM already: update them, never "
        "duplicate); create each as a prospect on the {company} account owned by {owner} and add them to \"Exec "
        "Intro\" from {owner}'s mailbox; and create one single-use Technical Deep Dive link for the group.",
        FOUR, fx.list_dedupe,
        (Step("prospecting", "complete the list", ("sales_search_leads", "get_lead_list_members", "save_lead"),
              (members("$list_id", P("targets")), NO_INMAIL_SENT)),
         Step("crm", "one contact each", ("hubspot-search-objects", "hubspot-batch-update-objects",
                                          "hubspot-batch-create-objects"),
              (*PEOPLE_CONTACTS, A("the known contact kept", "contact($people[1].email) | .id", "equals",
                                   P("known_id")))),
         Step("sequencer", "sequence them", ("prospect_create", "sequence_add_prospects"), (people_in_sequence(),)),
         Step("scheduler", "one deep-dive link", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),))),
        (Change("prospecting.list_members"), Change("crm.contacts", ("create",)),
         Change("crm.contacts", ("update",), P("known_id"), ("jobtitle",)), Change("crm.associations"), *SEQUENCING,
         Change("scheduler.scheduling_links")),
        (call("sales_search_leads", company=[P("company")], seniority_level=["Director", "VP", "CXO"],
              function_area=["Finance"]),
         call("save_lead", lead_id=P("people.1.lead_id"), list_id=P("list_id")),
         call("save_lead", lead_id=P("people.2.lead_id"), list_id=P("list_id")),
         update_contact(P("known_id"), jobtitle=P("people.1.title")),
         people_contacts((0, 2), company=P("company")),
         people_prospect(0), people_prospect(1), people_prospect(2),
         enrol([OUT(5, ".data.id"), OUT(6, ".data.id"), OUT(7, ".data.id")]), link()),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "list_once", "unique_email", "filter_and"),
    ),
    Template(
        "outbound-champion-moved", "outbound", "Follow a champion to their new company",
        "The champion's old contact is unqualified and otherwise untouched; a new contact at the new company holds "
        "the new title and owner; they are in Exec Intro on the new account and booked for a demo, meeting logged.",
        "{name}, our champion at {old_company} ({old_email}), has changed jobs. Check their Sales Navigator profile. "
        "In the CRM, set their old contact's lead status to Unqualified (change nothing else on it) and add them as "
        "a new lead at their new company: email firstname.lastname at the new company's domain (lower case), their "
        "new title, associated to the new company and owned by its owner. In the sequencer, create them as a "
        "prospect on the new company's account owned by that owner and start \"Exec Intro\" from that owner's "
        "mailbox. Book them the earliest 30 Minute Demo on or after {after} (time zone {tz}) and log it on the new "
        "contact.",
        FOUR, fx.champion_moved,
        (Step("prospecting", "read where they went", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "unqualify the old record, add the new one", ("hubspot-batch-update-objects",
                                                                   "hubspot-search-objects",
                                                                   "hubspot-batch-create-objects"),
              (prop("old contact unqualified", "hs_lead_status", "UNQUALIFIED", "crm(\"contacts\"; $old_id)"),
               prop("old contact keeps its company", "company", P("old_company"), "crm(\"contacts\"; $old_id)"),
               one_contact(), prop("new title", "jobtitle", P("title")), on_company(),
               prop("owned by the new company's owner", "hubspot_owner_id", P("owner_id")))),
         Step("sequencer", "Exec Intro on the new account", ("account_search", "prospect_create",
                                                             "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (logged(),))),
        (Change("crm.contacts", ("update",), P("old_id"), ("hs_lead_status",)), Change("crm.contacts", ("create",)),
         *MEETING, *SEQUENCING, *BOOKING),
        (call("get_sales_profile", lead_id=P("lead_id")),
         update_contact(P("old_id"), hs_lead_status="UNQUALIFIED"),
         create_contact(title=OUT(0, ".current_title"), company=P("company"), lifecyclestage="lead",
                        hubspot_owner_id=P("owner_id")),
         create_prospect(), enrol([OUT(3, ".data.id")]), book(P("name"), P("email")),
         log_meeting([OUT(2, ".results[0].id | tonumber")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "left_account", "unique_email"),
    ),
    Template(
        "outbound-locked-mailbox", "outbound", "Sequence from a covering rep's mailbox",
        "The Director+ marketing leaders who changed jobs are contacts and prospects owned by the covering rep, in "
        "Exec Intro from the cover's mailbox; the one who agreed is booked and the meeting logged.",
        "Start outreach to the Director-level and more senior Marketing leaders at {company} who changed jobs "
        "recently: add each to the CRM as a contact on {company} (email firstname.lastname@{domain}, lower case, "
        "title from the profile), create each as a prospect on the {company} account and put them in \"Exec "
        "Intro\". The account is {owner}'s, but {owner}'s sequencer user is locked while they are away: "
        "{requester} knows who covers (ask); send from the cover's mailbox and make the cover the prospects' owner. "
        "{name} has already agreed to talk: book them the earliest Discovery Call on or after {after} (time zone "
        "{tz}) and log it on their contact.",
        FOUR, fx.locked_cover,
        (Step("prospecting", "find the leaders", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add the contacts", ("hubspot-batch-create-objects",), PEOPLE_CONTACTS),
         Step("sequencer", "sequence from the cover's mailbox", ("mailbox_search", "prospect_create",
                                                                 "sequence_add_prospects"),
              (people_in_sequence("$cover_mailbox"),
               every_person("owned by the cover", 'prospect($x.email) | rel("owner") == $cover_user'))),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (logged(),))),
        (Change("crm.contacts", ("create",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("ask_requester", question="Who covers while they are away, and whose mailbox should I use?"),
         call("sales_search_leads", company=[P("company")], seniority_level=["Director", "VP", "CXO"],
              function_area=["Marketing"], changed_jobs=True),
         people_contacts((0, 1), company=P("company")),
         people_prospect(0, "cover_user"), people_prospect(1, "cover_user"),
         enrol([OUT(3, ".data.id"), OUT(4, ".data.id")], mailbox=P("cover_mailbox")),
         book(P("name"), P("email")), log_meeting([OUT(2, ".results[0].id | tonumber")], P("owner_int"),
                                                  "Discovery call")),
        facts=(FactSpec("cover", ("cover", "covering", "away", "locked", "instead", "whose mailbox"), "cover",
                        uses="(.mailboxId? == $cover_mailbox) or (.ownerId? == $cover_user)"),),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "locked_user", "hidden_fact", "filter_and"),
    ),
    Template(
        "outbound-private-sequence", "outbound", "Open an executive program through a private sequence",
        "The operations executive is an SQL contact with a new deal at Appointment Scheduled, in the owner's "
        "private sequence from the owner's mailbox, booked for a deep dive logged on the deal and the contact.",
        "Open an executive program with {company}: find their Operations CXO on Sales Navigator; add them to the "
        "CRM as a sales-qualified contact on {company} (email firstname.lastname@{domain}, lower case, title from "
        "the profile) and open a deal \"{deal_name}\" in the Sales Pipeline at Appointment Scheduled associated to "
        "the contact and to {company}; create them as a prospect on the {company} account and add them to the "
        "private sequence \"{sequence_name}\" (only its owner's mailbox may use it); book the earliest Technical "
        "Deep Dive on or after {after} (time zone {tz}); and log the meeting on the deal and the contact.",
        FOUR, fx.private_sequence,
        (Step("prospecting", "find the executive", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "the contact and the deal", ("hubspot-batch-create-objects",),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")),
               prop("sales-qualified", "lifecyclestage", SQL), on_company(),
               A("one deal at Appointment Scheduled", "[deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage]]", "equals", [["default", "appointmentscheduled"]]),
               A("deal on the contact", '. as $d | deal_linked($deal_name; "contacts"; 3) | index($d | contact($email)'
                 " | .id) != null"),
               A("deal on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")))),
         Step("sequencer", "the private sequence from its owner's mailbox", ("sequence_search", "mailbox_search",
                                                                            "prospect_create",
                                                                            "sequence_add_prospects"),
              (in_sequence(),)),
         Step("scheduler", "book the deep dive", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting on the deal and the contact", ("hubspot-create-engagement",),
              (logged(), A("on the deal", '. as $d | [deal_named($deal_name) | .id][0] as $deal | $d | [linked("deals";'
                           ' $deal; "meetings"; 211)[] as $m | $d.crm.meetings[] | select(.id == $m and '
                           ".properties.hs_meeting_start_time == $start)] | length", "equals", 1)))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("create",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["CXO"], function_area=["Operations"]),
         create_contact(first=OUT(0, ".elements[0].firstName"), last=OUT(0, ".elements[0].lastName"),
                        title=OUT(0, ".elements[0].title"), company=P("company"), lifecyclestage=SQL),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled"},
              "associations": [{"to": {"id": OUT(1, ".results[0].id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         create_prospect(), enrol([OUT(3, ".data.id")]), book(P("name"), P("email")),
         call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
              associations={"contactIds": [OUT(1, ".results[0].id | tonumber")],
                            "dealIds": [OUT(2, ".results[0].id | tonumber")]},
              metadata={"timestamp": P("start"), "title": "Technical deep dive", "startTime": P("start"),
                        "endTime": P("end")})),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "private_sequence", "association_types"),
    ),
    Template(
        "outbound-disabled-sequence", "outbound", "Sequence new operations leaders when the asked-for sequence is off",
        "The VP+ operations leaders who changed jobs are contacts and prospects in the sequence the requester named, "
        "the one who asked is booked for a demo, and the meeting is logged.",
        "Put the VP-level and more senior Operations leaders at {company} who changed jobs recently into \"Cold "
        "Outbound Q1\": add each to the CRM as a contact on {company} (email firstname.lastname@{domain}, lower "
        "case, title from the profile), create each as a prospect on the {company} account owned by {owner} and "
        "enrol them from {owner}'s mailbox. If that sequence cannot take them, ask {requester} what to use instead. "
        "{name} asked for a demo already: book them the earliest 30 Minute Demo on or after {after} (time zone "
        "{tz}) and log it on their contact.",
        FOUR, fx.disabled_sequence,
        (Step("prospecting", "find the leaders", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add the contacts", ("hubspot-batch-create-objects",), PEOPLE_CONTACTS),
         Step("sequencer", "the fallback sequence", ("sequence_search", "prospect_create", "sequence_add_prospects"),
              (people_in_sequence(),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (logged(),))),
        (Change("crm.contacts", ("create",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"],
              function_area=["Operations"], changed_jobs=True),
         people_contacts((0, 1), company=P("company")), people_prospect(0), people_prospect(1),
         call("ask_requester", question="Cold Outbound Q1 is not active: which sequence should I use instead?"),
         enrol([OUT(2, ".data.id"), OUT(3, ".data.id")]), book(P("name"), P("email")),
         log_meeting([OUT(1, ".results[1].id | tonumber")], P("owner_int"))),
        facts=(FactSpec("fallback", ("instead", "disabled", "inactive", "not active", "switched off", "which sequence",
                                     "cannot"), "fallback", uses=".sequenceId? == $sequence_id"),),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "sequence_disabled", "hidden_fact", "filter_and"),
    ),
    Template(
        "outbound-region-campaign", "outbound", "Run a regional campaign with demo links",
        "The VP+ sales leaders in the region are contacts and prospects of the region's owner, in Exec Intro from "
        "that owner's mailbox, each with a single-use demo link (the retired event type is not offered).",
        "Work the VP-level and more senior Sales leaders at {company} who are based in {geography}: add each to the "
        "CRM as a contact on {company} (email firstname.lastname@{domain}, lower case, title from the profile) "
        "owned by the owner of our {region} team; create each as a prospect on the {company} account owned by that "
        "owner and put them in \"Exec Intro\" from that owner's mailbox; and create a single-use scheduling link "
        "for each of them: a Legacy Intro if we still offer it, else a 30 Minute Demo.",
        FOUR, fx.geo_campaign,
        (Step("prospecting", "find the leaders in the region", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add them, owned by the region's owner", ("hubspot-list-owners", "hubspot-batch-create-objects"),
              (*PEOPLE_CONTACTS, every_person("owned by the region's owner",
                                              "contact($x.email) | .properties.hubspot_owner_id == $region_owner_id"))),
         Step("sequencer", "sequence from the region owner's mailbox", ("prospect_create", "sequence_add_prospects"),
              (people_in_sequence("$region_mailbox"),
               every_person("owned by the region owner's user", 'prospect($x.email) | rel("owner") == $region_user'))),
         Step("scheduler", "a demo link each", ("event_types-list_event_types",
                                                "scheduling_links-create_single_use_scheduling_link"),
              (link_for(n=2), link_for("$legacy", 0)))),
        (Change("crm.contacts", ("create",)), Change("crm.associations"), *SEQUENCING,
         Change("scheduler.scheduling_links")),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"], function_area=["Sales"],
              geography=[P("geography")]),
         people_contacts((0, 1), company=P("company"), hubspot_owner_id=P("region_owner_id")),
         people_prospect(0, "region_user"), people_prospect(1, "region_user"),
         enrol([OUT(2, ".data.id"), OUT(3, ".data.id")], mailbox=P("region_mailbox")), link(), link()),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "active_event_types", "owner_ids", "filter_and"),
    ),
    Template(
        "outbound-inmail-reply", "outbound", "Turn an InMail reply into a demo",
        "Whoever replied to the InMails is an SQL contact, their Exec Intro enrolment is finished (kept), they are "
        "booked for the earliest demo and the meeting is logged; no new InMail.",
        "One of the InMails we sent to people at {company} last week got a reply asking for a demo. Find who "
        "replied (your Sales Navigator conversations); add them to the CRM as a sales-qualified contact on "
        "{company} (email firstname.lastname@{domain}, lower case, title from the profile) owned by {owner}; finish "
        "their \"Exec Intro\" enrolment in the sequencer (do not delete it); book them the earliest 30 Minute Demo "
        "on or after {after} (time zone {tz}); and log the meeting on their contact.",
        FOUR, fx.inmail_reply,
        (Step("prospecting", "find the reply", ("get_conversations", "get_sales_profile"),
              (A("no new InMail", ".prospecting.inmails | length", "equals", 3),)),
         Step("crm", "add the contact", ("hubspot-batch-create-objects",),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")),
               prop("sales-qualified and owned", "lifecyclestage", SQL), on_company())),
         Step("sequencer", "finish the outreach", ("prospect_search", "sequence_state_finish"),
              (state_is("$state_id"),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log the meeting", ("hubspot-create-engagement",), (logged(),))),
        (Change("crm.contacts", ("create",)), *MEETING,
         Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt")), *BOOKING),
        (call("get_conversations"), call("get_sales_profile", lead_id=OUT(0, ".elements[] | select(.replied) | "
                                                                             ".lead_id")),
         create_contact(first=OUT(1, ".firstName"), last=OUT(1, ".lastName"), title=OUT(1, ".title"),
                        company=P("company"), lifecyclestage=SQL, hubspot_owner_id=P("owner_id")),
         call("sequence_state_finish", id=P("state_id")), book(P("name"), P("email")),
         log_meeting([OUT(2, ".results[0].id | tonumber")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "finish_not_delete", "open_slots"),
    ),
    Template(
        "outbound-no-credit-fallback", "outbound", "Fall back from an InMail that would cost a credit",
        "No InMail is attempted; the CTO is in Exec Intro, a deep-dive link exists and a CRM call task carries it.",
        "InMail {name}, the CTO of {company}, to introduce us. If that would need an InMail credit and we have none "
        "left, do not try to send it: instead create them as a prospect on the {company} account owned by {owner} "
        "and put them in \"Exec Intro\" from {owner}'s mailbox, create a single-use Technical Deep Dive link, and "
        "log a CRM task \"Call {name}\" on their contact due {call_due} with the link in its body.",
        FOUR, fx.no_credit_fallback,
        (Step("prospecting", "check the cost, send nothing", ("get_sales_profile", "get_inmail_credits"),
              (NO_INMAIL_SENT,)),
         Step("sequencer", "sequence instead", ("prospect_create", "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "a deep-dive link", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),)),
         Step("crm", "a call task with the link", ("hubspot-create-engagement",),
              (A("the call task, due on time, with the link", f". as $d | {LINK_URLS}[0] as $url | $d | "
                 'engagements("tasks"; $contact_id) | map(select(.properties.hs_task_subject == ("Call " + $name) and '
                 ".properties.hs_timestamp == $call_due and (.properties.hs_task_body | contains($url)))) | length",
                 "equals", 1),))),
        (*SEQUENCING, Change("scheduler.scheduling_links"), Change("crm.tasks"), Change("crm.associations")),
        (call("get_sales_profile", lead_id=P("lead_id")), call("get_inmail_credits"), create_prospect(),
         enrol([OUT(2, ".data.id")]), link(),
         call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("call_due"), "subject": F("Call {name}"), "taskType": "CALL",
                        "body": OUT(4, '"Offer a deep dive: " + .resource.booking_url')})),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "inmail_credits", "single_use_link"),
    ),
)


# --- pipeline -----------------------------------------------------------------------------------------------------
def finish(state: str = "state_id") -> dict[str, object]:
    return call("sequence_state_finish", id=P(state))


def save(list_id: str = "list_id", lead: str = "lead_id") -> dict[str, object]:
    return call("save_lead", lead_id=P(lead), list_id=P(list_id))


def state_changed(state: str = "state_id") -> Change:
    return Change("sequencer.sequence_states", ("update",), P(state), ("state", "finishedAt"))


def cancel_changes(uuid: str = "old_uuid") -> tuple[Change, ...]:
    return (Change("scheduler.scheduled_events", ("update",), P(uuid), ("status", "cancellation", "invitees_counter")),
            Change("scheduler.invitees", ("update",), None, ("status",)))


ON_DEAL_CONTACT = 'contact($email) | .id as $c | $doc | linked("deals"; $deal_id; "contacts"; 3) | index($c) != null'
ASK_AMOUNT = call("ask_requester", question="What amount was agreed?")

CATALOGUE.add(
    Template(
        "pipeline-multi-thread", "pipeline", "Multi-thread a single-threaded deal",
        "The finance and operations executives are contacts on the company and the deal, in Exec Intro; the deal "
        "is at Presentation Scheduled; the champion is booked for a deep dive logged on the deal and the contact.",
        "The \"{deal_name}\" deal has a single contact, {name}. Multi-thread it: find {company}'s Finance CXO and "
        "its VP of Operations on Sales Navigator; add each to the CRM as a contact on {company} (email "
        "firstname.lastname@{domain}, lower case, title from the profile) associated to the deal; create each as a "
        "prospect on the {company} account owned by {owner} and put them in \"Exec Intro\" from {owner}'s mailbox; "
        "move the deal to Presentation Scheduled; and book {name} ({email}) the earliest Technical Deep Dive on or "
        "after {after} (time zone {tz}), logged on the deal and on their contact.",
        FOUR, fx.multi_thread,
        (Step("prospecting", "find the executives", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add them to the deal", ("hubspot-batch-create-objects",),
              (*PEOPLE_CONTACTS, every_person("each on the deal", 'contact($x.email) | .id as $c | $doc | '
                                              'linked("deals"; $deal_id; "contacts"; 3) | index($c) != null'),
               deal_prop("Presentation Scheduled", "dealstage", "presentationscheduled"))),
         Step("sequencer", "sequence them", ("prospect_create", "sequence_add_prospects"), (people_in_sequence(),)),
         Step("scheduler", "book the deep dive", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (logged("$contact_id"), on_deal()))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)), *MEETING,
         *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"],
              function_area=["Finance", "Operations"]),
         people_contacts((0, 1), deal=True, company=P("company")), people_prospect(0), people_prospect(1),
         enrol([OUT(2, ".data.id"), OUT(3, ".data.id")]),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "presentationscheduled"}}]),
         book(P("name"), P("email")), meeting([P("contact_id_int")], [P("deal_id_int")], "Technical deep dive")),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "association_types", "stage_in_pipeline", "filter_and"),
    ),
    Template(
        "pipeline-demo-held", "pipeline", "Wrap up a demo that took place",
        "The held demo is logged as completed with its times, the deal is at Qualified To Buy with the agreed "
        "amount, outreach is finished, the lead is listed and the follow-up deep dive is booked.",
        "{name} ({email}) at {company} had their 30 Minute Demo last week. Wrap it up: log that meeting on their CRM "
        "contact with the booking's start and end and outcome Completed; move the \"{deal_name}\" deal to Qualified "
        "To Buy with the amount {requester} agreed (ask); finish their \"SQL Outbound\" enrolment (do not delete "
        "it); save their Sales Navigator profile to the lead list \"{list_name}\"; and book the follow-up: the "
        "earliest Technical Deep Dive on or after {after} (time zone {tz}).",
        FOUR, fx.demo_held,
        (Step("scheduler", "read the held demo and book the follow-up", ("meetings-list_events",
                                                                        "meetings-create_invitee"), booked_new()),
         Step("crm", "log the demo and progress the deal", ("hubspot-create-engagement",
                                                            "hubspot-batch-update-objects"),
              (logged("$contact_id", "COMPLETED", "$held_start", "$held_end"),
               deal_prop("Qualified To Buy", "dealstage", "qualifiedtobuy"),
               A("the agreed amount", 'crm("deals"; $deal_id) | (.properties.amount | tonumber) == ($amount | '
                 "tonumber)"))),
         Step("sequencer", "stop outreach", ("sequence_state_finish",), (state_is("$state_id"),)),
         Step("prospecting", "list the lead", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT))),
        (*BOOKING, *MEETING, Change("crm.deals", ("update",), P("deal_id"), ("dealstage", "amount")), state_changed(),
         Change("prospecting.list_members")),
        (ASK_AMOUNT, meeting([P("contact_id_int")], title="Demo", start="held_start", end="held_end",
                             outcome="COMPLETED"),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "qualifiedtobuy", "amount": P("amount")}}]),
         finish(), save(), book(P("name"), P("email"))),
        facts=(AMOUNT,), requester_role="the account executive", forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "hidden_fact", "stage_in_pipeline", "finish_not_delete"),
    ),
    Template(
        "pipeline-no-show", "pipeline", "Handle a demo no-show",
        "The invitee is marked a no-show, the meeting is logged with outcome No show, the CRM title matches the "
        "profile and the prospect is in No-show Recovery.",
        "{name} ({email}) at {company} did not show up for their recent 30 Minute Demo. Mark them as a no-show in "
        "the scheduler; log the meeting on their CRM contact with the booking's start and end and outcome No show; "
        "their CRM job title is out of date: set it from their Sales Navigator profile; and put their prospect in "
        "the \"No-show Recovery\" sequence from their owner's mailbox.",
        FOUR, fx.no_show,
        (Step("scheduler", "mark the no-show", ("meetings-list_events", "meetings-list_event_invitees",
                                                "invitee_no_shows-create"),
              (A("invitee marked a no-show", ".scheduler.invitees[] | select(.uri == $invitee_uri) | .no_show != "
                 "null"),)),
         Step("crm", "log it", ("hubspot-create-engagement",),
              (logged("$contact_id", "NO_SHOW", "$held_start", "$held_end"),)),
         Step("prospecting", "read the title", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "fix the title", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")),)),
         Step("sequencer", "recovery sequence", ("sequence_search", "sequence_add_prospects"), (in_sequence(),))),
        (Change("scheduler.no_shows"), Change("scheduler.invitees", ("update",), P("invitee_key"), ("no_show",)),
         *MEETING, Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)),
         Change("sequencer.sequence_states")),
        (call("invitee_no_shows-create", invitee=P("invitee_uri")),
         meeting([P("contact_id_int")], title="Demo", start="held_start", end="held_end", outcome="NO_SHOW"),
         find_lead(), update_contact(P("contact_id"), jobtitle=OUT(2, ".elements[0].title")),
         enrol([P("prospect_id")])),
        read_only=("prospecting",), mechanisms=("four_apps", "no_show_after_start", "enrichment"),
    ),
    Template(
        "pipeline-renewal-buyer", "pipeline", "Bring the economic buyer into a renewal",
        "The finance executive is a contact on the company and the renewal deal, which is at Negotiation in the "
        "Renewals pipeline with the agreed amount; they are in Renewal Outreach and booked for a call logged on "
        "the deal.",
        "The {company} renewal needs its economic buyer. Find {company}'s Finance CXO on Sales Navigator and add "
        "them to the CRM as a contact on {company} (email firstname.lastname@{domain}, lower case, title from the "
        "profile) associated to the renewal deal; move that deal to Negotiation in the Renewals pipeline with the "
        "amount {requester} agreed (ask); create them as a prospect on the {company} account owned by {owner} and "
        "add them to \"Renewal Outreach\" from {owner}'s mailbox; book them the earliest Discovery Call on or after "
        "{after} (time zone {tz}); and log it on the deal and their contact.",
        FOUR, fx.renewal_buyer,
        (Step("prospecting", "find the buyer", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "add them and progress the renewal", ("hubspot-batch-create-objects",
                                                           "hubspot-batch-update-objects"),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")), on_company(),
               A("on the renewal deal", ON_DEAL_CONTACT),
               deal_prop("Renewals pipeline", "pipeline", P("renewal_pipeline")),
               deal_prop("Negotiation", "dealstage", P("stage_negotiation")),
               A("the agreed amount", 'crm("deals"; $deal_id) | (.properties.amount | tonumber) == ($amount | '
                 "tonumber)"))),
         Step("sequencer", "renewal outreach", ("prospect_create", "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (logged(), on_deal()))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("update",), P("deal_id"), ("dealstage", "amount")),
         *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["CXO"], function_area=["Finance"]),
         call("hubspot-batch-create-objects", objectType="contacts", inputs=[
             {"properties": {"email": P("email"), "firstname": P("first"), "lastname": P("last"),
                             "jobtitle": OUT(0, ".elements[0].title"), "company": P("company")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]},
                               {"to": {"id": P("deal_id")}, "types": [{"associationTypeId": 4}]}]}]),
         ASK_AMOUNT,
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"),
                       "properties": {"dealstage": P("stage_negotiation"), "amount": P("amount")}}]),
         create_prospect(), enrol([OUT(4, ".data.id")]), book(P("name"), P("email")),
         meeting([OUT(1, ".results[0].id | tonumber")], [P("deal_id_int")], "Renewal call")),
        facts=(AMOUNT,), requester_role="the account executive", forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "stage_in_pipeline", "hidden_fact", "association_types"),
    ),
    Template(
        "pipeline-won-kickoff", "pipeline", "Close a won deal and book the kickoff",
        "The deal is closed won with its date and amount, the champion is a customer, outreach is finished, the "
        "champion is listed as a customer and the kickoff is booked and logged on the deal.",
        "{company} signed! Mark the \"{deal_name}\" deal Closed Won with close date {close_date} and the signed "
        "amount ({requester} has it: ask); make {name} ({email}) a customer in the CRM; finish their \"SQL "
        "Outbound\" enrolment (do not delete it); save their Sales Navigator profile to the lead list "
        "\"{list_name}\"; and book the kickoff: the earliest Technical Deep Dive on or after {after} (time zone "
        "{tz}), logged on the deal and their contact.",
        FOUR, fx.won_kickoff,
        (Step("crm", "close the deal", ("hubspot-batch-update-objects",),
              (deal_prop("closed won", "dealstage", "closedwon"),
               A("close date", 'crm("deals"; $deal_id) | .properties.closedate | startswith($close_date)'),
               A("signed amount", 'crm("deals"; $deal_id) | (.properties.amount | tonumber) == ($amount | tonumber)'),
               prop("a customer", "lifecyclestage", "customer"))),
         Step("sequencer", "stop outreach", ("sequence_state_finish",), (state_is("$state_id"),)),
         Step("prospecting", "list the customer", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT)),
         Step("scheduler", "book the kickoff", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (logged("$contact_id"), on_deal()))),
        (Change("crm.deals", ("update",), P("deal_id"), ("dealstage", "closedate", "amount")),
         Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage",)), *MEETING, state_changed(),
         Change("prospecting.list_members"), *BOOKING),
        (call("ask_requester", question="What was the signed amount?"),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "closedwon", "closedate": P("close_date"),
                                                          "amount": P("amount")}}]),
         update_contact(P("contact_id"), lifecyclestage="customer"), finish(), save(), book(P("name"), P("email")),
         meeting([P("contact_id_int")], [P("deal_id_int")], "Kickoff")),
        facts=(AMOUNT,), requester_role="the account executive", forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "closed_won_closedate", "hidden_fact", "finish_not_delete"),
    ),
    Template(
        "pipeline-lost-champion", "pipeline", "Close out a deal whose champion left",
        "The deal is closed lost with a note, the former champion's contact has their new company and title, their "
        "upcoming demo is canceled with a reason and their outreach is finished.",
        "Our champion on the \"{deal_name}\" deal, {name} ({email}), seems to have left {company}. Check their Sales "
        "Navigator profile. If they have left: mark the deal Closed Lost and log a note on it saying the champion "
        "left; update their CRM contact's company and job title to their new ones; cancel their upcoming 30 Minute "
        "Demo (say why); and finish their \"SQL Outbound\" enrolment (do not delete it).",
        FOUR, fx.lost_champion,
        (Step("prospecting", "confirm they left", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "close the deal and update the contact", ("hubspot-batch-update-objects",
                                                               "hubspot-create-engagement"),
              (deal_prop("closed lost", "dealstage", "closedlost"),
               A("a note on the deal", '. as $doc | linked("deals"; $deal_id; "notes"; 213) | map(. as $n | $doc | '
                 'crm("notes"; $n) | .properties.hs_note_body) | join(" ")', "matches", "(?i)left"),
               prop("new company", "company", P("new_company")), prop("new title", "jobtitle", P("new_title")))),
         Step("scheduler", "cancel the demo", ("meetings-list_events", "meetings-cancel_event"), (canceled(),)),
         Step("sequencer", "stop outreach", ("sequence_state_finish",), (state_is("$state_id"),))),
        (Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)), Change("crm.notes"),
         Change("crm.associations"), Change("crm.contacts", ("update",), P("contact_id"), ("company", "jobtitle")),
         *cancel_changes(), state_changed()),
        (call("get_sales_profile", lead_id=P("lead_id")),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "closedlost"}}]),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"), associations={"dealIds": [
             P("deal_id_int")]}, metadata={"timestamp": P("today"), "body": "Lost: our champion left the company."}),
         update_contact(P("contact_id"), company=OUT(0, ".current_company"), jobtitle=OUT(0, ".current_title")),
         call("meetings-cancel_event", uuid=P("old_uuid"), reason="The contact has left the company."), finish()),
        read_only=("prospecting",), mechanisms=("four_apps", "left_account", "cancel_reason", "finish_not_delete"),
    ),
    Template(
        "pipeline-expansion-reply", "pipeline", "Open an expansion deal from a customer's reply",
        "An expansion deal at Qualified To Buy with the quoted amount is on the contact and the company, the "
        "contact stays a customer, outreach is finished, the lead is listed, and a discovery call is booked and "
        "logged on the deal.",
        "A customer, {name} ({email}) at {company}, replied to our \"Webinar Follow-up\" email. Read the reply; if "
        "they want to expand, open a deal \"{deal_name}\" in the Sales Pipeline at Qualified To Buy with the amount "
        "{requester} quoted them (ask), associated to their contact and to {company} (their lifecycle stage stays "
        "Customer); finish their enrolment (do not delete it); save their Sales Navigator profile to the lead list "
        "\"{list_name}\"; and book them the earliest Discovery Call on or after {after} (time zone {tz}), logged on "
        "the new deal and their contact.",
        FOUR, fx.expansion_reply,
        (Step("sequencer", "read the reply and stop outreach", ("emails_search", "sequence_state_finish"),
              (state_is("$state_id"),)),
         Step("crm", "open the deal", ("hubspot-batch-create-objects",),
              (A("one deal at Qualified To Buy with the quoted amount", "[deal_named($deal_name) | "
                 "[.properties.pipeline, .properties.dealstage, (.properties.amount | tonumber)]]", "equals",
                 [["default", "qualifiedtobuy", P("amount_num")]]),
               A("on the contact", 'deal_linked($deal_name; "contacts"; 3)', "contains", P("contact_id")),
               A("on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")),
               prop("still a customer", "lifecyclestage", "customer"))),
         Step("prospecting", "list the lead", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT)),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it on the deal", ("hubspot-create-engagement",),
              (logged("$contact_id"), on_deal("([deal_named($deal_name) | .id][0])")))),
        (state_changed(), Change("crm.deals", ("create",)), *MEETING, Change("prospecting.list_members"), *BOOKING),
        (call("emails_search", prospectId=P("prospect_id")), ASK_AMOUNT,
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "qualifiedtobuy",
                             "amount": P("amount")},
              "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         finish(), save(), book(P("name"), P("email")),
         meeting([P("contact_id_int")], [OUT(2, ".results[0].id | tonumber")], "Expansion call")),
        facts=(AMOUNT,), requester_role="the account manager", forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "lifecycle_no_backwards", "hidden_fact", "association_types"),
    ),
    Template(
        "pipeline-reschedule-ask", "pipeline", "Move a demo to the day the prospect asked for",
        "The old demo is canceled with a reason, the earliest demo on the asked-for day is booked and logged, the "
        "CRM title is filled in, and a confirmation email task is due the day before.",
        "{name} ({email}) at {company} can't make their 30 Minute Demo at {old_start}; {requester} knows which day "
        "they asked for instead (ask). Cancel the booking (say why) and book the earliest 30 Minute Demo on that day "
        "(time zone {tz}); log the new meeting on their CRM contact and fill in their job title from Sales "
        "Navigator; and create an email task for their prospect in the sequencer, due at 09:00 UTC the day before "
        "the new demo, to confirm the time.",
        FOUR, fx.reschedule_ask,
        (Step("scheduler", "cancel and rebook", ("meetings-cancel_event", "event_types-list_event_type_available_times",
                                                 "meetings-create_invitee"), (canceled(), *booked("$email"))),
         Step("crm", "log the new meeting", ("hubspot-create-engagement",), (logged("$contact_id"),)),
         Step("prospecting", "read the title", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "fill in the title", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")),)),
         Step("sequencer", "a confirmation task", ("prospect_search", "task_create"),
              (A("an email task due the day before", "[.sequencer.tasks[]? | select(rel(\"prospect\") == $prospect_id"
                 " and .attributes.action == \"email\" and .attributes.dueAt == $reminder_due)] | length", "equals",
                 1),))),
        (Change("scheduler.scheduled_events", ("create",)), *cancel_changes(), Change("scheduler.invitees",
                                                                                      ("create",)),
         *MEETING, Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)), Change("sequencer.tasks")),
        (call("ask_requester", question="Which day did they ask to move it to?"),
         call("meetings-cancel_event", uuid=P("old_uuid"), reason="The invitee asked to move the demo."),
         book(P("name"), P("email")), meeting([P("contact_id_int")], title="Demo"), find_lead(),
         update_contact(P("contact_id"), jobtitle=OUT(4, ".elements[0].title")),
         call("task_create", prospectId=P("prospect_id"), action="email", dueAt=P("reminder_due"),
              note="Confirm the new demo time.")),
        facts=(FactSpec("new_day", ("day", "date", "when", "instead", "move"), "new_day",
                        uses=".start_time? == $start"),),
        read_only=("prospecting",), requester_role="the account executive",
        mechanisms=("four_apps", "open_slots", "cancel_reason", "hidden_fact"),
    ),
    Template(
        "pipeline-booking-to-deal", "pipeline", "Turn a self-booked demo into an opportunity",
        "The person who booked is an SQL contact with the profile title and a deal at Appointment Scheduled on the "
        "contact and company, the demo is logged with the booking's times, the webinar enrolment is finished and "
        "the booking untouched.",
        "{name} ({email}) from {company} booked a 30 Minute Demo through our webinar page and is not in the CRM yet. "
        "Add them as a sales-qualified contact on {company} (title from their Sales Navigator profile) with a deal "
        "\"{deal_name}\" in the Sales Pipeline at Appointment Scheduled associated to the contact and to {company}; "
        "log the demo on the contact with the booking's exact start and end; and finish their \"Webinar "
        "Follow-up\" enrolment now that they have booked (do not delete it). Do not change the booking.",
        FOUR, fx.booking_to_deal,
        (Step("scheduler", "read the booking", ("meetings-list_events",),
              (A("the booking is untouched", "events_of($email) | map(select(.status == \"active\")) | .[0].start_time",
                 "equals", P("start")),)),
         Step("prospecting", "read the profile", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "contact, deal and meeting", ("hubspot-batch-create-objects", "hubspot-create-engagement"),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")),
               prop("sales-qualified", "lifecyclestage", SQL), on_company(),
               A("one deal at Appointment Scheduled", "[deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage]]", "equals", [["default", "appointmentscheduled"]]),
               A("deal on the contact", '. as $d | deal_linked($deal_name; "contacts"; 3) | index($d | contact($email)'
                 " | .id) != null"),
               A("deal on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")),
               logged())),
         Step("sequencer", "stop the webinar follow-up", ("prospect_search", "sequence_state_finish"),
              (state_is("$state_id"),))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("create",)), *MEETING, state_changed()),
        (find_lead(),
         create_contact(title=OUT(0, ".elements[0].title"), company=P("company"), lifecyclestage=SQL),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled"},
              "associations": [{"to": {"id": OUT(1, ".results[0].id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         meeting([OUT(1, ".results[0].id | tonumber")], title="Demo"), finish()),
        read_only=("prospecting", "scheduler"), mechanisms=("four_apps", "association_types", "finish_not_delete"),
    ),
)


# --- re-engagement ------------------------------------------------------------------------------------------------
def deal_untouched(stage: str = "closedlost") -> A:
    return deal_prop("the deal is untouched", "dealstage", stage)


NO_DEAL_WRITES = Forbidden("no writes to the deal", ("hubspot-batch-update-objects",),
                           args='.objectType == "deals" and ([.inputs[].id] | index($deal_id) != null)',
                           attempted=True)  # fmt: skip


def active_from(pid: str, seq: str = "$sequence_id", mailbox: str = "$mailbox", n: int = 1) -> str:
    return (f'states({pid}; {seq}) | map(select(.attributes.state == "active" and rel("mailbox") == {mailbox})) | '
            f"length == {n}")


def update_by(contact: str, **props: object) -> dict[str, object]:
    return update_contact(P(contact), **props)


CATALOGUE.add(
    Template(
        "reengage-evergreen", "re-engagement", "Re-engage a lost account through a sequence that allows repeats",
        "Whoever left has their new company and title, no new enrolment and their upcoming call canceled; everyone "
        "else is active again in Win-back Evergreen from the owner's mailbox; the deal is untouched.",
        "Re-engage the contacts on the closed-lost \"{company} - platform\" deal through \"Win-back Evergreen\" (it "
        "takes people who have been through it before), from {owner}'s mailbox. Check each on Sales Navigator first: "
        "whoever has left {company} gets their CRM company and job title updated to their new ones, is not "
        "sequenced, and has their upcoming Discovery Call canceled (say why). Do not touch the deal.",
        FOUR, fx.winback_evergreen,
        (Step("prospecting", "check who left", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "update whoever left", ("hubspot-list-associations", "hubspot-batch-update-objects"),
              (prop("new company", "company", P("left_company"), 'crm("contacts"; $left.contact_id)'),
               prop("new title", "jobtitle", P("left_title"), 'crm("contacts"; $left.contact_id)'),
               deal_untouched())),
         Step("sequencer", "re-enrol the others", ("sequence_search", "sequence_add_prospects"),
              (A("the others active again in the sequence", f"every($stayed; . as $p | $doc | {active_from('$p')})"),
               A("not whoever left", f"{active_from('$left.prospect_id', n=0)}"))),
         Step("scheduler", "cancel the leaver's call", ("meetings-list_events", "meetings-cancel_event"),
              (canceled(),))),
        (Change("crm.contacts", ("update",), P("left.contact_id"), ("company", "jobtitle")),
         Change("sequencer.sequence_states", ("create",)), *cancel_changes()),
        (call("get_sales_profile", lead_id=P("left.lead_id")),
         update_by("left.contact_id", company=OUT(0, ".current_company"), jobtitle=OUT(0, ".current_title")),
         enrol(P("stayed")), call("meetings-cancel_event", uuid=P("old_uuid"), reason="The contact left the company.")),
        read_only=("prospecting",), forbidden=(NO_DEAL_WRITES, NO_INMAIL),
        mechanisms=("four_apps", "duplicates_permitted", "left_account", "cancel_reason"),
    ),
    Template(
        "reengage-opted-out-inmail", "re-engagement", "Re-engage an opted-out contact by InMail",
        "The opted-out contact got one free InMail with a demo link, is tagged in the sequencer and not sequenced, "
        "is a lead again in the CRM with a note.",
        "{name} ({email}) was our contact on the closed-lost \"{company} - platform\" deal. Re-engage them without "
        "email: they opted out, so do not try to sequence them. Instead send them an InMail on Sales Navigator (they "
        "have an Open Profile, so it costs no credit) with a single-use 30 Minute Demo link in the body; tag their "
        "prospect \"{tag}\" in the sequencer (keep their other tags); set their CRM lifecycle stage back to Lead; "
        "and log a note on their contact that they were InMailed.",
        FOUR, fx.winback_inmail,
        (Step("scheduler", "a demo link", ("scheduling_links-create_single_use_scheduling_link",), (link_for(),)),
         Step("prospecting", "one free InMail with the link", ("get_sales_profile", "send_inmail"),
              (A("one InMail, to them, free, with the link", f". as $d | {LINK_URLS}[0] as $url | $d | "
                 "[.prospecting.inmails[] | select(.lead_id == $lead_id and (.credit_spent | not) and (.body | "
                 "contains($url)))] | length == 1 and ($d.prospecting.inmails | length) == 1"),)),
         Step("sequencer", "tag, do not sequence", ("prospect_search", "prospect_update"),
              (A("tagged, other tags kept", ". as $d | $d.sequencer.prospects[] | select(.id == $prospect_id) | "
                 ".attributes.tags | sort", "equals", sorted(["closed-lost", "winback-inmail"])),
               A("not sequenced", ".sequencer.sequence_states | map(select(rel(\"prospect\") == $prospect_id)) | "
                 "length", "equals", 0))),
         Step("crm", "lead again, with a note", ("hubspot-batch-update-objects", "hubspot-create-engagement"),
              (prop("a lead", "lifecyclestage", "lead"),
               A("a note on the contact", 'engagements("notes"; $contact_id) | map(.properties.hs_note_body) | '
                 'join(" ")', "matches", "(?i)inmail")))),
        (Change("scheduler.scheduling_links"), Change("prospecting.inmails"),
         Change("sequencer.prospects", ("update",), P("prospect_id"), ("tags",)),
         Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage",)), Change("crm.notes"),
         Change("crm.associations")),
        (link(), call("send_inmail", recipient_urn=P("urn"), subject="Worth another look?",
                      body=OUT(0, '"A lot has changed since we last spoke. Pick a time: " + .resource.booking_url')),
         call("prospect_update", id=P("prospect_id"), attrs={"tags": ["closed-lost", P("tag")]}),
         update_contact(P("contact_id"), lifecyclestage=""), update_contact(P("contact_id"), lifecyclestage="lead"),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("today"), "body": "Re-engaged by InMail (opted out of email)."})),
        forbidden=(no_forbidden_sequence("$prospect_id"),),
        mechanisms=("four_apps", "opt_out", "inmail_credits", "lifecycle_no_backwards"),
    ),
    Template(
        "reengage-reply-new-deal", "re-engagement", "Open a new deal from a win-back reply",
        "A new deal at Appointment Scheduled is on the contact and company (the lost one untouched), the contact "
        "is an opportunity, their win-back is finished while the other's runs on, they are listed and booked, "
        "meeting logged on the new deal.",
        "{name} ({email}) replied to our \"Win-back\" email about {company}. Read the reply; if they want to talk, "
        "open a new deal \"{new_deal}\" in the Sales Pipeline at Appointment Scheduled associated to their contact "
        "and to {company} (leave the old closed-lost deal alone) and make them an opportunity; finish their Win-back "
        "enrolment (do not delete it, and leave anyone else's running); save their Sales Navigator profile to the "
        "lead list \"{list_name}\"; and book them the earliest 30 Minute Demo on or after {after} (time zone {tz}), "
        "logged on the new deal and their contact.",
        FOUR, fx.winback_reply,
        (Step("sequencer", "read the reply, stop their outreach", ("prospect_search", "emails_search",
                                                                   "sequence_state_finish"),
              (state_is("$state_id"), A("the other enrolment runs on", "[.sequencer.sequence_states[] | select(rel("
                                        "\"prospect\") == $people[0].prospect_id and .attributes.state == \"active\")]"
                                        " | length", "equals", 1))),
         Step("crm", "a new deal", ("hubspot-batch-create-objects", "hubspot-batch-update-objects"),
              (A("one new deal at Appointment Scheduled", "[deal_named($new_deal) | [.properties.pipeline, "
                 ".properties.dealstage]]", "equals", [["default", "appointmentscheduled"]]),
               A("on the contact", 'deal_linked($new_deal; "contacts"; 3)', "contains", P("contact_id")),
               A("on the company", 'deal_linked($new_deal; "companies"; 5)', "contains", P("company_id")),
               deal_untouched(), prop("an opportunity", "lifecyclestage", "opportunity"))),
         Step("prospecting", "list them", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",),
              (logged("$contact_id"), on_deal("([deal_named($new_deal) | .id][0])")))),
        (state_changed(), Change("crm.deals", ("create",)), *MEETING,
         Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage",)), Change("prospecting.list_members"),
         *BOOKING),
        (call("emails_search", prospectId=P("prospect_id")), finish(),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("new_deal"), "pipeline": "default", "dealstage": "appointmentscheduled"},
              "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         update_contact(P("contact_id"), lifecyclestage="opportunity"), save(), book(P("name"), P("email")),
         meeting([P("contact_id_int")], [OUT(2, ".results[0].id | tonumber")], "Demo")),
        forbidden=(NO_DEAL_WRITES, NO_INMAIL),
        mechanisms=("four_apps", "finish_not_delete", "association_types", "open_slots"),
    ),
    Template(
        "reengage-follow-champion", "re-engagement", "Re-engage a lost deal and follow its champion",
        "The champion who moved is a new contact and prospect at their new company in Exec Intro with a demo link; "
        "the one who stayed is in Win-back; nobody is re-enrolled; old records and the deal are untouched.",
        "Re-engage the closed-lost \"{company} - platform\" deal. Check its contacts on Sales Navigator. {left_name} "
        "has moved to another company we have in the CRM: add them there as a new lead contact (email "
        "firstname.lastname at that company's domain, lower case, with their new title) associated to that company "
        "and owned by its owner; create them as a prospect on that company's account owned by that owner in \"Exec "
        "Intro\" from that owner's mailbox; and create a single-use 30 Minute Demo link for them. Everyone else on "
        "the deal goes into \"Win-back\" from {owner}'s mailbox, except anyone who has been through Win-back "
        "before. Leave the old contacts' records and the deal as they are.",
        FOUR, fx.winback_follow,
        (Step("prospecting", "check the contacts", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "the champion's new contact", ("hubspot-search-objects", "hubspot-batch-create-objects"),
              (one_contact("$moved.email"), prop("new title", "jobtitle", P("moved.title"), "contact($moved.email)"),
               prop("owned by the new company's owner", "hubspot_owner_id", P("moved.owner_id"),
                    "contact($moved.email)"),
               on_company("$moved.email", "$moved.company_id"), deal_untouched())),
         Step("sequencer", "Exec Intro for the champion, Win-back for the rest",
              ("account_search", "prospect_create", "sequence_add_prospects", "sequence_state_search"),
              (in_sequence("$moved.email", "$intro_id", "$moved.mailbox", "$moved.account_id"),
               A("the one who stayed is in Win-back", active_from("$stayed", "$winback_id")),
               A("no re-enrolment", "states($repeat; $winback_id) | length", "equals", 1),
               A("the old record of the champion not sequenced", "states($people[0].prospect_id; $winback_id) | "
                 "length", "equals", 0))),
         Step("scheduler", "a demo link", ("scheduling_links-create_single_use_scheduling_link",), (link_for(),))),
        (Change("crm.contacts", ("create",)), Change("crm.associations"), *SEQUENCING,
         Change("scheduler.scheduling_links")),
        (call("get_sales_profile", lead_id=P("people.0.lead_id")),
         create_contact(P("moved.email"), P("moved.first"), P("moved.last"), OUT(0, ".current_title"),
                        P("moved.company_id"), company=P("moved.company"), lifecyclestage="lead",
                        hubspot_owner_id=P("moved.owner_id")),
         create_prospect(P("moved.email"), P("moved.first"), P("moved.last"), P("moved.account_id"), P("moved.user")),
         enrol([OUT(2, ".data.id")], P("intro_id"), P("moved.mailbox")),
         enrol([P("stayed")], P("winback_id")), link()),
        read_only=("prospecting",), forbidden=(NO_DEAL_WRITES, NO_INMAIL),
        mechanisms=("four_apps", "left_account", "no_reenrolment", "unique_email"),
    ),
    Template(
        "reengage-bad-timing", "re-engagement", "Re-engage contacts who said it was bad timing",
        "The leaver is updated and left alone; the others are open, one in SQL Outbound and the one who has been "
        "through it in Win-back, and a discovery link exists.",
        "Three contacts at {company} told us last quarter it was bad timing (their lead status says so); that "
        "quarter is here. Check each on Sales Navigator: anyone who has left {company} gets their CRM company and "
        "job title updated to their new ones and nothing else. Everyone still there: set their lead status to Open "
        "and add their prospect to \"SQL Outbound\" from {owner}'s mailbox, or to \"Win-back\" if they have been "
        "through SQL Outbound before. Then create one single-use Discovery Call link for the group.",
        FOUR, fx.bad_timing,
        (Step("crm", "find them", ("hubspot-search-objects",),
              (prop("the leaver is still bad timing", "hs_lead_status", "BAD_TIMING",
                    'crm("contacts"; $people[0].contact_id)'),)),
         Step("prospecting", "check who left", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "update them", ("hubspot-batch-update-objects",),
              (prop("the leaver's new company", "company", P("left_company"), 'crm("contacts"; $people[0].contact_id)'),
               prop("the leaver's new title", "jobtitle", P("left_title"), 'crm("contacts"; $people[0].contact_id)'),
               A("the others open", "every($people[1:]; . as $x | $doc | crm(\"contacts\"; $x.contact_id) | "
                 ".properties.hs_lead_status == \"OPEN\")"))),
         Step("sequencer", "the right sequence for each", ("sequence_state_search", "sequence_add_prospects"),
              (A("new to SQL Outbound: in it", active_from("$people[1].prospect_id", "$sql_id")),
               A("been through it: in Win-back", active_from("$people[2].prospect_id", "$winback_id")),
               A("the leaver not sequenced", ".sequencer.sequence_states | map(select(rel(\"prospect\") == "
                 "$people[0].prospect_id)) | length", "equals", 0))),
         Step("scheduler", "one link", ("scheduling_links-create_single_use_scheduling_link",), (link_for(),))),
        (Change("crm.contacts", ("update",), P("people.0.contact_id"), ("company", "jobtitle")),
         Change("crm.contacts", ("update",), [P("people.1.contact_id"), P("people.2.contact_id")], ("hs_lead_status",)),
         Change("sequencer.sequence_states", ("create",)), Change("scheduler.scheduling_links")),
        (call("get_sales_profile", lead_id=P("people.0.lead_id")),
         update_by("people.0.contact_id", company=OUT(0, ".current_company"), jobtitle=OUT(0, ".current_title")),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=[
             {"id": P(f"people.{i}.contact_id"), "properties": {"hs_lead_status": "OPEN"}} for i in (1, 2)]),
         enrol([P("people.1.prospect_id")], P("sql_id")), enrol([P("people.2.prospect_id")], P("winback_id")),
         link()),
        read_only=("prospecting",), forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "no_reenrolment", "left_account", "single_use_link"),
    ),
    Template(
        "reengage-bounced-email", "re-engagement", "Replace a contact whose email bounced",
        "The bounced contact's record shows their new job and is unqualified, their outreach finished and call "
        "canceled; their successor is a contact and prospect in SQL Outbound.",
        "Our SQL Outbound email to {name} ({email}) at {company} bounced. Check their Sales Navigator profile. If "
        "they have left: update their CRM contact's company and job title to their new ones and set their lead "
        "status to Unqualified; finish their SQL Outbound enrolment (do not delete it); and cancel their upcoming "
        "Discovery Call (say why). Then find who now holds their old title ({title}) at {company} on Sales "
        "Navigator, add them to the CRM as a contact on {company} (email firstname.lastname@{domain}, lower case, "
        "with that title), create them as a prospect on the {company} account owned by {owner}, and put them in "
        "\"SQL Outbound\" from {owner}'s mailbox.",
        FOUR, fx.bounced,
        (Step("sequencer", "see the bounce, stop outreach", ("emails_search", "sequence_state_finish"),
              (state_is("$state_id"),)),
         Step("prospecting", "confirm and find the successor", ("get_sales_profile", "sales_search_leads"),
              (NO_INMAIL_SENT,)),
         Step("crm", "update the leaver, add the successor", ("hubspot-batch-update-objects",
                                                              "hubspot-batch-create-objects"),
              (prop("new company", "company", P("new_company")), prop("new title", "jobtitle", P("new_title")),
               prop("unqualified", "hs_lead_status", "UNQUALIFIED"), one_contact("$succ_email"),
               prop("the successor's title", "jobtitle", P("succ_title"), "contact($succ_email)"),
               on_company("$succ_email"))),
         Step("sequencer", "sequence the successor", ("prospect_create", "sequence_add_prospects"),
              (in_sequence("$succ_email"),)),
         Step("scheduler", "cancel the call", ("meetings-list_events", "meetings-cancel_event"), (canceled(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("company", "jobtitle", "hs_lead_status")),
         Change("crm.contacts", ("create",)), Change("crm.associations"), state_changed(), *SEQUENCING,
         *cancel_changes()),
        (call("get_sales_profile", lead_id=P("lead_id")),
         update_contact(P("contact_id"), company=OUT(0, ".current_company"), jobtitle=OUT(0, ".current_title"),
                        hs_lead_status="UNQUALIFIED"),
         finish(), call("meetings-cancel_event", uuid=P("old_uuid"), reason="The contact has left the company."),
         create_contact(P("succ_email"), P("succ_first"), P("succ_last"), P("succ_title"), company=P("company")),
         create_prospect(P("succ_email"), P("succ_first"), P("succ_last")), enrol([OUT(5, ".data.id")])),
        read_only=("prospecting",), forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "left_account", "cancel_reason", "finish_not_delete"),
    ),
    Template(
        "reengage-churned-exec", "re-engagement", "Win back a churned account through its new executive",
        "The new executive is a contact with a new-business deal in the Sales Pipeline, in Exec Intro, booked for "
        "a demo logged on the deal; the churned renewal is untouched.",
        "{company} churned last year. They have a new executive at CXO level who changed jobs recently: find them "
        "on Sales Navigator; add them to the CRM as a contact on {company} (email firstname.lastname@{domain}, lower "
        "case, title from the profile) with a new deal \"{deal_name}\" in the Sales Pipeline (not Renewals) at "
        "Appointment Scheduled associated to the contact and to {company}; create them as a prospect on the "
        "{company} account owned by {owner} in \"Exec Intro\" from {owner}'s mailbox; book them the earliest 30 "
        "Minute Demo on or after {after} (time zone {tz}); and log it on the deal and their contact.",
        FOUR, fx.churned_exec,
        (Step("prospecting", "find the new executive", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "contact and deal", ("hubspot-batch-create-objects",),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")), on_company(),
               A("one deal at Appointment Scheduled in the Sales Pipeline", "[deal_named($deal_name) | "
                 "[.properties.pipeline, .properties.dealstage]]", "equals", [["default", "appointmentscheduled"]]),
               A("deal on the contact", '. as $d | deal_linked($deal_name; "contacts"; 3) | index($d | contact($email)'
                 " | .id) != null"),
               A("deal on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")))),
         Step("sequencer", "Exec Intro", ("prospect_create", "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",),
              (logged(), on_deal("([deal_named($deal_name) | .id][0])")))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("create",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["CXO"], changed_jobs=True),
         create_contact(title=OUT(0, ".elements[0].title"), company=P("company")),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled"},
              "associations": [{"to": {"id": OUT(1, ".results[0].id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         create_prospect(), enrol([OUT(3, ".data.id")]), book(P("name"), P("email")),
         meeting([OUT(1, ".results[0].id | tonumber")], [OUT(2, ".results[0].id | tonumber")], "Demo")),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "stage_in_pipeline", "filter_and", "association_types"),
    ),
    Template(
        "reengage-nurture-block", "re-engagement", "Move a lost contact from an exclusive nurture to win-back",
        "The nurture enrolment is finished (kept), the contact is in Win-back, their CRM title is current and "
        "their stage is Lead, and a discovery link exists.",
        "{name} ({email}), our contact on the closed-lost \"{company} - platform\" deal, is sitting in \"Enterprise "
        "Nurture\". Move them to \"Win-back\" from {owner}'s mailbox (Enterprise Nurture is exclusive: finish that "
        "enrolment first, do not delete it); check on Sales Navigator that they are still at {company} and set "
        "their CRM job title to their current one; set their CRM lifecycle stage back to Lead; and create a "
        "single-use Discovery Call link for them.",
        FOUR, fx.nurture_block,
        (Step("sequencer", "finish the nurture, then win back", ("sequence_state_search", "sequence_state_finish",
                                                                 "sequence_add_prospects"),
              (state_is("$nurture_state"), A("in Win-back", active_from("$prospect_id")))),
         Step("prospecting", "check the profile", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "current title, back to lead", ("hubspot-batch-update-objects",),
              (prop("current title", "jobtitle", P("title")), prop("a lead", "lifecyclestage", "lead"))),
         Step("scheduler", "a discovery link", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),))),
        (state_changed("nurture_state"), Change("sequencer.sequence_states", ("create",)),
         Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")),
         Change("scheduler.scheduling_links")),
        (call("sequence_state_finish", id=P("nurture_state")), enrol([P("prospect_id")]),
         call("get_sales_profile", lead_id=P("lead_id")),
         update_contact(P("contact_id"), jobtitle=OUT(2, ".current_title"), lifecyclestage=""),
         update_contact(P("contact_id"), lifecyclestage="lead"), link()),
        read_only=("prospecting",), forbidden=(NO_DEAL_WRITES, NO_INMAIL),
        mechanisms=("four_apps", "exclusive_sequence", "lifecycle_no_backwards", "finish_not_delete"),
    ),
)


# --- handoff ------------------------------------------------------------------------------------------------------
def meeting_owner(owner: str, contact: str = "$contact_id") -> A:
    return A("logged by the new owner", f'engagements("meetings"; {contact}) | map(select(.properties.'
             f"hs_meeting_start_time == $start)) | .[0].properties.hubspot_owner_id", "equals", P(owner))


CATALOGUE.add(
    Template(
        "handoff-sdr-to-ae", "handoff", "Hand a qualified lead from the SDR to an AE",
        "The contact belongs to the AE as an opportunity with an AE-owned deal, the SDR's sequence is finished and "
        "the AE's follow-up runs from the AE's mailbox, the demo is booked and logged by the AE, and the lead is "
        "on the AE's list.",
        "{name} ({email}) at {company} had a good discovery call with our SDR last week: hand them to {ae_owner}, "
        "the account executive. In the CRM, give the contact to {ae_owner} and make them an opportunity, and open a "
        "deal \"{deal_name}\" in the Sales Pipeline at Appointment Scheduled owned by {ae_owner}, associated to the "
        "contact and to {company}. In the sequencer, finish their \"SQL Outbound\" enrolment (do not delete it) and "
        "add them to \"AE Follow-up\" from {ae_owner}'s mailbox. Book them the earliest 30 Minute Demo on or after "
        "{after} (time zone {tz}) and log it on the deal and the contact, owned by {ae_owner}. Save their Sales "
        "Navigator profile to the lead list \"{list_name}\".",
        FOUR, fx.sdr_to_ae,
        (Step("crm", "hand over the contact and open the deal", ("hubspot-list-owners", "hubspot-batch-update-objects",
                                                                 "hubspot-batch-create-objects"),
              (prop("owned by the AE", "hubspot_owner_id", P("ae_owner_id")),
               prop("an opportunity", "lifecyclestage", "opportunity"),
               A("one AE-owned deal at Appointment Scheduled", "[deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage, .properties.hubspot_owner_id]]", "equals",
                 [["default", "appointmentscheduled", P("ae_owner_id")]]),
               A("on the contact", 'deal_linked($deal_name; "contacts"; 3)', "contains", P("contact_id")),
               A("on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")))),
         Step("sequencer", "from the SDR's sequence to the AE's", ("sequence_state_finish", "mailbox_search",
                                                                   "sequence_add_prospects"),
              (state_is("$state_id"), in_sequence(seq="$followup_id", mailbox="$ae_mailbox"))),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked_new()),
         Step("crm", "log it as the AE", ("hubspot-create-engagement",),
              (logged("$contact_id"), on_deal("([deal_named($deal_name) | .id][0])"), meeting_owner("ae_owner_id"))),
         Step("prospecting", "the AE's list", ("sales_search_leads", "save_lead"),
              (members("$list_id", [P("lead_id")]), NO_INMAIL_SENT))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("hubspot_owner_id", "lifecyclestage")),
         Change("crm.deals", ("create",)), *MEETING, state_changed(), Change("sequencer.sequence_states", ("create",)),
         *BOOKING, Change("prospecting.list_members")),
        (update_contact(P("contact_id"), hubspot_owner_id=P("ae_owner_id"), lifecyclestage="opportunity"),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled",
                             "hubspot_owner_id": P("ae_owner_id")},
              "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 3}]},
                               {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         finish(), enrol([P("prospect_id")], P("followup_id"), P("ae_mailbox")), book(P("name"), P("email")),
         meeting([P("contact_id_int")], [OUT(1, ".results[0].id | tonumber")], "Demo", owner="ae_owner_int"),
         save()),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "owner_ids", "finish_not_delete", "open_slots"),
    ),
    Template(
        "handoff-rep-leaving", "handoff", "Hand a leaving rep's account to a new owner",
        "The company and its contacts belong to the new owner, their old enrolments are finished and they restart "
        "in Handoff Intro from the new owner's mailbox, the upcoming demo is logged by the new owner, and both are "
        "on the new owner's list.",
        "{owner} is leaving; {new_owner} takes over {company}. In the CRM, give the company and its contacts "
        "{people[0][name]} and {people[1][name]} to {new_owner}. In the sequencer, finish their \"SQL Outbound\" "
        "enrolments (do not delete them) and restart their outreach from {new_owner}'s mailbox (SQL Outbound will "
        "not take them again: use \"Handoff Intro\"). Log {people[0][name]}'s upcoming 30 Minute Demo on their CRM "
        "contact with the booking's start and end, owned by {new_owner}. Save both to the Sales Navigator lead list "
        "\"{list_name}\".",
        FOUR, fx.rep_leaving,
        (Step("crm", "new owner everywhere", ("hubspot-list-owners", "hubspot-batch-update-objects"),
              (A("the company's new owner", 'crm("companies"; $company_id) | .properties.hubspot_owner_id', "equals",
                 P("new_owner_id")),
               A("the contacts' new owner", 'every($contact_ids; . as $c | $doc | crm("contacts"; $c) | '
                 ".properties.hubspot_owner_id == $new_owner_id)"))),
         Step("sequencer", "restart outreach", ("sequence_state_finish", "sequence_add_prospects"),
              (A("old enrolments finished", "every($state_ids; . as $s | $doc | .sequencer.sequence_states[] | "
                 'select(.id == $s) | .attributes.state == "finished")'),
               A("each in Handoff Intro from the new mailbox", 'every($people; . as $x | $doc | states($x.prospect_id;'
                 ' $handoff_id) | map(select(rel("mailbox") == $new_mailbox)) | length == 1)'))),
         Step("scheduler", "read the upcoming demo", ("meetings-list_events",),
              (A("the demo is untouched", "events_of($people[0].email) | map(select(.status == \"active\")) | "
                 ".[0].start_time", "equals", P("start")),)),
         Step("crm", "log it as the new owner", ("hubspot-create-engagement",),
              (logged("$people[0].contact_id"), meeting_owner("new_owner_id", "$people[0].contact_id"))),
         Step("prospecting", "the new owner's list", ("sales_search_leads", "save_lead"),
              (members("$list_id", P("leads")), NO_INMAIL_SENT))),
        (Change("crm.companies", ("update",), P("company_id"), ("hubspot_owner_id",)),
         Change("crm.contacts", ("update",), P("contact_ids"), ("hubspot_owner_id",)),
         Change("sequencer.sequence_states", ("update",), P("state_ids"), ("state", "finishedAt")),
         Change("sequencer.sequence_states", ("create",)), *MEETING, Change("prospecting.list_members")),
        (call("hubspot-batch-update-objects", objectType="companies",
              inputs=[{"id": P("company_id"), "properties": {"hubspot_owner_id": P("new_owner_id")}}]),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=[
             {"id": P(f"people.{i}.contact_id"), "properties": {"hubspot_owner_id": P("new_owner_id")}}
             for i in (0, 1)]),
         finish("people.0.state_id"), finish("people.1.state_id"),
         enrol([P("people.0.prospect_id"), P("people.1.prospect_id")], P("handoff_id"), P("new_mailbox")),
         call("hubspot-create-engagement", type="MEETING", ownerId=P("new_owner_int"),
              associations={"contactIds": [P("people.0.contact_id_int")]},
              metadata={"timestamp": P("start"), "title": "Demo", "startTime": P("start"), "endTime": P("end")}),
         save(lead="people.0.lead_id"), save(lead="people.1.lead_id")),
        read_only=("scheduler",), forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "owner_ids", "no_reenrolment", "finish_not_delete"),
    ),
    Template(
        "handoff-territory-move", "handoff", "Move a relocated lead to their new region's owner",
        "The contact's country is where their profile says and they belong to that region's owner; the old "
        "enrolment is finished and Exec Intro runs from the new owner's mailbox; the call is booked and logged by "
        "the new owner.",
        "{name} ({email}) at {company} has relocated: check where their Sales Navigator profile says they are now. "
        "Set their CRM country to it and give them to the owner of that region's team; finish their \"SQL "
        "Outbound\" enrolment (do not delete it) and put them in \"Exec Intro\" from the new owner's mailbox; book "
        "them the earliest Discovery Call on or after {after} (time zone {tz}) and log it on their contact, owned by "
        "the new owner.",
        FOUR, fx.territory_move,
        (Step("prospecting", "read the location", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "new country, new owner", ("hubspot-list-owners", "hubspot-batch-update-objects"),
              (prop("country from the profile", "country", P("geography")),
               prop("the region's owner", "hubspot_owner_id", P("new_owner_id")))),
         Step("sequencer", "restart from the new owner", ("sequence_state_finish", "sequence_add_prospects"),
              (state_is("$state_id"), in_sequence(seq="$intro_id", mailbox="$new_mailbox"))),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it as the new owner", ("hubspot-create-engagement",),
              (logged("$contact_id"), meeting_owner("new_owner_id")))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("country", "hubspot_owner_id")), *MEETING,
         state_changed(), Change("sequencer.sequence_states", ("create",)), *BOOKING),
        (find_lead(), update_contact(P("contact_id"), country=OUT(0, ".elements[0].geography"),
                                     hubspot_owner_id=P("new_owner_id")),
         finish(), enrol([P("prospect_id")], P("intro_id"), P("new_mailbox")), book(P("name"), P("email")),
         meeting([P("contact_id_int")], title="Discovery call", owner="new_owner_int")),
        read_only=("prospecting",), mechanisms=("four_apps", "owner_ids", "finish_not_delete", "open_slots"),
    ),
    Template(
        "handoff-partner-referral", "handoff", "Take over a partner's referral",
        "The referred lead is a CRM lead on the company with the profile title and a note naming the partner, in "
        "the private Partner Referrals sequence from its owner's mailbox, and a demo link exists for the partner.",
        "Our partner {partner} referred {name} ({email}) at {company}. Confirm them on Sales Navigator; add them to "
        "the CRM as a lead on {company} with their profile title, owned by {owner}, and log a note on the contact "
        "that {partner} referred them; create them as a prospect on the {company} account owned by {owner} and add "
        "them to the private \"Partner Referrals\" sequence (only its owner's mailbox may use it); and create a "
        "single-use 30 Minute Demo link for the partner to pass on.",
        FOUR, fx.partner_private,
        (Step("prospecting", "confirm the person", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "the contact and the note", ("hubspot-batch-create-objects", "hubspot-create-engagement"),
              (one_contact(), prop("title from the profile", "jobtitle", P("title")),
               prop("a lead", "lifecyclestage", "lead"), prop("owned by the owner", "hubspot_owner_id", P("owner_id")),
               on_company(),
               A("the partner noted", 'engagements("notes"; contact($email) | .id) | map(.properties.hs_note_body) | '
                 "join(\" \") | contains($partner)"))),
         Step("sequencer", "the private sequence", ("sequence_search", "mailbox_search", "prospect_create",
                                                    "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "a link for the partner", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),))),
        (Change("crm.contacts", ("create",)), Change("crm.notes"), Change("crm.associations"), *SEQUENCING,
         Change("scheduler.scheduling_links")),
        (find_lead(),
         create_contact(title=OUT(0, ".elements[0].title"), company=P("company"), lifecyclestage="lead",
                        hubspot_owner_id=P("owner_id")),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"contactIds": [OUT(1, ".results[0].id | tonumber")]},
              metadata={"timestamp": P("today"), "body": F("Referred by our partner {partner}.")}),
         create_prospect(), enrol([OUT(3, ".data.id")]), link()),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "private_sequence", "single_use_link"),
    ),
)


# --- enrichment and hygiene ---------------------------------------------------------------------------------------
CATALOGUE.add(
    Template(
        "enrich-route-by-seniority", "enrichment", "Enrich titles and route by seniority",
        "The three contacts have their profile titles; VP+ are in Exec Intro and the rest in SQL Outbound; the most "
        "senior is booked for a deep dive, logged.",
        "Three contacts at {company} have no job title in the CRM. Fill in each one's title from their Sales "
        "Navigator profile; then create each as a prospect on the {company} account owned by {owner}: VP-level and "
        "more senior go into \"Exec Intro\", everyone else into \"SQL Outbound\", from {owner}'s mailbox. Book the "
        "most senior of them the earliest Technical Deep Dive on or after {after} (time zone {tz}) and log it on "
        "their contact.",
        FOUR, fx.route_by_seniority,
        (Step("prospecting", "read the profiles", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "write the titles", ("hubspot-batch-update-objects",),
              (every_person("titles from the profiles", 'crm("contacts"; $x.contact_id) | .properties.jobtitle == '
                            "$x.title"),)),
         Step("sequencer", "route by seniority", ("prospect_create", "sequence_add_prospects"),
              (in_sequence("$people[1].email", "$intro_id", name="the VP in Exec Intro"),
               in_sequence("$people[2].email", "$intro_id", name="the CXO in Exec Intro"),
               in_sequence("$people[0].email", "$sql_id", name="the manager in SQL Outbound"))),
         Step("scheduler", "book the most senior", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (logged("$contact_id"),))),
        (Change("crm.contacts", ("update",), P("contact_ids"), ("jobtitle",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")]),
         call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates")),
         people_prospect(0), people_prospect(1), people_prospect(2),
         enrol([OUT(3, ".data.id"), OUT(4, ".data.id")], P("intro_id")), enrol([OUT(2, ".data.id")], P("sql_id")),
         book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("owner_int"), "Technical deep dive")),
        read_only=("prospecting",), mechanisms=("four_apps", "enrichment", "read_only_app", "open_slots"),
    ),
    Template(
        "enrich-headcount-route", "enrichment", "Route by the headcount Sales Navigator reports",
        "The company's headcount comes from its Sales Navigator account; the lead is in the sequence its size "
        "calls for (finishing their webinar enrolment only when the exclusive nurture needs it), with their "
        "title, booked and logged.",
        "Fill in {company}'s number of employees in the CRM from its Sales Navigator account. Then route {name} "
        "({email}): if {company} has 1,000 employees or more, they go into \"Enterprise Nurture\" (it is exclusive: "
        "finish any other active enrolment of theirs first, do not delete it); otherwise into \"SQL Outbound\" "
        "(leave their other enrolments running); from {owner}'s mailbox. Fill in their CRM job title from their "
        "profile too, and book them the earliest 30 Minute Demo on or after {after} (time zone {tz}), logged on "
        "their contact.",
        FOUR, fx.headcount_route,
        (Step("prospecting", "read the account and the profile", ("sales_search_accounts", "sales_search_leads"),
              (NO_INMAIL_SENT,)),
         Step("crm", "headcount and title", ("hubspot-batch-update-objects",),
              (A("headcount from the account", 'crm("companies"; $company_id) | .properties.numberofemployees',
                 "equals", P("headcount")), prop("title from the profile", "jobtitle", P("title")))),
         Step("sequencer", "the sequence the size calls for", ("sequence_state_search", "sequence_add_prospects"),
              (in_sequence(), state_is("$webinar_state", P("webinar_expected"), "the webinar enrolment as the rule "
                                       "needs"))),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.companies", ("update",), P("company_id"), ("numberofemployees",)),
         Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)), *MEETING,
         Change("sequencer.sequence_states", ("create",)), state_changed("webinar_state"), *BOOKING),
        (call("sales_search_accounts", keywords=P("company")), find_lead(),
         call("hubspot-batch-update-objects", objectType="companies", inputs=[
             {"id": P("company_id"), "properties": {"numberofemployees": OUT(0, ".elements[0].headcount | "
                                                                                "tostring")}}]),
         update_contact(P("contact_id"), jobtitle=OUT(1, ".elements[0].title")), finish("finish_id"),
         enrol([P("prospect_id")]), book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "exclusive_sequence", "enrichment", "conditional_rule"),
    ),
    Template(
        "hygiene-double-booking", "hygiene", "Clean up a double booking",
        "The later duplicate demo is canceled with a reason and the earlier one kept and logged; the title is "
        "filled in and the webinar enrolment finished.",
        "{name} ({email}) at {company} ended up with two 30 Minute Demos. Keep the earlier one and cancel the other "
        "(say why); log the kept demo on their CRM contact with its exact start and end; fill in their CRM job title "
        "from Sales Navigator; and, now that they have a meeting, finish their \"Webinar Follow-up\" enrolment (do "
        "not delete it).",
        FOUR, fx.double_booking,
        (Step("scheduler", "cancel the duplicate", ("meetings-list_events", "meetings-cancel_event"),
              (canceled(), A("the earlier one kept", ".scheduler.scheduled_events[] | select(.uri | endswith("
                             "$kept_uuid)) | .status", "equals", "active"))),
         Step("crm", "log the kept demo", ("hubspot-create-engagement",), (logged("$contact_id"),)),
         Step("prospecting", "read the title", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "fill in the title", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")),)),
         Step("sequencer", "stop the webinar follow-up", ("sequence_state_finish",), (state_is("$state_id"),))),
        (*cancel_changes(), *MEETING, Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)),
         state_changed()),
        (call("meetings-cancel_event", uuid=P("old_uuid"), reason="Duplicate booking: keeping the earlier demo."),
         meeting([P("contact_id_int")], title="Demo"), find_lead(),
         update_contact(P("contact_id"), jobtitle=OUT(2, ".elements[0].title")), finish()),
        read_only=("prospecting",), mechanisms=("four_apps", "cancel_reason", "finish_not_delete"),
    ),
    Template(
        "hygiene-job-change-sweep", "hygiene", "Sweep a sequenced account for job changes",
        "Whoever left is updated and unqualified, their enrolment finished and call canceled; everyone else is "
        "untouched and still active.",
        "Sweep {company} for job changes: check on Sales Navigator each of the contacts there whom we are "
        "sequencing in \"SQL Outbound\". Whoever has left gets their CRM company and job title updated to their new "
        "ones and lead status Unqualified, their enrolment finished (do not delete it) and their upcoming Discovery "
        "Call canceled (say why). Leave everyone else as they are.",
        FOUR, fx.job_change_sweep,
        (Step("sequencer", "who is sequenced", ("prospect_search", "sequence_state_search"),
              (state_is("$leaver.state_id"),
               A("the others still active", 'every($stayed; . as $x | $doc | .sequencer.sequence_states[] | '
                 'select(.id == $x.state_id) | .attributes.state == "active")'))),
         Step("prospecting", "check each profile", ("get_sales_profile",), (NO_INMAIL_SENT,)),
         Step("crm", "update the leaver", ("hubspot-batch-update-objects",),
              (prop("new company", "company", P("new_company"), 'crm("contacts"; $leaver.contact_id)'),
               prop("new title", "jobtitle", P("new_title"), 'crm("contacts"; $leaver.contact_id)'),
               prop("unqualified", "hs_lead_status", "UNQUALIFIED", 'crm("contacts"; $leaver.contact_id)'))),
         Step("scheduler", "cancel the leaver's call", ("meetings-list_events", "meetings-cancel_event"),
              (canceled(),))),
        (state_changed("leaver.state_id"),
         Change("crm.contacts", ("update",), P("leaver.contact_id"), ("company", "jobtitle", "hs_lead_status")),
         *cancel_changes()),
        (call("get_sales_profile", lead_id=P("leaver.lead_id")),
         update_by("leaver.contact_id", company=OUT(0, ".current_company"), jobtitle=OUT(0, ".current_title"),
                   hs_lead_status="UNQUALIFIED"),
         finish("leaver.state_id"),
         call("meetings-cancel_event", uuid=P("old_uuid"), reason="The contact has left the company.")),
        read_only=("prospecting",), forbidden=(NO_INMAIL,),
        mechanisms=("four_apps", "left_account", "cancel_reason", "finish_not_delete"),
    ),
    Template(
        "hygiene-wrong-account", "hygiene", "Refile a lead an import put under the wrong company",
        "The contact's company field and association and the prospect's account point to the right company; the "
        "lead is in SQL Outbound, booked and logged.",
        "{name} ({email}) works at {company}, but an import filed them under {wrong_company}: their CRM contact's "
        "company field says {wrong_company} and is not associated to any company, and their prospect sits on the "
        "{wrong_company} account. Confirm their employer on Sales Navigator, then fix the CRM contact (the company "
        "field, and an association to {company}) and move their prospect to the {company} account. Then add them to "
        "\"SQL Outbound\" from {owner}'s mailbox, book the earliest 30 Minute Demo on or after {after} (time zone "
        "{tz}) and log it on their contact.",
        FOUR, fx.wrong_account,
        (Step("prospecting", "confirm the employer", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "fix the contact", ("hubspot-batch-update-objects", "hubspot-batch-create-associations"),
              (prop("company field", "company", P("company")), on_company())),
         Step("sequencer", "move and sequence the prospect", ("account_search", "prospect_update",
                                                              "sequence_add_prospects"), (in_sequence(),)),
         Step("scheduler", "book the demo", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (meeting_logged(),))),
        (Change("crm.contacts", ("update",), P("contact_id"), ("company",)), *MEETING,
         Change("sequencer.prospects", ("update",), P("prospect_id"), ("account",)),
         Change("sequencer.sequence_states"), *BOOKING),
        (find_lead(), update_contact(P("contact_id"), company=P("company")),
         call("hubspot-batch-create-associations", fromObjectType="contacts", toObjectType="companies", inputs=[
             {"from": {"id": P("contact_id")}, "to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]),
         call("prospect_update", id=P("prospect_id"), attrs={}, accountId=P("account_id")),
         enrol([P("prospect_id")]), book(P("name"), P("email")), log_meeting([P("contact_id_int")], P("owner_int"))),
        read_only=("prospecting",), mechanisms=("four_apps", "to_one_relationships", "association_types"),
    ),
    Template(
        "enrich-list-to-crm", "enrichment", "Carry a lead list into the CRM and the sequencer",
        "Every listed lead is one CRM contact and one prospect; the new ones are in Exec Intro, the one who has "
        "been through it is not re-enrolled; the one who asked is booked and logged.",
        "Our Sales Navigator lead list \"{list_name}\" holds {company} people who are not all in our other tools "
        "yet. Make sure each is a CRM contact on {company} with their profile title (email "
        "firstname.lastname@{domain}, lower case; never duplicate anyone already there) and a prospect on the "
        "{company} account owned by {owner}, and put them in \"Exec Intro\" from {owner}'s mailbox, except anyone "
        "who has been through Exec Intro before. {name} asked to talk: book them the earliest Discovery Call on or "
        "after {after} (time zone {tz}) and log it on their contact.",
        FOUR, fx.list_to_crm,
        (Step("prospecting", "read the list", ("get_lead_lists", "get_lead_list_members"), (NO_INMAIL_SENT,)),
         Step("crm", "one contact each", ("hubspot-search-objects", "hubspot-batch-create-objects"),
              (*PEOPLE_CONTACTS, A("the known contact kept", "contact($people[0].email) | .id", "equals",
                                   P("known_id")))),
         Step("sequencer", "one prospect each, new ones sequenced", ("prospect_search", "prospect_create",
                                                                     "sequence_add_prospects"),
              (every_person("one prospect each", "[prospect($x.email)] | length == 1"),
               people_in_sequence(people="[$people[0], $people[2]]"),
               A("no re-enrolment", "states($repeat; $sequence_id) | length", "equals", 1))),
         Step("scheduler", "book the call", ("meetings-create_invitee",), booked("$email")),
         Step("crm", "log it", ("hubspot-create-engagement",), (logged(),))),
        (Change("crm.contacts", ("create",)), *MEETING, *SEQUENCING, *BOOKING),
        (call("get_lead_list_members", list_id=P("list_id")),
         people_contacts((1, 2), company=P("company")), people_prospect(0), people_prospect(2),
         enrol([OUT(2, ".data.id"), OUT(3, ".data.id")]), book(P("name"), P("email")),
         log_meeting([OUT(1, ".results[1].id | tonumber")], P("owner_int"), "Discovery call")),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "unique_email", "no_upsert", "no_reenrolment"),
    ),
    Template(
        "hygiene-cancellation-recovery", "hygiene", "Recover from an invitee's cancellation",
        "The canceled demo is logged as canceled, the lead is marked bad timing with a current title, in Win-back, "
        "and a fresh demo link exists.",
        "{name} ({email}) at {company} canceled their 30 Minute Demo. Read why in the scheduler. In the CRM, log the "
        "canceled meeting on their contact with the booking's start and end and outcome Canceled, and set their lead "
        "status to Bad timing; correct their job title from Sales Navigator (it is out of date); put their prospect "
        "into \"Win-back\" from {owner}'s mailbox (they have been through SQL Outbound already); and create a "
        "single-use 30 Minute Demo link for when they are ready.",
        FOUR, fx.cancellation_recovery,
        (Step("scheduler", "read the cancellation, make a link", ("meetings-list_events",
                                                                  "scheduling_links-create_single_use_scheduling_link"),
              (link_for(),)),
         Step("crm", "log the cancellation", ("hubspot-create-engagement", "hubspot-batch-update-objects"),
              (logged("$contact_id", "CANCELED"), prop("bad timing", "hs_lead_status", "BAD_TIMING"))),
         Step("prospecting", "read the title", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "correct the title", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")),)),
         Step("sequencer", "win-back", ("sequence_add_prospects",), (in_sequence(),))),
        (Change("scheduler.scheduling_links"), *MEETING,
         Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status", "jobtitle")),
         Change("sequencer.sequence_states", ("create",))),
        (link(), meeting([P("contact_id_int")], title="Demo", outcome="CANCELED"), find_lead(),
         update_contact(P("contact_id"), hs_lead_status="BAD_TIMING", jobtitle=OUT(2, ".elements[0].title")),
         enrol([P("prospect_id")])),
        read_only=("prospecting",), mechanisms=("four_apps", "no_reenrolment", "single_use_link"),
    ),
    Template(
        "hygiene-timezone-fix", "hygiene", "Rebook a call made in the wrong time zone",
        "The wrong booking is canceled with a reason and the same slot rebooked in the real time zone, logged, the "
        "title filled in, and a confirmation task due the day before.",
        "{name} ({email}) at {company} is booked for a Discovery Call at {start}, but the booking was made in the "
        "wrong time zone; {requester} knows their real one (ask). Rebook them at the same time in the right time "
        "zone (cancel the old booking, saying why, then book the same start), log the call on their CRM contact, "
        "fill in their CRM job title from Sales Navigator, and create an email task for their prospect in the "
        "sequencer due at 09:00 UTC the day before the call, to confirm it.",
        FOUR, fx.timezone_fix,
        (Step("scheduler", "cancel, then rebook the same slot", ("meetings-cancel_event", "meetings-create_invitee"),
              (canceled(), *booked("$email"))),
         Step("crm", "log the call", ("hubspot-create-engagement",), (logged("$contact_id"),)),
         Step("prospecting", "read the title", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "fill in the title", ("hubspot-batch-update-objects",),
              (prop("title from the profile", "jobtitle", P("title")),)),
         Step("sequencer", "a confirmation task", ("prospect_search", "task_create"),
              (A("an email task due the day before", "[.sequencer.tasks[]? | select(rel(\"prospect\") == $prospect_id"
                 " and .attributes.action == \"email\" and .attributes.dueAt == $reminder_due)] | length", "equals",
                 1),))),
        (Change("scheduler.scheduled_events", ("create",)), *cancel_changes(),
         Change("scheduler.invitees", ("create",)), *MEETING,
         Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle",)), Change("sequencer.tasks")),
        (call("ask_requester", question="What is their real time zone?"),
         call("meetings-cancel_event", uuid=P("old_uuid"), reason="Booked in the wrong time zone; rebooking."),
         book(P("name"), P("email")), meeting([P("contact_id_int")], title="Discovery call"), find_lead(),
         update_contact(P("contact_id"), jobtitle=OUT(4, ".elements[0].title")),
         call("task_create", prospectId=P("prospect_id"), action="email", dueAt=P("reminder_due"),
              note="Confirm the discovery call.")),
        facts=(TZ,), read_only=("prospecting",), requester_role="the account executive",
        mechanisms=("four_apps", "open_slots", "cancel_reason", "hidden_fact"),
    ),
)

# --- two more: a two-meeting deal and a warm introduction ---------------------------------------------------------
CATALOGUE.add(
    Template(
        "pipeline-two-stakeholders", "pipeline", "Book a demo and a technical session for two stakeholders",
        "The engineering director is a contact on the deal and in Exec Intro; the champion has the earliest demo "
        "and the director the earliest deep dive, each logged on the deal and the attendee; the deal is at "
        "Presentation Scheduled.",
        "Progress the \"{deal_name}\" deal: {name} ({email}) wants a demo, with their Director of Engineering in a "
        "technical session. Find {company}'s Director of Engineering on Sales Navigator; add them to the CRM as a "
        "contact on {company} (email firstname.lastname@{domain}, lower case, title from the profile) associated to "
        "the deal, and create them as a prospect on the {company} account owned by {owner} in \"Exec Intro\" from "
        "{owner}'s mailbox. Book {name} the earliest 30 Minute Demo on or after {after}, and the director the "
        "earliest Technical Deep Dive on or after {eng_after} (both in time zone {tz}); log each meeting on the deal "
        "and on its attendee's contact; and move the deal to Presentation Scheduled.",
        FOUR, fx.two_stakeholders,
        (Step("prospecting", "find the director", ("sales_search_leads",), (NO_INMAIL_SENT,)),
         Step("crm", "the director on the deal", ("hubspot-batch-create-objects", "hubspot-batch-update-objects"),
              (one_contact("$eng_email"), prop("title from the profile", "jobtitle", P("eng_title"),
                                               "contact($eng_email)"),
               on_company("$eng_email"),
               A("on the deal", 'contact($eng_email) | .id as $c | $doc | linked("deals"; $deal_id; "contacts"; 3) | '
                 "index($c) != null"),
               deal_prop("Presentation Scheduled", "dealstage", "presentationscheduled"))),
         Step("sequencer", "Exec Intro for the director", ("prospect_create", "sequence_add_prospects"),
              (in_sequence("$eng_email"),)),
         Step("scheduler", "book both", ("meetings-create_invitee",),
              (*booked("$email"),
               A("the director's deep dive at the expected slot", 'events_of($eng_email) | map(select(.status == '
                 '"active")) | map([.start_time, .event_type, .invitee.timezone])', "equals",
                 [[P("eng_start"), P("eng_event_type"), P("tz")]]))),
         Step("crm", "log both", ("hubspot-create-engagement",),
              (logged("$contact_id"), on_deal(),
               logged("(contact($eng_email) | .id)", start="$eng_start", end="$eng_end"),
               on_deal(start="$eng_start")))),
        (Change("crm.contacts", ("create",)), Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)),
         *MEETING, *SEQUENCING, *BOOKING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["Director"],
              function_area=["Engineering"]),
         call("hubspot-batch-create-objects", objectType="contacts", inputs=[
             {"properties": {"email": P("eng_email"), "firstname": P("eng_first"), "lastname": P("eng_last"),
                             "jobtitle": OUT(0, ".elements[0].title"), "company": P("company")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]},
                               {"to": {"id": P("deal_id")}, "types": [{"associationTypeId": 4}]}]}]),
         create_prospect(P("eng_email"), P("eng_first"), P("eng_last")), enrol([OUT(2, ".data.id")]),
         book(P("name"), P("email")),
         call("meetings-create_invitee", event_type=P("eng_event_type"), start_time=P("eng_start"),
              invitee={"name": P("eng_name"), "email": P("eng_email"), "timezone": P("tz")}),
         meeting([P("contact_id_int")], [P("deal_id_int")], "Demo"),
         meeting([OUT(1, ".results[0].id | tonumber")], [P("deal_id_int")], "Technical deep dive", "eng_start",
                 "eng_end"),
         call("hubspot-batch-update-objects", objectType="deals",
              inputs=[{"id": P("deal_id"), "properties": {"dealstage": "presentationscheduled"}}])),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "open_slots", "association_types", "stage_in_pipeline"),
    ),
    Template(
        "outbound-teamlink-intro", "outbound", "Ask for a warm intro where a colleague knows the lead",
        "The VP+ engineering leaders are CRM contacts; the one with a TeamLink connection has a warm-intro task "
        "carrying a deep-dive link and no sequence; the others are in Exec Intro.",
        "Start outreach to {company}'s VP-level and more senior Engineering leaders. Add each to the CRM as a contact "
        "on {company} (email firstname.lastname@{domain}, lower case, title from the profile). Whoever has a "
        "TeamLink connection (a colleague of ours knows them) is not sequenced: log a CRM task \"Ask for a warm intro "
        "to <their full name>\" on their contact, due {due}, with a single-use Technical Deep Dive link in its body. "
        "Everyone else: create them as prospects on the {company} account owned by {owner}, in \"Exec Intro\" from "
        "{owner}'s mailbox.",
        FOUR, fx.teamlink_intro,
        (Step("prospecting", "find the leaders and their connections", ("sales_search_leads", "get_sales_profile"),
              (NO_INMAIL_SENT,)),
         Step("crm", "add the contacts", ("hubspot-batch-create-objects",), PEOPLE_CONTACTS),
         Step("scheduler", "a deep-dive link", ("scheduling_links-create_single_use_scheduling_link",),
              (link_for(),)),
         Step("crm", "the warm-intro task", ("hubspot-create-engagement",),
              (A("the task, due on time, with the link", f". as $d | {LINK_URLS}[0] as $url | $d | contact($warm.email)"
                 ' | .id as $c | $d | engagements("tasks"; $c) | map(select(.properties.hs_task_subject == ("Ask for a '
                 'warm intro to " + $warm.name) and .properties.hs_timestamp == $due and (.properties.hs_task_body | '
                 "contains($url)))) | length", "equals", 1),)),
         Step("sequencer", "sequence the others", ("prospect_create", "sequence_add_prospects"),
              (people_in_sequence(people="$cold"),
               A("the warm lead is not sequenced", "[prospect($warm.email)] | length", "equals", 0)))),
        (Change("crm.contacts", ("create",)), Change("crm.associations"), Change("crm.tasks"),
         Change("scheduler.scheduling_links"), *SEQUENCING),
        (call("sales_search_leads", company=[P("company")], seniority_level=["VP", "CXO"],
              function_area=["Engineering"]),
         call("get_sales_profile", lead_id=P("warm.lead_id")), people_contacts((0, 1, 2), company=P("company")),
         link(),
         call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
              associations={"contactIds": [OUT(2, ".results[1].id | tonumber")]},
              metadata={"timestamp": P("due"), "subject": F("Ask for a warm intro to {warm[name]}"),
                        "body": OUT(3, '"Offer them a deep dive: " + .resource.booking_url')}),
         people_prospect(0), people_prospect(2), enrol([OUT(5, ".data.id"), OUT(6, ".data.id")])),
        forbidden=(NO_INMAIL,), mechanisms=("four_apps", "teamlink", "single_use_link", "filter_and"),
    ),
)


# --- caps on the open change rules ----------------------------------------------------------------------------------
# Each change rule without ids may touch at most as many records as the reference solution does (template id ->
# {rule index: records}; the same on every seed), so enrolling everyone, a duplicate or an extra link, note,
# list member or booking fails the invariant. Regenerate after editing a template's changes or solution.
CAPS = {
    "inbound-existing-records": {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
    "inbound-opted-out-demo": {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
    "inbound-exclusive-nurture": {1: 1, 2: 2, 3: 1, 5: 1, 6: 1},
    "inbound-mislabelled-customer": {1: 1, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1},
    "inbound-new-company": {0: 1, 1: 1, 2: 1, 3: 4, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1},
    "inbound-deep-dive-ask-tz": {0: 1, 1: 1, 4: 1},
    "inbound-referral-link": {0: 1, 1: 1, 2: 4, 3: 1, 4: 1, 5: 1},
    "inbound-region-routing": {1: 1, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1},
    "outbound-free-inmails": {0: 2, 1: 2, 2: 3, 3: 6, 4: 1, 5: 1},
    "outbound-list-dedupe": {0: 2, 1: 2, 3: 4, 4: 3, 5: 3, 6: 1},
    "outbound-champion-moved": {1: 1, 2: 1, 3: 4, 4: 1, 5: 1, 6: 1, 7: 1},
    "outbound-locked-mailbox": {0: 2, 1: 1, 2: 6, 3: 2, 4: 2, 5: 1, 6: 1},
    "outbound-private-sequence": {0: 1, 1: 1, 2: 1, 3: 10, 4: 1, 5: 1, 6: 1, 7: 1},
    "outbound-disabled-sequence": {0: 2, 1: 1, 2: 6, 3: 2, 4: 2, 5: 1, 6: 1},
    "outbound-region-campaign": {0: 2, 1: 4, 2: 2, 3: 2, 4: 2},
    "outbound-inmail-reply": {0: 1, 1: 1, 2: 4, 4: 1, 5: 1},
    "outbound-no-credit-fallback": {0: 1, 1: 1, 2: 1, 3: 1, 4: 2},
    "pipeline-multi-thread": {0: 2, 2: 1, 3: 12, 4: 2, 5: 2, 6: 1, 7: 1},
    "pipeline-demo-held": {0: 1, 1: 1, 2: 1, 3: 2, 6: 1},
    "pipeline-no-show": {0: 1, 2: 1, 3: 2, 5: 1},
    "pipeline-renewal-buyer": {0: 1, 2: 1, 3: 8, 4: 1, 5: 1, 6: 1, 7: 1},
    "pipeline-won-kickoff": {2: 1, 3: 4, 5: 1, 6: 1, 7: 1},
    "pipeline-lost-champion": {1: 1, 2: 2, 5: 1},
    "pipeline-expansion-reply": {1: 1, 2: 1, 3: 8, 4: 1, 5: 1, 6: 1},
    "pipeline-reschedule-ask": {0: 1, 2: 1, 3: 1, 4: 1, 5: 2, 7: 1},
    "pipeline-booking-to-deal": {0: 1, 1: 1, 2: 1, 3: 8},
    "reengage-evergreen": {1: 2, 3: 1},
    "reengage-opted-out-inmail": {0: 1, 1: 1, 4: 1, 5: 2},
    "reengage-reply-new-deal": {1: 1, 2: 1, 3: 8, 5: 1, 6: 1, 7: 1},
    "reengage-follow-champion": {0: 1, 1: 2, 2: 1, 3: 2, 4: 1},
    "reengage-bad-timing": {2: 2, 3: 1},
    "reengage-bounced-email": {1: 1, 2: 2, 4: 1, 5: 1, 7: 1},
    "reengage-churned-exec": {0: 1, 1: 1, 2: 1, 3: 10, 4: 1, 5: 1, 6: 1, 7: 1},
    "reengage-nurture-block": {1: 1, 3: 1},
    "handoff-sdr-to-ae": {1: 1, 2: 1, 3: 8, 5: 1, 6: 1, 7: 1, 8: 1},
    "handoff-rep-leaving": {3: 2, 4: 1, 5: 2, 6: 2},
    "handoff-territory-move": {1: 1, 2: 2, 4: 1, 5: 1, 6: 1},
    "handoff-partner-referral": {0: 1, 1: 1, 2: 4, 3: 1, 4: 1, 5: 1},
    "enrich-route-by-seniority": {1: 1, 2: 2, 3: 3, 4: 3, 5: 1, 6: 1},
    "enrich-headcount-route": {2: 1, 3: 2, 4: 1, 6: 1, 7: 1},
    "hygiene-double-booking": {1: 1, 2: 1, 3: 2},
    "hygiene-job-change-sweep": {3: 1},
    "hygiene-wrong-account": {1: 1, 2: 4, 4: 1, 5: 1, 6: 1},
    "enrich-list-to-crm": {0: 2, 1: 1, 2: 6, 3: 2, 4: 2, 5: 1, 6: 1},
    "hygiene-cancellation-recovery": {0: 1, 1: 1, 2: 2, 4: 1},
    "hygiene-timezone-fix": {0: 1, 2: 1, 3: 1, 4: 1, 5: 2, 7: 1},
    "pipeline-two-stakeholders": {0: 1, 2: 2, 3: 12, 4: 1, 5: 1, 6: 2, 7: 2},
    "outbound-teamlink-intro": {0: 3, 1: 8, 2: 1, 3: 1, 4: 2, 5: 2},
}


def _capped(template: Template) -> Template:
    caps = CAPS[template.id]
    return dataclasses.replace(template, changes=tuple(
        dataclasses.replace(c, most=caps[i]) if i in caps else c for i, c in enumerate(template.changes)))


for _id in CAPS:  # in place: the catalogue's order is kept
    CATALOGUE.templates[_id] = _capped(CATALOGUE.templates[_id])
