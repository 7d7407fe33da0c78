"""More workflow templates on one to three apps, as data, registered into ``templates.CATALOGUE`` (the package
imports this module right after ``templates.py``, so the catalogue's order is fixed): single-app workflows of
every replica, and many pairs and triples of apps. Fixtures are in ``fixtures_more.py``; the format is ``model.py``'s.

Each template varies the rule that bites: a closed-lost reason only the requester knows, owners by id, a stage
of another pipeline, filters that AND, no-shows only after the start, cancellations with a reason, slot
length, finishing (not deleting) replied states, exclusive sequences, opt-outs, free InMail to 1st-degree and
Open Profile leads, a lead at most once per list, read-only apps, single-use links, no re-enrolment...
"""

from __future__ import annotations

from salesgym.envs.workflows.tasks import fixtures_more as fm
from salesgym.envs.workflows.tasks.model import OUT, A, Change, F, FactSpec, Forbidden, P, Step
from salesgym.envs.workflows.tasks.model import Template as T
from salesgym.envs.workflows.tasks.templates import (
    CATALOGUE,
    NO_INMAIL,
    NO_INMAIL_SENT,
    TZ,
    book,
    call,
)

REASON = FactSpec("reason", ("loss", "lost", "lose", "reason"), "reason")
DEAL = 'crm("deals"; $deal_id)'
NO_BOOKING = Forbidden("no new booking", ("meetings-create_invitee",), attempted=True)
NO_FINISH = Forbidden("nobody is pulled out of a sequence", ("sequence_state_finish",), attempted=True)


def active_at(email: str, start: str = "$start") -> A:
    """One active booking of ``email`` at ``start`` of the expected event type, in the invitee's time zone."""
    return A("booked at the expected open slot", f"events_of({email}) | map(select(.status == \"active\" and "
             f".start_time == {start} and .event_type == $event_type and .invitee.timezone == $tz)) | length",
             "equals", 1)  # fmt: skip


def deal_notes(deal: str = "$deal_id") -> str:
    return f'. as $doc | linked("deals"; {deal}; "notes"; 213) | map(. as $n | $doc | crm("notes"; $n) | ' \
           '.properties.hs_note_body) | join(" ") | ascii_downcase'  # fmt: skip


def states_are(ids: str, state: str) -> str:
    return f"every({ids}; . as $s | $doc | .sequencer.sequence_states[] | select(.id == $s) | .attributes.state == " \
           f"\"{state}\")"  # fmt: skip


def enrolled(ids: str, sequence: str = "$sequence_id") -> str:
    """Each prospect of ``ids`` has exactly one state in ``sequence``, from ``$mailbox``."""
    return f"every({ids}; . as $p | $doc | states($p; {sequence}) | length == 1 and (.[0] | rel(\"mailbox\")) == " \
           "$mailbox)"  # fmt: skip


