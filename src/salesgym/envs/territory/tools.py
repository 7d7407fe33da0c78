"""The 18 territory tools: names, model-facing descriptions, argument and output models, costs, handlers.

Arguments are in ``tools_args``, the lookups handlers share in ``tools_lookups``, the handlers by group in
``tools_read`` (the portfolio, a deal, research), ``tools_deal`` (working a deal) and ``tools_terms`` (closing it,
and time).

A handler checks everything first and raises ``ToolError`` before it emits any event; after that it only
emits. Read tools (``writes=False``) emit nothing but the engine's ``tool_completed`` record. Tool names
are the benchmark's contract; ``docs/tools.md`` is generated from these specs.
"""

from __future__ import annotations

from salesgym.core.tools import ToolBox, ToolSpec
from salesgym.envs.territory import outputs
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    MIN_BOOKING_HOURS,
    RESEARCH_AGAIN_HOURS,
    TOOL_HOURS,
)
from salesgym.envs.territory.tools_args import (
    AccountArgs,
    ApprovalArgs,
    BookArgs,
    BookingUseArgs,
    CaseArgs,
    CrmArgs,
    DisqualifyArgs,
    EscalateArgs,
    MeetingArgs,
    MeetingIdArgs,
    MessageArgs,
    OppArgs,
    PlanArgs,
    PriceArgs,
    ViewArgs,
    WaitArgs,
)
from salesgym.envs.territory.tools_deal import (
    book_resource,
    build_business_case,
    propose_action_plan,
    run_discovery,
    run_technical_evaluation,
    schedule_meeting,
    send_message,
)
from salesgym.envs.territory.tools_read import find_stakeholders, research_account, view_opportunity
from salesgym.envs.territory.tools_terms import (
    disqualify,
    escalate,
    negotiate,
    request_approval,
    send_contract,
    send_proposal,
    update_crm,
    wait,
)

T = ToolSpec


def hours(tool: str) -> str:
    return f"{TOOL_HOURS[tool]:g} h"


