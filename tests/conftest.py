"""Shared fixtures: the registered environment cases, a random seller and a diligent scripted seller.

The sellers are *drivers*: they may peek at ``env._state`` to pick ids that exist, so episodes get deep
enough to matter. Assertions about what the agent can see must only look at observations and tool outputs.

Test modules import these helpers as ``from salesgym_testkit import ...``: this conftest registers itself
under that name, because a plain ``import conftest`` breaks as soon as another folder adds its own
``conftest.py`` (pytest imports each one as the module ``conftest``).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

import salesgym
from salesgym.envs.territory.env import TerritoryEnv

Action = dict[str, Any]
Policy = Callable[[Any, random.Random], Action]

TOOL_NAMES = (
    "view_opportunity", "research_account", "find_stakeholders", "send_message", "schedule_meeting", "book_resource",
    "run_discovery", "run_technical_evaluation", "build_business_case", "propose_action_plan", "send_proposal",
    "negotiate", "request_approval", "escalate", "send_contract", "update_crm", "disqualify", "wait",
)


def territory_random_action(env: TerritoryEnv, rng: random.Random) -> Action:
    """A random, mostly well-formed territory call; ids come from the live state so many calls succeed."""
    s, w = env._state, env._world
    assert s is not None and w is not None
    oid = rng.choice(sorted(w.opportunities))
    known = sorted(sid for sid, p in s.people.items() if p.known)
    sid = rng.choice(known) if known else oid + "s0"
    acc = w.opportunities[oid].account_id
    kws = sorted(s.researched.get(acc, ()))
    body = " ".join(rng.sample(kws, min(2, len(kws)))) if kws else "hello"
    bookings = sorted(s.bookings) or ["b000000"]
    meetings = sorted(s.meetings) or ["m000000"]
    tool = rng.choice([*TOOL_NAMES, "wait", "wait", "wait", "view_opportunity"])
    # disqualify ends deals quickly; keep it rare so episodes last
    if tool == "disqualify" and rng.random() < 0.7:
        tool = "wait"
    args: dict[str, Any] = {
        "view_opportunity": {"opportunity_id": rng.choice([None, oid])},
        "research_account": {"account_id": acc},
        "find_stakeholders": {"opportunity_id": oid},
        "send_message": {"stakeholder_id": sid, "subject": "hi", "body": body},
        "schedule_meeting": {"opportunity_id": oid, "stakeholder_ids": [sid], "agenda": body,
                             "in_days": rng.randint(1, 5)},
        "book_resource": {"opportunity_id": oid, "resource": rng.choice(["se", "legal", "procurement", "management"]),
                          "hours": rng.choice([1, 2, 4]), "start_in_days": rng.randint(0, 6)},
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


@dataclass(frozen=True)
class EnvCase:
    """One registered environment configuration the conformance suite runs against."""

    name: str
    env_id: str
    kwargs: Mapping[str, Any]
    policy: Policy
    family: str = "territory"

    def make(self) -> Any:
        return salesgym.make(self.env_id, **self.kwargs)


def _territory(name: str, n: int, family: str, template: str) -> EnvCase:
    kwargs = {"n_opportunities": n, "horizon_days": 30, "family": family, "template": template}
    return EnvCase(name, "territory-v0", kwargs, territory_random_action)


# A new environment or scenario is one line here; every conformance test then runs on it.
ENV_CASES: tuple[EnvCase, ...] = (
    _territory("territory-4-saas-standard", 4, "midmarket_saas", "standard"),
    _territory("territory-4-security-big_committee", 4, "enterprise_security", "big_committee"),
    _territory("territory-10-healthcare-budget_freeze", 10, "healthcare", "budget_freeze"),
    _territory("territory-10-public-procurement_gauntlet", 10, "public_sector", "procurement_gauntlet"),
    EnvCase("territory-debug-v0", "territory-debug-v0", {}, territory_random_action),
)


@pytest.fixture(params=ENV_CASES, ids=[c.name for c in ENV_CASES])
def env_case(request: pytest.FixtureRequest) -> EnvCase:
    case: EnvCase = request.param
    return case


@dataclass
class Step:
    action: Any
    obs: dict[str, Any]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


@dataclass
class Rollout:
    seed: int
    reset_obs: dict[str, Any]
    steps: list[Step] = field(default_factory=list)

    @property
    def actions(self) -> list[Any]:
        return [s.action for s in self.steps]

    @property
    def rewards(self) -> list[float]:
        return [s.reward for s in self.steps]


def play(env: Any, actions: Iterator[Any] | list[Any], *, seed: int | None = None, reset: bool = True,
         max_steps: int = 10_000) -> Rollout:
    """Reset (optionally) and feed ``actions`` until they run out or the episode ends."""
    obs = env.reset(seed=seed)[0] if reset else env.observe()
    out = Rollout(-1 if seed is None else seed, obs)
    for i, action in enumerate(actions):
        if i >= max_steps:
            break
        obs, reward, terminated, truncated, info = env.step(action)
        out.steps.append(Step(action, obs, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return out


def random_actions(env: Any, policy: Policy, policy_seed: int) -> Iterator[Action]:
    rng = random.Random(policy_seed)
    while True:
        yield policy(env, rng)


def play_random(case: EnvCase, seed: int, policy_seed: int, max_steps: int = 400) -> tuple[Any, Rollout]:
    env = case.make()
    env.reset(seed=seed)
    return env, play(env, random_actions(env, case.policy, policy_seed), seed=seed, max_steps=max_steps)


class DiligentSeller:
    """A scripted territory seller: research, find the committee, write to everyone, meet, discover, build a
    case, keep the CRM. Every free-text field it writes comes from ``text(kind, opportunity_id)``, so two
    runs that differ only in what the seller *writes* can be compared."""

    def __init__(self, text: Callable[[str, str], str] | None = None, crm_fields: bool = True) -> None:
        self.text = text or (lambda kind, oid: "Following up on our conversation.")
        self.crm_fields = crm_fields
        self.done: set[tuple[str, str]] = set()

    def _once(self, what: str, oid: str) -> bool:
        if (what, oid) in self.done:
            return False
        self.done.add((what, oid))
        return True

    def act(self, env: TerritoryEnv) -> Action:
        s, w = env._state, env._world
        assert s is not None and w is not None
        obs = env.observe()
        if obs["data"]["capacity_left"]["seller"] < 3.5:
            return {"tool": "wait", "args": {"hours": None, "until": "next_week"}}
        for m in sorted(s.meetings.values(), key=lambda m: m.id):
            if (not m.discovery_done and m.accepted and m.start <= s.now < m.start + 8.0
                    and s.deals[m.opportunity_id].status == "open"):
                return {"tool": "run_discovery", "args": {"meeting_id": m.id}}
        for oid, opp in sorted(w.opportunities.items()):
            if s.deals[oid].status != "open":
                continue
            kws = " ".join(sorted(s.researched.get(opp.account_id, ()))[:3])
            if opp.account_id not in s.researched and self._once("research", oid):
                return {"tool": "research_account", "args": {"account_id": opp.account_id}}
            if self._once("find", oid):
                return {"tool": "find_stakeholders", "args": {"opportunity_id": oid}}
            for sid in opp.stakeholder_ids:
                if s.people[sid].known and not s.people[sid].left and self._once("message:" + sid, oid):
                    body = f"{kws}. {self.text('message', oid)}"
                    return {"tool": "send_message", "args": {"stakeholder_id": sid, "subject": "Hello",
                                                             "body": body}}
            if self._once("meeting", oid):
                invitees = [sid for sid in opp.stakeholder_ids if not s.people[sid].left][:6]
                return {"tool": "schedule_meeting", "args": {"opportunity_id": oid, "stakeholder_ids": invitees,
                                                             "agenda": f"{kws}. {self.text('agenda', oid)}",
                                                             "in_days": 2}}
            if self._once("case", oid):
                return {"tool": "build_business_case",
                        "args": {"opportunity_id": oid, "summary": f"{kws}. {self.text('case', oid)}"}}
            if self._once("crm", oid):
                fields = [{"name": "notes", "value": self.text("crm", oid)},
                          {"name": "budget", "value": self.text("crm_budget", oid)}] if self.crm_fields else []
                return {"tool": "update_crm", "args": {"opportunity_id": oid, "stage": None, "fields": fields,
                                                       "next_step": self.text("next_step", oid)}}
        upcoming = [m.start for m in s.meetings.values()
                    if not m.discovery_done and m.accepted and m.start > s.now
                    and s.deals[m.opportunity_id].status == "open"]
        head = s.scheduler.peek()
        if upcoming and (head is None or min(upcoming) < head.due):
            return {"tool": "wait", "args": {"hours": min(80.0, max(0.25, round(min(upcoming) - s.now, 2))),
                                             "until": None}}
        return {"tool": "wait", "args": {"hours": None, "until": "next_event"}}


def play_diligent(env: TerritoryEnv, seed: int, seller: DiligentSeller, max_steps: int = 300,
                  extra: Callable[[TerritoryEnv, int], Action | None] | None = None) -> Rollout:
    """Reset and let ``seller`` act; ``extra(env, step)`` may inject a call at a step instead."""
    obs, _ = env.reset(seed=seed)
    out = Rollout(seed, obs)
    for i in range(max_steps):
        action = (extra(env, i) if extra is not None else None) or seller.act(env)
        obs, reward, terminated, truncated, info = env.step(action)
        out.steps.append(Step(action, obs, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return out


sys.modules.setdefault("salesgym_testkit", sys.modules[__name__])