# --- tier 1: CRM ------------------------------------------------------------------------------------------------
CATALOGUE.add(
    T("crm-close-lost-reason", "hygiene", "Close a stalled pilot as lost, with the reason",
      "The stalled pilot deal is Closed Lost in its own pipeline and a note on the deal records why it was lost.",
      "The \"{company} - pilot\" deal is dead. Mark it Closed Lost and log a note on the deal with the loss reason "
      "({requester} knows it: ask).",
      ("crm",), fm.close_lost,
      (Step("crm", "close the deal lost", ("hubspot-search-objects", "hubspot-list-pipelines",
                                           "hubspot-batch-update-objects"),
            (A("closed lost", f"{DEAL} | .properties.dealstage", "equals", "closedlost"),
             A("still in the Sales Pipeline", f"{DEAL} | .properties.pipeline", "equals", "default"))),
       Step("crm", "note the reason on the deal", ("ask_requester", "hubspot-create-engagement"),
            (A("the note gives the reason", f"{deal_notes()} | contains($reason | ascii_downcase)"),))),
      (Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)), Change("crm.notes", most=1),
       Change("crm.associations")),
      (call("ask_requester", question="What was the loss reason?"),
       call("hubspot-batch-update-objects", objectType="deals",
            inputs=[{"id": P("deal_id"), "properties": {"dealstage": "closedlost"}}]),
       call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
            associations={"dealIds": [P("deal_id_int")]},
            metadata={"timestamp": P("today"), "body": F("Closed lost: {reason}.")})),
      facts=(REASON,), requester_role="the account executive", mechanisms=("close_lost_reason", "hidden_fact")),
    T("crm-fix-owner", "hygiene", "Fix contact owners on an account",
      "Every contact associated to the company is owned by the company's owner; nobody else's owner changes.",
      "Every contact at {company} must be owned by the company's owner, {owner}. Find the ones that are not and "
      "reassign them (contacts at other companies are not part of this).",
      ("crm",), fm.fix_owner,
      (Step("crm", "reassign the account's contacts", ("hubspot-list-associations", "hubspot-list-owners",
                                                       "hubspot-batch-update-objects"),
            (A("every contact on the company owned by its owner", '[linked("companies"; $company_id; "contacts"; 280)'
               '[] as $c | $doc | crm("contacts"; $c) | .properties.hubspot_owner_id] | unique', "equals",
               [P("owner_id")]),
             A("the other company's contact untouched", 'crm("contacts"; $decoy_id) | .properties.hubspot_owner_id',
               "equals", P("decoy_owner")))),),
      (Change("crm.contacts", ("update",), P("wrong_ids"), ("hubspot_owner_id",)),),
      (call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates")),),
      requester_role="the revenue operations lead", mechanisms=("owner_ids",)),
    T("crm-open-renewal", "pipeline", "Open next year's renewal",
      "A renewal deal sits at Renewal Due in the Renewals pipeline with its amount, close date, owner and company; "
      "the won deal is untouched.",
      "Open the renewal for {company}: a new deal named \"{deal_name}\" in the Renewals pipeline at the Renewal Due "
      "stage, amount {amount}, close date {close_date}, owned by the company's owner and associated to {company}. "
      "Leave the won new-business deal as it is.",
      ("crm",), fm.open_renewal,
      (Step("crm", "create the renewal deal", ("hubspot-list-pipelines", "hubspot-batch-create-objects"),
            (A("one renewal deal", "[deal_named($deal_name)] | length", "equals", 1),
             A("Renewals pipeline, Renewal Due", "deal_named($deal_name) | [.properties.pipeline, "
               ".properties.dealstage]", "equals", [P("renewal_pipeline"), P("stage_due")]),
             A("amount, close date and owner", "deal_named($deal_name) | [(.properties.amount | tonumber), "
               "(.properties.closedate[:10]), .properties.hubspot_owner_id] == [($amount | tonumber), $close_date, "
               "$owner_id]"),
             A("on the company", 'deal_linked($deal_name; "companies"; 5) + deal_linked($deal_name; "companies"; '
               "341)", "contains", P("company_id")))),),
      (Change("crm.deals", ("create",), most=1), Change("crm.associations")),
      (call("hubspot-batch-create-objects", objectType="deals", inputs=[
          {"properties": {"dealname": P("deal_name"), "pipeline": P("renewal_pipeline"), "dealstage": P("stage_due"),
                          "amount": P("amount"), "closedate": P("close_date"), "hubspot_owner_id": P("owner_id")},
           "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),),
      forbidden=(Forbidden("the won deal is not edited", ("hubspot-batch-update-objects",),
                           args='.objectType == "deals"', attempted=True),),
      requester_role="the account executive", mechanisms=("stage_in_pipeline",)),
    T("crm-mql-promote", "inbound", "Promote an account's new MQLs",
      "Exactly the account's marketing-qualified leads with lead status New are sales-qualified and Open.",
      "Marketing handed over its new MQLs at {company}: every contact at {company} who is a marketing-qualified "
      "lead with lead status New becomes a sales-qualified lead with lead status Open. Nobody else changes.",
      ("crm",), fm.mql_promote,
      (Step("crm", "search with both filters and promote the matches", ("hubspot-search-objects",
                                                                        "hubspot-batch-update-objects"),
            (A("each match is an open SQL", "every($targets; . as $c | $doc | crm(\"contacts\"; $c) | "
               ".properties | .lifecyclestage == \"salesqualifiedlead\" and .hs_lead_status == \"OPEN\")"),)),),
      (Change("crm.contacts", ("update",), P("targets"), ("lifecyclestage", "hs_lead_status")),),
      (call("hubspot-search-objects", objectType="contacts", filterGroups=[{"filters": [
          {"propertyName": "company", "operator": "EQ", "value": P("company")},
          {"propertyName": "lifecyclestage", "operator": "EQ", "value": "marketingqualifiedlead"},
          {"propertyName": "hs_lead_status", "operator": "EQ", "value": "NEW"}]}], limit=50),
       call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates"))),
      requester_role="the revenue operations lead", mechanisms=("filter_and", "lifecycle_forward")),
)

# --- tier 1: scheduler ------------------------------------------------------------------------------------------
CATALOGUE.add(
    T("sched-no-show-rebook", "scheduling", "Record a no-show and rebook",
      "The missed demo's invitee is marked a no-show and has a new demo at the earliest open slot.",
      "{invitee_name} <{invitee_email}> did not turn up to their 30 Minute Demo on {old_day}. Mark them as a "
      "no-show on that booking, then book them the earliest 30 Minute Demo on or after {after} (time zone {tz}).",
      ("scheduler",), fm.no_show_rebook,
      (Step("scheduler", "mark the no-show", ("meetings-list_events", "meetings-list_event_invitees",
                                              "invitee_no_shows-create"),
            (A("no-show recorded on the missed booking", ".scheduler.invitees[] | select(.uri == $old_invitee) | "
               ".no_show.invitee", "equals", P("old_invitee")),)),
       Step("scheduler", "rebook", ("event_types-list_event_type_available_times", "meetings-create_invitee"),
            (active_at("$invitee_email"),
             A("two bookings in all", "events_of($invitee_email) | length", "equals", 2)))),
      (Change("scheduler.no_shows", most=1),
       Change("scheduler.invitees", ("update",), P("old_invitee_id"), ("no_show",)),
       Change("scheduler.invitees", ("create",), most=1), Change("scheduler.scheduled_events", ("create",), most=1)),
      (call("invitee_no_shows-create", invitee=P("old_invitee")),
       book(P("invitee_name"), P("invitee_email"))),
      forbidden=(Forbidden("the missed booking is not canceled", ("meetings-cancel_event",)),),
      mechanisms=("no_show_after_start", "open_slots")),
    T("sched-double-booking", "scheduling", "Clear a double booking",
      "The invitee keeps only the earlier Discovery Call; the later one is canceled with a reason.",
      "{invitee_name} <{invitee_email}> booked the Discovery Call twice. Keep the earlier booking and cancel the "
      "later one, saying why. Do not book anything new.",
      ("scheduler",), fm.double_booking,
      (Step("scheduler", "find both bookings and cancel the later", ("meetings-list_events", "meetings-cancel_event"),
            (A("the earlier one still active", ".scheduler.scheduled_events[] | select(.uri | endswith($keep_id)) | "
               ".status", "equals", "active"),
             A("the later one canceled with a reason", ".scheduler.scheduled_events[] | select(.uri | "
               "endswith($drop_id)) | .status == \"canceled\" and (.cancellation.reason | length) > 0"))),),
      (Change("scheduler.scheduled_events", ("update",), P("drop_id"), ("status", "cancellation",
                                                                        "invitees_counter")),
       Change("scheduler.invitees", ("update",), P("drop_invitee"), ("status",))),
      (call("meetings-cancel_event", uuid=P("drop_id"), reason="Duplicate booking: keeping the earlier call."),),
      forbidden=(NO_BOOKING,), mechanisms=("cancel_reason",)),
    T("sched-deep-dive-length", "scheduling", "Book an hour-long deep dive",
      "The invitee has a Technical Deep Dive at the earliest slot long enough for an hour, on Zoom.",
      "Book {invitee_name} <{invitee_email}> (time zone {tz}) into the earliest Technical Deep Dive on or after "
      "{after}, as a Zoom call. It lasts an hour: a half-hour gap will not do.",
      ("scheduler",), fm.deep_dive_length,
      (Step("scheduler", "find an hour-long open slot and book it", ("event_types-get_event_type",
                                                                      "event_types-list_event_type_available_times",
                                                                      "meetings-create_invitee"),
            (active_at("$invitee_email"),
             A("an hour long", "events_of($invitee_email) | .[0] | [.start_time, .end_time] | map(fromdateiso8601) "
               "| .[1] - .[0]", "equals", 3600),
             A("on Zoom", "events_of($invitee_email) | .[0].location.type", "equals", "zoom_conference"))),),
      (Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1)),
      (call("meetings-create_invitee", event_type=P("event_type"), start_time=P("start"),
            invitee={"name": P("invitee_name"), "email": P("invitee_email"), "timezone": P("tz")},
            location={"kind": "zoom_conference"}),),
      mechanisms=("slot_length", "open_slots")),
)

# --- tier 1: sequencer ------------------------------------------------------------------------------------------
CATALOGUE.add(
    T("seq-finish-replied", "outbound", "Stop outreach on replies",
      "Every SQL Outbound state on the account whose prospect replied is finished (kept, not deleted); the others "
      "run on.",
      "Everyone on the {company} account who has replied to SQL Outbound should stop getting emails: finish their "
      "sequence states (finish, do not delete) and leave the prospects who have not replied in the sequence.",
      ("sequencer",), fm.finish_replied,
      (Step("sequencer", "find the replies and finish those states", ("prospect_search", "emails_search",
                                                                      "sequence_state_search",
                                                                      "sequence_state_finish"),
            (A("replied states finished", states_are("$replied", "finished")),
             A("the others still active", states_are("$quiet", "active")))),),
      (Change("sequencer.sequence_states", ("update",), P("replied_keys"), ("state", "finishedAt")),),
      tuple(call("sequence_state_finish", id=P(f"replied.{i}")) for i in (0, 1)),
      mechanisms=("finish_not_delete", "read_replies")),
    T("seq-exclusive-nurture", "outbound", "Fill an exclusive nurture sequence",
      "The tagged prospects who can join the exclusive Enterprise Nurture are in it; nobody was pulled out of "
      "another sequence and opted-out prospects are left alone.",
      "Add every prospect tagged \"{tag}\" to \"Enterprise Nurture\" from {owner}'s mailbox ({owner_email}). It is an "
      "exclusive sequence: do not pull anyone out of a sequence they are active in to make room, and respect "
      "opt-outs.",
      ("sequencer",), fm.exclusive_nurture,
      (Step("sequencer", "enrol whoever the ruleset admits", ("sequence_search", "prospect_search",
                                                              "sequence_state_search", "sequence_add_prospects"),
            (A("the free prospects enrolled from the mailbox", enrolled("$eligible")),
             A("the busy prospect still only in its own sequence", "[.sequencer.sequence_states[] | "
               "select(rel(\"prospect\") == $busy)] | map(.attributes.state) == [\"active\"]"),
             A("the opted-out prospect not enrolled", "states($opted_out; $sequence_id) | length", "equals", 0))),),
      (Change("sequencer.sequence_states", ("create",), most=P("eligible")),),
      (call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("eligible"), mailboxId=P("mailbox")),),
      forbidden=(NO_FINISH,), mechanisms=("exclusive_sequence", "opt_out")),
    T("seq-optout-call-tasks", "outbound", "Sequence a trade-show list, call the opted-out",
      "The tagged prospects who accept email are in Exec Intro; the opted-out one gets a call task instead.",
      "Follow up the trade-show leads tagged \"{tag}\": put them in \"Exec Intro\" (email only) from {owner}'s "
      "mailbox ({owner_email}). Anyone who has opted out of email gets a call task due {due} instead.",
      ("sequencer",), fm.optout_call_tasks,
      (Step("sequencer", "enrol the reachable prospects", ("prospect_search", "sequence_add_prospects"),
            (A("reachable prospects enrolled", enrolled("$eligible")),
             A("the opted-out prospect not enrolled", "states($opted_out; $sequence_id) | length", "equals", 0))),
       Step("sequencer", "call task for the opted-out prospect", ("task_create",),
            (A("one call task due that day", "[.sequencer.tasks[] | select(rel(\"prospect\") == $opted_out and "
               ".attributes.action == \"call\" and (.attributes.dueAt | startswith($due)))] | length", "equals", 1),
             A("no task for anyone else", "[.sequencer.tasks[] | select(rel(\"prospect\") != $opted_out)] | length",
               "equals", 0)))),
      (Change("sequencer.sequence_states", ("create",), most=P("eligible")),
       Change("sequencer.tasks", ("create",), most=1)),
      (call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("eligible"), mailboxId=P("mailbox")),
       call("task_create", prospectId=P("opted_out"), action="call", dueAt=P("due_time"),
            note=F("Call {opted_name}: opted out of email after the trade show."))),
      forbidden=(Forbidden("never try to email the opted-out prospect", ("sequence_add_prospects",),
                           args=".prospectIds | index($opted_out) != null"),),
      mechanisms=("opt_out", "manual_task")),
)

# --- tier 1: prospecting ----------------------------------------------------------------------------------------
CATALOGUE.add(
    T("pros-inmail-free", "outbound", "InMail a list where it is free",
      "Every lead on the list who is a 1st-degree connection or has an Open Profile has the InMail; nobody else "
      "does and no credit is spent.",
      "Send this InMail to every lead on the list \"{list_name}\" whom it costs nothing to reach (1st-degree "
      "connections and Open Profiles); do not spend a single credit. Subject: \"{subject}\". Body: \"{body}\"",
      ("prospecting",), fm.inmail_free,
      (Step("prospecting", "check each lead and send the free InMails", ("get_lead_list_members",
                                                                          "get_sales_profile", "send_inmail"),
            (A("exactly the free leads got it", "[.prospecting.inmails[] | select(.subject == $subject) | .lead_id] "
               "| sort", "equals", P("free")),
             A("no credit spent", ".prospecting.credits[0].available", "equals", P("credits")))),),
      (Change("prospecting.inmails", ("create",), most=P("free")),),
      tuple(call("send_inmail", recipient_urn=P(f"free_urns.{i}"), subject=P("subject"), body=P("body"))
            for i in (0, 1)),
      forbidden=(Forbidden("no paid InMail", ("send_inmail",), args=".recipient_urn as $u | $paid_urns | index($u) "
                           "!= null"),),
      mechanisms=("inmail_free_first_degree_open_profile",)),
    T("pros-list-topup", "outbound", "Top up a lead list",
      "The list holds every Director+ Sales leader at the company, each once.",
      "Make sure the lead list \"{list_name}\" holds every Director-level or more senior (Director, VP, CXO) Sales "
      "leader at {company}. Some may already be on it.",
      ("prospecting",), fm.list_topup,
      (Step("prospecting", "search and save the missing ones", ("sales_search_leads", "get_lead_list_members",
                                                                "save_lead"),
            (A("exactly the matching leads", "members($list_id)", "equals", P("targets")), NO_INMAIL_SENT)),),
      (Change("prospecting.list_members", ("create",), most=P("missing")),),
      (call("sales_search_leads", company=[P("company")], seniority_level=["Director", "VP", "CXO"],
            function_area=["Sales"]),
       *(call("save_lead", lead_id=P(f"missing.{i}"), list_id=P("list_id")) for i in (0, 1))),
      forbidden=(NO_INMAIL,), mechanisms=("lead_once_per_list", "filter_and")),
)

# --- tier 2 -----------------------------------------------------------------------------------------------------
CATALOGUE.add(
    T("left-company-cleanup", "hygiene", "Flag contacts who left the account",
      "Whoever has left the company is Unqualified with a note naming their new employer; the others are "
      "untouched.",
      "Check the {company} contacts in the CRM against Sales Navigator. Anyone who has left {company}: set their "
      "lead status to Unqualified and log a note on their contact saying where they went. Change nothing for the "
      "others.",
      ("prospecting", "crm"), fm.left_company_cleanup,
      (Step("prospecting", "check who left", ("sales_search_leads", "get_sales_profile"), (NO_INMAIL_SENT,)),
       Step("crm", "flag whoever left", ("hubspot-batch-update-objects", "hubspot-create-engagement"),
            (A("unqualified", 'crm("contacts"; $left_id) | .properties.hs_lead_status', "equals", "UNQUALIFIED"),
             A("a note names the new company", 'engagements("notes"; $left_id) | map(.properties.hs_note_body) | '
               "join(\" \") | contains($new_company)"),
             A("the others still open", 'every($stayed; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.hs_lead_status == "OPEN")')))),
      (Change("crm.contacts", ("update",), P("left_id"), ("hs_lead_status",)), Change("crm.notes", most=1),
       Change("crm.associations")),
      (call("sales_search_leads", company=[P("company")]),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("left_id"), "properties": {"hs_lead_status": "UNQUALIFIED"}}]),
       call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
            associations={"contactIds": [P("left_id_int")]},
            metadata={"timestamp": P("today"), "body": F("Left {company}; now at {new_company}.")})),
      read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("left_account", "read_only_app")),
    T("company-from-account", "hygiene", "Create a missing company from its account",
      "The company exists in the CRM with the account's industry and headcount, and the contact is associated to "
      "it.",
      "{contact_name} ({contact_email}) works at {company}, which is not in the CRM yet. Create the company (name "
      "{company}, domain {domain}, industry and number of employees from its Sales Navigator account) and "
      "associate {contact_name} to it.",
      ("prospecting", "crm"), fm.company_from_account,
      (Step("prospecting", "read the account", ("sales_search_accounts", "get_account"), (NO_INMAIL_SENT,)),
       Step("crm", "create and associate the company", ("hubspot-batch-create-objects",
                                                        "hubspot-batch-create-associations"),
            (A("one company", "[.crm.companies[] | select(.properties.name == $company)] | length", "equals", 1),
             A("firmographics from the account", ".crm.companies[] | select(.properties.name == $company) | "
               ".properties | [.domain, .industry, (.numberofemployees | tonumber | tostring)]", "equals",
               [P("domain"), P("industry"), P("headcount")]),
             A("the contact on it", ". as $d | .crm.companies[] | select(.properties.name == $company) | .id as $co "
               "| $d | (linked(\"contacts\"; $contact_id; \"companies\"; 279) + linked(\"contacts\"; $contact_id; "
               "\"companies\"; 1)) | index($co) != null")))),
      (Change("crm.companies", ("create",), most=1), Change("crm.associations", ("create",))),
      (call("sales_search_accounts", keywords=P("company")),
       call("hubspot-batch-create-objects", objectType="companies", inputs=[
           {"properties": {"name": P("company"), "domain": P("domain"), "industry": OUT(0, ".elements[0].industry"),
                           "numberofemployees": OUT(0, ".elements[0].headcount | tostring")},
            "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 280}]}]}])),
      read_only=("prospecting",), mechanisms=("enrichment", "association_types")),
    T("inmail-open-profile", "outbound", "InMail the stakeholder reachable for free",
      "Only the stakeholder with an Open Profile got the InMail, no credit was spent, and their contact has a note.",
      "Reach out to one of the {company} stakeholders, {name1} or {name2}, by InMail: whichever we can reach "
      "without spending a credit (an Open Profile or a 1st-degree connection). Then log a note on that person's "
      "CRM contact saying an InMail was sent.",
      ("prospecting", "crm"), fm.inmail_open_profile,
      (Step("prospecting", "check both profiles and InMail the free one", ("sales_search_leads", "get_sales_profile",
                                                                           "send_inmail"),
            (A("one InMail, to the Open Profile", "[.prospecting.inmails[] | .recipient_urn]", "equals",
               [P("free_urn")]),
             A("no credit spent", ".prospecting.credits[0].available", "equals", P("credits")))),
       Step("crm", "note it on the contact", ("hubspot-create-engagement",),
            (A("a note on that contact", 'engagements("notes"; $free_id) | map(.properties.hs_note_body) | '
               'join(" ")', "matches", "(?i)inmail"),
             A("nothing on the other", 'engagements("notes"; $paid_id) | length', "equals", 0)))),
      (Change("prospecting.inmails", ("create",), most=1), Change("crm.notes", most=1), Change("crm.associations")),
      (call("send_inmail", recipient_urn=P("free_urn"), subject="Quick question",
            body="Would a short call about your data platform plans make sense this month?"),
       call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
            associations={"contactIds": [P("free_id_int")]},
            metadata={"timestamp": P("today"), "body": "InMail sent on Sales Navigator (Open Profile)."})),
      forbidden=(Forbidden("no paid InMail", ("send_inmail",), args=".recipient_urn == $paid_urn", attempted=False),),
      mechanisms=("inmail_open_profile",)),
    T("optout-sync", "hygiene", "Sync email opt-outs to the CRM",
      "The contacts whose prospects opted out of email are Unqualified in the CRM; nothing changes in the "
      "sequencer.",
      "Sync opt-outs from the sequencer to the CRM for the {company} account: every prospect there who has opted "
      "out of email gets lead status Unqualified on their CRM contact. The sequencer is read only for this.",
      ("sequencer", "crm"), fm.optout_sync,
      (Step("sequencer", "find the opted-out prospects", ("account_search", "prospect_search"),
            (A("sequencer untouched", "[.sequencer.prospects[] | select(.attributes.optedOut)] | length", "gte", 2),)),
       Step("crm", "mark their contacts", ("hubspot-search-objects", "hubspot-batch-update-objects"),
            (A("opted-out contacts unqualified", 'every($opted; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.hs_lead_status == "UNQUALIFIED")'),
             A("the others still open", 'every($kept; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.hs_lead_status == "OPEN")')))),
      (Change("crm.contacts", ("update",), P("opted"), ("hs_lead_status",)),),
      (call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates")),),
      read_only=("sequencer",), requester_role="the revenue operations lead",
      mechanisms=("read_only_app", "opt_out")),
    T("won-stop-outreach", "pipeline", "Stop outreach on a won deal",
      "The won deal's contacts are customers and their outreach is finished (kept, not deleted); nobody else's "
      "outreach changes.",
      "The \"{company} - platform\" deal is closed won. Stop all active outreach to the deal's contacts in the "
      "sequencer (finish their sequence states, do not delete them) and make them customers in the CRM. Other "
      "people at {company} stay in their sequences.",
      ("crm", "sequencer"), fm.won_stop_outreach,
      (Step("crm", "find the deal's contacts and make them customers", ("hubspot-search-objects",
                                                                        "hubspot-list-associations",
                                                                        "hubspot-batch-update-objects"),
            (A("customers", 'every($contact_ids; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.lifecyclestage == "customer")'),
             A("the deal untouched", f"{DEAL} | .properties.dealstage", "equals", "closedwon"))),
       Step("sequencer", "finish their outreach", ("prospect_search", "sequence_state_search",
                                                   "sequence_state_finish"),
            (A("their states finished", states_are("$states", "finished")),
             A("the bystander still active", states_are("[$other_state]", "active"))))),
      (Change("crm.contacts", ("update",), P("contact_ids"), ("lifecyclestage",)),
       Change("sequencer.sequence_states", ("update",), P("state_keys"), ("state", "finishedAt"))),
      (call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates")),
       *(call("sequence_state_finish", id=P(f"states.{i}")) for i in (0, 1))),
      requester_role="the account executive", mechanisms=("finish_not_delete", "lifecycle_forward")),
    T("existing-prospect-sequence", "outbound", "Sequence a contact who is already a prospect",
      "The contact's existing prospect (no duplicate) is in Exec Intro from the owner's mailbox and the contact is "
      "Attempted to contact.",
      "Start {contact_name} ({contact_email}) on \"Exec Intro\" from their CRM owner's mailbox, and set their CRM "
      "lead status to Attempted to contact. They may already be in the sequencer under another spelling of the "
      "email: never create a duplicate prospect.",
      ("crm", "sequencer"), fm.existing_prospect,
      (Step("crm", "find the owner and update the status", ("hubspot-search-objects", "hubspot-list-owners",
                                                            "hubspot-batch-update-objects"),
            (A("attempted to contact", 'crm("contacts"; $contact_id) | .properties.hs_lead_status', "equals",
               "ATTEMPTED_TO_CONTACT"),)),
       Step("sequencer", "enrol the existing prospect", ("prospect_search", "mailbox_search",
                                                         "sequence_add_prospects"),
            (A("one prospect with the email", "[prospect($contact_email)] | length", "equals", 1),
             A("the existing one, enrolled from the owner's mailbox", enrolled("[$prospect_id]"))))),
      (Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status",)),
       Change("sequencer.sequence_states", ("create",), most=1)),
      (call("prospect_search", email=P("contact_email")),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(0, ".data[0].id")],
            mailboxId=P("mailbox")),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("contact_id"), "properties": {"hs_lead_status": "ATTEMPTED_TO_CONTACT"}}])),
      mechanisms=("unique_prospect_email", "no_upsert")),
    T("no-show-followup", "scheduling", "Follow up a missed demo",
      "The invitee is a no-show in the scheduler; the CRM has the meeting with outcome No show and a call task.",
      "{contact_name} ({contact_email}) missed their 30 Minute Demo. Mark them as a no-show in the scheduler; in "
      "the CRM, log the meeting on their contact with the booking's times and outcome No show, and create a CALL "
      "task \"Follow up on missed demo\" due {due}.",
      ("scheduler", "crm"), fm.no_show_followup,
      (Step("scheduler", "mark the no-show", ("meetings-list_events", "meetings-list_event_invitees",
                                              "invitee_no_shows-create"),
            (A("no-show recorded", ".scheduler.invitees[] | select(.uri == $invitee) | .no_show != null"),)),
       Step("crm", "log the meeting and the follow-up", ("hubspot-create-engagement",),
            (A("meeting with outcome no show at the booking's times", 'engagements("meetings"; $contact_id) | '
               "map(select(.properties | .hs_meeting_outcome == \"NO_SHOW\" and .hs_meeting_start_time == $start "
               "and .hs_meeting_end_time == $end)) | length", "equals", 1),
             A("call task due that day", 'engagements("tasks"; $contact_id) | map(select(.properties | '
               '.hs_task_type == "CALL" and (.hs_timestamp | startswith($due)))) | length', "equals", 1)))),
      (Change("scheduler.no_shows", most=1), Change("scheduler.invitees", ("update",), P("invitee_id"), ("no_show",)),
       Change("crm.meetings", most=1), Change("crm.tasks", most=1), Change("crm.associations")),
      (call("invitee_no_shows-create", invitee=P("invitee")),
       call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
            associations={"contactIds": [P("contact_id_int")]},
            metadata={"timestamp": P("start"), "title": "30 Minute Demo", "startTime": P("start"), "endTime": P("end"),
                      "outcome": "NO_SHOW"}),
       call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
            associations={"contactIds": [P("contact_id_int")]},
            metadata={"timestamp": P("due_time"), "subject": "Follow up on missed demo", "taskType": "CALL"})),
      forbidden=(NO_BOOKING,), mechanisms=("no_show_after_start", "meeting_outcome")),
    T("week-demos-connected", "inbound", "Mark this week's demo bookers connected",
      "Every contact with an active demo booked this week is Connected; the one who canceled is not.",
      "Everyone at {company} who has an active 30 Minute Demo booked this week (up to {week_end}) should have lead "
      "status Connected in the CRM. Canceled bookings do not count. The scheduler is read only for this.",
      ("scheduler", "crm"), fm.week_demos,
      (Step("scheduler", "list this week's active demos", ("meetings-list_events", "meetings-list_event_invitees"),
            (A("no booking changed", "[.scheduler.scheduled_events[] | select(.status == \"active\")] | length",
               "equals", 3),)),
       Step("crm", "mark the bookers connected", ("hubspot-search-objects", "hubspot-batch-update-objects"),
            (A("bookers connected", 'every($booked; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.hs_lead_status == "CONNECTED")'),
             A("the canceled one unchanged", 'every($canceled; . as $c | $doc | crm("contacts"; $c) | '
               '.properties.hs_lead_status == "ATTEMPTED_TO_CONTACT")')))),
      (Change("crm.contacts", ("update",), P("booked"), ("hs_lead_status",)),),
      (call("meetings-list_events", status="active"),
       call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates"))),
      read_only=("scheduler",), mechanisms=("read_only_app", "cancellations")),
    T("changed-jobs-sequence", "outbound", "Sequence an account's new sales leaders",
      "The account's VP+ Sales leaders who changed jobs are prospects on the account in Exec Intro; nobody else.",
      "Find the VP-level or more senior Sales leaders at {company} who changed jobs recently (Sales Navigator). "
      "Create each as a prospect on the {company} account (email firstname.lastname@{domain}, lower case, with "
      "their title) and start them on \"Exec Intro\" from {owner}'s mailbox ({owner_email}).",
      ("prospecting", "sequencer"), fm.changed_jobs_sequence,
      (Step("prospecting", "search with every filter", ("sales_search_leads",), (NO_INMAIL_SENT,)),
       Step("sequencer", "create and enrol them", ("account_search", "prospect_create", "sequence_add_prospects"),
            (A("exactly the two new prospects", ".sequencer.prospects | map(select(rel(\"account\") == $account_id) "
               "| .attributes.emails[0]) | sort", "equals", P("emails")),
             A("with their titles", "every($people; . as $x | $doc | prospect($x.email) | .attributes.title == "
               "$x.title)"),
             A("each in Exec Intro from the mailbox", "every($emails; . as $e | $doc | prospect($e) | .id as $p | "
               "$doc | states($p; $sequence_id) | length == 1 and (.[0] | rel(\"mailbox\")) == $mailbox)")))),
      (Change("sequencer.prospects", ("create",), most=P("people")),
       Change("sequencer.sequence_states", ("create",), most=P("people"))),
      (*(call("prospect_create", attrs={"emails": [P(f"people.{i}.email")], "firstName": P(f"people.{i}.first"),
                                        "lastName": P(f"people.{i}.last"), "title": P(f"people.{i}.title")},
              accountId=P("account_id"), ownerId=P("user")) for i in (0, 1)),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(0, ".data.id"),
                                                                                 OUT(1, ".data.id")],
            mailboxId=P("mailbox"))),
      read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("filter_and", "changed_jobs")),
    T("inmail-deep-dive-link", "outbound", "Send a deep-dive link by InMail",
      "A single-use deep-dive link exists and its booking URL reached the 1st-degree lead by a free InMail.",
      "{name} at {company} (a 1st-degree connection) wants to pick a time for a Technical Deep Dive. Create a "
      "single-use scheduling link for it and send the link to {name} by InMail. Do not book anything yourself.",
      ("prospecting", "scheduler"), fm.inmail_link,
      (Step("scheduler", "create the link", ("event_types-list_event_types",
                                             "scheduling_links-create_single_use_scheduling_link"),
            (A("one deep-dive link", "[.scheduler.scheduling_links[] | select(.owner == $event_type)] | length",
               "equals", 1),)),
       Step("prospecting", "InMail it", ("sales_search_leads", "get_sales_profile", "send_inmail"),
            (A("the InMail carries the link", ". as $d | [.scheduler.scheduling_links[] | .booking_url] as $urls | "
               "[.prospecting.inmails[] | select(.lead_id == $lead_id) | .body] | length == 1 and (.[0] as $b | "
               "$urls | any(. as $u | $b | contains($u)))"),
             A("no credit spent", ".prospecting.credits[0].available", "equals", P("credits"))))),
      (Change("scheduler.scheduling_links", ("create",), most=1), Change("prospecting.inmails", ("create",), most=1)),
      (call("scheduling_links-create_single_use_scheduling_link", owner=P("event_type")),
       call("send_inmail", recipient_urn=P("urn"), subject="Technical deep dive",
            body=OUT(0, '"Pick any time that suits you: " + .resource.booking_url'))),
      forbidden=(NO_BOOKING,), mechanisms=("single_use_link", "inmail_free_first_degree")),
    T("reply-reschedule", "scheduling", "Reschedule on an emailed request",
      "The old discovery call is canceled with a reason and the prospect has the earliest slot on the day their "
      "reply asked for.",
      "{contact_name} ({contact_email}) replied to our emails about their Discovery Call. Read the reply in the "
      "sequencer and do what they ask: cancel the current booking (say why) and book the earliest Discovery Call "
      "on the day they ask for, in their time zone ({tz}). The sequencer is read only for this.",
      ("sequencer", "scheduler"), fm.reply_reschedule,
      (Step("sequencer", "read the reply", ("prospect_search", "emails_search"),
            (A("outreach untouched", "[.sequencer.sequence_states[] | select(.attributes.state == \"active\")] | "
               "length", "gte", 1),)),
       Step("scheduler", "move the call", ("meetings-list_events", "meetings-cancel_event",
                                           "event_types-list_event_type_available_times", "meetings-create_invitee"),
            (A("old call canceled with a reason", ".scheduler.scheduled_events[] | select(.uri | endswith($old_id)) "
               "| .status == \"canceled\" and (.cancellation.reason | length) > 0"),
             active_at("$contact_email")))),
      (Change("scheduler.scheduled_events", ("create",), most=1),
       Change("scheduler.scheduled_events", ("update",), P("old_id"), ("status", "cancellation", "invitees_counter")),
       Change("scheduler.invitees", ("create",), most=1),
       Change("scheduler.invitees", ("update",), P("old_invitee"), ("status",))),
      (call("meetings-cancel_event", uuid=P("old_id"), reason="The invitee asked to move the call."),
       book(P("contact_name"), P("contact_email"))),
      read_only=("sequencer",), mechanisms=("read_replies", "cancel_reason", "open_slots")),
    T("booked-finish-outreach", "outbound", "Finish outreach for prospects who booked",
      "Prospects on the account with an active demo booking are finished in SQL Outbound; a canceled booking "
      "does not count.",
      "Anyone on the {company} account who has booked a 30 Minute Demo (an active booking) is done with outreach: "
      "finish their SQL Outbound sequence states (finish, do not delete). A canceled booking does not count. The "
      "scheduler is read only for this.",
      ("scheduler", "sequencer"), fm.booked_finish,
      (Step("scheduler", "find who booked", ("meetings-list_events", "meetings-list_event_invitees"),
            (A("bookings untouched", "[.scheduler.scheduled_events[] | select(.status == \"active\")] | length",
               "equals", 2),)),
       Step("sequencer", "finish their outreach", ("prospect_search", "sequence_state_search",
                                                   "sequence_state_finish"),
            (A("bookers finished", states_are("$booked", "finished")),
             A("the others still active", states_are("$others", "active"))))),
      (Change("sequencer.sequence_states", ("update",), P("booked_keys"), ("state", "finishedAt")),),
      tuple(call("sequence_state_finish", id=P(f"booked.{i}")) for i in (0, 1)),
      read_only=("scheduler",), mechanisms=("meeting_booked_finish", "cancellations")),
    T("deal-presentation", "pipeline", "Book the presentation and progress the deal",
      "The deal's contact has the earliest deep dive, the deal is at Presentation Scheduled, and the meeting is "
      "logged on the deal and the contact.",
      "The \"{company} - data platform\" deal is ready for a technical presentation. Book its contact the earliest "
      "Technical Deep Dive on or after {after} (time zone {tz}), move the deal to Presentation Scheduled, and log "
      "the meeting in the CRM on both the deal and the contact, with the booking's times.",
      ("crm", "scheduler"), fm.deal_presentation,
      (Step("crm", "find the deal's contact", ("hubspot-search-objects", "hubspot-list-associations"),
            (A("deal at Presentation Scheduled", f"{DEAL} | .properties.dealstage", "equals",
               "presentationscheduled"),)),
       Step("scheduler", "book the deep dive", ("event_types-list_event_type_available_times",
                                                "meetings-create_invitee"), (active_at("$contact_email"),)),
       Step("crm", "log the meeting on the deal and the contact", ("hubspot-create-engagement",),
            (A("on the contact with the booking's times", 'engagements("meetings"; $contact_id) | '
               "map(select(.properties.hs_meeting_start_time == $start and .properties.hs_meeting_end_time == $end)) "
               "| length", "equals", 1),
             A("on the deal", '. as $doc | linked("deals"; $deal_id; "meetings"; 211) | map(. as $m | $doc | '
               'crm("meetings"; $m) | .properties.hs_meeting_start_time) | index($start) != null')))),
      (Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)), Change("crm.meetings", most=1),
       Change("crm.associations"), Change("scheduler.scheduled_events", most=1), Change("scheduler.invitees", most=1)),
      (book(P("contact_name"), P("contact_email")),
       call("hubspot-batch-update-objects", objectType="deals",
            inputs=[{"id": P("deal_id"), "properties": {"dealstage": "presentationscheduled"}}]),
       call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
            associations={"contactIds": [P("contact_id_int")], "dealIds": [P("deal_id_int")]},
            metadata={"timestamp": P("start"), "title": "Technical Deep Dive", "startTime": P("start"),
                      "endTime": P("end")})),
      mechanisms=("stage_in_pipeline", "open_slots", "association_types")),
)


