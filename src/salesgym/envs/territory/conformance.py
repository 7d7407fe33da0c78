"""The territory's hooks for the conformance kit (``salesgym.testing``), loaded only by the kit.

- ``random_call(env, rng)``: a random, mostly well-formed call whose ids come from the live state, so many
  calls succeed and episodes get deep (a driver, not a policy: it may read operator-side state).
- ``hidden_variant(world, k)``: a twin world with the same public facts and different hidden truth.
- ``LeakScanner``: what a seller must never see.

:class:`LeakScanner` is built operator-side from ``hidden_truth()``: hidden numbers with enough digits to be
recognised, hidden strings (non-viability reasons, personas, the verifier's key), competitor names before any
notice, roles before discovery revealed them, evidence proofs. ``learn(events)`` tells it what the seller has
legitimately been shown; ``scan(observation, output)`` raises ``AssertionError`` on anything else.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from salesgym.envs.territory.tools import TOOLS
from salesgym.envs.territory.variants import hidden_variant

__all__ = ["ROLE_WORDS", "LeakScanner", "distinctive", "hidden_variant", "neutral_variant", "random_call", "told"]

FORBIDDEN_KEYS = frozenset({"true_value", "required_discount", "viable", "authority", "disposition", "persona",
                            "proof_ref", "deadline_day", "budget_day", "nonviable_reason", "competitor",
                            "competitor_aggression", "fit", "responsiveness_h", "pains_hidden", "mechanisms",
                            "tape", "penalty"})
ROLE_WORDS: tuple[str, ...] = ("economic_buyer", "technical_evaluator", "champion", "blocker")
# public clock, cost, capacity and territory figures: a hidden number seen there is a coincidence
NUMERIC_WHITELIST = frozenset({"now_hours", "time_cost", "hours", "se_hours", "state_version", "day", "week",
                               "days_left", "authority_pct", "invalid_actions", "last_activity_day", "capacity_left",
                               "resource_cost", "territory", "discount_pct", "page", "pages", "total"})


# the task card is built from the world's public facts and the contract alone (its tool costs can equal a
# hidden number by chance); the side-channel check compares it across worlds that differ in hidden truth
PUBLIC_TEXT_KEYS = frozenset({"instructions"})


def number_pattern(value: float) -> re.Pattern[str]:
    return re.compile(rf"(?<![\d.]){re.escape(repr(value))}(?!\d)")


def numbers_pattern(values: Sequence[float]) -> re.Pattern[str] | None:
    """One pattern that matches where any of ``number_pattern(v)`` would (an alternation inside the same
    guards), so a text is searched once, not once per hidden number (thousands at 100 opportunities)."""
    if not values:
        return None
    return re.compile(rf"(?<![\d.])(?:{'|'.join(re.escape(repr(v)) for v in values)})(?!\d)")


def distinctive(value: float) -> bool:
    """Numbers with enough digits that seeing one by chance is implausible."""
    text = repr(value)
    return "." in text and not text.endswith(".0") and len(text.lstrip("-").replace(".", "")) >= 3


class LeakScanner:
    """Scans what the agent receives for hidden truth (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        hidden = env.hidden_truth()
        self.stakeholders: dict[str, Any] = hidden["stakeholders"]
        self.numbers: list[float] = []
        self.strings: list[str] = []
        self.competitors: set[str] = set()
        public_vocab = " ".join(_public_vocabulary(env)).lower()
        for opp in hidden["opportunities"].values():
            self.numbers += [opp["true_value"], opp["required_discount"]]
            if opp["nonviable_reason"]:
                self.strings.append(opp["nonviable_reason"])
            if opp["competitor"]:
                self.competitors.add(opp["competitor"])
        for person in self.stakeholders.values():
            self.numbers += [person["authority"], person["disposition"], person["responsiveness_h"]]
            if person["persona"].lower() not in public_vocab:
                self.strings.append(person["persona"])
        self.numbers = [n for n in self.numbers if distinctive(n)]
        self.number_set = frozenset(self.numbers)
        self.patterns = [number_pattern(n) for n in self.numbers]  # to name the one found
        self.any_number = numbers_pattern(self.numbers)
        self.strings.append(env._secret.decode())
        self.revealed_roles: set[str] = set()
        self.competitor_noticed: set[str] = set()
        self.proofs: set[str] = set()

    def learn(self, events: Sequence[dict[str, Any]]) -> None:
        """Update what the agent has legitimately learnt (discovery, competitor notices) and the proofs."""
        for e in events:
            p = e["payload"]
            if e["kind"] == "discovery_held":
                self.revealed_roles.update(p["roles"])
                if p.get("eb_hint"):
                    self.revealed_roles.add(p["eb_hint"])
            elif e["kind"] == "inbox_received" and p["kind"] == "competitor":
                self.competitor_noticed.update(c for c in self.competitors if c in p["text"])
            elif e["kind"] == "evidence_recorded":
                self.proofs.add(p["evidence"]["proof_ref"])

    def scan(self, obs: dict[str, Any], output: dict[str, Any]) -> None:
        for where, tree in (("data", obs["data"]), ("output", output)):
            self._scan_tree(tree, where)
        text = obs["text"]
        blob = text + "\n" + json.dumps(obs["data"]) + "\n" + json.dumps(output)
        for secret in self.strings:
            assert secret not in blob, f"hidden string {secret!r} leaked"
        for proof in self.proofs:
            assert proof not in blob, "an evidence proof leaked"
        assert "proof_ref" not in blob
        for competitor in self.competitors - self.competitor_noticed:
            assert competitor not in blob, f"competitor {competitor!r} named before any notice"
        for line in text.splitlines():
            if line.startswith(("Last:", "Mon ", "Tue ", "Wed ", "Thu ", "Fri ")):
                continue  # the result line is checked structurally; the first line is the clock and capacity
            self._no_number(line, "the text")

    def _scan_tree(self, node: Any, where: str, key: str = "") -> None:
        if isinstance(node, dict) and isinstance(node.get("columns"), (list, tuple)) and "rows" in node:
            node = {"rows": [dict(zip(node["columns"], row, strict=True)) for row in node["rows"]]}
        if isinstance(node, dict):
            for k, v in node.items():
                assert k not in FORBIDDEN_KEYS, f"hidden key {k!r} at {where}"
                if k in self.stakeholders and isinstance(v, str) and v in ROLE_WORDS:
                    assert k in self.revealed_roles, f"role of {k} shown before discovery at {where}"
                if k in ROLE_WORDS and isinstance(v, str) and v in self.stakeholders:
                    assert v in self.revealed_roles, f"{v} named {k} before discovery at {where}"
                self._scan_tree(v, f"{where}.{k}", k if key not in NUMERIC_WHITELIST else key)
            if node.get("role") is not None and node.get("id") in self.stakeholders:
                assert node["id"] in self.revealed_roles, f"role of {node['id']} shown at {where}"
        elif isinstance(node, (list, tuple)):
            for v in node:
                self._scan_tree(v, where, key)
        elif isinstance(node, float) and key not in NUMERIC_WHITELIST:
            assert node not in self.number_set, f"hidden number {node} at {where}"
        elif isinstance(node, str) and key not in PUBLIC_TEXT_KEYS:
            self._no_number(node, where)

    def _no_number(self, text: str, where: str) -> None:
        if self.any_number is None or not self.any_number.search(text):
            return
        found = next(p.pattern for p in self.patterns if p.search(text))
        raise AssertionError(f"hidden number {found} in {text!r} at {where}")


def _public_vocabulary(env: Any) -> list[str]:
    spec = env._world.spec
    words = [*spec.industries, *spec.product_lines, *spec.stacks, *spec.company_words]
    words += [t for titles in spec.titles.values() for t in titles]
    for pain in spec.pains:
        words += [pain.label, *pain.keywords, *pain.headlines]
    return words


def random_call(env: Any, rng: random.Random) -> dict[str, Any]:
    """A random, mostly well-formed territory call; ids come from the live state so many calls succeed."""
    s, w = env._state, env._world
    oid = rng.choice(sorted(w.opportunities))
    known = sorted(sid for sid, p in s.people.items() if p.known)
    sid = rng.choice(known) if known else oid + "s0"
    acc = w.opportunities[oid].account_id
    kws = sorted(s.researched.get(acc, ()))
    body = " ".join(rng.sample(kws, min(2, len(kws)))) if kws else "hello"
    bookings = sorted(s.bookings) or ["b0000"]
    meetings = sorted(s.meetings) or ["m0000"]
    tool = rng.choice([*TOOLS.names(), "wait", "wait", "wait", "view_opportunity"])
    if tool == "disqualify" and rng.random() < 0.7:  # disqualify ends deals quickly; keep it rare so episodes last
        tool = "wait"
    args: dict[str, Any] = {
        "view_opportunity": {"opportunity_id": rng.choice([None, oid]), "page": 0},
        "research_account": {"account_id": acc},
        "find_stakeholders": {"opportunity_id": oid},
        "send_message": {"stakeholder_id": sid, "subject": "hi", "body": body},
        "schedule_meeting": {"opportunity_id": oid, "stakeholder_ids": [sid], "agenda": body,
                             "in_days": rng.randint(1, 5)},
        "book_resource": {"opportunity_id": oid, "resource": rng.choice(["se", "legal", "procurement", "management"]),
                          "hours": rng.choice([1, 2, 4]), "start_in_days": rng.randint(0, 6),
                          "cancel_booking_id": None},
        "run_discovery": {"meeting_id": rng.choice(meetings)},
        "run_technical_evaluation": {"opportunity_id": oid, "booking_id": rng.choice(bookings)},
        "build_business_case": {"opportunity_id": oid, "summary": body},
        "propose_action_plan": {"opportunity_id": oid, "sponsor_id": sid, "close_in_days": rng.randint(5, 60)},
        "send_proposal": {"opportunity_id": oid, "discount_pct": rng.choice([0, 5, 10, 20])},
        "negotiate": {"opportunity_id": oid, "discount_pct": rng.choice([5, 10, 15, 25])},
        "request_approval": {"opportunity_id": oid, "kind": rng.choice(["security", "legal", "procurement"]),
                             "booking_id": rng.choice(bookings)},
        "escalate": {"opportunity_id": oid, "purpose": rng.choice(["discount", "executive_sponsor"]),
                     "discount_pct": 20, "booking_id": rng.choice(bookings)},
        "send_contract": {"opportunity_id": oid},
        "update_crm": {"opportunity_id": oid, "stage": rng.choice([None, "Commit", "Discovery"]), "fields": [],
                       "next_step": None},
        "disqualify": {"opportunity_id": oid, "reason": "not a fit"},
        "wait": {"hours": rng.choice([1, 4, 8]), "until": None} if rng.random() < 0.7
        else {"hours": None, "until": "next_event"},
    }[tool]
    return {"tool": tool, "args": args}


def neutral_variant(world: Any) -> Any:
    """A twin that differs only in values no buyer decision reads (each deal's true value): it must pay the
    same rewards for the same calls, although discovery quotes it a different budget band."""
    import dataclasses

    scaled = {oid: o._replace(true_value=round(o.true_value * 1.1 + 1.0, 1)) for oid, o in world.opportunities.items()}
    return dataclasses.replace(world, opportunities=scaled)


def told(obs: dict[str, Any]) -> Any:
    """What a territory observation tells the seller, apart from ids, versions, the clock and costs: the new
    inbox items (when each arrived is what a buyer's behaviour shows), the last call's status and output, the
    verified milestones."""
    data = obs["data"]
    inbox = data["inbox"]
    last = data["last_result"]
    result = None if last is None else (last["status"], last["output"])
    rows = [row[:3] for row in data["portfolio"]["rows"]]
    return inbox, result, rows
