"""The desk environment: parts wired into the engine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.env import CORE_PUBLIC_EVENTS, Environment
from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Verifier
from salesgym.envs.desk import llm_buyer, observe, outputs, reward, state, verifier
from salesgym.envs.desk.buyers import Voice
from salesgym.envs.desk.contract import MINUTES_PER_DAY
from salesgym.envs.desk.generator import check_options, generate
from salesgym.envs.desk.instructions import task_card
from salesgym.envs.desk.llm_buyer import LLMBuyer, ModelBuyer
from salesgym.envs.desk.state import EVIDENCE_KINDS, DeskState
from salesgym.envs.desk.tools import SPOKEN_TOOLS, TOOLS, Ctx
from salesgym.envs.desk.world import DeskWorld

EVENT_KINDS = frozenset({*state.APPLY, *CORE_PUBLIC_EVENTS, "scheduled", "item_due", "call_refused",
                         "offer_proposed", "buyer_hung_up"})  # fmt: skip
SPOKEN_CARD = ("\n\nThe buyers here are played by a language model: what you say in an offer's `pitch` reaches the "
               "buyer on the line, who may also answer `ask` (a question before deciding). The rules stay the "
               "same: only a stored quote can be offered, and the score counts only suitable sales.")


class DeskRules:
    """The desk family as the engine sees it: generator, fold, buyers, observer, reward, verifier."""

    name = "desk"
    tools = TOOLS
    observation = outputs.Observation
    evidence_kinds = EVIDENCE_KINDS
    public_events = EVENT_KINDS  # everything on a desk is the seller's own action or the buyer's answer to it
    reset_options = frozenset({"n_leads", "shift_days", "variant", "lead_mix"})

    def __init__(self, voice: Voice | None = None, buyer: LLMBuyer | None = None) -> None:
        self.voice = voice  # None: the canned voice
        self.voice_cache: dict[str, str] = {}  # words by hash of (decision, reason, persona); never state
        self.buyer = None if buyer is None else ModelBuyer(buyer)  # None: the rule table decides
        if self.buyer is not None:
            self.tools = SPOKEN_TOOLS  # the offer carries the seller's pitch

    def generate(self, seed: int, options: Mapping[str, Any]) -> DeskWorld:
        return generate(seed, options["n_leads"], options["shift_days"], options["variant"], options["lead_mix"])

    new_state = staticmethod(state.new_state)
    apply = staticmethod(state.apply)
    observe = staticmethod(observe.observe)

    def precheck(self, ctx: Ctx, tool: str) -> None:
        return None

    def usable_tools(self, world: DeskWorld) -> None:
        return None  # every tool, in every world

    def fire(self, ctx: Ctx, item: Scheduled) -> None:
        if item.kind == "callback_expiry" and item.data["callback_id"] in ctx.state.pending:
            ctx.emit("callback_missed", "env", {"callback_id": item.data["callback_id"]})

    def end_reason(self, s: DeskState, world: DeskWorld) -> str | None:
        counts = s.counts
        done = counts["converted"] + counts["exhausted"] + counts["dnc"] == world.n_leads
        return "no lead left to work" if done else None

    def potential(self, s: DeskState, world: DeskWorld) -> float:
        return reward.potential(s)

    def instructions(self, world: DeskWorld, invalid_action_limit: int) -> str:
        card = task_card(world.facts, invalid_action_limit)
        return card if self.buyer is None else card.rstrip() + SPOKEN_CARD

    def reward(self, ctx: Ctx, phi_before: float, phi_after: float, started: float, new: Sequence[Event]) -> float:
        return phi_after - phi_before

    def score(self, world: DeskWorld, s: DeskState, log: EventLog, v: Verifier) -> dict[str, Any]:
        report = verifier.score(world, log, v)
        if self.buyer is not None:  # the buyer model's requests, tokens and cost, apart from the seller's
            report.update(llm_buyer.usage(log, self.buyer.config))
        return report


class DeskEnv(Environment[DeskWorld, DeskState]):
    """One seller's shift on a transactional insurance desk: about a hundred leads, a budget of minutes.

    Description
        The agent is the seller. Leads are generated per seed with provenance (segment, age, income, household,
        smoker, risk class, temperature, and hidden budget, need, trust, price sensitivity, patience, call limit,
        dependents, stated goal, archetype). Buyers are rule-based by default: ten archetypes as parameter tables
        over one decision function with keyed noise, four buyer variants as decision gates. They accept, refuse
        with a reason code, hang up, and ask not to be called again. With ``buyer="llm"`` a language model plays
        each buyer from a persona prompt and hears the seller's pitch; quotes, the variant's hard gates,
        patience, suitability, do-not-call and the verifier stay rules outside the model.

    Tools
        13 typed tools in the shape SalesBench users know (``tool_schemas()``; ``docs/desk.md``): CRM search, get,
        note, pipeline summary; callbacks; start call, discovery question, propose offer, end call; quote plan,
        list plans; wait. Every tool costs minutes (``contract.TOOL_MINUTES``). An offer must be a stored quote
        at its quoted premium. Bad calls return ``status="error"`` and change nothing but one ``invalid_action``.

    Observation
        ``{"text": str, "data": dict}``: the minute and minutes left, the desk's fixed facts, leads per status,
        converted MRR, the active call, callbacks due soon, the last tool result. The CRM shows banded budget
        and need; discovery reveals true values. Never the buyer's hidden facts, archetype or variant.

    Reward
        The change of converted MRR minus $100 per compliance violation (a call to a do-not-call lead; a sale
        whose cover is more than 1.5x the buyer's need, which also earns nothing), all public when they
        happen; the return is the score (no pay for delay, truncation, quoting or proposing). ``score()`` is
        authoritative.

    Episode end
        Terminated when the minutes run out or no lead can be worked; truncated when invalid actions reach
        ``invalid_action_limit``.

    Arguments
        n_leads (1-500; 100 by default), shift_days (1-20 days of 480 minutes), variant (``VARIANTS``),
        lead_mix (``LEAD_MIXES``), voice (an optional ``buyers.Voice``: writes words, never decides),
        invalid_action_limit, verifier_key; buyer (``"rules"``, the default, or ``"llm"`` with buyer_model,
        buyer_base_url, buyer_api_key_env and buyer_price_in / buyer_price_out (dollars per million prompt /
        completion tokens, for ``buyer_cost_usd``), or an ``llm_buyer.LLMBuyer``: a language-model buyer that hears
        the seller's pitch and decides within the rules; docs/desk.md).

    Version history
        v0 (desk-gen/1, desk-task/1): initial release. desk-task/2: the suitability rule (over-insured sales
        earn nothing and are recorded violations).

    >>> env = DeskEnv(n_leads=8, shift_days=1)
    >>> obs, info = env.reset(seed=1)
    >>> obs, r, term, trunc, info = env.step({"tool": "crm_search_leads", "args": {"limit": 3}})
    >>> info["tool_result"]["status"], len(info["tool_result"]["output"]["leads"])
    ('ok', 3)
    """

    def __init__(
        self,
        n_leads: int = 100,
        shift_days: int = 2,
        variant: str = "default",
        lead_mix: str = "standard",
        voice: Voice | None = None,
        invalid_action_limit: int = 50,
        verifier_key: bytes | None = None,
        buyer: str | LLMBuyer | Mapping[str, Any] = "rules",
        buyer_model: str | None = None,
        buyer_base_url: str | None = None,
        buyer_api_key_env: str | None = None,
        buyer_price_in: float | None = None,
        buyer_price_out: float | None = None,
    ) -> None:
        if invalid_action_limit < 1:
            raise ValueError("invalid_action_limit must be at least 1")
        check_options(n_leads, shift_days, variant, lead_mix)  # fail fast, clearly
        model_buyer = llm_buyer.configure(buyer, buyer_model, buyer_base_url, buyer_api_key_env, buyer_price_in,
                                          buyer_price_out)  # fmt: skip
        options = {"n_leads": n_leads, "shift_days": shift_days, "variant": variant, "lead_mix": lead_mix}
        super().__init__(DeskRules(voice, model_buyer), invalid_action_limit=invalid_action_limit,
                         verifier_key=verifier_key, **options)  # fmt: skip

    def load_buyer_tape(self, events: Iterable[Mapping[str, Any]]) -> int:
        """Put a recorded episode's buyer replies (its ``buyer_replied`` events, or the records of
        ``counterparty_tape``) on this desk's tape, so playing the same calls again replays them without asking
        the model; returns how many."""
        buyer: ModelBuyer | None = self.family.buyer  # type: ignore[attr-defined]
        if buyer is None:
            raise ValueError("this desk's buyers are rule-based: there is no buyer tape to load")
        return buyer.load(events)

    def counterparty_tape(self) -> list[dict[str, Any]]:
        """This episode's buyer-model replies in order (``buyer_replied`` payloads; none with rule-based buyers):
        the benchmark keeps them with the episode's trajectory, so it replays offline (``load_buyer_tape``)."""
        return [dict(e.payload) for e in self._log if e.kind == "buyer_replied"]

    @property
    def minutes_per_day(self) -> float:
        return MINUTES_PER_DAY