def contact_on_company(email: str) -> str:
    return (f". as $d | contact({email}) | .id as $c | $d | (linked(\"contacts\"; $c; \"companies\"; 279) + "
            "linked(\"contacts\"; $c; \"companies\"; 1)) | index($company_id) != null")


def new_contact(row: str, extra: dict[str, object] | None = None,
                associations: list[dict[str, object]] | None = None) -> dict[str, object]:
    """A batch-create input for a person row of the parameters (``people.0``...), on ``$company_id``."""
    return {"properties": {"email": P(f"{row}.email"), "firstname": P(f"{row}.first"), "lastname": P(f"{row}.last"),
                           "jobtitle": P(f"{row}.title"), "company": P("company"), **(extra or {})},
            "associations": associations or [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]}]}


def new_prospect(row: str) -> dict[str, object]:
    return call("prospect_create", attrs={"emails": [P(f"{row}.email")], "firstName": P(f"{row}.first"),
                                          "lastName": P(f"{row}.last"), "title": P(f"{row}.title")},
                accountId=P("account_id"), ownerId=P("user"))


EACH_ON_ACCOUNT_IN_SEQUENCE = A(
    "each a prospect on the account in the sequence from the mailbox", "every($emails; . as $e | [$doc | "
    "prospect($e)] | length == 1 and (.[0] | rel(\"account\")) == $account_id and (.[0].id as $p | $doc | states($p; "
    "$sequence_id) | length == 1 and (.[0] | rel(\"mailbox\")) == $mailbox))")

