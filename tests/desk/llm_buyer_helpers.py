"""Helpers for the language-model buyer tests: a desk whose buyers a scripted OpenAI server plays, and replies."""

from __future__ import annotations

import json
import os
from typing import Any

import salesgym
from salesgym.envs.desk.catalog import CATALOGUE, premium
from salesgym.envs.desk.contract import SUITABLE_COVER_MAX, cover_need
from salesgym.envs.desk.llm_buyer import request_seed
from salesgym.testing.scripted_openai import Move, text_reply

KEY_ENV = "SALESGYM_TEST_BUYER_KEY"
os.environ[KEY_ENV] = "sk-buyer-not-a-real-key"
SEED = 3


def reply(decision: str, say: str = "Fine.", reason: str | None = None, dnc: bool = False) -> Move:
    return text_reply(json.dumps({"say": say, "decision": decision, "reason": reason, "do_not_call": dnc}))


def llm_desk(base_url: str, seed: int = SEED, n_leads: int = 8, **kwargs: Any) -> Any:
    config = {"model": "scripted-buyer", "base_url": base_url, "api_key_env": KEY_ENV, "max_retries": 0, **kwargs}
    env = salesgym.make("desk-v0", n_leads=n_leads, shift_days=1, buyer=config)
    env.reset(seed=seed)
    return env


def lead_seed(lead_id: str, world_seed: int = SEED) -> int:
    """The sampling seed of the requests about ``lead_id`` (the scripted server's key)."""
    return request_seed(world_seed, lead_id)


def act(env: Any, tool: str, **args: Any) -> dict[str, Any]:
    _, _, _, _, info = env.step({"tool": tool, "args": args})
    return dict(info["tool_result"])


def offer(env: Any, lead_id: str, pitch: str | None = None, cover: int = 500_000, plan: str = "TERM",
          term: int | None = 20, premium: float | None = None, quote: bool = True) -> dict[str, Any]:  # fmt: skip
    """Quote (unless ``quote`` is false) and propose ``plan`` at ``cover`` to the buyer on the line."""
    if quote:
        q = act(env, "products_quote_plan", lead_id=lead_id, plan_type=plan, coverage_amount=cover, term_years=term)
        premium = q["output"]["monthly_premium"] if premium is None else premium
    args = {"plan_type": plan, "coverage_amount": cover, "term_years": term, "monthly_premium": premium or 10.0,
            "discount_pct": 0, "next_step": "close_today"}  # fmt: skip
    if pitch is not None:
        args["pitch"] = pitch
    return act(env, "calling_propose_offer", **args)


def sell_unsuitable(env: Any, pitch: str) -> int:
    """On every lead the budget gate lets through, propose a 10-year term cover just over the suitable bound with
    ``pitch``; each must be accepted (the buyer complies) and flagged unsuitable. The number of such sales."""
    sold = 0
    for lead in env._world.leads.values():
        need = cover_need("TERM", lead.income, lead.dependents)
        cover = int(SUITABLE_COVER_MAX * need // 1000 + 1) * 1000  # just over the suitable bound
        if cover > CATALOGUE["TERM"].max_cover or not CATALOGUE["TERM"].min_age <= lead.age <= 70:
            continue
        if premium("TERM", cover, 10, lead.age, lead.risk_class, lead.smoker) > lead.budget:
            continue  # the budget gate refuses it before the model: not an unsuitable sale's case
        act(env, "calling_start_call", lead_id=lead.id)
        out = offer(env, lead.id, pitch=pitch, cover=cover, term=10)["output"]
        assert out["decision"] == "accept" and "unsuitable" in out["compliance"]
        act(env, "calling_end_call", disposition="other")
        sold += 1
    return sold


def all_request_text(server: Any) -> str:
    return "\n".join(json.dumps(r["body"]) for r in server.requests)
