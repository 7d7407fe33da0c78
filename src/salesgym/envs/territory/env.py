"""The territory environment: parts wired into the engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from salesgym.core.env import CORE_PUBLIC_EVENTS, Environment
from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Verifier
from salesgym.core.tools import ToolError
from salesgym.envs.territory import buyers, observe, outputs, reward, state, verifier
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.calendar import week_of
from salesgym.envs.territory.evidence import KINDS
from salesgym.envs.territory.generator import ABLATIONS, check_options, generate
from salesgym.envs.territory.instructions import task_card
from salesgym.envs.territory.reward import RewardConfig
from salesgym.envs.territory.state import TerritoryState
from salesgym.envs.territory.tools import TOOLS
from salesgym.envs.territory.world import TerritoryWorld

# Events the seller never sees as they happen: buyers' changes of heart, decisions scheduled for later, and the
# engine's firing of them. Everything else is the seller's own action or arrives in the inbox or a view.
HIDDEN_EVENTS = frozenset({"disposition_changed", "scheduled", "item_due", "tape_item_due"})
EVENT_KINDS = frozenset(
    {*state.APPLY, *CORE_PUBLIC_EVENTS, *HIDDEN_EVENTS, "inbox_received", "deal_closed", "contract_stalled"}
)


class TerritoryRules:
    """The territory family as the engine sees it: generator, fold, buyers, observer, reward, verifier."""

    name = "territory"
    tools = TOOLS
    observation = outputs.Observation
    evidence_kinds = KINDS
    public_events = EVENT_KINDS - HIDDEN_EVENTS
    reset_options = frozenset({"family", "template", "n_opportunities", "horizon_days"})

    def __init__(self, reward_config: RewardConfig) -> None:
        self.reward_config = reward_config

    def generate(self, seed: int, options: Mapping[str, Any]) -> TerritoryWorld:
        return generate(
            seed,
            options["family"],
            options["template"],
            options["n_opportunities"],
            options["horizon_days"],
            tuple(options["ablations"]),
        )

    # the engine calls these on every event or step: bound straight to the module functions, no extra frame
    new_state = staticmethod(state.new_state)
    apply = staticmethod(state.apply)
    fire = staticmethod(buyers.fire)
    observe = staticmethod(observe.observe)

    def usable_tools(self, world: TerritoryWorld) -> None:
        return None  # every tool, in every world

    def precheck(self, ctx: Ctx, tool: str) -> None:
        if tool == "wait":
            return
        used = ctx.state.usage.get(("seller", week_of(ctx.now)), 0.0)
        if used >= ctx.world.capacity["seller"]:
            raise ToolError("seller hours for this week are used up; call wait (e.g. until='next_week')")

    def end_reason(self, s: TerritoryState, world: TerritoryWorld) -> str | None:
        # every deal closed (shown as Closed) or dropped (Disqualified); the row counts keep this O(1)
        done = s.row_counts.get("Closed", 0) + s.row_counts.get("Disqualified", 0) == world.n_opportunities
        return "all opportunities terminal" if done else None

    def potential(self, s: TerritoryState, world: TerritoryWorld) -> float:
        return reward.potential(self.reward_config, s, world)

    def instructions(self, world: TerritoryWorld, invalid_action_limit: int) -> str:
        return task_card(world.facts, invalid_action_limit)

    def reward(self, ctx: Ctx, phi_before: float, phi_after: float, started: float, new: Sequence[Event]) -> float:
        return reward.step_reward(self.reward_config, ctx.state, ctx.world, phi_before, phi_after, started, new)

    def score(self, world: TerritoryWorld, s: TerritoryState, log: EventLog, v: Verifier) -> dict[str, Any]:
        return verifier.score(world, log, v)  # a whole log re-read; the environment keeps a running tally instead

    @staticmethod
    def new_tally(world: TerritoryWorld, v: Verifier) -> verifier.Tally:
        return verifier.Tally(world, v)


class TerritoryEnv(Environment[TerritoryWorld, TerritoryState]):
    """One seller's territory of concurrent B2B opportunities over a 30/90/180-day horizon.

    Description
        The agent is the seller. Each opportunity has a buying committee with hidden budgets, authority,
        dispositions and pains; some deals are not viable. Scarce seller, SE, legal, procurement and
        management hours are shared across the territory. Buyers answer asynchronously; milestones advance
        only on buyer evidence signed by a private verifier.

    Tools
        18 typed tools (``tool_schemas()``; ``docs/tools.md``). An action is ``{"tool": name, "args": {...}}``
        or its JSON text. Bad calls return ``status="error"`` and change nothing but one ``invalid_action``.

    Observation
        ``{"text": str, "data": dict}``: date, capacity left this week, milestone counts, portfolio rows,
        new inbox items (with typed fields), alerts, the territory's fixed facts, last tool result. Never
        hidden truth or reward internals; tool results list public events only.

    Reward
        The agent-side estimate of the primary score, paid as it changes (public value estimates, verified
        milestones as shown, the agreed price); its undiscounted sum is that estimate (docs/reward.md).
        ``score()`` is the authoritative report.

    Episode end
        Terminated at the horizon or when every opportunity is closed or dropped; truncated when invalid
        actions reach ``invalid_action_limit``.

    Arguments
        n_opportunities (10-100, or 3-5 for debugging), horizon_days (30, 90, 180), family, template,
        ablation (world: ``generator.WORLD_ABLATIONS``; training: ``reward.TRAINING_ABLATIONS``), reward (RewardConfig),
        invalid_action_limit, verifier_key.

    Version history
        v0 (territory-gen/2): shared capacity binds; public-only reward; price-aware score; public event
        ids. v0 (territory-gen/1): initial release (docs/territory.md has the details).

    >>> env = TerritoryEnv(n_opportunities=4, horizon_days=30)
    >>> obs, info = env.reset(seed=1)
    >>> obs, r, term, trunc, info = env.step({"tool": "view_opportunity", "args": {}})
    >>> info["tool_result"]["status"]
    'ok'
    """

    def __init__(
        self,
        n_opportunities: int = 20,
        horizon_days: int = 90,
        family: str = "midmarket_saas",
        template: str | None = None,
        ablation: str | Sequence[str] | None = None,
        reward: RewardConfig | None = None,
        invalid_action_limit: int = 50,
        verifier_key: bytes | None = None,
    ) -> None:
        ablations = (ablation,) if isinstance(ablation, str) else tuple(ablation or ())
        bad = [a for a in ablations if a not in ABLATIONS]
        if bad:
            raise ValueError(f"unknown ablation {bad}; choose from {list(ABLATIONS)}")
        if invalid_action_limit < 1:
            raise ValueError("invalid_action_limit must be at least 1")
        cfg = reward or RewardConfig.for_ablations(ablations)
        options = {
            "family": family,
            "template": template,
            "n_opportunities": n_opportunities,
            "horizon_days": horizon_days,
            "ablations": ablations,
        }
        check_options(family, template, n_opportunities, horizon_days, ablations)  # fail fast, clearly
        super().__init__(
            TerritoryRules(cfg), invalid_action_limit=invalid_action_limit, verifier_key=verifier_key, **options
        )
