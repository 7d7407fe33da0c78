"""The oracle's numbers: how buyers react, mirrored from the literals in ``salesgym.envs.territory.buyers`` (the
oracle knows the buyers' rules: operator side), the oracle's own targets, and the logistic odds they feed."""

from __future__ import annotations

import math

from salesgym.envs.territory.contract import BOOKING_USABLE_DAYS, HOURS_PER_DAY

# How buyers react (mirrors the literals in salesgym.envs.territory.buyers).
DISCOVERY_WARMTH = (0.05, 0.15)  # every attendee: + a + b x the agenda's relevance
REPLY_WARMTH = 0.1  # x the message's relevance
CASE_WARMTH = 0.3  # economic buyer and champion, x the case's relevance to them
EXEC_WARMTH = 0.25  # the economic buyer, after the executive-sponsor call
SETBACK = -0.1  # the evaluator, after a failed technical evaluation
RIVAL_COOLING = -0.12  # evaluator and champion, x the competitor's aggression (halved when we were in touch)
CONTACT_WINDOW_H = 5 * HOURS_PER_DAY  # "in touch": a message or an invitation this recently
PRICE_CUT = 0.03  # competitor pressure on the price (halved when we were in touch)
SPONSOR_WARMTH = 0.3  # to sponsor at a discovery
SIGNER_WARMTH = 0.2  # to sign the contract
WARM_EB_DISCOUNT, WARM_EB = 0.04, 0.5  # a warm economic buyer needs less discount
CASE_DISCOUNT = 0.05  # x the business case's relevance
LATENCY = (0.4, 1.6)  # a buyer answers within these multiples of their responsiveness
CONTRACT_DELAY_H = 2 * HOURS_PER_DAY  # on top of the signer's latency
SENIOR = 0.6  # above this authority, cold outreach is ignored unless a champion brought us in
TECH_DAYS = 3

# The oracle's own choices.
TECH_TARGET, REVIEW_TARGET = 0.85, 0.9  # odds to buy for an evaluation and for a review
WARM_ENOUGH = 0.95  # evaluators and approvers are invited to discoveries until this warm
WARM_MARGIN = 0.1  # above a buyer's threshold, so a setback does not drop them under it
EXPECTED_MEETINGS = 1.0  # discoveries a person to be warmed will attend before a process finishes
USABLE_H = BOOKING_USABLE_DAYS * HOURS_PER_DAY
SELLER_TO_CLOSE = 22.0  # seller hours a deal takes from nothing to signature
DISCOVERY_HOURS = 1.5
VALIDATE_MAX_SE = 8.0  # spare SE hours validate a deal only if its evaluation takes at most this many
ENGAGE_SURE = 0.9  # on a dead deal, write to people until a reply is this likely
QUALIFY_GAP_DAYS = 1  # between discovery meetings on a deal only to qualify
URGENT = frozenset(("send_contract", "run_technical_evaluation", "request_approval"))  # taken before other moves
TEAMS = ("se", "legal", "procurement", "management")


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def hours_for(target: float, base: float, per_hour: float, least: float, most: float) -> float:
    """The fewest half hours in [least, most] that lift ``sigmoid(base + per_hour x h)`` to ``target``."""
    need = (logit(target) - base) / per_hour
    return float(min(most, max(least, math.ceil(2 * need - 1e-9) / 2)))
