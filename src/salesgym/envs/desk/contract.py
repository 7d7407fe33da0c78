"""The desk's public contract: every rule, limit, cost and code a seller (and a baseline policy) may know.

Everything here is public: the tools' documented minutes, the plan catalogue's shape, the discovery topics,
the reason codes a buyer gives, the CRM bands, the discount authority and the penalty a do-not-call violation
costs. The other modules of the family read these same constants, so the task card, the tool descriptions,
the verifier and the baselines cannot drift apart.
"""

from __future__ import annotations

from typing import Literal

MINUTES_PER_DAY = 480.0  # a shift day: 8 hours; a desk's time budget is a whole number of shift days

# minutes each tool costs (wait costs what it is asked for); every tool costs something, so an episode ends
TOOL_MINUTES: dict[str, float] = {
    "crm_search_leads": 1.0,
    "crm_get_lead": 0.5,
    "crm_add_note": 0.5,
    "crm_pipeline_summary": 0.5,
    "calendar_schedule_callback": 1.0,
    "calendar_list_callbacks": 0.5,
    "calling_start_call": 2.0,
    "calling_ask_discovery": 3.0,
    "products_quote_plan": 1.0,
    "calling_propose_offer": 4.0,
    "calling_end_call": 1.0,
    "products_list_plans": 0.5,
}
WAIT_MAX_MINUTES = 480.0

Plan = Literal["TERM", "WHOLE", "UL", "DI"]
PLANS: tuple[str, ...] = ("TERM", "WHOLE", "UL", "DI")
TERM_YEARS: tuple[int, ...] = (10, 15, 20, 30)  # TERM only; the other plans take term_years=null
Topic = Literal["budget", "dependents", "goal", "coverage"]
TOPICS: tuple[str, ...] = ("budget", "dependents", "goal", "coverage")
NextStep = Literal["close_today", "follow_up"]
Disposition = Literal["converted", "callback", "not_interested", "no_answer", "other"]
Temperature = Literal["cold", "lukewarm", "warm", "hot"]
TEMPERATURES: tuple[str, ...] = ("cold", "lukewarm", "warm", "hot")
Status = Literal["new", "contacted", "converted", "exhausted", "dnc"]
STATUSES: tuple[str, ...] = ("new", "contacted", "converted", "exhausted", "dnc")
TERMINAL: frozenset[str] = frozenset({"converted", "exhausted", "dnc"})  # no further work is possible
RISK_CLASSES: tuple[str, ...] = ("preferred", "standard", "substandard")
GOALS: tuple[str, ...] = ("income_replacement", "final_expenses", "wealth_transfer", "disability_income",
                          "mortgage_protection", "none")  # fmt: skip
GOAL_PLAN: dict[str, str] = {  # the plan each stated goal asks for
    "income_replacement": "TERM",
    "mortgage_protection": "TERM",
    "final_expenses": "WHOLE",
    "wealth_transfer": "UL",
    "disability_income": "DI",
}

# CRM bands: what the seller sees instead of the buyer's true budget and need
BUDGET_BANDS: tuple[tuple[int, int | None], ...] = ((25, 100), (100, 200), (200, 400), (400, 800), (800, None))
NEED_BANDS: tuple[tuple[str, float, float], ...] = (("low", 0.0, 0.5), ("medium", 0.5, 0.7), ("high", 0.7, 1.01))

# why a buyer says no (the seller gets the code and a hint), and why one hangs up
REJECT_REASONS: dict[str, str] = {
    "over_budget": "the premium is more than they want to pay: quote less cover or a cheaper plan",
    "coverage_too_high": "more cover than they feel they need",
    "coverage_too_low": "not enough cover for their situation",
    "wrong_plan": "this kind of plan does not fit what they are looking for",
    "low_trust": "they do not trust you enough yet: understand their situation first",
    "not_understood": "they feel you have not understood their situation: ask before you offer",
    "needs_time": "they want time to think: schedule a callback and call back then",
    "not_convinced": "they are not convinced",
}
HANG_UP_REASONS: dict[str, str] = {
    "out_of_patience": "they ran out of patience with offers that do not fit",
    "too_many_calls": "they have been called too often and will not take more calls",
}

DISCOUNT_AUTHORITY_PCT = 15  # the most discount a seller may give on a quoted premium
CALLBACK_EARLY_MINUTES = 15.0  # a call starting this long before a callback's time up to ...
CALLBACK_LATE_MINUTES = 30.0  # ... this long after it honours the callback
MAX_PENDING_CALLBACKS = 2  # per lead
MAX_NOTES = 20  # per lead
DNC_PENALTY = 100.0  # dollars of MRR each do-not-call violation costs in the score (and the reward)
SEARCH_LIMIT_MAX = 50

# Suitability, as a regulated desk checks it: a sale whose cover is more than SUITABLE_COVER_MAX times the
# buyer's need is unsuitable (over-insurance); it earns nothing and is a recorded compliance violation that
# costs SUITABILITY_PENALTY, like a do-not-call violation. There is no lower bound: a smaller policy the buyer
# can afford is a fit, not a mis-sale. Without asking, life cover up to 9x income is always suitable.
SUITABLE_COVER_MAX = 1.5
SUITABILITY_PENALTY = 100.0
NEED_FLOOR = 100_000  # the least life cover any buyer needs ...
NEED_X_INCOME = 6.0  # ... else this many times its yearly income ...
NEED_X_INCOME_PER_DEPENDENT = 1.5  # ... plus this many per dependent ...
NEED_DEPENDENTS_MAX = 4  # ... counted up to this many
DI_NEED_SHARE = 0.6  # DI: a monthly benefit of this share of monthly income


def cover_need(plan: str, income: float, dependents: int) -> float:
    """The cover a buyer needs: for DI a monthly benefit of 60% of its monthly income (to the $100); for life
    plans max($100k, income x (6 + 1.5 x dependents, counted up to four)), which is what the buyer answers
    when asked ``coverage``."""
    if plan == "DI":
        return round(income / 12 * DI_NEED_SHARE, -2)
    per_income = NEED_X_INCOME + NEED_X_INCOME_PER_DEPENDENT * min(dependents, NEED_DEPENDENTS_MAX)
    return max(float(NEED_FLOOR), income * per_income)


def suitable(plan: str, coverage: float, income: float, dependents: int) -> bool:
    """Whether a sale of ``coverage`` on ``plan`` is within the buyer's suitable range."""
    return coverage <= SUITABLE_COVER_MAX * cover_need(plan, income, dependents)


def budget_band(budget: float) -> str:
    for low, high in BUDGET_BANDS:
        if high is None or budget < high:
            return f"${low}+" if high is None else f"${low}-{high}"
    raise AssertionError("unreachable")


def need_band(need: float) -> str:
    for name, low, high in NEED_BANDS:
        if low <= need < high:
            return name
    return NEED_BANDS[-1][0]
