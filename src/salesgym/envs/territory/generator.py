"""World generator: (seed, family, template, size, horizon) -> an immutable :class:`TerritoryWorld`.

Each opportunity is drawn from its own keyed stream, so territory size does not change the dice of the
first opportunities, and the exogenous tape is drawn from its own streams before the episode starts.
Templates switch on *mechanisms*; each mechanism is a small, named adjustment below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.rng import Dice, stream
from salesgym.envs.territory.calendar import HOURS_PER_DAY, business_days
from salesgym.envs.territory.catalog import APPROVALS, ROLES, FamilySpec, TemplateSpec
from salesgym.envs.territory.contract import quarter_of
from salesgym.envs.territory.families import get_family, template_of
from salesgym.envs.territory.families.names import FIRST_NAMES, LAST_NAMES
from salesgym.envs.territory.reward import TRAINING_ABLATIONS
from salesgym.envs.territory.world import (
    GENERATOR_VERSION,
    Account,
    Committees,
    NewsItem,
    Opportunity,
    Stakeholder,
    TerritoryWorld,
)

DEFAULT_CAPACITY = {"seller": 30.0, "se": 7.0, "legal": 3.0, "procurement": 2.0, "management": 2.0}
DEFAULT_LEAD_DAYS = {"seller": 0, "se": 2, "legal": 5, "procurement": 3, "management": 3}
HORIZONS = (30, 90, 180)
# Ablations that change the world (and so every policy's score). The reward-only ones are training ablations
# (``reward.TRAINING_ABLATIONS``): the environment accepts both, ``salesgym bench`` only these.
WORLD_ABLATIONS = {
    "no_resource_limits": "SE, legal, procurement and management hours are unlimited; lead times are kept",
    "no_hidden_state": (
        "buyers are what their titles say: titles never mislead, authority is the middle of the role's range, "
        "every starting disposition is 0.2 and every reply latency 8 h (budgets, viability and pains stay hidden)"
    ),
}
ABLATIONS = (*WORLD_ABLATIONS, *TRAINING_ABLATIONS)
NONVIABLE_REASONS = ("no budget this fiscal year", "no fit with the current stack", "locked into a competitor contract")
PERSONAS = ("analytical", "relationship", "skeptic", "busy executive", "consensus-seeker")
SUFFIXES = ("Systems", "Group", "Labs", "Partners", "Holdings", "Networks", "Works", "Health", "Logistics", "Foods")

# authority, disposition and responsiveness ranges by true role
AUTHORITY = {
    "economic_buyer": (0.75, 1.0),
    "champion": (0.35, 0.7),
    "technical_evaluator": (0.3, 0.6),
    "security": (0.4, 0.65),
    "legal": (0.4, 0.65),
    "procurement": (0.4, 0.65),
    "user": (0.05, 0.3),
    "blocker": (0.4, 0.75),
}
OTHER_ROLES = {role: tuple(r for r in ROLES if r != role) for role in ROLES}
DISPOSITION = {"champion": (0.2, 0.6), "blocker": (-0.8, -0.3)}


@dataclass(frozen=True, slots=True)
class Knobs:
    """Numbers the family sets and the template's mechanisms adjust."""

    nonviable_rate: float
    competitor_rate: float
    deal_scale: float = 1.0
    committee: tuple[int, int] = (3, 6)
    misleading_titles: float = 0.15
    approval_scale: float = 1.0
    force_approvals: tuple[str, ...] = ()
    latency_scale: float = 1.0
    budget_window: tuple[float, float] = (0.0, 0.35)
    competitor_pressure: float = 1.0
    freeze_share: float = 0.05
    champion_leave_share: float = 0.03
    deadline_window: tuple[float, float] = (0.55, 1.15)


