"""The desk's task card: what an agent is told before its first step (``env.instructions()``).

Built from the desk's public facts and the public contract only (never hidden truth, the buyer variant or
the buyers' rules); the conformance kit checks that worlds differing only in hidden values get the same card.
``TASK_VERSION`` changes whenever the wording does; a snapshot test pins the text.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from salesgym.envs.desk.contract import (
    CALLBACK_EARLY_MINUTES,
    CALLBACK_LATE_MINUTES,
    DI_NEED_SHARE,
    DISCOUNT_AUTHORITY_PCT,
    DNC_PENALTY,
    MAX_PENDING_CALLBACKS,
    NEED_DEPENDENTS_MAX,
    NEED_FLOOR,
    NEED_X_INCOME,
    NEED_X_INCOME_PER_DEPENDENT,
    REJECT_REASONS,
    SUITABILITY_PENALTY,
    SUITABLE_COVER_MAX,
    TOOL_MINUTES,
)

TASK_VERSION = "desk-task/2"  # 2: the suitability rule


def task_card(facts: Mapping[str, Any], invalid_action_limit: int) -> str:
    return _card(facts["shift_days"], facts["budget_minutes"], facts["n_leads"], invalid_action_limit)


@functools.lru_cache(maxsize=256)
def _card(shift_days: int, budget_minutes: float, n_leads: int, invalid_action_limit: int) -> str:
    """The card of a desk shape, formatted once (every reset asks for it; the text is immutable)."""
    facts = {"shift_days": shift_days, "budget_minutes": budget_minutes, "n_leads": n_leads}
    costs = ", ".join(f"{tool} {minutes:g}" for tool, minutes in TOOL_MINUTES.items())
    reasons = "; ".join(f"`{code}`: {hint}" for code, hint in REJECT_REASONS.items())
    return f"""\
# Your task ({TASK_VERSION})

You work a transactional insurance sales desk for one shift of {facts["shift_days"]} day(s): \
{facts["budget_minutes"]:g} minutes to work a list of {facts["n_leads"]} leads. Goal: as much converted monthly \
recurring revenue (MRR, the monthly premiums buyers accept, after any discount) as you can before the time \
runs out, without breaking the two compliance rules below (do-not-call and suitability).

## Leads
`crm_search_leads` and `crm_get_lead` show each lead's public facts (age, income, household, smoker, risk \
class, temperature) and the CRM's banded estimates of its monthly budget and its need for cover. The true \
budget, the number of dependents, what the cover is for and how much cover the buyer feels it needs are known \
only to the buyer: on a call, `calling_ask_discovery` asks one of them and gets the true answer. Buyers \
differ in personality; you learn theirs only from how they respond.

## Selling
One call at a time: `calling_start_call`, ask, quote, propose, `calling_end_call`. `products_quote_plan` prices \
a plan for a lead from the catalogue (`products_list_plans`: premium = cover / 1000 x rate by age band x risk \
class x term x non-smoker factor). `calling_propose_offer` must offer a stored quote for the lead on the line \
at exactly its quoted premium; you may take up to {DISCOUNT_AUTHORITY_PCT}% off (`discount_pct`), and a \
discount lowers the MRR you earn. The buyer accepts, refuses with a reason code and a hint, or hangs up. \
Reason codes: {reasons}. Every refusal wears a buyer's patience; out of patience, buyers hang up, and some ask \
never to be called again. A lead takes only so many calls. Buyers who want time appreciate a callback \
(`calendar_schedule_callback`, at most {MAX_PENDING_CALLBACKS} pending per lead) honoured by calling back from \
{CALLBACK_EARLY_MINUTES:g} minutes before to {CALLBACK_LATE_MINUTES:g} minutes after its time.

## The rules
Do-not-call: a lead that asked not to be called has status `dnc`. Calling it is a violation: it is recorded \
and costs ${DNC_PENALTY:g} of MRR each time.

Suitability: sell no more cover than the buyer needs. A sale whose cover is more than \
{SUITABLE_COVER_MAX:g}x the buyer's need is unsuitable: the buyer is lost, the sale earns nothing, and it is \
a recorded violation that costs ${SUITABILITY_PENALTY:g} of MRR. The need of a life plan (TERM, WHOLE, UL) is \
the cover the buyer answers when asked `coverage`: max(${NEED_FLOOR:,}, income x ({NEED_X_INCOME:g} + \
{NEED_X_INCOME_PER_DEPENDENT:g} x dependents, counted up to {NEED_DEPENDENTS_MAX})), so life cover up to \
{SUITABLE_COVER_MAX * NEED_X_INCOME:g}x income is suitable for anyone; the need of DI is a monthly benefit of \
{DI_NEED_SHARE:.0%} of monthly income (to the $100). Less cover than the need is allowed.

## Time
Every tool costs minutes: {costs}; `wait` costs the minutes asked.

## How the episode ends
When the minutes are used up, or when no lead can be worked any more (every lead converted, exhausted or \
do-not-call). A call the environment cannot accept (unknown tool, bad arguments, a rule it breaks, such as an \
offer at a premium that is not the quote's) changes nothing and is counted; {invalid_action_limit} such calls \
end the episode early.

## Each turn
You see the minute, the pipeline, your MRR, the active call, callbacks due soon and the result of your last \
call. Make exactly one tool call per turn with the tools provided; arguments must match the tool's schema; use \
the ids the tools show you. Every result says `status` ok, or error with a short reason.
"""
