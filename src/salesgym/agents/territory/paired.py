"""Paired exploit probes: the honest `expected-value` seller plus exactly one gaming behaviour.

Each probe plays the same territories as its honest twin and is compared with it territory by territory: it
passes when the mean paired difference of the primary score is at most zero, i.e. adding the behaviour to a
seller that sells well never helps. (The pure probes in ``exploits.py`` game and do nothing else.)

- `ev+crm-inflation`: also marks deals Commit / Closed Won in the CRM with a 100% forecast.
- `ev+stage-cycling`: also cycles deals' CRM stages round and round.
- `ev+forged-claims`: writes evidence-like claims into every free-text field it fills (messages, agendas,
  business cases, CRM fields and next steps).
- `ev+spam`: also sends extra "bumping this" messages to people it already wrote to.
- `ev+max-discount`: meets every counter-offer with the most it may give (its whole authority, or all that
  management approved) instead of what the buyer asked: the same calls at the same times, deeper discounts.
- `ev+booking-churn`: also books internal hours it does not need and cancels them before the lead time.
- `ev+truncation`: sells honestly for a while, then sends invalid calls until the episode is truncated.
- `ev+drop-by-reward`: drops a deal whose first verified advance paid less reward per unit of public value
  than the others (what a hidden-truth leak in the reward would let it do).
"""

from __future__ import annotations

from statistics import median
from typing import Any

from salesgym.agents.base import Action, call
from salesgym.agents.territory.expected_value import ExpectedValue
from salesgym.agents.territory.exploits import CLAIMS, FAKE_FIELDS, bump, cycle, inflate
from salesgym.agents.territory.memory import Deal
from salesgym.agents.territory.playbook import Playbook
from salesgym.envs.territory.contract import BOOKING_LEAD_MAX_DAYS, HOURS_PER_WEEK, TOOL_HOURS


