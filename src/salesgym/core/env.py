"""The base environment: reset / step / clone / observe / score, for any family.

An environment is assembled from injected parts (a :class:`Family` supplies generator, rules, observer,
reward and scorer), so a new world size, reward or family never edits this file. The engine loop is:

1. parse the call (bad input -> one ``invalid_action`` event, nothing else changes);
2. the tool handler reads state and keyed dice and *emits events*; every event is applied at once;
3. the clock advances by the call's time cost, firing scheduled items and the pinned exogenous tape in
   time order (each firing is an event, and so is everything it causes); a call may instead ask to stop at
   the first event the agent can see (``ToolOutcome.until_public``: "wait until something happens");
4. a ``tool_completed`` event, stamped at the end of the call, records the call and its cost and moves the
   clock to that time;
5. reward from the potential before/after, observation from public views.

The agent side sees only *public* events (``Family.public_events``): a tool result lists their ids, numbered
among public events alone, and ``state_version`` counts them, so neither reveals how many hidden happenings
(a reply the buyer has decided to send, a penalty) a call set off.

Replaying the log into a freshly generated world reproduces the state exactly (``replay``), because
outcomes, including every random draw's counter, live in event payloads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from salesgym.core.clock import Scheduled
from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Evidence, Verifier
from salesgym.core.numbers import rounded
from salesgym.core.rng import uniform
from salesgym.core.state import Fold, Folds, State
from salesgym.core.tools import ToolBox, ToolError, mcp_schema, result_dict

TIME_DECIMALS = 4  # simulated time is kept to 1/10000 of a time unit

# The verifier's key. A deployment sets one from outside the source (a file, or the environment, or the
# ``verifier_key`` argument); this one is public, for local development only, and every score says which
# kind of key signed its evidence.
DEVELOPMENT_KEY = b"salesgym-development-key (public, in the source: never use it to publish results)"
KEY_ENV = "SALESGYM_VERIFIER_KEY"
KEY_FILE_ENV = "SALESGYM_VERIFIER_KEY_FILE"
CORE_PUBLIC_EVENTS = frozenset({"episode_started", "invalid_action", "tool_completed", "episode_ended"})


def resolve_verifier_key(explicit: bytes | None = None) -> tuple[bytes, str]:
    """The proof key and where it came from: ``explicit``, else ``$SALESGYM_VERIFIER_KEY_FILE`` (a file whose
    bytes are the key), else ``$SALESGYM_VERIFIER_KEY`` (text), else the public development key."""
    if explicit is not None:
        if not explicit:
            raise ValueError("verifier_key must not be empty")
        return bytes(explicit), "deployment"
    path = os.environ.get(KEY_FILE_ENV)
    if path:
        try:
            key = Path(path).read_bytes().strip()
        except OSError as err:
            raise ValueError(f"${KEY_FILE_ENV}={path}: cannot read the verifier key ({err.strerror or err})") from None
        if not key:
            raise ValueError(f"${KEY_FILE_ENV}={path}: the key file is empty")
        return key, "deployment"
    text = os.environ.get(KEY_ENV, "")
    if text:
        return text.encode(), "deployment"
    return DEVELOPMENT_KEY, "development"


def public_event_id(index: int) -> str:
    """The agent-side id of the ``index``-th public event (the operator log numbers every event instead)."""
    return "e" + str(index).zfill(6)


_PUBLIC_IDS: list[str] = []  # public_event_id(i) at index i, made once and shared by every episode
PUBLIC_IDS_KEPT = 100_000  # beyond this many, ids are formatted per call (the shared list stays bounded)


def public_event_ids(first: int, end: int) -> list[str]:
    """``public_event_id(i)`` for ``first <= i < end``: the strings are shared, not formatted per step."""
    ids = _PUBLIC_IDS
    if end > len(ids):
        if end > PUBLIC_IDS_KEPT:
            return list(map(public_event_id, range(first, end)))
        ids.extend(map(public_event_id, range(len(ids), end)))
    return ids[first:end]


class World(Protocol):
    """Immutable generated world: shared by every clone, never changed by an episode."""

    @property
    def seed(self) -> int: ...

    @property
    def horizon(self) -> float: ...  # in the family's time unit

    @property
    def tape(self) -> Sequence[Scheduled]: ...

    def hidden(self) -> dict[str, Any]: ...

    def public(self) -> dict[str, Any]: ...


W = TypeVar("W", bound=World)
S = TypeVar("S", bound=State)

Observation = dict[str, Any]


class Family(Protocol[W, S]):
    """What a family supplies to the engine."""

    name: str
    tools: ToolBox[Context[W, S]]

    @property
    def observation(self) -> type[BaseModel]: ...  # the model of an observation's ``data`` (exported, kit-checked)

    @property
    def evidence_kinds(self) -> Set[str]: ...  # what its buyers may put on the record (nothing else is signed)

    @property
    def public_events(self) -> Set[str]: ...  # event kinds the agent sees as they happen (CORE_PUBLIC_EVENTS too)

    @property
    def reset_options(self) -> Set[str]: ...  # what ``reset(options=...)`` may change (world shape, not reward)

    def generate(self, seed: int, options: Mapping[str, Any]) -> W: ...

    def new_state(self, world: W) -> S: ...

    def apply(self, state: S, world: W, event: Event) -> None: ...

    def precheck(self, ctx: Context[W, S], tool: str) -> None: ...

    def usable_tools(self, world: W) -> Set[str] | None: ...  # the tools this world lets the agent call; None: all

    def fire(self, ctx: Context[W, S], item: Scheduled) -> None: ...

    def end_reason(self, state: S, world: W) -> str | None: ...  # why the episode is over early, if it is

    def observe(self, ctx: Context[W, S], result: Mapping[str, Any] | None, new: Sequence[Event]) -> Observation: ...

    def potential(self, state: S, world: W) -> float: ...

    def instructions(self, world: W, invalid_action_limit: int) -> str: ...  # the task card (public facts only)

    def reward(
        self, ctx: Context[W, S], phi_before: float, phi_after: float, started: float, new: Sequence[Event]
    ) -> float:
        """The step's reward from public information only; ``started`` is the clock when the step began."""
        ...

    def score(self, world: W, state: S, log: EventLog, verifier: Verifier) -> dict[str, Any]: ...


