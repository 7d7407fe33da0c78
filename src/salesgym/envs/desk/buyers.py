"""Every buyer decision: one rule-based function of the hidden facts, the archetype, the temperature, the
buyer variant and the seller's structured actions, with keyed noise.

``decide`` is pure: the same lead, offer, history and two uniform draws give the same decision. The draws
come from ``ctx.draw("offer", lead_id)`` and ``ctx.draw("gate", lead_id)``, whose counters count that lead's
offers only, so a lead's outcome depends on nothing but its own history (not on the order in which leads are
worked). Features come from tool calls, never from prose.

    s = w_need·need + w_trust·trust' + w_cover·cover_fit + w_plan·plan_fit + w_afford·afford
        + pressure − .05·(calls − 1) − .04·(offers on this lead) + .1·(u − .5)
    θ = .64 + temperature shift + archetype shift + per-question rise − .04 (honoured callback)

trust' is trust plus what discovery built; afford falls once the premium passes half the budget. The
variant's gates run first (``archetypes.Variant``); an offer passes them, then accepts when s ≥ θ, else is
refused with the reason that cost it most. Each refusal costs patience (.12, .18 from the third); a buyer
out of patience hangs up, and asks not to be called again when its trust is low or patience is gone.

``Voice`` is the optional language-model voice: it writes the buyer's words from (decision, reason,
persona) and never changes a decision; :class:`CannedVoice` is the default.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from salesgym.core.numbers import rounded
from salesgym.envs.desk.archetypes import BY_NAME, VARIANTS, Archetype, Variant
from salesgym.envs.desk.contract import GOAL_PLAN, HANG_UP_REASONS, REJECT_REASONS, cover_need
from salesgym.envs.desk.world import Lead

BASE_WEIGHTS = (0.15, 0.15, 0.20, 0.20, 0.30)  # need, trust, cover fit, plan fit, afford
BASE_THETA = 0.64
TEMPERATURE_THETA = {"cold": 0.10, "lukewarm": 0.04, "warm": -0.02, "hot": -0.06}
HONOURED_CALLBACK_THETA = -0.04
NOISE = 0.10
PATIENCE_COST = (0.12, 0.18)  # per refusal; the second from the third refusal on
HANG_UP_AT = 0.05
DNC_TRUST = 0.40  # a buyer who hangs up with less trust than this asks not to be called again
LIMIT_DNC_TRUST = 0.35  # ... and one called past its call limit


class Offer(NamedTuple):
    plan: str
    coverage: int
    premium: float  # what the buyer would pay per month (after any discount)
    next_step: str


class History(NamedTuple):
    """What the buyer remembers of this seller: this lead's history only."""

    calls: int  # calls so far, this one included
    offers: int  # offers before this one
    offers_this_call: int
    rejections: int
    patience: float
    topics: int  # distinct discovery topics asked (any call)
    questions_this_call: int
    quotes: int  # quotes made for this buyer
    honoured_callback: bool  # this call honours a scheduled callback


class Decision(NamedTuple):
    decision: str  # accept | reject | hang_up
    reason: str | None
    patience: float  # after this decision
    dnc: bool  # the buyer asks not to be called again
    score: float
    threshold: float


