"""A tiny family outside the package, built only on ``salesgym.core``: a market stall selling jars of honey.

Each buyer has a hidden budget; the seller offers a jar at a price, and a buyer whose budget covers it accepts (its
acceptance is signed evidence, the only thing the score reads). Time passes with every call; the market closes at
the horizon. Small, but a real family: the conformance kit, the benchmark, an adapter and the service run it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from salesgym.core.clock import Scheduled
from salesgym.core.env import CORE_PUBLIC_EVENTS, Context, Environment
from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Verifier
from salesgym.core.rng import uniform
from salesgym.core.state import State
from salesgym.core.tools import LastResult, ToolArgs, ToolBox, ToolError, ToolOutcome, ToolOutput, ToolSpec

NAMES = ("ada", "bo", "cy", "di", "ed", "fay", "gus", "hal", "ivy", "jo", "kit", "lu")
BuyerId = Annotated[str, StringConstraints(min_length=1, max_length=16)]


@dataclass(frozen=True, slots=True)
class StallWorld:
    seed: int
    horizon: float  # hours the market is open
    buyers: tuple[str, ...]
    budgets: Mapping[str, float]  # hidden
    tape: Sequence[Scheduled] = ()

    def public(self) -> dict[str, Any]:
        return {"buyers": list(self.buyers), "horizon_hours": self.horizon}

    def hidden(self) -> dict[str, Any]:
        return {"budgets": dict(self.budgets)}


class StallState(State):
    FORKED = ("sold",)

    def __init__(self) -> None:
        super().__init__()
        self.sold: dict[str, float] = {}  # buyer -> the price it accepted


Ctx = Context[StallWorld, StallState]


class NoArgs(ToolArgs):
    pass


class OfferArgs(ToolArgs):
    buyer_id: BuyerId = Field(description="a buyer's id, from list_buyers")
    price: float = Field(gt=0, le=100, description="the price of one jar, in dollars")


class WaitArgs(ToolArgs):
    hours: float = Field(ge=0.25, le=2, description="how long to wait, in hours")


def _list(ctx: Ctx, args: NoArgs) -> ToolOutcome:
    rows = [{"buyer_id": b, "bought": b in ctx.state.sold} for b in ctx.world.buyers]
    return ToolOutcome({"buyers": rows}, 0.1)


def _offer(ctx: Ctx, args: OfferArgs) -> ToolOutcome:
    if args.buyer_id not in ctx.world.buyers:
        raise ToolError(f"unknown buyer {args.buyer_id[:16]!r}; list_buyers names them")
    if args.buyer_id in ctx.state.sold:
        raise ToolError(f"{args.buyer_id} already bought a jar")
    if args.price <= ctx.world.budgets[args.buyer_id]:
        ctx.issue_evidence("jar_bought", args.buyer_id, args.buyer_id, {"price": args.price})
        return ToolOutcome({"accepted": True, "price": args.price}, 0.5)
    ctx.emit("offer_declined", args.buyer_id, {"buyer_id": args.buyer_id, "price": args.price})
    return ToolOutcome({"accepted": False, "price": args.price}, 0.5)


def _wait(ctx: Ctx, args: WaitArgs) -> ToolOutcome:
    return ToolOutcome({"waited_hours": args.hours}, args.hours)


class BuyerRow(ToolOutput):
    buyer_id: str
    bought: bool


class BuyersOutput(ToolOutput):
    buyers: list[BuyerRow]


class OfferOutput(ToolOutput):
    accepted: bool
    price: float


class WaitOutput(ToolOutput):
    waited_hours: float


class StallObservation(ToolOutput):
    hours: float
    buyers: list[str]
    sold: dict[str, float]
    last_result: LastResult | None


TOOLS: ToolBox[Ctx] = ToolBox([
    ToolSpec("list_buyers", "List the stall's buyers and whether each has bought a jar.", NoArgs, _list, "0.1 h",
             writes=False, output=BuyersOutput),
    ToolSpec("offer", "Offer one jar to a buyer at a price; the buyer accepts if it can afford it.", OfferArgs, _offer,
             "0.5 h", output=OfferOutput),
    ToolSpec("wait", "Let time pass at the stall, for the hours given.", WaitArgs, _wait, "the hours given",
             output=WaitOutput),
])


class StallRules:
    name = "stall"
    tools = TOOLS
    observation = StallObservation
    evidence_kinds = frozenset({"jar_bought"})
    public_events = CORE_PUBLIC_EVENTS | {"evidence_recorded", "offer_declined"}
    reset_options = frozenset({"n_buyers", "hours"})

    def generate(self, seed: int, options: Mapping[str, Any]) -> StallWorld:
        buyers = NAMES[: options["n_buyers"]]
        budgets = {b: round(5 + 45 * uniform(seed, "budget", b), 2) for b in buyers}
        return StallWorld(seed, float(options["hours"]), buyers, budgets)

    def new_state(self, world: StallWorld) -> StallState:
        return StallState()

    def apply(self, state: StallState, world: StallWorld, event: Event) -> None:
        if event.kind == "evidence_recorded":
            evidence = event.payload["evidence"]
            state.sold[evidence["subject"]] = float(evidence["claim"]["price"])

    def precheck(self, ctx: Ctx, tool: str) -> None:
        return None

    def usable_tools(self, world: Any) -> None:
        return None

    def fire(self, ctx: Ctx, item: Scheduled) -> None:
        return None

    def end_reason(self, state: StallState, world: StallWorld) -> str | None:
        return "sold out" if len(state.sold) == len(world.buyers) else None

    def observe(self, ctx: Ctx, result: Mapping[str, Any] | None, new: Sequence[Event]) -> dict[str, Any]:
        s = ctx.state
        data = {"hours": round(s.now, 4), "buyers": list(ctx.world.buyers), "sold": dict(sorted(s.sold.items())),
                "last_result": dict(result) if result else None}
        text = f"Hour {s.now:.2f} of {ctx.world.horizon:g}. Sold to: {', '.join(sorted(s.sold)) or 'nobody'}."
        if result and result["status"] == "error":
            text += f" Last call refused: {result['output']['error']}"
        return {"text": text, "data": data}

    def potential(self, state: StallState, world: StallWorld) -> float:
        return sum(state.sold.values())  # what the seller has seen accepted: public

    def instructions(self, world: StallWorld, invalid_action_limit: int) -> str:
        return (f"You run a market stall selling jars of honey for {world.horizon:g} hours to the buyers "
                f"{', '.join(world.buyers)}. Each buyer buys at most one jar, if your price is within its budget, "
                "which you do not know. Offer jars with the offer tool (half an hour each), list buyers with "
                "list_buyers, or wait. Your score is the revenue of accepted offers. The episode ends at closing "
                f"time, when every buyer has bought, or after {invalid_action_limit} invalid calls.")

    def reward(self, ctx: Ctx, phi_before: float, phi_after: float, started: float, new: Sequence[Event]) -> float:
        return round(phi_after - phi_before, 6)

    def score(self, world: StallWorld, s: StallState, log: EventLog, v: Verifier) -> dict[str, Any]:
        revenue, sales = 0.0, 0
        for event in log:
            if event.kind == "evidence_recorded":
                evidence = v.verified(event.payload["evidence"])
                if evidence is not None and evidence.source_actor == evidence.subject in world.buyers:
                    revenue, sales = revenue + float(evidence.claim["price"]), sales + 1
        return {"primary": round(revenue, 2), "closed_value": round(revenue, 2), "sales": sales,
                "invalid_actions": s.invalid_actions}


class StallEnv(Environment[StallWorld, StallState]):
    """A market stall: ``n_buyers`` (1-12) buyers, open ``hours`` (1-24) hours."""

    def __init__(self, n_buyers: int = 12, hours: int = 24, invalid_action_limit: int = 50,
                 verifier_key: bytes | None = None) -> None:
        check(n_buyers, hours)
        super().__init__(StallRules(), invalid_action_limit=invalid_action_limit, verifier_key=verifier_key,
                         n_buyers=n_buyers, hours=hours)


def check(n_buyers: int, hours: int) -> None:
    """``ValueError`` saying what is allowed if a stall cannot be built like this."""
    if not isinstance(n_buyers, int) or not 1 <= n_buyers <= len(NAMES):
        raise ValueError(f"n_buyers must be an int in 1-{len(NAMES)}, got {n_buyers!r}")
    if not isinstance(hours, int) or not 1 <= hours <= 24:
        raise ValueError(f"hours must be an int in 1-24, got {hours!r}")
