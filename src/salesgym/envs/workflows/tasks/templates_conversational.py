"""Conversational templates: someone replies or writes in mid-episode, and a simulated person tells what they know
only when asked for it in words the rules recognise (``simulator.py``), with their fixtures.

- ``sched-reschedule-request``: after the booking, the invitee writes to move it; they name the day they want
  only once the agent proposes a day or time (a precondition on the reply's wording);
- ``inmail-reply-referral``: the prospect answers the InMail that they are not the right person, and names who is
  when asked; the agent writes to that person and notes the referral in the CRM (three message rubrics);
- ``crm-budget-colleague``: the account executive tells the customer's budget only when asked about the budget
  by name (a question about "the amount" gets "which figure?"), and the decision date only after the budget.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesgym.core.rng import Dice
from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso
from salesgym.envs.workflows.population import Builder, add_contact, add_lead
from salesgym.envs.workflows.tasks import fixtures as fx
from salesgym.envs.workflows.tasks.model import (
    OUT,
    A,
    Change,
    F,
    FactSpec,
    Needs,
    P,
    Reply,
    Rubric,
    Step,
    Template,
    Turn,
)

NO_DISCOUNT = ("a discount", r"\bdiscount|\d+\s*%\s*off|\bfree (?:month|trial|upgrade)s?\b")
NO_GUARANTEE = ("a guarantee", r"\bguarantee[sd]?\b|\bpromise (?:you|that)\b")
NO_PRICE = ("a price", r"\$\s?\d|\bpric(?:e|es|ed|ing)\b")
PROPOSES_A_TIME = r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b|\b(?:mon|tues|wednes|thurs|fri)day\b|\d{4}-\d{2}-\d{2}"


def call(tool: str, **args: object) -> dict[str, object]:
    return {"tool": tool, "args": args}


def active(email: str) -> str:
    return f'events_of({email}) | map(select(.status == "active"))'


# --- fixtures ---------------------------------------------------------------------------------------------------
def reschedule_request(b: Builder, rng: Dice) -> dict[str, Any]:
    first, last = b.person(rng)
    day1 = fx.business_day(b, rng, 3, 5)
    day2 = day1 + timedelta(days=rng.randint(2, 4))
    while day2.weekday() >= 5:
        day2 += timedelta(days=1)
    return {"invitee_name": f"{first} {last}", "invitee_email": f"{first.lower()}.{last.lower()}@example.com",
            "tz": rng.choice(fx.TIMEZONES), "after": iso(day1)[:10], "start": fx.earliest(b, "demo", day1),
            "new_day": f"{day2:%A} {day2.day} {day2:%B}",  # in words: no tool output spells a day this way
            "start2": fx.earliest(b, "demo", day2, day2 + timedelta(days=1)),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}  # fmt: skip


def inmail_referral(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    name = comp["properties"]["name"]
    contact_key, contact = add_contact(b, rng, comp, ckey, lifecycle="lead", lead_status="NEW")
    p = contact["properties"]
    lead = add_lead(b, rng, (p["firstname"], p["lastname"]), name, function="Sales", level=2, open_profile=True)
    referral = add_lead(b, rng, b.person(rng), name, function="Operations", level=3, open_profile=True)
    return {"company": name, "contact_id": contact_key, "owner_int": int(p["hubspot_owner_id"]),
            "lead_id": lead["lead_id"], "lead_first": lead["firstName"],
            "lead_name": f"{lead['firstName']} {lead['lastName']}", "referral_id": referral["lead_id"],
            "referral_first": referral["firstName"],
            "referral_name": f"{referral['firstName']} {referral['lastName']}",
            "product": rng.choice(("Pipeline Radar", "Forecast Studio", "Deal Pulse"))}  # fmt: skip


def budget_colleague(b: Builder, rng: Dice) -> dict[str, Any]:
    ckey, comp = fx.company(b, rng)
    name = comp["properties"]["name"]
    owner_id = comp["properties"]["hubspot_owner_id"]
    decision = fx.business_day(b, rng, 14, 30)
    return {"company": name, "company_id": ckey, "deal_name": f"{name} - proposal", "budget": fx.amount(rng),
            "decision_date": iso(decision)[:10], "owner_id": owner_id, "owner_int": int(owner_id)}  # fmt: skip


# --- templates --------------------------------------------------------------------------------------------------
TEMPLATES: tuple[Template, ...] = (
    Template(
        "sched-reschedule-request", "scheduling", "Book a demo, then move it when asked",
        "The invitee's first booking (at the earliest slot) is canceled with a reason, and they have the earliest "
        "demo on the day they asked for.",
        "Book {invitee_name} <{invitee_email}> (time zone {tz}) into the earliest available 30 Minute Demo on or "
        "after {after}. Keep an eye on your inbox: if they ask to move it, cancel that booking (say why) and book "
        "them the earliest 30 Minute Demo on the day they want.",
        ("scheduler",), reschedule_request,
        (Step("scheduler", "book the earliest demo", ("event_types-list_event_type_available_times",
                                                      "meetings-create_invitee"),
              (A("the first booking was the earliest slot", 'events_of($invitee_email) | map(select(.status == '
                 '"canceled")) | map(.start_time)', "equals", [P("start")]),)),
         Step("scheduler", "move it to the day they want", ("reply_message", "meetings-cancel_event",
                                                            "meetings-create_invitee"),
              (A("canceled with a reason", 'events_of($invitee_email) | map(select(.status == "canceled")) | '
                 ".[0].cancellation.reason | length", "gt", 0),
               A("one active booking", f"{active('$invitee_email')} | length", "equals", 1),
               A("the earliest slot on the new day", f"{active('$invitee_email')} | .[0].start_time", "equals",
                 P("start2")),
               A("of the demo event type", f"{active('$invitee_email')} | .[0].event_type", "equals",
                 P("event_type")),
               A("invitee time zone", f"{active('$invitee_email')} | .[0].invitee.timezone", "equals", P("tz"))))),
        (Change("scheduler.scheduled_events", ("create", "update"), fields=("status", "cancellation",
                                                                            "invitees_counter")),
         Change("scheduler.invitees", ("create", "update"))),
        (call("meetings-create_invitee", event_type=P("event_type"), start_time=P("start"),
              invitee={"name": P("invitee_name"), "email": P("invitee_email"), "timezone": P("tz")}),
         call("reply_message", message_id="MSG1", text="No problem! Would Monday at 10:00 work, or which day "
              "suits you better?"),
         call("meetings-cancel_event", uuid=OUT(0, '.resource.scheduled_event.uri | split("/") | last'),
              reason="The invitee asked to move the demo to another day."),
         call("meetings-create_invitee", event_type=P("event_type"), start_time=P("start2"),
              invitee={"name": P("invitee_name"), "email": P("invitee_email"), "timezone": P("tz")})),
        forbidden=(),
        facts=(FactSpec("new_day", ("day", "when", "date", "suit", "work for you", "available", "time"), "new_day",
                        requires=(Needs.says(PROPOSES_A_TIME),),
                        hint="Could you propose a day and time? Then I'll tell you what works for me.",
                        holder="invitee", uses=".start_time? == $start2"),),
        turns=(Turn("move-request", ("meetings-create_invitee",), "{invitee_name}",
                    "Thanks for booking the demo. Something came up and I can't make that time after all; could "
                    "we move it to another day?", sender_key="invitee",
                    when=f"{active('$invitee_email')} | length == 1"),),
        rubrics=(Rubric("the reply to the invitee", ".text", 2, forbidden_claims=(NO_DISCOUNT, NO_GUARANTEE),
                        max_len=600, tools=("reply_message",)),),
        requester_role="the account executive", mechanisms=("open_slots", "cancel_reason", "conversation"),
    ),
    Template(
        "inmail-reply-referral", "outbound", "Follow an InMail reply to the right person",
        "The lead got an InMail about the product; their referral got one naming who referred them; the CRM "
        "contact has a note naming the referral.",
        "Send {lead_name} at {company} (Sales Navigator lead {lead_id}) an InMail introducing our revenue "
        "analytics product {product}: name {company} and {product}, keep it under 1,200 characters, and say "
        "nothing about price or discounts. If they reply, follow up as they suggest (by InMail, saying who "
        "referred you), and log a note on their CRM contact naming whoever they sent you to.",
        ("prospecting", "crm"), inmail_referral,
        (Step("prospecting", "write to the lead", ("send_inmail",),
              (A("one InMail to the lead", "[.prospecting.inmails[] | select(.lead_id == $lead_id)] | length",
                 "equals", 1),)),
         Step("prospecting", "follow the referral", ("reply_message", "sales_search_leads", "send_inmail"),
              (A("one InMail to the referral", "[.prospecting.inmails[] | select(.lead_id == $referral_id)] | "
                 "length", "equals", 1),
               A("nobody else written to", ".prospecting.inmails | length", "equals", 2))),
         Step("crm", "note the referral", ("hubspot-search-objects", "hubspot-create-engagement"),
              (A("a note on the contact", 'engagements("notes"; $contact_id) | length', "gte", 1),))),
        (Change("prospecting.inmails", most=2), Change("prospecting.credits", ("update",), None, ("available",)),
         Change("crm.notes", most=1), Change("crm.associations")),
        (call("send_inmail", recipient_urn=F("urn:li:fs_salesProfile:{lead_id}"), subject=F("{product} for {company}"),
              body=F("Hi {lead_first}, our revenue analytics product {product} helps teams like {company} see their "
                     "pipeline clearly. Would a short call next week be useful?")),
         call("reply_message", message_id="MSG1", text="Thanks for letting me know! Who is the right person? "
              "Could you share their name?"),
         call("sales_search_leads", keywords=P("referral_name"), company=[P("company")]),
         call("send_inmail", recipient_urn=F("urn:li:fs_salesProfile:{referral_id}"), subject=F("{product} for "
              "{company}"), body=F("Hi {referral_first}, {lead_name} suggested I reach out: our revenue analytics "
                                   "product {product} could help {company}. Open to a short call?")),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"contactIds": [P("contact_id_int")]},
              metadata={"timestamp": P("today"), "body": F("Sent {lead_name} an InMail; they referred us to "
                                                           "{referral_name}, who got an InMail too.")})),
        facts=(FactSpec("referral", ("who", "name", "right person", "introduce", "someone else"), "referral_name",
                        holder="prospect", uses='.recipient_urn? == "urn:li:fs_salesProfile:" + $referral_id'),),
        turns=(Turn("referral", ("send_inmail",), "{lead_name}",
                    "Thanks for the note. I'm not the right person for this at {company}; someone on our revenue "
                    "operations side is. Happy to pass on their name if you ask.", sender_key="prospect",
                    when="[.prospecting.inmails[] | select(.lead_id == $lead_id)] | length == 1"),),
        # the reply is how the referral's name is learnt: a follow-up without it used a name nobody told
        rubrics=(Rubric("the reply to the lead", ".text", 2, forbidden_claims=(NO_PRICE, NO_DISCOUNT, NO_GUARANTEE),
                        max_len=600, tools=("reply_message",)),
                 Rubric("the InMail", ".prospecting.inmails[] | select(.lead_id == $lead_id) | .body", 1,
                        must_mention=("analytics",), facts=(("company", P("company")), ("product", P("product"))),
                        forbidden_claims=(NO_PRICE, NO_DISCOUNT, NO_GUARANTEE), max_len=1200,
                        criteria="a short, polite introduction that asks for a conversation"),
                 Rubric("the InMail to the referral", ".prospecting.inmails[] | select(.lead_id == $referral_id) | "
                        ".body", 2, facts=(("name of who referred us", P("lead_name")), ("product", P("product"))),
                        forbidden_claims=(NO_PRICE, NO_DISCOUNT, NO_GUARANTEE), max_len=1200),
                 Rubric("the CRM note", 'engagements("notes"; $contact_id)[] | .properties.hs_note_body', 3,
                        facts=(("referral's name", P("referral_name")),), max_len=1000)),
        requester_role="the sales director", mechanisms=("conversation", "inmail_credits", "message_rubric"),
    ),
    Template(
        "crm-budget-colleague", "pipeline", "Open a deal at the customer's budget",
        "A new-business deal at Qualified To Buy on the company carries the customer's budget, with a note "
        "recording the budget and the decision date.",
        "{company} wants a proposal. Open a new-business deal named \"{deal_name}\" in the Sales Pipeline at "
        "Qualified To Buy, associated to {company}, with its amount set to the customer's budget ({requester} "
        "spoke to them: ask), and log a note on the deal recording the budget and when they will decide.",
        ("crm",), budget_colleague,
        (Step("crm", "open the deal at the budget", ("hubspot-batch-create-objects",),
              (A("one deal", "[deal_named($deal_name)] | length", "equals", 1),
               A("Sales Pipeline, Qualified To Buy", "deal_named($deal_name) | [.properties.pipeline, "
                 ".properties.dealstage]", "equals", ["default", "qualifiedtobuy"]),
               A("the budget as amount", "deal_named($deal_name) | (.properties.amount | tonumber) == ($budget | "
                 "tonumber)"),
               A("on the company", 'deal_linked($deal_name; "companies"; 5)', "contains", P("company_id")))),
         Step("crm", "note the budget and the decision date", ("hubspot-create-engagement",),
              (A("a note on the deal", '. as $doc | [deal_named($deal_name) | .id] | map(. as $d | $doc | '
                 'linked("deals"; $d; "notes"; 213)[]) | length', "gte", 1),))),
        (Change("crm.deals", most=1), Change("crm.associations"), Change("crm.notes", most=1)),
        (call("ask_requester", question="What budget did they give you?"),
         call("ask_requester", question="And when will they make a decision?"),
         call("hubspot-batch-create-objects", objectType="deals", inputs=[
             {"properties": {"dealname": P("deal_name"), "pipeline": "default", "dealstage": "qualifiedtobuy",
                             "amount": P("budget"), "hubspot_owner_id": P("owner_id")},
              "associations": [{"to": {"id": P("company_id")}, "types": [{"associationTypeId": 5}]}]}]),
         call("hubspot-create-engagement", type="NOTE", ownerId=P("owner_int"),
              associations={"dealIds": [OUT(2, ".results[0].id | tonumber")]},
              metadata={"timestamp": P("today"), "body": F("Budget ${budget}; they decide by {decision_date}.")})),
        facts=(FactSpec("budget", ("budget",), "budget"),
               FactSpec("decision_date", ("decision", "decide", "deadline", "timeline"), "decision_date",
                        requires=(Needs.told("budget"),), hint="Let's settle the budget first; ask me about it.")),
        replies=(Reply(("amount", "how much", "figure", "price", "value", "deal size"),
                       "Which figure do you mean? I don't set prices; I know what they told me about their budget."),),
        rubrics=(Rubric("the deal note", '. as $doc | deal_named($deal_name) | .id as $d | $doc | linked("deals"; '
                        '$d; "notes"; 213)[] as $n | $doc | crm("notes"; $n) | .properties.hs_note_body', 2,
                        must_mention=("budget",), facts=(("budget", P("budget")), ("decision date",
                                                                                   P("decision_date"))),
                        forbidden_claims=(NO_DISCOUNT, NO_GUARANTEE), max_len=1000),),
        requester_role="the account executive", mechanisms=("hidden_fact", "conversation", "message_rubric"),
    ),
)