def _mechanism_knobs(knobs: Knobs, mechanisms: tuple[str, ...]) -> Knobs:
    for m in mechanisms:
        if m == "entrenched_competitor":
            knobs = replace(knobs, competitor_rate=max(knobs.competitor_rate, 0.85), competitor_pressure=2.0)
        elif m == "budget_freeze":
            knobs = replace(knobs, freeze_share=0.45)
        elif m == "procurement_heavy":
            knobs = replace(knobs, force_approvals=("legal", "procurement"))
        elif m == "large_committee":
            knobs = replace(knobs, committee=(7, 9), misleading_titles=0.35)
        elif m == "champion_leaves":
            knobs = replace(knobs, champion_leave_share=0.35)
        elif m == "fast_smb":
            knobs = replace(
                knobs,
                deal_scale=knobs.deal_scale * 0.3,
                committee=(3, 4),
                approval_scale=0.3,
                latency_scale=0.4,
                deadline_window=(0.3, 0.8),
            )
        elif m == "late_budget":
            knobs = replace(knobs, budget_window=(0.35, 0.65))
        elif m == "many_unviable":
            knobs = replace(knobs, nonviable_rate=min(0.6, knobs.nonviable_rate + 0.2))
        else:
            raise ValueError(f"unknown mechanism {m!r}")
    return knobs


def knobs_of(spec: FamilySpec, tmpl: TemplateSpec) -> Knobs:
    """The numbers a template's worlds are drawn with: the family's, the template's overrides, its mechanisms
    (what docs/families.md quotes, e.g. the effective share of deals that cannot close)."""
    base = Knobs(
        nonviable_rate=spec.nonviable_rate, competitor_rate=spec.competitor_rate, committee=spec.committee_size
    )
    params = {k: float(v) for k, v in tmpl.params.items()}
    return _mechanism_knobs(replace(base, **params), tmpl.mechanisms)  # type: ignore[arg-type]


def capacity_of(spec: FamilySpec, tmpl: TemplateSpec) -> tuple[dict[str, float], dict[str, int]]:
    """Weekly hours per team and booking lead times of a template's worlds (no ablation)."""
    return _capacity(spec, tmpl.mechanisms, ())


def _capacity(
    spec: FamilySpec, mechanisms: tuple[str, ...], ablations: tuple[str, ...]
) -> tuple[dict[str, float], dict[str, int]]:
    capacity = {**DEFAULT_CAPACITY, **spec.capacity}
    lead = dict(DEFAULT_LEAD_DAYS)
    if "procurement_heavy" in mechanisms:
        capacity["procurement"] *= 0.75
        lead["procurement"], lead["legal"] = 5, 7
    if "no_resource_limits" in ablations:  # the hours stop binding; the calendar (lead times) still does
        capacity.update({r: 1000.0 for r in capacity if r != "seller"})
    return capacity, lead


def check_options(
    family: str, template: str | None, n_opportunities: int, horizon_days: int, ablations: tuple[str, ...]
) -> tuple[FamilySpec, TemplateSpec]:
    """Validate generator arguments with errors that say what is allowed."""
    try:
        spec = get_family(family)
        tmpl = template_of(spec, template) if template is not None else next(iter(spec.templates.values()))
    except KeyError as err:
        raise ValueError(str(err.args[0])) from None
    if (
        isinstance(n_opportunities, bool)
        or not isinstance(n_opportunities, int)
        or not (3 <= n_opportunities <= 5 or 10 <= n_opportunities <= 100)
    ):
        raise ValueError(f"n_opportunities must be an int in 10-100 (or a debug size of 3-5), got {n_opportunities!r}")
    if horizon_days not in HORIZONS:
        raise ValueError(f"horizon_days must be one of {HORIZONS}, got {horizon_days!r}")
    bad = [a for a in ablations if a not in ABLATIONS]
    if bad:
        raise ValueError(f"unknown ablation(s) {bad}; known: {list(ABLATIONS)}")
    return spec, tmpl


