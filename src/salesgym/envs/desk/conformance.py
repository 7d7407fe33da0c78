"""The desk's hooks for the conformance kit (``salesgym.testing``), loaded only by the kit.

- ``random_call(env, rng)``: a random, mostly well-formed call whose ids come from the live state, so many
  calls succeed and episodes get deep (a driver, not a policy: it reads operator-side state).
- ``hidden_variant(world, k)`` / ``neutral_variant(world)``: twin desks (``variants.py``).
- ``told(observation)``: what an observation tells the seller.
- ``LeakScanner``: what a seller must never see: each buyer's exact budget, need, trust, price sensitivity
  and patience (until discovery reveals the budget), hidden keys (archetype, persona, call limit, variant...),
  personas, evidence proofs and the verifier's key.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from salesgym.envs.desk.catalog import CATALOGUE
from salesgym.envs.desk.contract import TOPICS
from salesgym.envs.desk.variants import hidden_variant, neutral_variant

__all__ = ["LeakScanner", "hidden_variant", "neutral_variant", "random_call", "told"]

FORBIDDEN_KEYS = frozenset({"need", "trust", "price_sensitivity", "patience", "call_limit", "archetype", "persona",
                            "variant", "proof_ref", "score", "threshold"})  # fmt: skip
DISCOVERABLE_KEYS = frozenset({"budget", "dependents", "goal", "coverage"})  # only under "discovered"
# public clock, cost and price figures: a hidden number seen there is a coincidence
NUMERIC_WHITELIST = frozenset({"minute", "minutes_left", "time_cost", "waited_minutes", "due_minute", "window",
                               "desk", "monthly_premium", "converted_mrr", "plans", "state_version", "converted"})
PUBLIC_TEXT_KEYS = frozenset({"instructions"})


def _distinctive(value: float) -> bool:
    text = repr(value)
    return "." in text and not text.endswith(".0") and len(text.lstrip("-").replace(".", "")) >= 3


class LeakScanner:
    """Scans what the agent receives for hidden truth (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        hidden = env.hidden_truth()
        self.numbers: set[float] = set()
        self.strings: list[str] = [env._secret.decode()]
        for lead in hidden["leads"].values():
            self.numbers.update(v for v in (lead["budget"], lead["need"], lead["trust"], lead["price_sensitivity"],
                                            lead["patience"]) if _distinctive(v))  # fmt: skip
            self.strings.append(lead["persona"])
        self.revealed: set[float] = set()
        self.proofs: set[str] = set()

    @property
    def patterns(self) -> list[re.Pattern[str]]:
        return [re.compile(rf"(?<![\d.]){re.escape(repr(n))}(?!\d)") for n in sorted(self.numbers - self.revealed)]

    def learn(self, events: Sequence[dict[str, Any]]) -> None:
        for e in events:
            p = e["payload"]
            if e["kind"] == "discovery_answered" and isinstance(p["value"], float):
                self.revealed.add(p["value"])
            elif e["kind"] == "evidence_recorded":
                self.proofs.add(p["evidence"]["proof_ref"])

    def scan(self, obs: dict[str, Any], output: dict[str, Any]) -> None:
        patterns = self.patterns
        for where, tree in (("data", obs["data"]), ("output", output)):
            self._scan_tree(tree, where, "", patterns)
        blob = obs["text"] + "\n" + json.dumps(obs["data"]) + "\n" + json.dumps(output)
        for secret in self.strings:
            assert secret not in blob, f"hidden string {secret!r} leaked"
        for proof in self.proofs:
            assert proof not in blob, "an evidence proof leaked"
        assert "proof_ref" not in blob
        for line in obs["text"].splitlines()[1:]:
            if line.startswith("Last:"):
                continue  # the result line is checked structurally (its numbers are premiums and minutes)
            for pattern in patterns:
                assert not pattern.search(line), f"hidden number {pattern.pattern} in {line!r}"

    def _scan_tree(self, node: Any, where: str, key: str, patterns: list[re.Pattern[str]]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                assert k not in FORBIDDEN_KEYS, f"hidden key {k!r} at {where}"
                if k in DISCOVERABLE_KEYS:
                    assert key == "discovered", f"hidden key {k!r} outside 'discovered' at {where}"
                self._scan_tree(v, f"{where}.{k}", key if key in NUMERIC_WHITELIST else k, patterns)
        elif isinstance(node, (list, tuple)):
            for v in node:
                self._scan_tree(v, where, key, patterns)
        elif isinstance(node, float) and key not in NUMERIC_WHITELIST:
            assert node not in self.numbers - self.revealed, f"hidden number {node} at {where}"
        elif isinstance(node, str) and key not in PUBLIC_TEXT_KEYS:
            for pattern in patterns:
                assert not pattern.search(node), f"hidden number {pattern.pattern} in {node!r} at {where}"


TOOL_WEIGHTS = {"crm_search_leads": 2, "crm_get_lead": 2, "crm_add_note": 1, "crm_pipeline_summary": 1,
                "calendar_schedule_callback": 1, "calendar_list_callbacks": 1, "calling_start_call": 3,
                "calling_ask_discovery": 2, "products_quote_plan": 3, "calling_propose_offer": 3,
                "calling_end_call": 2, "products_list_plans": 1, "wait": 1}  # fmt: skip


def random_call(env: Any, rng: random.Random) -> dict[str, Any]:
    """A random, mostly well-formed desk call; ids come from the live state so many calls succeed."""
    s, w = env._state, env._world
    lead_id = s.call.lead_id if s.call is not None and rng.random() < 0.7 else rng.choice(sorted(w.leads))
    tool = rng.choices(list(TOOL_WEIGHTS), weights=list(TOOL_WEIGHTS.values()))[0]
    plan = rng.choice(list(CATALOGUE))
    spec = CATALOGUE[plan]
    cover = rng.choice((spec.min_cover, spec.min_cover * 4, spec.min_cover * 10))
    term = rng.choice((10, 20, 30)) if spec.term else None
    quotes = [q for q in s.quotes.values() if s.call is not None and q.lead_id == s.call.lead_id]
    if tool == "calling_propose_offer" and quotes:
        q = rng.choice(quotes)
        args: dict[str, Any] = {"plan_type": q.plan, "coverage_amount": q.coverage, "term_years": q.term_years,
                                "monthly_premium": q.premium if rng.random() < 0.8 else q.premium / 2,
                                "discount_pct": rng.choice((0, 0, 5, 15)),
                                "next_step": rng.choice(("close_today", "follow_up"))}  # fmt: skip
        return {"tool": tool, "args": args}
    if tool == "calling_propose_offer":
        tool = "products_quote_plan"
    args = {
        "crm_search_leads": {"min_income": rng.choice((None, 100_000)), "max_age": None,
                             "temperature": rng.choice((None, "hot", "cold")), "need_band": None, "status": None,
                             "sort_by": rng.choice(("id", "income", "need", "temperature")),
                             "limit": rng.randint(1, 10), "offset": 0},
        "crm_get_lead": {"lead_id": lead_id},
        "crm_add_note": {"lead_id": lead_id, "note": "spoke briefly"},
        "crm_pipeline_summary": {},
        "calendar_schedule_callback": {"lead_id": lead_id, "minutes_from_now": rng.choice((15, 30, 60)),
                                       "reason": "asked for time"},
        "calendar_list_callbacks": {"within_minutes": None, "include_closed": rng.random() < 0.5},
        "calling_start_call": {"lead_id": lead_id},
        "calling_ask_discovery": {"topic": rng.choice(TOPICS)},
        "products_quote_plan": {"lead_id": lead_id, "plan_type": plan, "coverage_amount": cover, "term_years": term},
        "calling_end_call": {"disposition": rng.choice(("callback", "not_interested", "other"))},
        "products_list_plans": {},
        "wait": {"minutes": rng.choice((1, 5, 20))},
    }[tool]  # fmt: skip
    return {"tool": tool, "args": args}


def told(obs: dict[str, Any]) -> Any:
    """What a desk observation tells the seller, apart from the clock, versions and costs: the last call's
    status and output, the pipeline, converted MRR and the active call."""
    data = obs["data"]
    last = data["last_result"]
    result = None if last is None else (last["status"], last["output"])
    return result, data["pipeline"], data["converted_mrr"], data["call"]