class Tally(Protocol):
    """A family's verdict kept as events arrive (optional: a family with ``new_tally(world, verifier)``). The
    engine feeds it every event of the kinds it ``reads`` as it is appended, forks it with the state for a clone,
    and ``score()`` reads its ``verdict()`` instead of asking the family to re-read the whole log."""

    @property
    def reads(self) -> Set[str]: ...  # the event kinds that can change the verdict (the others are not fed)

    def add(self, event: Event) -> None: ...

    def fork(self) -> Tally: ...

    def verdict(self) -> dict[str, Any]: ...


@dataclass(slots=True)
class Context(Generic[W, S]):
    """What rules and tool handlers may touch: the world, the state, and ways to emit events."""

    world: W
    state: S
    family: Family[W, S]
    log: EventLog
    _verifier: Verifier
    _pending_draws: list[tuple[str, ...]]
    provenance: str  # stamped on every event: which family and world seed produced it
    tally: Tally | None = None  # the family's running verdict, fed every event of the kinds it reads
    # the family's fold steps by event kind, when its ``apply`` is a Folds table's: emit calls the kind's step
    # itself (a frame less on every event); otherwise (None) it calls ``apply``
    folds: Mapping[str, Fold[S, W]] | None = None

    @property
    def now(self) -> float:
        return self.state.now

    def draw(self, *key: str) -> float:
        """The next keyed uniform draw for ``key``; its counter moves with the next emitted event."""
        n = self.state.draws.get(key, 0) + self._pending_draws.count(key)
        self._pending_draws.append(key)
        return uniform(self.world.seed, *key, n)

    def emit(
        self,
        kind: str,
        actor: str,
        payload: Mapping[str, Any] | None = None,
        time: float | None = None,
        *,
        owned: bool = False,
    ) -> Event:
        """Append an event and fold it at once. The payload is copied, unless ``owned`` says it is a dict built
        for this event alone that the caller keeps no hold of (the engine's own events): a dict less per event."""
        body: dict[str, Any] = payload if owned and type(payload) is dict else dict(payload) if payload else {}
        state, pending = self.state, self._pending_draws
        if pending:
            body["draws"] = [list(k) for k in pending]
            pending.clear()
        # tuple.__new__ skips the named tuple's Python-level __new__: a frame less on every event
        at = state.now if time is None else time
        seq = state.seq
        event = tuple.__new__(Event, (seq, at, kind, actor, body, self.provenance))
        self.log.append(event)
        # apply_event's bookkeeping, written out (a frame less on every event; its sequence check holds by
        # construction here). replay folds through apply_event: tests/core/test_step_costs.py holds the two equal
        family = self.family
        state.seq = seq + 1
        if kind in family.public_events:
            state.public_seq += 1
        if at > state.now:
            state.now = at
        if "draws" in body:
            for key in body["draws"]:
                state.draws.add(tuple(key), 1)
        core = _CORE_FOLDS.get(kind)
        if core is not None:
            core(state, event)
        folds = self.folds
        if folds is None:
            family.apply(state, self.world, event)
        else:  # Folds.apply, written out
            fold = folds.get(kind)
            if fold is not None:
                fold(state, self.world, event, body)
        tally = self.tally
        if tally is not None and kind in tally.reads:  # most of a step's events change no verdict: no call for them
            tally.add(event)
        return event

    def issue_evidence(self, kind: str, subject: str, source_actor: str, claim: Mapping[str, Any]) -> Evidence:
        """Buyer actors only: create a signed evidence record and emit it."""
        state = self.state
        evidence = self._verifier.issue(f"evd{state.seq:06d}", kind, subject, source_actor, state.now, claim)
        record = self._verifier.signed_record(evidence)  # the verifier's own record, shared read-only
        self.emit("evidence_recorded", source_actor, {"evidence": record}, owned=True)
        return evidence


