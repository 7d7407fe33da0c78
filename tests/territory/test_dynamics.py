"""Properties of the territory's dynamics that must survive any change (docs/territory.md, the last section)."""

from __future__ import annotations

from statistics import mean
from typing import Any

import salesgym
from salesgym.agents.base import rollout
from salesgym.agents.territory.expected_value import ExpectedValue
from salesgym.agents.territory.memory import Deal
from salesgym.bench.runner import make_env
from salesgym.bench.splits import load


def _env(seed: int, n: int = 10, **kw: Any) -> Any:
    env = salesgym.make("territory-v0", n_opportunities=n, horizon_days=90, **kw)
    env.reset(seed=seed)
    return env


def _ok(env: Any, tool: str, **args: Any) -> dict[str, Any]:
    _, _, _, _, info = env.step({"tool": tool, "args": args})
    assert info["tool_result"]["status"] == "ok", info["tool_result"]
    return info["tool_result"]


def _reply_scheduled(env: Any, sid: str) -> dict[str, Any] | None:
    """The reply the buyer decided to send after the last message, if any (operator-side log)."""
    for e in reversed(env.event_log()):
        if e["kind"] == "message_sent":
            return None
        p = e["payload"]
        if e["kind"] == "scheduled" and p["what"] == "reply" and p["data"]["stakeholder_id"] == sid:
            return {"delay": round(p["due"] - e["time"], 4)}
    return None


def test_research_pays_informed_outreach_gets_more_replies() -> None:
    informed = uninformed = tries = 0
    for seed in range(6):
        base = _env(seed)
        for oid, opp in base.hidden_truth()["opportunities"].items():
            people = _ok(base, "find_stakeholders", opportunity_id=oid)["output"]["stakeholders"]
            for person in people[:3]:
                blind = base.clone()
                _ok(
                    blind,
                    "send_message",
                    stakeholder_id=person["id"],
                    subject="Hello",
                    body="We help companies like yours grow. Can we talk?",
                )
                uninformed += _reply_scheduled(blind, person["id"]) is not None
                smart = base.clone()
                keywords = _ok(smart, "research_account", account_id=opp["account_id"])["output"]["keywords"]
                _ok(
                    smart,
                    "send_message",
                    stakeholder_id=person["id"],
                    subject="Your priorities",
                    body="We can help with " + ", ".join(keywords) + ".",
                )
                informed += _reply_scheduled(smart, person["id"]) is not None
                tries += 1
    assert tries >= 100
    assert informed >= 1.3 * uninformed + 5, (informed, uninformed, tries)


def test_acting_on_one_deal_does_not_change_another_deals_dice() -> None:
    for seed in range(4):
        quiet, busy = _env(seed), _env(seed)
        for oid in ("o000", "o001", "o002"):  # the busy seller works other deals first (time moves on too)
            _ok(busy, "find_stakeholders", opportunity_id=oid)
            for p in busy.hidden_truth()["opportunities"][oid]["stakeholder_ids"][:2]:
                _ok(busy, "send_message", stakeholder_id=p, subject="hi", body="hello")
        for env in (quiet, busy):
            _ok(env, "find_stakeholders", opportunity_id="o005")
        outcomes = []
        for env in (quiet, busy):
            result = []
            for sid in env.hidden_truth()["opportunities"]["o005"]["stakeholder_ids"]:
                _ok(env, "send_message", stakeholder_id=sid, subject="hi", body="hello")
                result.append(_reply_scheduled(env, sid))
            outcomes.append(result)
        assert outcomes[0] == outcomes[1]


def test_the_exogenous_world_is_the_same_for_every_rollout() -> None:
    def tape_of(env: Any) -> list[tuple[float, str]]:
        return [(e["time"], e["payload"]["what"]) for e in env.event_log() if e["kind"] == "tape_item_due"]

    idle, active = _env(3, n=20, template="entrenched_competitor"), _env(3, n=20, template="entrenched_competitor")
    for oid in [f"o{i:03d}" for i in range(8)]:
        _ok(active, "find_stakeholders", opportunity_id=oid)
        _ok(active, "research_account", account_id="a" + oid[1:])
    for _ in range(4):  # a month of doing nothing
        _ok(idle, "wait", hours=None, until="next_week")
    while active._state.now < idle._state.now:
        _ok(active, "wait", hours=1, until=None)
    cut = idle._state.now
    assert tape_of(idle), "the template should pin competitor moves"
    assert [t for t in tape_of(active) if t[0] <= cut] == [t for t in tape_of(idle) if t[0] <= cut]


def test_when_the_weeks_seller_hours_run_out_only_wait_remains() -> None:
    env = _env(1)
    refused = None
    for _ in range(400):
        _, _, _, _, info = env.step({"tool": "research_account", "args": {"account_id": "a001"}})
        if info["tool_result"]["status"] == "error":
            refused = info["tool_result"]["output"]["error"]
            break
    assert refused is not None and "seller hours" in refused
    _ok(env, "wait", hours=None, until="next_week")
    _ok(env, "research_account", account_id="a002")  # Monday: hours are back


class _FirstCome(ExpectedValue):
    """expected-value, except that scarce SE and legal hours go to whichever deal asked first."""

    name = "ev-first-come"

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.asked: dict[str, float] = {}

    def booking_rank(self, deal: Deal) -> float:
        return self.asked.setdefault(deal.id, self.mem.now)


def test_capacity_binds_giving_scarce_hours_to_the_most_valuable_deals_beats_first_come() -> None:
    """Two sellers that differ only in who gets scarce SE and legal hours: by expected value per hour, or
    first come, first served. On the eval split the first wins on average and on most territories."""
    value_first, first_come = [], []
    for t in load("eval").territories:
        for out, cls in ((value_first, ExpectedValue), (first_come, _FirstCome)):
            env = make_env(t, None, "territory-v0")
            env.reset(seed=t.seed)
            for _ in rollout(env, cls(t.seed), t.seed):
                pass
            out.append(env.score()["primary"])
    wins = sum(a > b for a, b in zip(value_first, first_come, strict=True))
    losses = sum(a < b for a, b in zip(value_first, first_come, strict=True))
    assert mean(value_first) > mean(first_come) and wins > losses, (mean(value_first), mean(first_come), wins, losses)