# --- tier 3 -----------------------------------------------------------------------------------------------------
CATALOGUE.add(
    T("list-to-sequence", "outbound", "Sequence a saved buying committee",
      "Every lead on the list is one CRM contact on the company and one prospect on the account in Exec Intro; "
      "the contact who already existed is not duplicated.",
      "Work the lead list \"{list_name}\": every lead on it must be a CRM contact on {company} (email "
      "firstname.lastname@{domain}, lower case, title from the profile); one of them is already in the CRM, do not "
      "duplicate them. Then create each as a prospect on the {company} account and start all of them on \"Exec "
      "Intro\" from {owner}'s mailbox ({owner_email}).",
      ("prospecting", "crm", "sequencer"), fm.list_to_sequence,
      (Step("prospecting", "read the list", ("get_lead_lists", "get_lead_list_members"), (NO_INMAIL_SENT,)),
       Step("crm", "add the missing contacts", ("hubspot-search-objects", "hubspot-batch-create-objects"),
            (A("one contact each", "every($emails; . as $e | [$doc | contact($e)] | length == 1)"),
             A("the known contact is the one kept", 'crm("contacts"; $known_id) | .properties.email | ascii_downcase | '
               ". as $e | $emails | index($e) != null"),
             A("the new ones on the company", "every($new; . as $x | $doc | " + contact_on_company("$x.email")
               + ")"))),
       Step("sequencer", "create and enrol the prospects", ("prospect_create", "sequence_add_prospects"),
            (EACH_ON_ACCOUNT_IN_SEQUENCE,))),
      (Change("crm.contacts", ("create",), most=P("new")), Change("crm.associations", ("create",)),
       Change("sequencer.prospects", ("create",), most=P("people")),
       Change("sequencer.sequence_states", ("create",), most=P("people"))),
      (call("hubspot-batch-create-objects", objectType="contacts", inputs=[new_contact("new.0"),
                                                                           new_contact("new.1")]),
       *(new_prospect(f"people.{i}") for i in (0, 1, 2)),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(i, ".data.id") for i in (1, 2, 3)],
            mailboxId=P("mailbox"))),
      read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("unique_email", "no_upsert")),
    T("champion-left-replace", "re-engagement", "Replace a champion who left",
      "The former champion's CRM record has their new company and title; their successor is a contact on the "
      "company and the deal, and in Exec Intro.",
      "Our champion on the \"{company} - expansion\" deal, {champ_name}, seems to have left. Check Sales Navigator "
      "and update their CRM company and job title to their new ones. Then find who now holds their old title "
      "({old_title}) at {company} (they changed jobs recently), add that person as a CRM contact (email "
      "firstname.lastname@{domain}, lower case, with the title) associated to {company} and to the deal, and start "
      "them on \"Exec Intro\" as a prospect on the {company} account from {owner}'s mailbox ({owner_email}).",
      ("prospecting", "crm", "sequencer"), fm.champion_left,
      (Step("prospecting", "check the champion and find the successor", ("get_sales_profile", "sales_search_leads"),
            (NO_INMAIL_SENT,)),
       Step("crm", "update the champion, add the successor", ("hubspot-batch-update-objects",
                                                              "hubspot-batch-create-objects"),
            (A("champion's new company and title", 'crm("contacts"; $champ_id) | .properties | [.company, '
               ".jobtitle]", "equals", [P("new_company"), P("new_title")]),
             A("successor on the company", contact_on_company("$successor_email")),
             A("successor on the deal", '. as $d | contact($successor_email) | .id as $c | $d | '
               'linked("deals"; $deal_id; "contacts"; 3) | index($c) != null'))),
       Step("sequencer", "start the successor on Exec Intro", ("prospect_create", "sequence_add_prospects"),
            (A("successor in Exec Intro from the mailbox, on the account", "[$successor_email] as $emails | "
               + EACH_ON_ACCOUNT_IN_SEQUENCE.expr),))),
      (Change("crm.contacts", ("update",), P("champ_id"), ("company", "jobtitle")),
       Change("crm.contacts", ("create",), most=1), Change("crm.associations", ("create",)),
       Change("sequencer.prospects", ("create",), most=1), Change("sequencer.sequence_states", ("create",), most=1)),
      (call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("champ_id"), "properties": {"company": P("new_company"), "jobtitle": P("new_title")}}]),
       call("hubspot-batch-create-objects", objectType="contacts", inputs=[new_contact("successor", associations=[
           {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 279}]},
           {"to": {"id": P("deal_id")}, "types": [{"associationTypeId": 4}]}])]),
       new_prospect("successor"),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(2, ".data.id")],
            mailboxId=P("mailbox"))),
      read_only=("prospecting",), forbidden=(NO_INMAIL,),
      mechanisms=("left_account", "changed_jobs", "association_types")),
    T("list-expansion-finance", "outbound", "Expand into a customer's finance team",
      "Every Director+ Finance leader at the customer is one CRM contact on the company and one prospect in Exec "
      "Intro; the leader who was already a contact and a prospect is reused, not duplicated.",
      "{company} is a customer; expand into their finance team. Every Director-level or more senior Finance leader "
      "there (Sales Navigator) should be a CRM contact on {company} (email firstname.lastname@{domain}, lower case, "
      "with their title) and a prospect on the {company} account in \"Exec Intro\" from {owner}'s mailbox "
      "({owner_email}). Some may already be contacts or prospects: never create duplicates.",
      ("prospecting", "crm", "sequencer"), fm.expansion_finance,
      (Step("prospecting", "find the leaders", ("sales_search_leads",), (NO_INMAIL_SENT,)),
       Step("crm", "add the missing contacts", ("hubspot-search-objects", "hubspot-batch-create-objects"),
            (A("one contact each", "every($emails; . as $e | [$doc | contact($e)] | length == 1)"),
             A("the new ones on the company", "every($new; . as $x | $doc | " + contact_on_company("$x.email")
               + ")"))),
       Step("sequencer", "reuse or create prospects and enrol them", ("prospect_search", "prospect_create",
                                                                      "sequence_add_prospects"),
            (EACH_ON_ACCOUNT_IN_SEQUENCE,
             A("the existing prospect reused", "prospect($people[0].email) | .id", "equals", P("known_prospect"))))),
      (Change("crm.contacts", ("create",), most=P("new")), Change("crm.associations", ("create",)),
       Change("sequencer.prospects", ("create",), most=P("new")),
       Change("sequencer.sequence_states", ("create",), most=P("people"))),
      (call("sales_search_leads", company=[P("company")], function_area=["Finance"],
            seniority_level=["Director", "VP", "CXO"]),
       call("hubspot-batch-create-objects", objectType="contacts", inputs=[new_contact("new.0"),
                                                                           new_contact("new.1")]),
       new_prospect("new.0"), new_prospect("new.1"),
       call("sequence_add_prospects", sequenceId=P("sequence_id"),
            prospectIds=[P("known_prospect"), OUT(2, ".data.id"), OUT(3, ".data.id")], mailboxId=P("mailbox"))),
      read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("unique_email", "no_upsert", "filter_and")),
    T("enrich-optout-sequence", "hygiene", "Enrich, sequence, and call the opted-out",
      "The contacts have their profile titles; the reachable prospects are in SQL Outbound; the opted-out one has "
      "a CRM call task instead.",
      "Three {company} contacts have no job title in the CRM: fill each in from Sales Navigator. Then add their "
      "prospects to \"SQL Outbound\" from {owner}'s mailbox ({owner_email}); whoever has opted out of email gets a "
      "CRM call task \"Call <first name> <last name>\" due {due} instead.",
      ("prospecting", "crm", "sequencer"), fm.enrich_optout,
      (Step("prospecting", "read the profiles", ("sales_search_leads",), (NO_INMAIL_SENT,)),
       Step("crm", "write the titles", ("hubspot-batch-update-objects",),
            (A("titles from the profiles", "every($contact_ids; . as $c | $doc | crm(\"contacts\"; $c) | "
               ".properties.jobtitle == $titles[$c])"),)),
       Step("sequencer", "enrol the reachable prospects", ("prospect_search", "sequence_add_prospects"),
            (A("reachable prospects enrolled", enrolled("$eligible")),
             A("the opted-out one not", "states($opted_out; $sequence_id) | length", "equals", 0))),
       Step("crm", "call task for the opted-out contact", ("hubspot-create-engagement",),
            (A("a call task due that day", 'engagements("tasks"; $opted_id) | map(select(.properties | '
               '.hs_task_type == "CALL" and (.hs_timestamp | startswith($due)) and (.hs_task_subject | '
               'contains($opted_name)))) | length', "equals", 1),))),
      (Change("crm.contacts", ("update",), P("contact_ids"), ("jobtitle",)), Change("crm.tasks", ("create",), most=1),
       Change("crm.associations", ("create",)), Change("sequencer.sequence_states", ("create",), most=P("eligible"))),
      (call("hubspot-batch-update-objects", objectType="contacts", inputs=P("updates")),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=P("eligible"), mailboxId=P("mailbox")),
       call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
            associations={"contactIds": [P("opted_id_int")]},
            metadata={"timestamp": P("due_time"), "subject": F("Call {opted_name}"), "taskType": "CALL"})),
      read_only=("prospecting",), forbidden=(NO_INMAIL, Forbidden(
          "never try to email the opted-out prospect", ("sequence_add_prospects",),
          args=".prospectIds | index($opted_out) != null")),
      mechanisms=("enrichment", "opt_out")),
    T("no-show-winback", "re-engagement", "Put a no-show back into outreach",
      "The no-show is recorded, the contact is Attempted to contact, and they are in Win-back (SQL Outbound, which "
      "they already finished, does not take them twice).",
      "{contact_name} ({contact_email}) did not turn up to their 30 Minute Demo. Mark the no-show in the scheduler, "
      "set their CRM lead status to Attempted to contact, and put them back into outreach from {owner}'s mailbox "
      "({owner_email}): \"SQL Outbound\" if it will take them, otherwise \"Win-back\".",
      ("scheduler", "crm", "sequencer"), fm.no_show_winback,
      (Step("scheduler", "mark the no-show", ("meetings-list_events", "meetings-list_event_invitees",
                                              "invitee_no_shows-create"),
            (A("no-show recorded", ".scheduler.invitees[] | select(.uri == $invitee) | .no_show != null"),)),
       Step("crm", "update the status", ("hubspot-search-objects", "hubspot-batch-update-objects"),
            (A("attempted to contact", 'crm("contacts"; $contact_id) | .properties.hs_lead_status', "equals",
               "ATTEMPTED_TO_CONTACT"),)),
       Step("sequencer", "back into outreach", ("prospect_search", "sequence_state_search",
                                                "sequence_add_prospects"),
            (A("in Win-back from the mailbox", enrolled("[$prospect_id]")),
             A("SQL Outbound not repeated", "states($prospect_id; $sql_id) | length", "equals", 1)))),
      (Change("scheduler.no_shows", most=1), Change("scheduler.invitees", ("update",), P("invitee_id"), ("no_show",)),
       Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status",)),
       Change("sequencer.sequence_states", ("create",), most=1)),
      (call("invitee_no_shows-create", invitee=P("invitee")),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("contact_id"), "properties": {"hs_lead_status": "ATTEMPTED_TO_CONTACT"}}]),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[P("prospect_id")],
            mailboxId=P("mailbox"))),
      forbidden=(NO_BOOKING,), mechanisms=("no_show_after_start", "no_reenrolment")),
    T("booked-demo-opportunity", "pipeline", "Turn a booked demo into a priced opportunity",
      "Outreach is finished, the demo is logged, and a deal with the agreed amount is open at Appointment "
      "Scheduled on the contact and company; the contact is an opportunity.",
      "{contact_name} ({contact_email}) booked a 30 Minute Demo. Finish their SQL Outbound state (do not delete it); "
      "in the CRM log the meeting on their contact with the booking's times, open a deal \"{deal_name}\" in the "
      "Sales Pipeline at Appointment Scheduled with the amount {requester} quoted (ask), associated to the contact "
      "and to {company}, and make the contact an opportunity. The scheduler is read only for this.",
      ("scheduler", "sequencer", "crm"), fm.booked_opportunity,
      (Step("scheduler", "read the booking", ("meetings-list_events",),
            (A("booking untouched", "events_of($contact_email) | map(.status)", "equals", ["active"]),)),
       Step("sequencer", "finish outreach", ("prospect_search", "sequence_state_search", "sequence_state_finish"),
            (A("finished", states_are("[$state_id]", "finished")),)),
       Step("crm", "log and open the deal", ("hubspot-create-engagement", "hubspot-batch-create-objects",
                                             "hubspot-batch-update-objects"),
            (A("meeting logged with the booking's times", 'engagements("meetings"; $contact_id) | map(select('
               ".properties.hs_meeting_start_time == $start and .properties.hs_meeting_end_time == $end)) | length",
               "equals", 1),
             A("deal at Appointment Scheduled with the amount", "[deal_named($deal_name) | [.properties.pipeline, "
               ".properties.dealstage, (.properties.amount | tonumber)]] == [[\"default\", \"appointmentscheduled\", "
               "($amount | tonumber)]]"),
             A("on the contact", 'deal_linked($deal_name; "contacts"; 3)', "contains", P("contact_id")),
             A("on the company", 'deal_linked($deal_name; "companies"; 5) + deal_linked($deal_name; "companies"; 341)',
               "contains", P("company_id")),
             A("an opportunity", 'crm("contacts"; $contact_id) | .properties.lifecyclestage', "equals",
               "opportunity")))),
      (Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt")),
       Change("crm.meetings", most=1), Change("crm.deals", ("create",), most=1),
       Change("crm.associations", ("create",)),
       Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage",))),
      (call("ask_requester", question="What amount did you quote them?"),
       call("sequence_state_finish", id=P("state_id")),
       call("hubspot-create-engagement", type="MEETING", ownerId=P("owner_int"),
            associations={"contactIds": [P("contact_id_int")]},
            metadata={"timestamp": P("start"), "title": "30 Minute Demo", "startTime": P("start"),
                      "endTime": P("end")}),
       call("hubspot-batch-create-objects", objectType="deals", inputs=[
           {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "appointmentscheduled",
                           "amount": P("amount"), "hubspot_owner_id": P("owner_id")},
            "associations": [{"to": {"id": P("contact_id")}, "types": [{"associationTypeId": 3}]},
                             {"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("contact_id"), "properties": {"lifecyclestage": "opportunity"}}])),
      read_only=("scheduler",), facts=(FactSpec("amount", ("amount", "quote", "price", "figure", "how much"),
                                                "amount"),),
      requester_role="the account executive", mechanisms=("finish_not_delete", "hidden_fact", "association_types")),
    T("not-interested-close", "pipeline", "Close out a prospect who declined",
      "The declined prospect's call is canceled with a reason, their outreach is finished, the deal is Closed Lost "
      "and the contact is Unqualified.",
      "{contact_name} ({contact_email}) replied to Exec Intro. Read the reply and act on it: cancel their upcoming "
      "Discovery Call with a reason, finish their sequence state (do not delete it), move the \"{deal_name}\" deal "
      "to Closed Lost and set their lead status to Unqualified.",
      ("sequencer", "scheduler", "crm"), fm.not_interested,
      (Step("sequencer", "read the reply and finish outreach", ("prospect_search", "emails_search",
                                                                "sequence_state_finish"),
            (A("finished", states_are("[$state_id]", "finished")),)),
       Step("scheduler", "cancel the call", ("meetings-list_events", "meetings-cancel_event"),
            (A("canceled with a reason", ".scheduler.scheduled_events[] | select(.uri | endswith($event_id)) | "
               ".status == \"canceled\" and (.cancellation.reason | length) > 0"),)),
       Step("crm", "close it out", ("hubspot-search-objects", "hubspot-batch-update-objects"),
            (A("deal closed lost", f"{DEAL} | .properties.dealstage", "equals", "closedlost"),
             A("unqualified", 'crm("contacts"; $contact_id) | .properties.hs_lead_status', "equals",
               "UNQUALIFIED")))),
      (Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt")),
       Change("scheduler.scheduled_events", ("update",), P("event_id"), ("status", "cancellation",
                                                                          "invitees_counter")),
       Change("scheduler.invitees", ("update",), P("invitee_id"), ("status",)),
       Change("crm.deals", ("update",), P("deal_id"), ("dealstage",)),
       Change("crm.contacts", ("update",), P("contact_id"), ("hs_lead_status",))),
      (call("sequence_state_finish", id=P("state_id")),
       call("meetings-cancel_event", uuid=P("event_id"), reason="The prospect is not interested."),
       call("hubspot-batch-update-objects", objectType="deals",
            inputs=[{"id": P("deal_id"), "properties": {"dealstage": "closedlost"}}]),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("contact_id"), "properties": {"hs_lead_status": "UNQUALIFIED"}}])),
      forbidden=(NO_BOOKING,), mechanisms=("read_replies", "cancel_reason", "finish_not_delete")),
    T("mql-demo-fasttrack", "inbound", "Fast-track an MQL who asked for a demo",
      "The MQL has the earliest demo in their time zone, is an SQL in progress, and is out of the webinar "
      "nurture (finished, not deleted).",
      "{contact_name} ({contact_email}) from the webinar asked for a demo. Book the earliest 30 Minute Demo on or "
      "after {after} ({requester} knows their time zone: ask), make them a sales-qualified lead with lead status In "
      "Progress, and finish their Webinar Follow-up sequence state.",
      ("crm", "sequencer", "scheduler"), fm.mql_fasttrack,
      (Step("scheduler", "book the demo", ("ask_requester", "event_types-list_event_type_available_times",
                                           "meetings-create_invitee"), (active_at("$contact_email"),)),
       Step("crm", "qualify", ("hubspot-search-objects", "hubspot-batch-update-objects"),
            (A("an SQL in progress", 'crm("contacts"; $contact_id) | .properties | [.lifecyclestage, '
               ".hs_lead_status]", "equals", ["salesqualifiedlead", "IN_PROGRESS"]),)),
       Step("sequencer", "stop the nurture", ("prospect_search", "sequence_state_search", "sequence_state_finish"),
            (A("finished", states_are("[$state_id]", "finished")),))),
      (Change("scheduler.scheduled_events", ("create",), most=1), Change("scheduler.invitees", ("create",), most=1),
       Change("crm.contacts", ("update",), P("contact_id"), ("lifecyclestage", "hs_lead_status")),
       Change("sequencer.sequence_states", ("update",), P("state_id"), ("state", "finishedAt"))),
      (call("ask_requester", question="Which time zone are they in?"),
       book(P("contact_name"), P("contact_email")),
       call("hubspot-batch-update-objects", objectType="contacts", inputs=[
           {"id": P("contact_id"), "properties": {"lifecyclestage": "salesqualifiedlead",
                                                  "hs_lead_status": "IN_PROGRESS"}}]),
       call("sequence_state_finish", id=P("state_id"))),
      facts=(TZ,), requester_role="the account executive",
      mechanisms=("open_slots", "hidden_fact", "finish_not_delete")),
    T("inbound-seniority-route", "inbound", "Route an inbound lead by seniority",
      "The contact has their profile title and is an SQL, and is booked into the meeting their seniority calls "
      "for (Director and above: the deep dive; others: the demo).",
      "{contact_name} ({contact_email}) at {company} filled in the contact form without a job title. Take their "
      "title from Sales Navigator and make them a sales-qualified lead. If they are Director-level or more senior, "
      "book them the earliest Technical Deep Dive on or after {after}; otherwise the earliest 30 Minute Demo on or "
      "after {after} (time zone {tz}).",
      ("prospecting", "crm", "scheduler"), fm.inbound_seniority,
      (Step("prospecting", "read the profile", ("sales_search_leads", "get_sales_profile"), (NO_INMAIL_SENT,)),
       Step("crm", "title and qualify", ("hubspot-batch-update-objects",),
            (A("title from the profile and SQL", 'crm("contacts"; $contact_id) | .properties | [.jobtitle, '
               ".lifecyclestage]", "equals", [P("title"), "salesqualifiedlead"]),)),
       Step("scheduler", "book the meeting their seniority calls for", ("event_types-list_event_types",
                                                                        "event_types-list_event_type_available_times",
                                                                        "meetings-create_invitee"),
            (active_at("$contact_email"),
             A("one booking only", "events_of($contact_email) | length", "equals", 1)))),
      (Change("crm.contacts", ("update",), P("contact_id"), ("jobtitle", "lifecyclestage")),
       Change("scheduler.scheduled_events", ("create",), most=1), Change("scheduler.invitees", ("create",), most=1)),
      (call("sales_search_leads", keywords=F("{first} {last}"), company=[P("company")]),
       call("hubspot-batch-update-objects", objectType="contacts", inputs=[
           {"id": P("contact_id"), "properties": {"jobtitle": OUT(0, ".elements[0].title"),
                                                  "lifecyclestage": "salesqualifiedlead"}}]),
       book(P("contact_name"), P("contact_email"))),
      read_only=("prospecting",), forbidden=(NO_INMAIL,), mechanisms=("enrichment", "seniority_routing",
                                                                      "open_slots")),
    T("exec-inmail-demo-link", "outbound", "Invite an executive to pick a demo time",
      "The executive got a free InMail carrying a single-use demo link, and their CRM contact has a note with the "
      "link.",
      "Invite {contact_name}, an executive at {company}, to pick a time for a 30 Minute Demo: create a single-use "
      "scheduling link for it, send it to them by InMail on Sales Navigator (they have an Open Profile, so it should "
      "cost nothing), and log a note on their CRM contact with the link.",
      ("prospecting", "crm", "scheduler"), fm.exec_link,
      (Step("scheduler", "create the link", ("event_types-list_event_types",
                                             "scheduling_links-create_single_use_scheduling_link"),
            (A("one demo link", "[.scheduler.scheduling_links[] | select(.owner == $event_type)] | length", "equals",
               1),)),
       Step("prospecting", "InMail it for free", ("sales_search_leads", "get_sales_profile", "send_inmail"),
            (A("the InMail carries the link", "[.scheduler.scheduling_links[] | .booking_url] as $urls | "
               "[.prospecting.inmails[] | select(.lead_id == $lead_id) | .body] | length == 1 and (.[0] as $b | "
               "$urls | any(. as $u | $b | contains($u)))"),
             A("no credit spent", ".prospecting.credits[0].available", "equals", P("credits")))),
       Step("crm", "note the link on the contact", ("hubspot-create-engagement",),
            (A("a note with the link", "[.scheduler.scheduling_links[] | .booking_url] as $urls | "
               'engagements("notes"; $contact_id) | map(.properties.hs_note_body) | join(" ") as $b | $urls | '
               "any(. as $u | $b | contains($u))"),))),
      (Change("scheduler.scheduling_links", ("create",), most=1), Change("prospecting.inmails", ("create",), most=1),
       Change("crm.notes", most=1), Change("crm.associations")),
      (call("scheduling_links-create_single_use_scheduling_link", owner=P("event_type")),
       call("send_inmail", recipient_urn=P("urn"), subject="30 minutes on your roadmap?",
            body=OUT(0, '"Pick a time that suits you: " + .resource.booking_url')),
       call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
            associations={"contactIds": [P("contact_id_int")]},
            metadata={"timestamp": P("today"),
                      "body": OUT(0, '"Demo link sent by InMail: " + .resource.booking_url')})),
      forbidden=(NO_BOOKING,), mechanisms=("single_use_link", "inmail_open_profile")),
    T("new-hire-link-outreach", "outbound", "Welcome a new hire: sequence and a call link",
      "The new hire is a prospect on the account in Exec Intro and got a free InMail carrying a single-use "
      "discovery-call link.",
      "{name} just joined {company} as {title} and is a 1st-degree connection. Create them as a prospect on the "
      "{company} account (email firstname.lastname@{domain}, lower case, with their title), start them on \"Exec "
      "Intro\" from {owner}'s mailbox ({owner_email}), and send them a single-use Discovery Call link by InMail.",
      ("prospecting", "sequencer", "scheduler"), fm.new_hire_link,
      (Step("prospecting", "find the profile", ("sales_search_leads",), (
          A("no credit spent", ".prospecting.credits[0].available", "equals", P("credits")),)),
       Step("sequencer", "create and enrol the prospect", ("prospect_create", "sequence_add_prospects"),
            (A("on the account in Exec Intro from the mailbox", "[$email] as $emails | "
               + EACH_ON_ACCOUNT_IN_SEQUENCE.expr),)),
       Step("scheduler", "create the link and send it", ("scheduling_links-create_single_use_scheduling_link",),
            (A("the InMail carries a discovery link", "[.scheduler.scheduling_links[] | select(.owner == "
               "$event_type) | .booking_url] as $urls | [.prospecting.inmails[] | select(.lead_id == $lead_id) | "
               ".body] | length == 1 and (.[0] as $b | $urls | any(. as $u | $b | contains($u)))"),))),
      (Change("sequencer.prospects", ("create",), most=1), Change("sequencer.sequence_states", ("create",), most=1),
       Change("scheduler.scheduling_links", ("create",), most=1), Change("prospecting.inmails", ("create",), most=1)),
      (call("prospect_create", attrs={"emails": [P("email")], "firstName": P("first"), "lastName": P("last"),
                                      "title": P("title")}, accountId=P("account_id"), ownerId=P("user")),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(0, ".data.id")],
            mailboxId=P("mailbox")),
       call("scheduling_links-create_single_use_scheduling_link", owner=P("event_type")),
       call("send_inmail", recipient_urn=P("urn"), subject="Welcome to the new role",
            body=OUT(2, '"Congratulations on the move! If useful, grab 30 minutes here: " + .resource.booking_url'))),
      forbidden=(NO_BOOKING,), mechanisms=("changed_jobs", "single_use_link", "inmail_free_first_degree")),
)