@lru_cache(maxsize=64)
def generate(
    seed: int,
    family: str = "midmarket_saas",
    template: str | None = None,
    n_opportunities: int = 20,
    horizon_days: int = 90,
    ablations: tuple[str, ...] = (),
) -> TerritoryWorld:
    """The world for these arguments; cached, since worlds are immutable and group rollouts reset one seed often."""
    spec, tmpl = check_options(family, template, n_opportunities, horizon_days, ablations)
    knobs = knobs_of(spec, tmpl)
    capacity, lead = _capacity(spec, tmpl.mechanisms, ablations)
    days = business_days(horizon_days)
    accounts: dict[str, Account] = {}
    opportunities: dict[str, Opportunity] = {}
    provenance = f"{GENERATOR_VERSION} seed={seed} family={family} template={tmpl.name}"
    rng = stream(seed, "gen", family, tmpl.name)  # one ordered stream: opportunity i is the same at any size
    for i in range(n_opportunities):
        account, opp = _opportunity(rng, spec, knobs, i, days, provenance)
        accounts[account.id] = account
        opportunities[opp.id] = opp
    public_buyers = "no_hidden_state" in ablations

    def committee(opp: Opportunity) -> list[Stakeholder]:
        rng = stream(seed, "committee", family, tmpl.name, opp.id)
        return _committee(rng, spec, knobs, opp, accounts[opp.account_id].pains, public_buyers, provenance)

    stakeholders = Committees(opportunities, committee)
    tape = _tape(seed, tmpl.name, knobs, opportunities, stakeholders, days)
    return TerritoryWorld(
        seed=seed,
        family=family,
        template=tmpl.name,
        mechanisms=tmpl.mechanisms,
        n_opportunities=n_opportunities,
        horizon_days=horizon_days,
        horizon=days * HOURS_PER_DAY,
        capacity=capacity,
        lead_days=lead,
        discount_authority=0.15,
        accounts=accounts,
        opportunities=opportunities,
        stakeholders=stakeholders,
        tape=tape,
        spec=spec,
        ablations=tuple(ablations),
        pipeline_value=sum((o.value_band[0] + o.value_band[1]) / 2 for o in opportunities.values()),
    )


