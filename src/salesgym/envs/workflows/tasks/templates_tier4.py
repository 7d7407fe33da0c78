"""The four-app templates (tier 4), as data, registered into ``templates.CATALOGUE`` after the templates of
``templates.py``. Each needs real work in the prospecting database, the CRM, the sequencer and the scheduler,
and each is about one motion (inbound, outbound, pipeline, re-engagement, handoff, enrichment, hygiene) and a
rule that bites (see ``mechanisms``). Fixtures: ``fixtures_tier4.py``.

jq expressions see the instance's parameters as ``$name`` and the helpers of ``jqlib.PRELUDE``.
"""

from __future__ import annotations

from salesgym.envs.workflows.population import RENEWAL_PIPELINE
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


def state_is(state_id: str, state: str = "finished", name: str = "the state is finished, not deleted") -> A:
    return A(name, f".sequencer.sequence_states[] | select(.id == {state_id}) | .attributes.state", "equals", state)


def one_prospect(email: str = "$email") -> A:
    return A("one prospect with the email", f"[prospect({email})] | length", "equals", 1)


def link_for(event_type: str = "$event_type", n: int = 1) -> A:
    return A("a single-use link for the event type", f"[.scheduler.scheduling_links[]? | select(.owner == {event_type})]"
             " | length", "equals", n)  # fmt: skip


def canceled(uuid: str = "$old_uuid") -> A:
    return A("the booking is canceled with a reason", f".scheduler.scheduled_events[] | select(.uri | endswith({uuid}))"
             ' | .status == "canceled" and (.cancellation.reason | length) > 0')  # fmt: skip


def logged(contact: str = BY_EMAIL, outcome: str | None = None) -> A:
    extra = "" if outcome is None else f" and .properties.hs_meeting_outcome == \"{outcome}\""
    return A("meeting logged with the booking's times" + ("" if outcome is None else f" ({outcome})"),
             f'engagements("meetings"; {contact}) | map(select(.properties.hs_meeting_start_time == $start and '
             f".properties.hs_meeting_end_time == $end{extra})) | length", "equals", 1)  # fmt: skip


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
