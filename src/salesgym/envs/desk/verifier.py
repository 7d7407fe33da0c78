"""The private verifier's authoritative score, computed from the event log alone.

A conversion counts only when a buyer's signed ``offer_accepted`` evidence is on the ledger (proof checked,
source the lead's own buyer) and its premium is a stored quote for that lead, plan, cover and term, less the
recorded discount, within the seller's authority: an offer's premium must equal a quote (SalesBench credited
any proposed premium). A sale is suitable, as a regulated desk checks it, when its cover is at most
``contract.SUITABLE_COVER_MAX`` times the buyer's need (``contract.cover_need``, from the world's hidden truth; the
desk's own ``suitability_violation_recorded`` events are not read): an unsuitable sale earns nothing and is a
compliance violation. A do-not-call violation counts only when the lead's own signed request came first.
Notes, dispositions and other seller text are never read.

    primary = converted MRR − DNC_PENALTY · DNC violations − SUITABILITY_PENALTY · unsuitable sales

Instruments (reported, never scored): time used, termination cause, conversions per archetype and per
temperature, calls per conversion, the share of warm and hot leads contacted, quotes per proposal, the phase
of the shift each conversion came in, buyer-side errors, each sale's cover against the buyer's need.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from salesgym.core.events import EventLog
from salesgym.core.evidence import Verifier
from salesgym.envs.desk.archetypes import ARCHETYPES
from salesgym.envs.desk.contract import (
    DISCOUNT_AUTHORITY_PCT,
    DNC_PENALTY,
    SUITABILITY_PENALTY,
    TEMPERATURES,
    cover_need,
    suitable,
)
from salesgym.envs.desk.state import ACCEPTED, DNC_REQUEST
from salesgym.envs.desk.world import DeskWorld

READ = frozenset({"evidence_recorded", "quote_issued", "call_started", "call_refused", "offer_proposed",
                  "dnc_violation_recorded", "invalid_action", "episode_ended", "tool_completed",
                  "buyer_error_recorded"})  # fmt: skip
PHASES = 4
CEILING_RATIO = 1.5  # no buyer accepts a premium above 1.5x its budget (every variant's hard gate)


def primary_ceiling(world: DeskWorld) -> float:
    """More than any seller could earn here: every lead converted at the most any buyer pays."""
    return round(sum(CEILING_RATIO * lead.budget for lead in world.leads.values()), 2)


def score(world: DeskWorld, log: EventLog, verifier: Verifier) -> dict[str, Any]:
    quotes: dict[str, tuple[str, str, int, int | None, float]] = {}
    converted: dict[str, tuple[float, float]] = {}  # lead -> (premium, time): suitable sales, credited
    cover_to_need: dict[str, float] = {}  # lead -> its sale's cover / the buyer's need (every sale)
    dnc_since: dict[str, float] = {}
    violations = unsuitable = rejected = invalid = calls = proposals = errors = 0
    contacted: set[str] = set()
    offered: set[str] = set()
    minutes = 0.0
    ended: dict[str, Any] = {"terminated": False, "truncated": False, "why": None}
    for e in log:
        kind = e.kind
        if kind not in READ:
            continue
        p = e.payload
        if kind == "quote_issued":
            quotes[p["quote_id"]] = (p["lead_id"], p["plan"], p["coverage"], p["term_years"], p["premium"])
        elif kind == "evidence_recorded":
            ev = verifier.verified(p["evidence"])
            lead = world.leads.get(ev.subject) if ev is not None else None
            if ev is None or lead is None or ev.source_actor != f"buyer:{lead.id}":
                rejected += 1
            elif ev.type == ACCEPTED:
                c = ev.claim
                q = quotes.get(str(c.get("quote_id")))
                d = c.get("discount_pct")
                ok = (q is not None and q[:4] == (lead.id, c.get("plan"), c.get("coverage"), c.get("term_years"))
                      and isinstance(d, int) and 0 <= d <= DISCOUNT_AUTHORITY_PCT
                      and abs(float(c["premium"]) - round(q[4] * (1 - d / 100), 2)) < 0.005)  # fmt: skip
                if not ok or lead.id in cover_to_need:
                    rejected += 1
                    continue
                plan, cover = str(c["plan"]), float(c["coverage"])
                cover_to_need[lead.id] = cover / cover_need(plan, lead.income, lead.dependents)
                if not suitable(plan, cover, lead.income, lead.dependents):
                    unsuitable += 1
                else:
                    converted[lead.id] = (float(c["premium"]), ev.timestamp)
            elif ev.type == DNC_REQUEST:
                dnc_since.setdefault(lead.id, ev.timestamp)
        elif kind == "dnc_violation_recorded":
            violations += p["lead_id"] in dnc_since
        elif kind in ("call_started", "call_refused"):
            calls += 1
            contacted.add(p["lead_id"])
        elif kind == "offer_proposed":
            proposals += 1
            offered.add(p["lead_id"])
        elif kind == "invalid_action":
            invalid += 1
        elif kind == "tool_completed":
            minutes += float(p["time_cost"])
        elif kind == "buyer_error_recorded":
            errors += 1
        elif kind == "episode_ended":
            ended = {k: p[k] for k in ("terminated", "truncated", "why")}

    mrr = round(sum(premium for premium, _ in converted.values()), 2)
    leads = world.leads
    by_arch = Counter(leads[lid].archetype for lid in converted)
    by_temp = Counter(leads[lid].temperature for lid in converted)
    warm = [lid for lid, lead in leads.items() if lead.temperature in ("warm", "hot")]
    phases = Counter(min(PHASES - 1, int(t / world.horizon * PHASES)) for _, t in converted.values())
    n = world.n_leads
    by_kind = {"dnc": violations, "suitability": unsuitable}
    return {
        "primary": round(mrr - DNC_PENALTY * violations - SUITABILITY_PENALTY * unsuitable, 6),
        "primary_ceiling": primary_ceiling(world),
        "closed_value": mrr,  # the benchmark's "closed" column: converted MRR after discount
        "converted_mrr": mrr,
        "conversions": len(converted),
        "closed_count": len(converted),
        "win_rate": round(len(converted) / n, 6),
        "dnc_violations": violations,
        "suitability_violations": unsuitable,
        "violations": {k: v for k, v in by_kind.items() if v},
        "cover_to_need_max": round(max(cover_to_need.values()), 4) if cover_to_need else None,
        "cover_to_need_mean": (round(sum(cover_to_need.values()) / len(cover_to_need), 4)
                               if cover_to_need else None),
        "invalid_actions": invalid,
        "evidence_rejected": rejected,
        "buyer_errors": errors,
        "minutes_used": round(minutes, 4),
        "utilisation": round(min(minutes, world.horizon) / world.horizon, 6),
        "calls": calls,
        "proposals": proposals,
        "quotes": len(quotes),
        "calls_per_conversion": round(calls / len(converted), 4) if converted else None,
        "quotes_per_proposal": round(len(quotes) / proposals, 4) if proposals else None,
        "warm_hot_contacted": round(len(contacted & set(warm)) / len(warm), 6) if warm else None,
        "conversions_by_archetype": {a.name: by_arch.get(a.name, 0) for a in ARCHETYPES},
        "conversions_by_temperature": {t: by_temp.get(t, 0) for t in TEMPERATURES},
        "conversions_by_phase": [phases.get(i, 0) for i in range(PHASES)],
        "advances": {"contacted": len(contacted), "offered": len(offered), "converted": len(converted)},
        "n_leads": n,
        "variant": world.variant,
        **ended,
    }