CATALOGUE.add(
    T("handoff-locked-rep", "inbound", "Hand off an SQL while its rep is on leave",
      "The SQL has the earliest discovery call, is a prospect on the account in SQL Outbound from the backup rep's "
      "mailbox (the owner's user is locked), and the backup owns the contact in the CRM.",
      "{contact_name} ({contact_email}) is a new SQL at {company}. Book them the earliest Discovery Call on or after "
      "{after} (time zone {tz}), create them as a prospect on the {company} account and start \"SQL Outbound\" from "
      "their CRM owner's mailbox. {owner} is on leave: if the sequencer will not send from {owner}'s mailbox, use "
      "{backup}'s ({backup_email}) and make {backup} the contact's CRM owner.",
      ("crm", "sequencer", "scheduler"), fm.locked_rep_handoff,
      (Step("scheduler", "book the call", ("event_types-list_event_type_available_times", "meetings-create_invitee"),
            (active_at("$contact_email"),)),
       Step("sequencer", "sequence from a mailbox that can send", ("account_search", "prospect_create",
                                                                   "mailbox_search", "sequence_add_prospects"),
            (A("on the account in SQL Outbound from the backup's mailbox", "[$contact_email] as $emails | "
               + EACH_ON_ACCOUNT_IN_SEQUENCE.expr),)),
       Step("crm", "reassign the owner", ("hubspot-list-owners", "hubspot-batch-update-objects"),
            (A("owned by the backup", 'crm("contacts"; $contact_id) | .properties.hubspot_owner_id', "equals",
               P("backup_id")),))),
      (Change("scheduler.scheduled_events", ("create",), most=1), Change("scheduler.invitees", ("create",), most=1),
       Change("sequencer.prospects", ("create",), most=1), Change("sequencer.sequence_states", ("create",), most=1),
       Change("crm.contacts", ("update",), P("contact_id"), ("hubspot_owner_id",))),
      (book(P("contact_name"), P("contact_email")),
       call("prospect_create", attrs={"emails": [P("contact_email")], "firstName": P("first"), "lastName": P("last")},
            accountId=P("account_id"), ownerId=P("user")),
       call("sequence_add_prospects", sequenceId=P("sequence_id"), prospectIds=[OUT(1, ".data.id")],
            mailboxId=P("mailbox")),
       call("hubspot-batch-update-objects", objectType="contacts",
            inputs=[{"id": P("contact_id"), "properties": {"hubspot_owner_id": P("backup_id")}}])),
      mechanisms=("user_locked", "open_slots", "owner_ids")),
)