def _clip(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def target_cover(lead: Lead, plan: str) -> float:
    """The cover this buyer feels it needs: its need in the public contract (``contract.cover_need``)."""
    return cover_need(plan, lead.income, lead.dependents)


def plan_fit(lead: Lead, plan: str, arch: Archetype) -> float:
    base = {
        "TERM": 0.55 + 0.45 * lead.need,
        "WHOLE": 0.30 + 0.70 * (1.0 - lead.price_sensitivity),
        "UL": 0.45 + 0.55 * lead.trust,
        "DI": 0.40 + 0.60 * lead.need,
    }[plan]
    wanted = GOAL_PLAN.get(lead.goal)
    if wanted is not None:
        base += 0.25 if plan == wanted else -0.15
    if plan in ("WHOLE", "UL"):
        base += arch.lifelong_bonus
    return _clip(base)


def cover_fit(lead: Lead, offer: Offer) -> float:
    target = target_cover(lead, offer.plan)
    return _clip(1.0 - abs(offer.coverage - target) / target)


def gate(lead: Lead, v: Variant, offer: Offer, history: History, fit: float) -> str | None:
    """The first variant gate the offer fails (its reason code), or None."""
    ratio = offer.premium / lead.budget
    if ratio > v.max_ratio:
        return "over_budget"
    life = offer.plan != "DI"
    if life and v.min_cover_x_income is not None and offer.coverage < v.min_cover_x_income * lead.income:
        return "coverage_too_low"
    if life and v.max_cover_x_income is not None and offer.coverage > v.max_cover_x_income * lead.income:
        return "coverage_too_high"
    if (life and lead.dependents and v.min_cover_x_income_with_dependents is not None
            and offer.coverage < v.min_cover_x_income_with_dependents * lead.income):  # fmt: skip
        return "coverage_too_low"
    if v.cover_fit_band is not None:
        share = offer.coverage / target_cover(lead, offer.plan)
        if share < v.cover_fit_band[0]:
            return "coverage_too_low"
        if share > v.cover_fit_band[1]:
            return "coverage_too_high"
    if v.max_income_share is not None and offer.premium > v.max_income_share * lead.income / 12:
        return "over_budget"
    if v.min_plan_fit is not None and fit < v.min_plan_fit:
        return "wrong_plan"
    if v.needs_discovery and history.topics == 0:
        return "not_understood"
    return None


def score(lead: Lead, offer: Offer, history: History, u: float) -> tuple[float, float, dict[str, float]]:
    """(s, θ, each feature's shortfall weighted) for the offer; the shortfalls name a refusal's reason."""
    arch = BY_NAME[lead.archetype]
    wn, wt, wc, wp, wa = BASE_WEIGHTS
    wn, wt, wp = wn + arch.need_w, wt + arch.trust_w, wp + arch.plan_w
    wc += arch.cover_w + (arch.dependents_bonus if lead.dependents else 0.0)
    trust = _clip(lead.trust + arch.discovery * min(history.topics, 3))
    fit = plan_fit(lead, offer.plan, arch)
    cov = cover_fit(lead, offer)
    ratio = offer.premium / lead.budget
    afford = _clip(1.0 - max(0.0, ratio - 0.5) * (0.8 + lead.price_sensitivity) * arch.price_m)
    s = wn * lead.need + wt * trust + wc * cov + wp * fit + wa * afford
    s += arch.pressure if offer.next_step == "close_today" else 0.0
    s -= 0.05 * max(0, history.calls - 1) + 0.04 * history.offers
    s += NOISE * (u - 0.5)
    theta = BASE_THETA + TEMPERATURE_THETA[lead.temperature] + arch.theta
    theta += arch.per_question * history.questions_this_call
    if history.honoured_callback:
        theta += HONOURED_CALLBACK_THETA
    target = target_cover(lead, offer.plan)
    cover_reason = "coverage_too_high" if offer.coverage > target else "coverage_too_low"
    shortfalls = {"over_budget": wa * (1 - afford), cover_reason: wc * (1 - cov), "wrong_plan": wp * (1 - fit),
                  "low_trust": wt * (1 - trust)}  # fmt: skip
    return s, theta, shortfalls


def decide(lead: Lead, variant: str, offer: Offer, history: History, u: float, u2: float) -> Decision:
    """The buyer's answer to ``offer`` (``u``, ``u2``: this offer's two keyed draws, uniform in [0, 1))."""
    arch = BY_NAME[lead.archetype]
    v = VARIANTS[variant]
    s, theta, shortfalls = score(lead, offer, history, u)
    reason: str | None
    if arch.needs_time and history.offers == 0 and not history.honoured_callback:
        return Decision("reject", "needs_time", history.patience, False, s, theta)  # costs no patience
    reason = gate(lead, v, offer, history, plan_fit(lead, offer.plan, arch))
    if reason is None and v.refusal and u2 < v.refusal:
        reason = "not_convinced"
    elif reason is None and v.snap_accept and history.offers_this_call == 0 and u2 < v.snap_accept:
        return Decision("accept", None, history.patience, False, s, theta)
    if reason is None and v.then_within_budget and offer.premium > lead.budget:
        reason = "over_budget"
    if reason is None:
        if s >= theta:
            return Decision("accept", None, history.patience, False, s, theta)
        worst = max(shortfalls, key=shortfalls.__getitem__)
        reason = worst if shortfalls[worst] >= 0.03 else "not_convinced"
    patience = rounded(history.patience - PATIENCE_COST[history.rejections >= 2], 4)
    if patience <= HANG_UP_AT:
        trust = _clip(lead.trust + arch.discovery * min(history.topics, 3))
        return Decision("hang_up", "out_of_patience", patience, patience <= 0.0 or trust < DNC_TRUST, s, theta)
    return Decision("reject", reason, patience, False, s, theta)


def takes_call(lead: Lead, calls: int) -> bool:
    """Whether the buyer takes its ``calls``-th call (it takes at most its call limit)."""
    return calls <= lead.call_limit


def dnc_when_over_limit(lead: Lead) -> bool:
    return lead.trust < LIMIT_DNC_TRUST


# --- words ------------------------------------------------------------------------------------------------------
class Voice(Protocol):
    """Writes the buyer's words; it never decides. A voice that raises is recorded as a buyer-side error."""

    def speak(self, decision: str, reason: str | None, persona: str) -> str: ...


CANNED = {"accept": "That works for me. Let's go ahead.", "hang_up": "I'm done here. Goodbye."}


class CannedVoice:
    """The default voice: a fixed line per decision and reason (no model, no persona in the words)."""

    def speak(self, decision: str, reason: str | None, persona: str) -> str:
        if decision == "reject" and reason is not None:
            return f"I'm not going to take that: {REJECT_REASONS[reason]}."
        if decision == "hang_up" and reason is not None:
            return f"I'm done here ({HANG_UP_REASONS[reason]})."
        return CANNED.get(decision, "...")
