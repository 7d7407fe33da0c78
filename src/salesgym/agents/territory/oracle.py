"""`oracle`: a seller with perfect information (operator side; headroom, never ranked).

It receives ``hidden_truth`` (``env.hidden_truth()``) and knows the buyers' decision rules
(``salesgym.envs.territory.buyers``). It uses them to *choose*, never to substitute for buyer evidence: it acts
only through the tools, and every milestone still comes from a buyer answering one of its calls.

What it knows, and how it uses it:

- **Viability and value.** Dead deals are only written to for a reply (Engaged is all they can ever earn);
  viable ones are ranked by their true value at the price they will close at, times the odds that their
  technical evaluation passes within a week's SE hours, per scarce hour they still need.
- **The committee.** Each person's true role, authority, pains, reply latency and starting disposition. It
  messages and invites only the people a decision depends on (the champion before the senior people, who
  ignore cold outreach), references exactly their pains (full relevance, never the distractor headline), and
  keeps a ledger of everyone's disposition from what its own calls and the inbox did to them (replies,
  discovery conversations, the business case, the executive call, setbacks, competitor moves). So it knows who
  can confirm the budget, who is warm enough to sponsor, own the plan or sign.
- **How buyers decide.** Evaluations and reviews read the evaluator's or approver's disposition when they
  finish: deals to close get discovery meetings with everyone whose decision is still ahead (each one warms
  every attendee) until they are warm, and internal hours are booked for the odds wanted (85% for an
  evaluation, 90% for a review, capped by a week's capacity), not a fixed amount.
- **The timeline.** The budget day and the freezes on the tape (the budget is confirmed in a meeting held when
  money is open; everything else is done before), the real deadline (the plan is dated inside it, the contract
  is sent so that its answer lands just as the deal reaches Commit, inside the deadline), competitor price
  cuts (the offer is exactly the discount the buyer will need when it answers, after a business case and a
  warm economic buyer lowered it; management's approval is asked first when that is above our authority).
- **Scarce hours.** Every day it picks the deals to *close*: those already chosen, then by value per scarce
  hour, as long as their remaining SE, legal, procurement and management bookings fit the weeks to come early
  enough for the buyer's answer to land inside the episode, and the seller's hours cover them. Spare SE hours
  validate deals whose evaluation is cheap; every other viable deal is only qualified, with seller hours the
  deals to close leave. A deal to close may take a week's booking from a lower-ranked one while that booking
  can still be cancelled for a refund.

Here: the sales motion (``OraclePlaybook``) and the seller that plans the days (``Oracle``); the numbers are in
``oracle_rules.py``, the beliefs read from the hidden truth in ``oracle_beliefs.py``, the weeks of internal hours
in ``oracle_calendar.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from salesgym.agents.base import Action, call
from salesgym.agents.territory.memory import Booking, Deal
from salesgym.agents.territory.oracle_calendar import OracleCalendar
from salesgym.agents.territory.oracle_rules import (
    CONTRACT_DELAY_H,
    DISCOVERY_HOURS,
    ENGAGE_SURE,
    LATENCY,
    QUALIFY_GAP_DAYS,
    SELLER_TO_CLOSE,
    SENIOR,
    SIGNER_WARMTH,
    SPONSOR_WARMTH,
    TEAMS,
    TECH_DAYS,
    TECH_TARGET,
    URGENT,
    USABLE_H,
    VALIDATE_MAX_SE,
    WARM_EB,
    WARM_ENOUGH,
    WARM_MARGIN,
)
from salesgym.agents.territory.playbook import Move, Playbook
from salesgym.agents.territory.seller import ScriptedSeller
from salesgym.envs.territory.buyers import (  # operator side: the oracle knows how buyers decide
    PLAN_MIN_AUTHORITY,
    PLAN_MIN_DISPOSITION,
)
from salesgym.envs.territory.contract import (
    APPROVAL_DAYS,
    APPROVAL_RESOURCE,
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    MEETING_LEAD_MAX_DAYS,
    MIN_BOOKING_HOURS,
)
from salesgym.envs.territory.verifier import MILESTONE_WEIGHTS


class OraclePlaybook(OracleCalendar):
    """The sales motion for one deal, with every belief read from the hidden truth (``oracle_beliefs.py``) and
    internal hours planned by week (``oracle_calendar.py``). The seller sets each deal's mode (``close``,
    ``validate``, ``qualify``, ``engage`` or ``skip``), which decides the steps it takes."""

    # -- the motion -----------------------------------------------------------------------------------------
    def moves(self, deal: Deal) -> Iterator[Move]:
        """Every useful call on ``deal`` now, most urgent first (the seller takes the first it can afford)."""
        if not deal.open:
            return
        mode = self.modes.get(deal.id, "skip")
        if mode == "skip":
            return
        steps: tuple[Callable[[Deal], Move | None], ...] = (self._refresh, self._research, self._find,
                                                            self._discover)
        if mode == "engage":
            steps += (self._engage,)
        elif mode == "qualify":
            steps += (self._outreach, self._meet)
        elif mode == "validate":
            steps += (self._outreach, self._meet, self._plan, self._evaluate)
        else:
            steps += (self._contract, self._outreach, self._case, self._discount_approval, self._price, self._plan,
                      self._meet, self._sponsor_call, self._evaluate, self._approvals, self._final_terms)
        for step in steps:
            move = step(deal)
            if move is not None:
                yield move

    def next_move(self, deal: Deal) -> Move | None:
        return next(self.moves(deal), None)

    def key_people(self, deal: Deal) -> list[str]:
        """Who a decision on this deal depends on (present), most senior first: the qualifiers and the champion
        (who brings us in), and on deals to close the evaluator, the approvers and the plan's owner."""
        ids = [s for s in self.opps[deal.id]["stakeholder_ids"] if self.present(deal, s) and s in deal.people]
        keep = set(self.qualifiers(deal)) | {s for s in ids if self.people[s]["role"] == "champion"}
        if self.modes.get(deal.id) == "close":
            keep |= {s for s in ids if self.people[s]["role"] == "technical_evaluator"}
            keep |= {sid for kind in self.required_approvals(deal) or [] if (sid := self.approver(deal, kind))}
            owner = self.plan_owner(deal, any_warmth=True)
            if owner:
                keep.add(owner)
        return sorted((s for s in keep if s in deal.people), key=lambda s: (-self.authority(s), s))

    def _outreach(self, deal: Deal) -> Move | None:
        """One relevant message to each key person; to senior people once the champion answered (or a day
        after we wrote to the champion)."""
        if not self.mem.known_keywords(deal):
            return None
        champion = self.champion(deal)
        intro = champion is None or champion not in deal.people or deal.people[champion].engaged or \
            any(self.mem.now - t > HOURS_PER_DAY for t in deal.people[champion].messages)
        for sid in self.key_people(deal):
            p = deal.people[sid]
            if p.engaged or p.messages:
                continue
            if self.authority(sid) > SENIOR and sid != champion and not intro:
                continue
            return Move(deal.id, self._message(deal, p, "Ideas for"), "relevant outreach")
        return None

    def _engage(self, deal: Deal) -> Move | None:
        """On a dead deal only a reply pays (Engaged): write to the likeliest responders, only as many as it takes
        for a reply to be nearly sure."""
        if not self.mem.known_keywords(deal) or any(p.engaged for p in deal.people.values()):
            return None
        present = [s for s in deal.people if self.present(deal, s) and self.people[s]["role"] != "blocker"]
        silent = 1.0
        for sid in present:
            if deal.people[sid].messages and self.mem.now - deal.people[sid].messages[-1] < 2 * HOURS_PER_DAY:
                silent *= 1.0 - self.reply_odds(deal, sid)
        fresh = [s for s in present if not deal.people[s].messages]
        if 1.0 - silent >= ENGAGE_SURE or not fresh:
            return None
        sid = max(fresh, key=lambda s: (self.reply_odds(deal, s), s))
        return Move(deal.id, self._message(deal, deal.people[sid], "Ideas for"), "outreach for a reply")

    def _case(self, deal: Deal) -> Move | None:
        """A business case on the economic buyer's pains, early: it warms the buyer and lowers the price."""
        if deal.business_case or not self.keywords_for(deal, None) or self.economic_buyer(deal) is None:
            return None
        return Move(deal.id, call("build_business_case", opportunity_id=deal.id,
                                  summary=self.text(deal, None, "Business case: measurable gains on")),
                    "business case for the economic buyer")

    # -- discovery meetings -----------------------------------------------------------------------------------
    def _upcoming(self, deal: Deal) -> bool:
        """A meeting that is still ahead or whose discovery can still be run."""
        return any(not m.discovery_done and len(m.declined) < len(m.invitees) and self.mem.now < m.start + 6.5
                   for m in deal.meetings.values())

    def wanted_warmth(self, deal: Deal, sid: str) -> float:
        """How warm ``sid`` should be for the decisions still ahead of them on this deal: evaluators and approvers
        as warm as can be (every bit raises the odds), the plan's owner, the qualifiers and the economic buyer
        past the thresholds that matter to them (owning the plan, sponsoring, a warm buyer's price, signing)."""
        want = -1.0
        if sid == self.evaluator(deal) and not deal.tech_success:
            want = WARM_ENOUGH
        kinds = self.required_approvals(deal) or []
        if any(sid == self.approver(deal, k) and not self.approved(deal, k) for k in kinds):
            want = WARM_ENOUGH
        if not deal.plan_agreed and sid == self.plan_owner(deal, any_warmth=True):
            want = max(want, PLAN_MIN_DISPOSITION + WARM_MARGIN)
        _, sponsor_ok = self.qualified_sources(deal)
        if not sponsor_ok and sid in self.qualifiers(deal):
            want = max(want, SPONSOR_WARMTH + WARM_MARGIN)
        if sid == self.economic_buyer(deal):
            want = max(want, SIGNER_WARMTH + WARM_MARGIN)
            if deal.agreed is None:
                want = max(want, WARM_EB + WARM_MARGIN)
        return want

    def meeting_wants(self, deal: Deal) -> list[str]:
        """Who to invite to the next discovery meeting: whoever can still qualify the deal (with the champion),
        and on deals to close everyone whose decision is still ahead and who is not warm enough yet."""
        budget_ok, sponsor_ok = self.qualified_sources(deal)
        want: list[str] = []
        if not (budget_ok and sponsor_ok):
            want += self.qualifiers(deal)
            champion = self.champion(deal)
            if champion and champion in deal.people and champion not in want:
                want.append(champion)
        if self.modes.get(deal.id) == "close":
            want += [s for s in self.key_people(deal)
                     if s not in want and self.warmth[s] < self.wanted_warmth(deal, s) - 1e-9]
        return want[:6]

    def _meet(self, deal: Deal) -> Move | None:
        """The next discovery meeting, once the last one is behind us. The first waits for an answer (engaged
        people accept) or a day after outreach; on deals only to qualify it needs a qualifier likely to come and
        a budget that is open."""
        if self._upcoming(deal) or not deal.people:
            return None
        want = self.meeting_wants(deal)
        if not want:
            return None
        first = min((t for p in deal.people.values() for t in p.messages), default=self.mem.now)
        if not any(p.engaged for p in deal.people.values()) and self.mem.now - first < HOURS_PER_DAY:
            return None
        if self.modes.get(deal.id) != "close":
            budget_ok, sponsor_ok = self.qualified_sources(deal)
            if not (budget_ok and sponsor_ok) and \
                    max(self.accept_odds(deal, s) for s in self.qualifiers(deal) or want) < 0.5:
                return None
            last = max((m.start for m in deal.meetings.values()), default=None)
            if last is not None and self.mem.now - last < QUALIFY_GAP_DAYS * HOURS_PER_DAY:
                return None
            if not budget_ok and not self.budget_open(deal):
                return None
        return Move(deal.id, call("schedule_meeting", opportunity_id=deal.id, stakeholder_ids=want,
                                  agenda=self.text(deal, None, "Discovery: priorities, budget and process around"),
                                  in_days=self.meeting_lead(deal, want)), "discovery meeting")

    def meeting_lead(self, deal: Deal, invitees: list[str]) -> int:
        """Business days ahead: soon, but late enough for the slowest invitee to answer, and on a day money is
        open if the budget is all the meeting is still for."""
        slowest = max(0.8 * self.responsiveness(s) for s in invitees)
        into = self.mem.now % HOURS_PER_DAY
        days = 1
        while days < 4 and days * HOURS_PER_DAY + 2 - into + 5 < slowest:
            days += 1
        budget_ok, sponsor_ok = self.qualified_sources(deal)
        if sponsor_ok and not budget_ok:
            day = self.money_day(deal, self.mem.day + days)
            days = day - self.mem.day if day is not None else days
        return max(1, min(MEETING_LEAD_MAX_DAYS, days))

    def _discover(self, deal: Deal) -> Move | None:
        """Discovery in an accepted meeting, once every invitee answered (late in the window if not)."""
        now = self.mem.now
        for m in deal.meetings.values():
            if m.discovery_done or not m.accepted or not (m.start + 0.01 <= now < m.start + HOURS_PER_DAY - 0.5):
                continue
            if m.answered() or now >= m.start + 6:
                return Move(deal.id, call("run_discovery", meeting_id=m.id), "discovery in the accepted meeting")
        return None

    # -- management, price, plan --------------------------------------------------------------------------
    def _sponsor_call(self, deal: Deal) -> Move | None:
        """The executive-sponsor call when the economic buyer is still too cold to sponsor after the case."""
        eb = self.economic_buyer(deal)
        if eb is None or deal.exec_sponsor or "escalation" in deal.pending or self.warmth[eb] >= SPONSOR_WARMTH:
            return None
        if not deal.business_case:
            return None
        need = MIN_BOOKING_HOURS["executive_sponsor"]
        return self.book_or_use(deal, "sponsor", "management", need, lambda b: call(
            "escalate", opportunity_id=deal.id, purpose="executive_sponsor", discount_pct=None, booking_id=b.id))

    def _discount_approval(self, deal: Deal) -> Move | None:
        """Management's approval before an offer above our authority (an offer never exceeds what we may give)."""
        if deal.agreed is not None or "escalation" in deal.pending or "terms" in deal.pending:
            return None
        want = deal.asked if deal.asked is not None else self.discount_to_offer(deal)
        if want <= max(self.mem.authority, deal.mgmt_approved) + 1e-9 or want >= deal.mgmt_refused - 1e-9:
            return None
        if deal.offered is None and not deal.business_case and self.keywords_for(deal, None):
            return None  # the case comes first: it may bring the need under our authority
        pct = round(100 * want, 1)
        return self.book_or_use(deal, "discount", "management", MIN_BOOKING_HOURS["discount_approval"], lambda b: call(
            "escalate", opportunity_id=deal.id, purpose="discount", discount_pct=pct, booking_id=b.id))

    def _price(self, deal: Deal) -> Move | None:
        """The proposal at exactly the discount the buyer will need, after the business case; a counter is met at
        what the buyer needs now."""
        if "terms" in deal.pending or deal.agreed is not None:
            return None
        if not deal.business_case and self.keywords_for(deal, None) and self.economic_buyer(deal) is not None:
            return None
        if deal.offered is not None and deal.asked is None:
            return None
        pct = self.discount_to_offer(deal)
        if pct > max(self.mem.authority, deal.mgmt_approved) + 1e-9:
            return None
        if deal.offered is None:
            return Move(deal.id, call("send_proposal", opportunity_id=deal.id, discount_pct=round(100 * pct, 1)),
                        "proposal at the buyer's need")
        return Move(deal.id, call("negotiate", opportunity_id=deal.id, discount_pct=round(100 * pct, 1)),
                    "meet the buyer's need")

    def plan_owner(self, deal: Deal, any_warmth: bool = False) -> str | None:
        """Who should own the plan: authority to commit the team, warm enough when they answer, fast to answer."""
        ids = [s for s in self.opps[deal.id]["stakeholder_ids"] if s in deal.people and self.present(deal, s)
               and self.authority(s) >= PLAN_MIN_AUTHORITY]
        if not any_warmth:
            ids = [s for s in ids if self.warmth[s] >= PLAN_MIN_DISPOSITION + 0.01]
        return min(ids, key=lambda s: (-min(self.warmth[s], PLAN_MIN_DISPOSITION + 0.1), self.responsiveness(s), s),
                   default=None)

    def _plan(self, deal: Deal) -> Move | None:
        """The mutual action plan as soon as a willing owner exists, its close date inside the real deadline."""
        if deal.plan_agreed or "action_plan" in deal.pending or len(deal.plan_declines) >= 4:
            return None
        days = min(10, self.deadline_day(deal) - self.mem.day)
        owner = self.plan_owner(deal)
        if owner is None or days < 5:
            return None
        return Move(deal.id, call("propose_action_plan", opportunity_id=deal.id, sponsor_id=owner,
                                  close_in_days=days), "mutual action plan inside the deadline")

    # -- evaluation, reviews, contract --------------------------------------------------------------------
    def _evaluate(self, deal: Deal) -> Move | None:
        if deal.tech_success or "tech_eval" in deal.pending or self.evaluator(deal) is None:
            return None
        b = self.booking(deal, "tech_eval")
        if b is not None and b.start + 0.01 <= self.mem.now and not self.warm_enough_to_evaluate(deal, b):
            return None
        return self.book_or_use(deal, "tech_eval", "se", self.se_hours(deal), lambda b: call(
            "run_technical_evaluation", opportunity_id=deal.id, booking_id=b.id))

    def warm_enough_to_evaluate(self, deal: Deal, b: Booking) -> bool:
        """Run the evaluation once the evaluator is as warm as the booking assumed, or before the booking
        lapses, or when the deadline presses."""
        late = self.mem.now >= b.start + USABLE_H - 1.5 * HOURS_PER_DAY
        pressed = self.deadline_day(deal) - self.mem.day <= 7
        return self.tech_odds(deal, b.hours) >= TECH_TARGET - 0.02 or late or pressed

    def _approvals(self, deal: Deal) -> Move | None:
        """Security and legal reviews, booked from the start (their hours sized to the approver's warmth)."""
        for kind in self.required_approvals(deal) or []:
            if kind == "procurement" or self.approved(deal, kind) or f"approval:{kind}" in deal.pending:
                continue
            if self.approver(deal, kind) is None:
                continue

            def review(b: Booking, k: str = kind) -> Action:
                return call("request_approval", opportunity_id=deal.id, kind=k, booking_id=b.id)
            move = self.book_or_use(deal, kind, APPROVAL_RESOURCE[kind], self.review_hours(deal, kind), review)
            if move is not None:
                return move
        return None

    def _final_terms(self, deal: Deal) -> Move | None:
        """Procurement's review of the agreed terms (booked once an offer is out, run once terms are agreed)."""
        if "procurement" not in (self.required_approvals(deal) or []) or deal.final_terms_approved:
            return None
        if "approval:procurement" in deal.pending or deal.offered is None:
            return None
        if self.booking(deal, "procurement") is not None and deal.agreed is None:
            return None
        return self.book_or_use(deal, "procurement", "procurement", self.review_hours(deal, "procurement"),
                                lambda b: call("request_approval", opportunity_id=deal.id, kind="procurement",
                                               booking_id=b.id))

    def commit_due(self, deal: Deal) -> float | None:
        """When the deal will have every piece of evidence Commit needs, if all that is missing is already running
        with the buyer (None if something has not started)."""
        if deal.stage >= 6:
            return self.mem.now
        budget_ok, sponsor_ok = self.qualified_sources(deal)
        if not (budget_ok and sponsor_ok):
            return None
        wanted = [("tech_eval", deal.tech_success), ("action_plan", deal.plan_agreed)]
        wanted += [(f"approval:{k}", self.approved(deal, k)) for k in self.required_approvals(deal) or []]
        if "procurement" not in (self.required_approvals(deal) or []):
            wanted.append(("terms", deal.agreed is not None))  # agreeing is the sign-off
        elif not deal.final_terms_approved and deal.agreed is None:
            return None  # procurement's review must see agreed terms
        due = [self.mem.now]
        for process, done in wanted:
            if done:
                continue
            if process not in deal.pending or (deal.id, process) not in self.finish:
                return None
            due.append(self.finish[(deal.id, process)])
        return max(due)

    def _contract(self, deal: Deal) -> Move | None:
        """The contract as soon as its answer will find the deal at Commit (the buyer answers after two days and
        their own latency), inside the deadline, with no freeze and a signer warm enough."""
        if "contract" in deal.pending or self.mem.day > self.deadline_day(deal):
            return None
        signer = self.first_of(deal, "economic_buyer", "champion")
        due = self.commit_due(deal)
        if signer is None or due is None:
            return None
        soonest = self.mem.now + CONTRACT_DELAY_H + LATENCY[0] * self.responsiveness(signer)
        if due > soonest + 1e-9 and deal.stage < 6:
            return None
        if self.warmth[signer] < SIGNER_WARMTH + 0.01 or self.frozen_at(deal, soonest):
            return None
        return Move(deal.id, call("send_contract", opportunity_id=deal.id), "contract timed to land on Commit")