def _log_uniform(rng: Dice, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _opportunity(
    rng: Dice, spec: FamilySpec, k: Knobs, i: int, days: int, provenance: str
) -> tuple[Account, Opportunity]:
    aid, oid = f"a{i:03d}", f"o{i:03d}"
    name = f"{rng.choice(spec.company_words)} {rng.choice(SUFFIXES)}"
    pains = tuple(p.id for p in rng.sample(spec.pains, rng.randint(2, min(5, len(spec.pains)))))
    news = [_news(rng, spec, pid, name) for pid in pains]
    if rng.random() < 0.5:  # a distractor: news that sounds like a pain this account does not have
        other = [p.id for p in spec.pains if p.id not in pains]
        news.append(_news(rng, spec, rng.choice(other), name))
    rng.shuffle(news)
    account = Account(
        aid,
        name,
        rng.choice(spec.industries),
        int(_log_uniform(rng, *map(float, spec.employees))),
        rng.choice(spec.regions),
        tuple(rng.sample(spec.stacks, min(3, len(spec.stacks)))),
        tuple(news),
        pains,
        tuple(round(rng.uniform(0.3, 1.0), 2) for _ in pains),
        provenance,
    )
    lo, hi = spec.deal_size_k
    true_value = round(_log_uniform(rng, lo, hi) * k.deal_scale, 1)
    band = (5 * round(true_value * rng.uniform(0.6, 0.9) / 5), 5 * round(true_value * rng.uniform(1.15, 1.5) / 5))
    viable = rng.random() >= k.nonviable_rate
    reason = None if viable else rng.choice(NONVIABLE_REASONS)
    has_competitor = rng.random() < k.competitor_rate or reason == "locked into a competitor contract"
    competitor = rng.choice(spec.competitors) if has_competitor else None
    aggression = rng.uniform(0.2, 0.8) * (1.3 if k.competitor_pressure > 1 else 1.0) if competitor else 0.0
    fit = 0.15 if reason == "no fit with the current stack" else rng.uniform(0.3, 0.95)
    approvals = tuple(
        a for a in APPROVALS if a in k.force_approvals or rng.random() < spec.approval_rates[a] * k.approval_scale
    )
    dl = int(days * rng.uniform(*k.deadline_window))
    budget_day = int(days * rng.uniform(*k.budget_window))
    required_discount = round(rng.uniform(0.0, 0.18) + (0.05 if competitor else 0.0), 3)
    size = rng.randint(*k.committee)
    quarter = quarter_of(dl)
    opp = Opportunity(
        oid,
        aid,
        rng.choice(spec.product_lines),
        (float(band[0]), float(band[1])),
        quarter,
        tuple(f"{oid}s{j}" for j in range(size)),
        true_value,
        required_discount,
        dl,
        approvals,
        viable,
        reason,
        budget_day,
        competitor,
        round(min(aggression, 1.0), 3),
        round(fit, 3),
        provenance,
    )
    return account, opp


_HEADLINES: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {}


def _headlines(spec: FamilySpec) -> dict[str, tuple[tuple[str, str], ...]]:
    """pain id -> (headline template, the keyword it reveals), computed once per family."""
    table = _HEADLINES.get(spec.name)
    if table is None:
        table = _HEADLINES[spec.name] = {
            p.id: tuple((h, next((kw for kw in p.keywords if kw in h.lower()), p.keywords[0])) for h in p.headlines)
            for p in spec.pains
        }
    return table


def _news(rng: Dice, spec: FamilySpec, pain_id: str, company: str) -> NewsItem:
    headline, keyword = rng.choice(_headlines(spec)[pain_id])
    return NewsItem(headline.format(company=company), pain_id, keyword)


def _committee(
    rng: Dice,
    spec: FamilySpec,
    k: Knobs,
    opp: Opportunity,
    pains: tuple[str, ...],
    public_buyers: bool,
    provenance: str,
) -> list[Stakeholder]:
    """One opportunity's buying committee, drawn from its own stream when first needed."""
    oid, size = opp.id, len(opp.stakeholder_ids)
    roles = ["champion", "economic_buyer", "technical_evaluator"]
    roles += [a for a in opp.required_approvals if rng.random() < 0.9]
    while len(roles) < size:
        roles.append(rng.choice(("user", "user", "blocker")))
    roles = roles[:size]
    rng.shuffle(roles)  # committee order (and so ids) must not reveal roles
    people = []
    for j, role in enumerate(roles):
        title_role = role
        if not public_buyers and rng.random() < k.misleading_titles:
            title_role = rng.choice(OTHER_ROLES[role])
        authority = rng.uniform(*AUTHORITY[role])
        if role == "champion" and rng.random() < 0.2:  # some champions can really sponsor
            authority = rng.uniform(0.7, 0.85)
        disposition = rng.uniform(*DISPOSITION.get(role, (-0.3, 0.4)))
        latency = rng.uniform(4.0, 24.0) * k.latency_scale * (1.5 if role == "economic_buyer" else 1.0)
        cares = tuple(rng.sample(pains, min(len(pains), rng.randint(1, 2))))
        if public_buyers:  # ablation: buyers act on what their public title says
            lo, hi = AUTHORITY[role]
            authority, disposition, latency = (lo + hi) / 2, 0.2, 8.0
        people.append(
            Stakeholder(
                id=f"{oid}s{j}",
                opportunity_id=oid,
                name=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
                title=rng.choice(spec.titles[title_role]),
                role=role,
                authority=round(authority, 3),
                disposition=round(disposition, 3),
                responsiveness_h=round(latency, 2),
                persona=rng.choice(PERSONAS),
                pains=cares,
                provenance=provenance,
            )
        )
    return people


def _tape(
    seed: int, template: str, k: Knobs, opps: dict[str, Opportunity], people: Committees, days: int
) -> tuple[Scheduled, ...]:
    """Exogenous happenings, drawn per opportunity before the episode: the same for every rollout."""
    horizon = days * HOURS_PER_DAY
    items: list[tuple[float, str, dict[str, Any]]] = []
    rng = stream(seed, "tape", template)
    for oid, opp in opps.items():
        if opp.competitor:
            n_moves = int(opp.competitor_aggression * k.competitor_pressure * days / 20 + rng.random())
            for _ in range(n_moves):
                kind = rng.choice(("competitor_demo", "competitor_price_cut"))
                items.append(
                    (rng.uniform(0.1, 0.95) * horizon, kind, {"opportunity_id": oid, "competitor": opp.competitor})
                )
        if rng.random() < k.freeze_share:
            start = rng.uniform(0.2, 0.5) * horizon
            items.append(
                (
                    start,
                    "budget_freeze",
                    {"opportunity_id": oid, "until": round(start + rng.uniform(0.2, 0.4) * horizon, 2)},
                )
            )
        if rng.random() < k.champion_leave_share:
            champion = next(p for p in opp.stakeholder_ids if people[p].role == "champion")
            items.append(
                (
                    rng.uniform(0.25, 0.7) * horizon,
                    "stakeholder_left",
                    {"opportunity_id": oid, "stakeholder_id": champion},
                )
            )
    items.sort(key=lambda x: (x[0], x[1], x[2]["opportunity_id"]))
    return tuple(Scheduled(round(t, 2), i, kind, data) for i, (t, kind, data) in enumerate(items))
