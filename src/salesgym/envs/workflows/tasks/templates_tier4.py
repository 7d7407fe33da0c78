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


# --- outbound -----------------------------------------------------------------------------------------------------
def people_contacts(indexes: tuple[int, ...], **props: object) -> dict[str, object]:
    """One batch creating ``people.<i>`` as contacts on the company (title from the profile)."""
    return call("hubspot-batch-create-objects", objectType="contacts", inputs=[
        {"properties": {"email": P(f"people.{i}.email"), "firstname": P(f"people.{i}.first"),
                        "lastname": P(f"people.{i}.last"), "jobtitle": P(f"people.{i}.title"), **props},
         "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]}
        for i in indexes])  # fmt: skip


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
        facts=(FactSpec("cover", ("cover", "covering", "away", "locked", "instead", "whose mailbox"), "cover"),),
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
                                     "cannot"), "fallback"),),
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
