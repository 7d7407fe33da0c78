"""Small helpers for the desk tests: a desk, a call script on one lead, the buyer's hidden facts."""

from __future__ import annotations

from typing import Any

import salesgym
from salesgym.envs.desk.catalog import premium


def desk(n_leads: int = 8, shift_days: int = 1, seed: int = 3, **kwargs: Any) -> Any:
    env = salesgym.make("desk-v0", n_leads=n_leads, shift_days=shift_days, **kwargs)
    env.reset(seed=seed)
    return env


def step(env: Any, tool: str, **args: Any) -> dict[str, Any]:
    _, reward, _, _, info = env.step({"tool": tool, "args": args})
    return {**info["tool_result"], "reward": reward}


def quote_and_offer(env: Any, lead_id: str, plan: str = "TERM", cover: int = 500_000, term: int | None = 20,
                    discount: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    q = step(env, "products_quote_plan", lead_id=lead_id, plan_type=plan, coverage_amount=cover, term_years=term)
    o = step(env, "calling_propose_offer", plan_type=plan, coverage_amount=cover, term_years=term,
             monthly_premium=q["output"]["monthly_premium"], discount_pct=discount, next_step="follow_up")
    return q, o


def expected_premium(env: Any, lead_id: str, plan: str, cover: int, term: int | None) -> float:
    lead = env._world.leads[lead_id]
    return premium(plan, cover, term, lead.age, lead.risk_class, lead.smoker)