def apply_event(family: Family[Any, Any], state: State, world: World, event: Event) -> None:
    """Core bookkeeping shared by every family, then the family's own fold."""
    if event.seq != state.seq:
        raise ValueError(f"event {event.seq} applied to state at {state.seq}")
    state.seq += 1
    if event.kind in family.public_events:
        state.public_seq += 1
    if event.time > state.now:
        state.now = event.time
    payload = event.payload
    if "draws" in payload:
        for key in payload["draws"]:
            state.draws.add(tuple(key), 1)
    core = _CORE_FOLDS.get(event.kind)
    if core is not None:
        core(state, event)
    family.apply(state, world, event)


def _invalid(state: State, event: Event) -> None:
    state.invalid_actions += 1


def _completed(state: State, event: Event) -> None:
    state.tool_calls += 1


def _item_due(state: State, event: Event) -> None:
    state.scheduler.pop(event.payload["item_id"])


def _tape_due(state: State, event: Event) -> None:
    state.tape_index += 1


def _scheduled(state: State, event: Event) -> None:
    p = event.payload
    state.scheduler.push(Scheduled(p["due"], event.seq, p["what"], p["data"]))


def _ended(state: State, event: Event) -> None:
    state.terminated = bool(event.payload["terminated"])
    state.truncated = bool(event.payload["truncated"])


# the engine's own bookkeeping, by event kind (families fold every kind they know afterwards)
_CORE_FOLDS: dict[str, Callable[[State, Event], None]] = {
    "invalid_action": _invalid,
    "tool_completed": _completed,
    "item_due": _item_due,
    "tape_item_due": _tape_due,
    "scheduled": _scheduled,
    "episode_ended": _ended,
}