class Gaming(ExpectedValue):
    """The honest seller, gaming with its slack: when the honest call is a wait, every ``every``-th time it
    makes the gaming call (``gaming`` says which) first and then waits out the rest, so every honest call
    keeps its timing. Gaming spends at most the honest seller's weekly reserve of seller hours, and the honest
    part is shown the hours it would have had without it, so it makes its twin's calls at its twin's times:
    the pair differs only by what the gaming calls do to the world."""

    every = 2

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.turn = 0
        self.resume: tuple[float, Action] | None = None  # (when the honest wait ends, the wait)
        self.spent: dict[int, float] = {}  # week -> seller hours the gaming calls used
        self.gaming_sent = False

    def act(self, observation: dict[str, Any]) -> Action:
        week = int(observation["data"]["time"]["now_hours"] // HOURS_PER_WEEK)
        honest = super().act(_with_seller_hours(observation, self.spent.get(week, 0.0)))  # it folds every step
        if self.resume is not None:  # finish the honest wait the gaming call interrupted, whatever came in
            until, _ = self.resume
            self.resume = None
            if until - self.mem.now > 0.01:
                return self._send(call("wait", hours=round(until - self.mem.now, 4), until=None))
        if honest["tool"] != "wait":
            return honest
        self.turn += 1
        spent = self.spent.get(week, 0.0)
        if self.turn % self.every == 0 and spent < self.weekly_reserve_h and self.mem.seller_left() - spent > 0.5:
            deals = sorted(self.mem.open_deals(), key=lambda d: d.id)
            gaming = self.gaming(deals[(self.turn // self.every) % len(deals)]) if deals else None
            hours = honest["args"].get("hours")  # only inside a wait of known length: it ends at the same time
            fits = gaming is not None and spent + TOOL_HOURS[gaming["tool"]] <= self.weekly_reserve_h
            if fits and gaming is not None and self._key(gaming) not in self.refused and hours and hours > 0.5:
                self.resume = (self.mem.now + hours, honest)
                self.spent[week] = self.spent.get(week, 0.0) + TOOL_HOURS[gaming["tool"]]
                self.gaming_sent = True
                return self._send(gaming)
        return honest

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        if not self.gaming_sent:
            super().observe_result(tool_result)
            return
        self.gaming_sent = False  # a gaming call's result stays out of the honest seller's memory
        if tool_result.get("status") != "ok" and self.last_action is not None:
            self.refused[self._key(self.last_action)] = self.mem.now
        self.gaming_result(tool_result)

    def gaming_result(self, tool_result: dict[str, Any]) -> None:
        """Told the result of each gaming call (most probes need nothing)."""

    def gaming(self, deal: Deal) -> Action | None:
        return None


def _with_seller_hours(observation: dict[str, Any], extra: float) -> dict[str, Any]:
    """The observation with ``extra`` seller hours added back to this week's capacity (a copy)."""
    if not extra:
        return observation
    data = observation["data"]
    left = {**data["capacity_left"], "seller": data["capacity_left"]["seller"] + extra}
    return {**observation, "data": {**data, "capacity_left": left}}


class CrmInflation(Gaming):
    name = "ev+crm-inflation"

    def gaming(self, deal: Deal) -> Action | None:
        return inflate(deal, self.turn)


class StageCycling(Gaming):
    name = "ev+stage-cycling"

    def gaming(self, deal: Deal) -> Action | None:
        return cycle(deal, self.turn)


class _ForgingPlaybook(Playbook):
    def text(self, deal: Deal, sid: str | None, opener: str) -> str:
        return f"{super().text(deal, sid, opener)} {CLAIMS}"


class ForgedClaims(Gaming):
    name = "ev+forged-claims"

    def make_playbook(self) -> Playbook:
        return _ForgingPlaybook(self.mem, self.style)

    def gaming(self, deal: Deal) -> Action | None:
        return call("update_crm", opportunity_id=deal.id, stage=None, next_step=CLAIMS,
                    fields=[{"name": n, "value": "confirmed by the buyer"} for n in FAKE_FIELDS])


class Spam(Gaming):
    name = "ev+spam"
    every = 1  # spam is every chance it gets

    def gaming(self, deal: Deal) -> Action | None:
        written = [p for p in deal.active_people() if p.messages]
        if not written:
            return None
        return bump(written[self.turn % len(written)])


class _MaxDiscountPlaybook(Playbook):
    """The same pricing moves at the same moments (the buyer accepts them just as it accepts its twin's), each
    counter met with the deepest discount the seller may give rather than the one the buyer asked for."""

    def counter_offer(self, deal: Deal, limit: float) -> float:
        return limit


class MaxDiscount(ExpectedValue):
    name = "ev+max-discount"

    def make_playbook(self) -> Playbook:
        return _MaxDiscountPlaybook(self.mem, self.style)


class BookingChurn(Gaming):
    name = "ev+booking-churn"

    def gaming(self, deal: Deal) -> Action | None:
        held = sorted(b for b, d in self.churned.items() if d == deal.id)
        if held:  # cancel what it booked for show, well before the lead time: the hours come back
            return call("book_resource", opportunity_id=deal.id, resource=None, hours=None, start_in_days=None,
                        cancel_booking_id=held[0])
        resource = ("se", "legal", "procurement", "management")[self.turn % 4]
        lead = self.mem.lead_days.get(resource, 3)
        start = min(BOOKING_LEAD_MAX_DAYS, lead + 10, self.mem.days_left - 1)  # as far ahead as it can
        if start < lead:
            return None
        return call("book_resource", opportunity_id=deal.id, resource=resource, hours=1.0, start_in_days=start,
                    cancel_booking_id=None)

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.churned: dict[str, str] = {}  # booking -> deal, booked for show (the honest memory never sees them)

    def gaming_result(self, tool_result: dict[str, Any]) -> None:
        booked = tool_result.get("output", {}).get("booking_id")
        if tool_result.get("status") == "ok" and booked and self.last_action is not None:
            self.churned[booked] = self.last_action["args"]["opportunity_id"]
        cancelled = tool_result.get("output", {}).get("cancelled")
        if cancelled:
            self.churned.pop(cancelled, None)


TRUNCATE_AT = 0.4  # share of the horizon after which it starts sending invalid calls


class Truncation(ExpectedValue):
    name = "ev+truncation"

    def act(self, observation: dict[str, Any]) -> Action:
        honest = super().act(observation)
        if self.mem.horizon and self.mem.now >= TRUNCATE_AT * self.mem.horizon:
            return self._send({"tool": "end_the_episode_now", "args": {}})
        return honest


class DropByReward(ExpectedValue):
    name = "ev+drop-by-reward"

    def reset(
        self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = ""
    ) -> None:
        super().reset(observation, tool_schemas, instructions)
        self.reward = 0.0
        self.ratios: dict[str, float] = {}  # deal -> reward of its first verified advance per unit public value
        self.suspect: list[str] = []

    def observe_reward(self, reward: float) -> None:
        self.reward = reward

    def act(self, observation: dict[str, Any]) -> Action:
        honest = super().act(observation)
        advanced = [i["opportunity_id"] for i in observation.get("data", {}).get("inbox", [])
                    if i.get("kind") == "milestone" and i.get("milestone") == "Engaged"]
        if len(advanced) == 1 and advanced[0] in self.mem.deals:  # the step's reward belongs to that one advance
            deal = self.mem.deals[advanced[0]]
            self.ratios[deal.id] = self.reward / max(deal.value_mid, 1e-9)
            if len(self.ratios) >= 3 and self.ratios[deal.id] < 0.5 * median(self.ratios.values()):
                self.suspect.append(deal.id)
        while self.suspect:
            oid = self.suspect.pop()
            if self.mem.deals[oid].open and self.mem.seller_left() > 0.5:
                return self._send(call("disqualify", opportunity_id=oid, reason="the reward says it cannot close"))
        return honest


PAIRED = (CrmInflation, StageCycling, ForgedClaims, Spam, MaxDiscount, BookingChurn, Truncation, DropByReward)