class Oracle(ScriptedSeller):
    name = "oracle"

    def make_playbook(self) -> Playbook:
        if self.hidden_truth is None:
            raise ValueError("the oracle needs hidden_truth (env.hidden_truth())")
        self.oracle_book = OraclePlaybook(self.mem, self.style, self.hidden_truth)
        self.planned_day = -1
        self.rank: dict[str, int] = {}
        return self.oracle_book

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        super().observe_result(tool_result)
        self.oracle_book.note(self.last_action, tool_result)

    # -- which deals to close, validate, qualify or engage ------------------------------------------------
    def close_value(self, deal: Deal) -> float:
        """What closing the deal adds over where it stands: its true value at the price it will close at (80%
        of it if only Commit fits before the deadline), less what it already earned, times the odds its
        evaluation passes (a poor fit may stay short of the odds wanted within a week's SE hours)."""
        book = self.oracle_book
        opp = book.opps[deal.id]
        value = float(opp["true_value"]) * (1.0 - book.need_discount(deal, 1.0))
        fits = self.mem.day + self.days_to_close(deal) <= book.deadline_day(deal)
        earned = MILESTONE_WEIGHTS[deal.stage] * float(opp["true_value"])
        gain = value * (1.0 if fits else MILESTONE_WEIGHTS[6]) - earned
        return gain * (1.0 if deal.tech_success else book.tech_odds(deal, book.se_hours(deal)))

    def days_to_close(self, deal: Deal) -> int:
        """A rough number of business days from now to a signature, from what is still missing."""
        book = self.oracle_book
        days = 2
        if not deal.tech_success:
            days = max(days, 2 + TECH_DAYS + 1)
        for kind in book.required_approvals(deal) or []:
            if not book.approved(deal, kind):
                days = max(days, self.mem.lead_days.get(APPROVAL_RESOURCE[kind], 3)
                           + math.ceil(APPROVAL_DAYS[kind] * book.slow_reviews) + 1)
        if not book.qualified_sources(deal)[0]:
            money = book.money_day(deal, self.mem.day + 1)
            days = max(days, (money if money is not None else 10**3) - self.mem.day + 1)
        return days + 3

    def plannable(self, deal: Deal) -> bool:
        """A deal can still be committed: viable, open, its plan can still be dated inside the deadline, and
        someone can still confirm a budget in this episode."""
        book = self.oracle_book
        if not book.is_viable(deal) or not deal.open:
            return False
        if not deal.plan_agreed and book.deadline_day(deal) - self.mem.day < 5:
            return False
        if not book.qualified_sources(deal)[0] and book.money_day(deal, self.mem.day + 1) is None:
            return False
        return self.mem.days_left >= 4

    def seller_to_go(self, deal: Deal) -> float:
        """Seller hours a deal still takes to close, from where it stands."""
        return SELLER_TO_CLOSE * (1.0 - deal.stage / 7) + (0.0 if deal.found else 3.0)

    def hours_to_come(self, resource: str) -> float:
        """Hours of ``resource`` the rest of the episode still has: this week's rest and every later week."""
        weekly = self.mem.full_capacity.get(resource, 0.0)
        weeks = range(self.mem.week, int(self.mem.horizon // HOURS_PER_WEEK) + 1)
        return sum(max(0.0, weekly - self.mem.booked_hours(resource, w)) for w in weeks)

    def plan_modes(self) -> None:
        """Once a day: choose the deals to close (those already chosen first, then by value per scarce hour still
        needed, while the seller's hours cover them and their bookings fit the weeks to come in time); validate
        deals whose evaluation fits the SE hours left; qualify the other viable ones; engage dead ones."""
        if self.planned_day == self.mem.day:
            return
        self.planned_day = self.mem.day
        book = self.oracle_book
        left = {r: self.hours_to_come(r) for r in TEAMS}
        left["seller"] = self.hours_left()
        open_deals = self.mem.open_deals()
        candidates = [d for d in open_deals if self.plannable(d)]
        needs = {d.id: {**book.still_needs(d), "seller": self.seller_to_go(d)} for d in candidates}

        def density(d: Deal) -> float:
            cost = sum(needs[d.id][r] / max(1.0, left[r]) for r in left)
            return self.close_value(d) / max(0.05, cost)

        ranked = sorted(candidates, key=lambda d: (book.modes.get(d.id) != "close", -density(d), d.id))
        self.rank = book.rank = {d.id: i for i, d in enumerate(ranked)}
        modes: dict[str, str] = {}
        free = book.free_weeks()
        for d in ranked:
            kept = book.modes.get(d.id) == "close"
            if not kept and needs[d.id]["seller"] > left["seller"] + 1e-9:
                continue
            if book.place(d, free) or kept:
                modes[d.id] = "close"
                left["seller"] -= needs[d.id]["seller"]
        for d in ranked:
            if d.id in modes:
                continue
            if d.tech_success or "tech_eval" in d.pending or book.booking(d, "tech_eval") is not None or (
                    book.se_hours(d) <= VALIDATE_MAX_SE and book.place(d, free, only=("tech_eval",))):
                modes[d.id] = "validate"
        for d in open_deals:
            if d.id in modes:
                continue
            if book.modes.get(d.id) == "close" and book.is_viable(d):
                modes[d.id] = "close"  # still worth finishing what it can (Commit needs no deadline)
            elif book.is_viable(d):
                modes[d.id] = "qualify" if d.stage < 2 else "skip"
            else:
                modes[d.id] = "engage" if d.stage < 1 else "skip"
        book.modes = modes

    # -- the loop -----------------------------------------------------------------------------------------
    def order(self, deals: list[Deal]) -> list[Deal]:
        """Deals to close first (in rank order), then deals to validate or qualify, then dead ones, by value."""
        book = self.oracle_book
        tier = {"close": 0, "validate": 1, "qualify": 1, "engage": 2}

        def key(d: Deal) -> tuple[int, float, str]:
            mode = book.modes.get(d.id, "skip")
            first = self.rank.get(d.id, 999) if mode == "close" else -float(book.opps[d.id]["true_value"])
            return tier.get(mode, 3), first, d.id
        return sorted((d for d in deals if book.modes.get(d.id, "skip") != "skip"), key=key)

    def choose(self) -> Move | None:
        """Discoveries first (a meeting's window closes within the day), then contracts, evaluations and reviews
        whose bookings have started, then everything else, deal by deal in order. Deals not to close never use
        the seller hours this week's discoveries on deals to close will need."""
        book = self.oracle_book
        book.catch_up()
        self.plan_modes()
        deals = self.order(self.mem.open_deals())
        for deal in deals:
            move = book._discover(deal)
            if move is not None and self.allowed(move):
                return move
        reserve = DISCOVERY_HOURS * self.discoveries_ahead()
        for urgent in (True, False):
            for deal in deals:
                closing = book.modes.get(deal.id) == "close"
                for move in book.moves(deal):
                    if urgent and move.action["tool"] not in URGENT:
                        continue
                    if self.allowed(move) and (closing or self.mem.seller_left() - move.hours >= reserve - 1e-9):
                        return move
        return None

    def discoveries_ahead(self) -> int:
        """Meetings on deals to close later this week (accepted or unanswered) whose discovery we will run."""
        week_end = (self.mem.week + 1) * HOURS_PER_WEEK
        return sum(1 for d in self.mem.open_deals() if self.oracle_book.modes.get(d.id) == "close"
                   for m in d.meetings.values() if not m.discovery_done and len(m.declined) < len(m.invitees)
                   and m.start + 6.5 > self.mem.now and m.start < week_end)