class Environment(Generic[W, S]):
    """A family's world behind the salesgym API (the public API: README.md, A short tour)."""

    def __init__(
        self,
        rules: Family[W, S],
        *,
        invalid_action_limit: int = 50,
        verifier_key: bytes | None = None,
        **options: Any,
    ) -> None:
        missing = CORE_PUBLIC_EVENTS - set(rules.public_events)
        if missing:
            raise ValueError(f"family {rules.name!r}: public_events must include {sorted(missing)}")
        self.family = rules
        self.options = options
        self.invalid_action_limit = invalid_action_limit
        self._secret, self._key_kind = resolve_verifier_key(verifier_key)
        self._world: W | None = None
        self._state: S | None = None
        self._log = EventLog()
        self._verifier: Verifier | None = None
        self._phi = 0.0
        self._provenance = ""
        self._last_obs: Observation = {}
        self._context: Context[W, S] | None = None
        self._tally: Tally | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "big")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
            raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"reset options must be a mapping, got {type(options).__name__}")
        unknown = sorted(map(repr, set(options or {}) - set(self.family.reset_options)))
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {', '.join(unknown)}; reset may change {sorted(self.family.reset_options)} "
                "(ablations and the reward are set when the environment is made)"
            )
        return self.start_world(self.family.generate(seed, {**self.options, **(options or {})}))

    def start_world(self, world: W) -> tuple[Observation, dict[str, Any]]:
        """Start an episode in a given world (what ``reset`` does after generating one). Operator side: the
        conformance kit starts worlds that differ from a generated one only in hidden values."""
        self._world = world
        self._state = self.family.new_state(world)
        self._log = EventLog()
        self._verifier = Verifier(self._secret, world.seed, self.family.evidence_kinds)
        self._provenance = f"{self.family.name}:{world.seed}"
        new_tally: Callable[[W, Verifier], Tally] | None = getattr(self.family, "new_tally", None)
        self._tally = new_tally(world, self._verifier) if new_tally is not None else None
        self._context = None
        ctx = self._ctx()
        ctx.emit("episode_started", "env", {"world": world.public()})
        self._phi = self.family.potential(self._state, world)
        self._last_obs = self.family.observe(ctx, None, self._log.since(0))
        return self._last_obs, {"state_version": self._state.public_seq, "instructions": self.instructions()}

    def instructions(self) -> str:
        """The agent's task card for the current world: goal, rules, how the episode ends, how tools are
        called. Built from public facts only; also in ``reset``'s ``info["instructions"]``."""
        _, world = self._require()
        return self.family.instructions(world, self.invalid_action_limit)

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        state, world, ctx = self._state, self._world, self._context
        if ctx is None:  # _require and _ctx only when there is no episode's context yet: two frames less a step
            state, world = self._require()
            ctx = self._ctx()
        assert state is not None and world is not None
        family = self.family
        if state.terminated or state.truncated:  # nothing happens; the observation says so too
            over_dict = result_dict(
                "error", state.public_seq, 0.0, {}, [], {"error": "the episode is over; call reset()"}
            )
            self._last_obs = family.observe(ctx, over_dict, ())
            info = {"tool_result": over_dict, "state_version": state.public_seq}
            return self._last_obs, 0.0, state.terminated, state.truncated, info
        start, first_public, t0 = state.seq, state.public_seq, state.now
        status: str
        resources: Mapping[str, float]
        output: Mapping[str, Any]
        try:
            spec, args = family.tools.parse(action)
            family.precheck(ctx, spec.name)
            outcome = spec.handler(ctx, args)
        except ToolError as err:
            self._refuse(ctx, action, err, start)
            status, time_cost, resources, output = "error", 0.0, {}, {"error": err.reason}
        else:
            began = state.now
            target = self._advance(ctx, began + outcome.time_cost, outcome.until_public)
            time_cost = rounded(target - began, TIME_DECIMALS)
            # the call completes when its time is spent: one event records the call, its cost and the new clock
            ctx.emit(
                "tool_completed",
                "agent",
                {
                    "tool": spec.name,
                    "args": args.__pydantic_serializer__.to_python(args, mode="json"),  # model_dump, minus a layer
                    "started": t0,
                    "time_cost": time_cost,
                    "resource_cost": dict(outcome.resource_cost),
                },
                time=target,
                owned=True,
            )
            if not state.terminated:  # _check_end, written out: a frame less a step
                why = "horizon" if state.now >= world.horizon else family.end_reason(state, world)
                if why is not None:
                    ctx.emit("episode_ended", "env", {"terminated": True, "truncated": False, "why": why}, owned=True)
            status, resources, output = "ok", outcome.resource_cost, outcome.output
        new = self._log.since(start)
        # apply_event counts the public events as they are applied: the call's are the counter's new range
        ids = public_event_ids(first_public, state.public_seq)
        result = result_dict(status, state.public_seq, time_cost, resources, ids, output)
        phi = family.potential(state, world)
        reward = family.reward(ctx, self._phi, phi, t0, new)
        self._phi = phi
        self._last_obs = family.observe(ctx, result, new)
        info = {"tool_result": result, "state_version": state.public_seq}
        return self._last_obs, reward, state.terminated, state.truncated, info

    def _refuse(self, ctx: Context[W, S], action: Any, err: ToolError, start: int) -> None:
        """A refused call: one ``invalid_action`` event (and the episode's end at the ceiling), nothing else."""
        state = ctx.state
        if state.seq != start:  # a handler must refuse before it emits anything
            raise RuntimeError(f"tool refused after emitting events: {err.reason}") from err
        ctx._pending_draws.clear()
        # the call's 'tool', when it names a tool; read without hashing or comparing any foreign object,
        # since the call may be anything (a key whose __eq__ raises, a dict subclass that overrides get)
        tool = None
        if type(action) is dict:
            for key, value in action.items():  # an exact dict: no method of the call is overridden
                if type(key) is str and key == "tool" and type(value) is str and value in self.family.tools.specs:
                    tool = value
        ctx.emit("invalid_action", "agent", {"reason": err.reason, "tool": tool}, owned=True)
        if state.invalid_actions >= self.invalid_action_limit:
            ctx.emit(
                "episode_ended",
                "env",
                {"terminated": False, "truncated": True, "why": "invalid-action ceiling"},
                owned=True,
            )

    def _advance(self, ctx: Context[W, S], target: float, until_public: bool = False) -> float:
        """Fire due scheduled items and tape items up to ``target`` in time order; return the time the call
        ends: ``target`` (exact), or with ``until_public`` the time of the first item the agent can see."""
        state, world = ctx.state, ctx.world
        target = rounded(min(target, world.horizon), TIME_DECIMALS)  # no float drift: "Monday" is exact
        tape, heap, fire = world.tape, state.scheduler, self.family.fire
        seen = state.public_seq
        while True:
            head = heap.peek()
            exo = tape[state.tape_index] if state.tape_index < len(tape) else None
            if exo is not None and exo.due <= target and (head is None or exo.due < head.due):
                due = {"index": state.tape_index, "what": exo.kind}
                ctx.emit("tape_item_due", "world", due, max(exo.due, state.now), owned=True)
                fire(ctx, exo)
            elif head is not None and head.due <= target:
                due = {"item_id": head.item_id, "what": head.kind}
                ctx.emit("item_due", "world", due, max(head.due, state.now), owned=True)
                fire(ctx, head)
            else:
                return target
            if until_public and state.public_seq != seen:
                return rounded(state.now, TIME_DECIMALS)

    # -- clone and replay --------------------------------------------------------------------------
    def clone(self) -> Environment[W, S]:
        """An exact, independent copy; the world is shared (it is immutable), the state forked."""
        state, _ = self._require()
        twin = Environment.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._state = state.fork()
        twin._log = self._log.fork()
        twin._tally = self._tally.fork() if self._tally is not None else None
        twin._context = None  # built on first use, around the twin's own state and log
        return twin

    def replay(self, events: Sequence[Mapping[str, Any]] | None = None) -> S:
        """Rebuild the state by folding ``events`` (default: this episode's log) into a fresh world."""
        _, world = self._require()
        state = self.family.new_state(world)
        for data in events if events is not None else self._log.to_list():
            event = Event(data["seq"], data["time"], data["kind"], data["actor"], data["payload"], data["provenance"])
            apply_event(self.family, state, world, event)
        return state

    # -- operator side -----------------------------------------------------------------------------
    def event_log(self) -> list[dict[str, Any]]:
        return self._log.to_list()

    def event_log_hash(self) -> str:
        return self._log.digest()

    def score(self) -> dict[str, Any]:
        """The verifier's authoritative report; ``verifier_key`` says whether a deployment key signed it. A family
        with a running verdict (``Tally``) answers from it, at a cost that does not grow with the log."""
        state, world = self._require()
        assert self._verifier is not None
        if self._tally is not None:
            report = self._tally.verdict()
        else:
            report = self.family.score(world, state, self._log, self._verifier)
        return {**report, "verifier_key": self._key_kind}

    def hidden_truth(self) -> dict[str, Any]:
        _, world = self._require()
        return world.hidden()

    # -- agent side ---------------------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.family.tools.openai()

    def mcp_tools(self) -> list[dict[str, Any]]:
        return self.family.tools.mcp()

    def usable_tools(self) -> frozenset[str] | None:
        """The names of the tools this world lets the agent call where the family narrows them (a workflows
        task: its apps' tools and the task desk's, as its task card says; the others are refused), else None:
        a prompt that must be short can show only these (``RolloutConfig.tools="usable"``)."""
        _, world = self._require()
        usable = self.family.usable_tools(world)
        return None if usable is None else frozenset(usable)

    @property
    def toolbox(self) -> ToolBox[Context[W, S]]:
        """The family's tools (operator side: the conformance kit checks each output against its model)."""
        return self.family.tools

    @property
    def observation_model(self) -> type[BaseModel]:
        """The model of an observation's ``data``."""
        return self.family.observation

    def observation_schema(self) -> dict[str, Any]:
        """The JSON Schema of an observation's ``data`` (the family's model), as MCP clients read schemas."""
        return mcp_schema(self.family.observation)

    def observe(self) -> Observation:
        return self._last_obs

    @property
    def state_version(self) -> int:
        """How many public events the episode has had: what a client that retries a step compares."""
        return self._require()[0].public_seq

    def _require(self) -> tuple[S, W]:
        if self._state is None or self._world is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state, self._world

    def _ctx(self) -> Context[W, S]:
        ctx = self._context
        if ctx is None:  # one per episode (and per clone), not one per step
            state, world = self._require()
            assert self._verifier is not None
            table = getattr(self.family.apply, "__self__", None)
            ctx = self._context = Context(
                world, state, self.family, self._log, self._verifier, [], self._provenance, self._tally,
                table.by_kind if isinstance(table, Folds) else None,
            )
        return ctx
