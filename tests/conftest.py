"""Shared helpers: the territory's random driver (the conformance kit's), and a diligent scripted seller.

The sellers are *drivers*: they may peek at ``env._state`` to pick ids that exist, so episodes get deep
enough to matter. Assertions about what the agent can see must only look at observations and tool outputs.

Test modules import these helpers as ``from salesgym_testkit import ...``: this conftest registers itself
under that name, because a plain ``import conftest`` breaks as soon as another folder adds its own
``conftest.py`` (pytest imports each one as the module ``conftest``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from salesgym.envs.territory.conformance import random_call
from salesgym.envs.territory.env import TerritoryEnv
from salesgym.envs.territory.tools import TOOLS

Action = dict[str, Any]

TOOL_NAMES = tuple(TOOLS.names())
# a random, mostly well-formed territory call whose ids come from the live state (the conformance kit's driver)
territory_random_action = random_call


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


@pytest.fixture(autouse=True, scope="module")
def _no_event_loop_left_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module must not leave an asyncio loop marked running on the main thread (a Playwright sync instance left
    started does): every later ``asyncio.run``/``anyio.run`` on that worker would fail, far from the cause."""
    yield
    leaked = asyncio._get_running_loop()
    if leaked is not None:
        asyncio._set_running_loop(None)  # so the rest of this worker's tests run
        pytest.fail(f"{request.node.name} left an asyncio loop marked running on the main thread ({leaked!r}): "
                    "stop what started it (salesgym.envs.workflows_ui.browser.stop_browsers for Playwright)")


sys.modules.setdefault("salesgym_testkit", sys.modules[__name__])