TOOLS: ToolBox[Ctx] = ToolBox(
    [
        T(
            "view_opportunity",
            "Show one opportunity in full (account, known stakeholders, what you learned, evidence, "
            "meetings, bookings, terms), or with no id the whole portfolio table.",
            ViewArgs,
            view_opportunity,
            hours("view_opportunity"),
            writes=False,
            failure_modes=("unknown opportunity id",),
            output=outputs.ViewOutput,
        ),
        T(
            "research_account",
            "Research an account's public news and stack. Reveals keywords tied to its pains; "
            "messages that reference them are relevant to the people who care.",
            AccountArgs,
            research_account,
            f"{hours('research_account')} ({RESEARCH_AGAIN_HOURS:g} h if already researched)",
            side_effects="keywords become usable for relevance",
            failure_modes=("unknown account id",),
            output=outputs.ResearchOutput,
        ),
        T(
            "find_stakeholders",
            "List the buying committee of an opportunity: names, ids and titles. Titles usually, "
            "not always, reflect authority.",
            OppArgs,
            find_stakeholders,
            hours("find_stakeholders"),
            side_effects="stakeholders become contactable",
            failure_modes=("unknown or closed opportunity",),
            output=outputs.StakeholdersOutput,
        ),
        T(
            "send_message",
            "Email one stakeholder. Replies arrive later in the inbox; relevant messages (researched "
            "keywords matching their pains) get answers, spamming the same person hurts.",
            MessageArgs,
            send_message,
            hours("send_message"),
            side_effects="may schedule a reply (buyer_reply evidence)",
            failure_modes=("stakeholder not found yet", "stakeholder left the company", "deal closed"),
            output=outputs.MessageOutput,
        ),
        T(
            "schedule_meeting",
            "Invite stakeholders to a meeting in N business days. Each answers later; acceptances are "
            "evidence. Hold discovery in an accepted meeting.",
            MeetingArgs,
            schedule_meeting,
            hours("schedule_meeting"),
            side_effects="schedules answers (meeting_acceptance evidence)",
            failure_modes=("unknown invitee",),
            output=outputs.MeetingOutput,
        ),
        T(
            "book_resource",
            "Book internal hours (SE, legal, procurement desk, management) for an opportunity, respecting "
            "lead times and weekly capacity; or cancel a booking (inside the lead time the hours are lost and "
            "the buyer notices).",
            BookArgs,
            book_resource,
            hours("book_resource"),
            resource_cost="the booked hours of that team",
            failure_modes=("lead time not met", "capacity exhausted that week", "unknown booking"),
            output=outputs.BookOutput,
        ),
        T(
            "run_discovery",
            "Run discovery in an accepted meeting that has started: learn pains, roles, required "
            "approvals, budget band; the right people may confirm budget or sponsor the deal.",
            MeetingIdArgs,
            run_discovery,
            hours("run_discovery"),
            side_effects="may create budget_confirmation / authorised_sponsor / disqualification_reason evidence",
            failure_modes=("meeting not started", "nobody accepted", "already done"),
            output=outputs.DiscoveryOutput,
        ),
        T(
            "run_technical_evaluation",
            f"Start a technical evaluation using a started SE booking (at least {MIN_BOOKING_HOURS['tech_eval']:g} h). "
            "The buyer reports in about 3 days; fit, goodwill and every SE hour booked raise the odds, competitors "
            "lower them.",
            BookingUseArgs,
            run_technical_evaluation,
            hours("run_technical_evaluation"),
            resource_cost="consumes the SE booking",
            side_effects="may create technical_success evidence",
            failure_modes=("no usable SE booking", "already running"),
            output=outputs.EvaluationOutput,
        ),
        T(
            "build_business_case",
            "Write and share a business case. It moves the economic buyer when it addresses the "
            "pains they care about (use researched or discovered keywords).",
            CaseArgs,
            build_business_case,
            hours("build_business_case"),
            output=outputs.CaseOutput,
        ),
        T(
            "propose_action_plan",
            "Propose a mutual action plan with a close date to a buyer-side sponsor. Accepted "
            "when the sponsor is willing and the date fits their real deadline.",
            PlanArgs,
            propose_action_plan,
            hours("propose_action_plan"),
            side_effects="may create mutual_action_plan evidence",
            output=outputs.PlanOutput,
        ),
        T(
            "send_proposal",
            "Send a priced proposal at a discount off list. Discounts above your authority (15%) need a "
            "management approval first (escalate) or count as unauthorised.",
            PriceArgs,
            send_proposal,
            hours("send_proposal"),
            side_effects="the buyer accepts or counters later",
            output=outputs.ProposalOutput,
        ),
        T(
            "negotiate",
            "Make a new offer (discount) after a proposal. The buyer accepts or counters later.",
            PriceArgs,
            negotiate,
            hours("negotiate"),
            failure_modes=("no proposal yet",),
            output=outputs.CounterOutput,
        ),
        T(
            "request_approval",
            "Start a buyer-side security, legal or procurement review using a started booking (at least "
            f"{MIN_BOOKING_HOURS['review']:g} h) of your SE, legal or procurement desk; more hours make approval "
            "likelier, a thin review comes back with changes. Procurement after agreed terms approves the final terms.",
            ApprovalArgs,
            request_approval,
            hours("request_approval"),
            resource_cost="consumes the booking",
            side_effects="may create security/legal/procurement_approval evidence",
            output=outputs.ApprovalOutput,
        ),
        T(
            "escalate",
            "Ask management to approve a discount above your authority (needs a started management booking of "
            f"at least {MIN_BOOKING_HOURS['discount_approval']:g} h) or to join as executive sponsor (at least "
            f"{MIN_BOOKING_HOURS['executive_sponsor']:g} h). Management weighs the deal: how far it is verified, "
            "whether a business case addresses the buyer's pains, competitive pressure; it never goes above 35%.",
            EscalateArgs,
            escalate,
            hours("escalate"),
            resource_cost="consumes the management booking",
            output=outputs.EscalateOutput,
        ),
        T(
            "send_contract",
            "Send the contract for signature. It is signed only when terms are agreed, reviews are in, "
            "and the buyer is ready; otherwise it stalls.",
            OppArgs,
            send_contract,
            hours("send_contract"),
            side_effects="may create contract_signature evidence",
            output=outputs.ContractOutput,
        ),
        T(
            "update_crm",
            "Update your CRM record (stage, fields, next step). CRM is your own notebook: it never "
            "changes verified milestones.",
            CrmArgs,
            update_crm,
            hours("update_crm"),
            output=outputs.CrmOutput,
        ),
        T(
            "disqualify",
            "Drop an opportunity that cannot close, freeing capacity. Dropping a viable deal is penalised.",
            DisqualifyArgs,
            disqualify,
            hours("disqualify"),
            side_effects="the opportunity becomes terminal",
            output=outputs.DisqualifyOutput,
        ),
        T(
            "wait",
            "Let time pass: a number of business hours; or until the next event (the first new item in your "
            "inbox, an accepted meeting or a booking starting, at most a week); or until Monday. The only tool "
            "available when this week's seller hours are used up.",
            WaitArgs,
            wait,
            "the hours waited",
            resource_cost="none",
            writes=False,
            output=outputs.WaitOutput,
        ),
    ]
)