# --- more: one and two apps -------------------------------------------------------------------------------------
CATALOGUE.add(
    T("crm-attempted-call-tasks", "outbound", "Queue call tasks for unanswered contacts",
      "Every contact at the company with lead status Attempted to contact has one CALL task due that day; nobody "
      "else has one.",
      "Nobody at {company} with lead status Attempted to contact has answered our emails. Create a CALL task "
      "\"Call to follow up\" due {due} on each of those contacts (one task per contact), and on nobody else.",
      ("crm",), fm.attempted_call_tasks,
      (Step("crm", "find them and queue the calls", ("hubspot-search-objects", "hubspot-create-engagement"),
            (A("one call task each, due that day", 'every($targets; . as $c | $doc | engagements("tasks"; $c) | '
               'map(select(.properties | .hs_task_type == "CALL" and (.hs_timestamp | startswith($due)))) | '
               "length == 1)"),
             A("no other task", "(.crm.tasks | length) == ($targets | length)"))),),
      (Change("crm.tasks", ("create",), most=P("targets")), Change("crm.associations", ("create",))),
      tuple(call("hubspot-create-engagement", type="TASK", ownerId=P("owner_int"),
                 associations={"contactIds": [P(f"target_ints.{i}")]},
                 metadata={"timestamp": P("due_time"), "subject": "Call to follow up", "taskType": "CALL"})
            for i in range(2)),
      mechanisms=("filter_and", "engagement_association")),
    T("sched-sick-day", "scheduling", "Clear the host's calendar for a sick day",
      "Every active booking on the sick day is canceled with a reason; bookings on other days are untouched.",
      "Our host is out sick on {day}. Cancel every booking that day (say why in the cancellation); leave bookings "
      "on other days alone and do not book anything new.",
      ("scheduler",), fm.sick_day,
      (Step("scheduler", "cancel that day's bookings", ("meetings-list_events", "meetings-cancel_event"),
            (A("that day's bookings canceled with a reason", "every($victims; . as $v | $doc | "
               ".scheduler.scheduled_events[] | select(.uri | endswith($v)) | .status == \"canceled\" and "
               "(.cancellation.reason | length) > 0)"),
             A("the other day's untouched", "every($kept; . as $v | $doc | .scheduler.scheduled_events[] | "
               "select(.uri | endswith($v)) | .status == \"active\")"))),),
      (Change("scheduler.scheduled_events", ("update",), P("victims"), ("status", "cancellation",
                                                                        "invitees_counter")),
       Change("scheduler.invitees", ("update",), P("victim_invitees"), ("status",))),
      tuple(call("meetings-cancel_event", uuid=P(f"victims.{i}"), reason="The host is out sick; we will rebook.")
            for i in (0, 1)),
      forbidden=(NO_BOOKING,), mechanisms=("cancel_reason", "date_range")),
    T("seq-prospects-no-upsert", "inbound", "Add event sign-ups as prospects without duplicates",
      "The three sign-ups are one prospect each on the account (the existing one reused) and in SQL Outbound.",
      "Three people from {company} signed up at our booth: {names}. Add each as a prospect on the {company} "
      "account and start all three on \"SQL Outbound\" from {owner}'s mailbox ({owner_email}). The sequencer has no "
      "upsert: check for existing prospects first.",
      ("sequencer",), fm.prospects_no_upsert,
      (Step("sequencer", "reuse or create, then enrol", ("prospect_search", "prospect_create",
                                                         "sequence_add_prospects"),
            (A("the existing prospect reused", "prospect($people[1].email) | .id", "equals", P("existing")),
             EACH_ON_ACCOUNT_IN_SEQUENCE)),),
      (Change("sequencer.prospects", ("create",), most=2),  # the sign-ups less the one already a prospect
       Change("sequencer.sequence_states", ("create",), most=P("people"))),
      (*(call("prospect_create", attrs={"emails": [P(f"people.{i}.email")], "firstName": P(f"people.{i}.first"),
                                        "lastName": P(f"people.{i}.last")},
              accountId=P("account_id"), ownerId=P("user")) for i in (0, 2)),
       call("sequence_add_prospects", sequenceId=P("sequence_id"),
            prospectIds=[OUT(0, ".data.id"), P("existing"), OUT(1, ".data.id")], mailboxId=P("mailbox"))),
      mechanisms=("no_upsert", "unique_prospect_email")),
    T("bounced-cleanup", "hygiene", "Clean up bounced addresses",
      "Prospects whose emails bounced are out of the sequence (finished) with a note on their CRM contact; the "
      "others run on.",
      "Some SQL Outbound emails to the {company} account bounced. For each prospect there whose email bounced, "
      "finish their sequence state (do not delete it) and log a note on their CRM contact saying the email "
      "bounced. Leave everyone else in the sequence.",
      ("sequencer", "crm"), fm.bounced_cleanup,
      (Step("sequencer", "find the bounces and finish those states", ("prospect_search", "emails_search",
                                                                      "sequence_state_finish"),
            (A("bounced states finished", states_are("$bounced_states", "finished")),
             A("the others still active", states_are("$fine_states", "active")))),
       Step("crm", "note the bounce", ("hubspot-search-objects", "hubspot-create-engagement"),
            (A("one bounce note on each", 'every($bounced_contacts; . as $c | $doc | engagements("notes"; $c) | '
               'map(select(.properties.hs_note_body | test("(?i)bounce"))) | length == 1)'),))),
      (Change("sequencer.sequence_states", ("update",), P("bounced_keys"), ("state", "finishedAt")),
       Change("crm.notes", ("create",), most=P("bounced_contacts")), Change("crm.associations", ("create",))),
      (*(call("sequence_state_finish", id=P(f"bounced_states.{i}")) for i in (0, 1)),
       call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
            associations={"contactIds": P("bounced_ints")},
            metadata={"timestamp": P("today"), "body": "Email bounced: address needs checking."})),
      mechanisms=("read_bounces", "finish_not_delete")),
)
