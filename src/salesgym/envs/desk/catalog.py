"""The product catalogue and its premium formula (public: the seller can list plans and quote any of them).

premium = coverage / 1000 x base[plan][age band] x risk multiplier x term multiplier x smoker factor,
rounded to the cent. DI's coverage is a monthly benefit. Rates follow the published SalesBench catalogue.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from salesgym.core.numbers import rounded

AGE_BANDS: tuple[tuple[int, str], ...] = ((35, "18-34"), (45, "35-44"), (55, "45-54"), (65, "55-64"), (200, "65+"))
RISK_MULTIPLIER = {"preferred": 0.85, "standard": 1.0, "substandard": 1.35}
TERM_MULTIPLIER = {10: 0.75, 15: 0.88, 20: 1.0, 30: 1.28}
NON_SMOKER_FACTOR = 0.82


class PlanSpec(NamedTuple):
    name: str
    description: str
    rates: tuple[float, ...]  # per $1,000 of cover, one per age band
    min_age: int
    max_age: int
    min_cover: int
    max_cover: int
    term: bool  # takes term_years (TERM only)


CATALOGUE: dict[str, PlanSpec] = {
    p.name: p
    for p in (
        PlanSpec("TERM", "term life: cover for 10-30 years, cheapest per dollar", (0.07, 0.12, 0.24, 0.50, 1.05),
                 18, 75, 50_000, 5_000_000, True),
        PlanSpec("WHOLE", "whole life: lifelong cover with cash value", (0.78, 1.05, 1.45, 2.18, 3.25),
                 18, 80, 25_000, 10_000_000, False),
        PlanSpec("UL", "universal life: flexible lifelong cover", (0.40, 0.56, 0.80, 1.15, 1.85),
                 18, 80, 50_000, 10_000_000, False),
        PlanSpec("DI", "disability income: a monthly benefit if the buyer cannot work (coverage = monthly benefit)",
                 (28.0, 34.0, 42.0, 54.0, 68.0), 18, 60, 1_000, 15_000, False),
    )
}  # fmt: skip


def age_band(age: int) -> int:
    """The index of the age band ``age`` falls in."""
    for i, (below, _) in enumerate(AGE_BANDS):
        if age < below:
            return i
    return len(AGE_BANDS) - 1


def premium(plan: str, coverage: int, term_years: int | None, age: int, risk_class: str, smoker: bool) -> float:
    """The monthly premium of ``plan`` for a buyer with these underwriting facts (all public)."""
    spec = CATALOGUE[plan]
    term = TERM_MULTIPLIER[term_years] if spec.term and term_years is not None else 1.0
    factor = 1.0 if smoker else NON_SMOKER_FACTOR
    return rounded(coverage / 1000 * spec.rates[age_band(age)] * RISK_MULTIPLIER[risk_class] * term * factor, 2)


def plans_table() -> list[dict[str, Any]]:
    """What ``products_list_plans`` shows: every plan with its ages, cover range, rates and multipliers."""
    return [
        {
            "plan": p.name,
            "description": p.description,
            "ages": [p.min_age, p.max_age],
            "cover_range": [p.min_cover, p.max_cover],
            "rate_per_1000_by_age_band": dict(zip((b for _, b in AGE_BANDS), p.rates, strict=True)),
            "term_years": list(TERM_MULTIPLIER) if p.term else None,
        }
        for p in CATALOGUE.values()
    ] + [
        {
            "multipliers": {
                "risk_class": RISK_MULTIPLIER,
                "term_years": {str(k): v for k, v in TERM_MULTIPLIER.items()},
                "non_smoker": NON_SMOKER_FACTOR,
            }
        }
    ]
