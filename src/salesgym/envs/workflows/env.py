"""The workflows environment: parts wired into the engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from salesgym.core.clock import Scheduled
from salesgym.core.env import CORE_PUBLIC_EVENTS, Environment
from salesgym.core.events import Event, EventLog
from salesgym.core.evidence import Verifier
from salesgym.core.rng import stream
from salesgym.envs.workflows import observe, outputs, packs, state, users, verifier
from salesgym.envs.workflows.apps.common import Ctx
from salesgym.envs.workflows.contract import DEFAULT_MAX_CALLS, MAX_CALLS_RANGE
from salesgym.envs.workflows.instructions import task_card
from salesgym.envs.workflows.llm import build
from salesgym.envs.workflows.rubric import Judge
from salesgym.envs.workflows.simulator import Voice
from salesgym.envs.workflows.state import WorkflowsState
from salesgym.envs.workflows.tasks.model import instantiate
from salesgym.envs.workflows.tools import TOOLS, check_permission, usable_tools
from salesgym.envs.workflows.world import WorkflowsWorld

# the voice's raw replies (voice_spoke) are operator side: the agent gets the checked answer, never the raw text
EVENT_KINDS = frozenset({*state.APPLY, *CORE_PUBLIC_EVENTS}) - {"voice_spoke"}
TIERS = (1, 2, 3, 4)
# training ablations: they change the reward only (the score and the verdict stay the verifier's); the benchmark
# refuses them (``bench.runner.validate_ablation``)
TRAINING_ABLATIONS = {
    "partial_reward": (
        "the return is the verifier's partial score measured from where the task started (0 for leaving the apps "
        "as they were or for a violation, 1 for a pass) instead of 1 or 0, paid as the tables show progress and "
        "settled at the end, so a cut episode earns its progress so far; it reads the task's hidden checks, so the "
        "return is no longer public (the score's figures are unchanged; it lists the ablation)"
    ),
}


def pool(template: str | None, tier: int | None, pack: str | None = None) -> tuple[str, ...]:
    """The templates a seed may draw from: the package's, or a template pack's (raises ``ValueError`` with what is
    allowed)."""
    templates = packs.catalogue(pack)
    if template is not None:
        if template not in templates:
            where = "" if pack is None else " in this template pack"
            raise ValueError(f"unknown template {template!r}{where}; choose from {', '.join(templates)}")
        if tier is not None and templates[template].tier != tier:
            raise ValueError(f"template {template!r} is tier {templates[template].tier}, not {tier}")
        return (template,)
    if tier is not None and tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    return tuple(t for t, spec in templates.items() if tier is None or spec.tier == tier)


def check_options(template: str | None, tier: int | None, max_calls: int, pack: str | Path | None = None) -> None:
    if pack is not None and not isinstance(pack, str | Path):
        raise ValueError(f"pack must be the path of a template pack directory, got {type(pack).__name__}")
    pool(template, tier, None if pack is None else str(pack))
    low, high = MAX_CALLS_RANGE
    if not isinstance(max_calls, int) or isinstance(max_calls, bool) or not low <= max_calls <= high:
        raise ValueError(f"max_calls must be an int in {low}-{high}, got {max_calls!r}")


class WorkflowsRules:
    """The workflows family as the engine sees it: the task generator, the fold, permissions, observer, verifier."""

    name = "workflows"
    tools = TOOLS
    observation = outputs.Observation
    evidence_kinds: frozenset[str] = frozenset()  # success rests on the end state and the log, not on evidence
    public_events = EVENT_KINDS  # every change is the agent's own call or the requester's answer to it
    reset_options = frozenset({"template", "tier"})

    def __init__(self, judge: Judge | None = None, voice: Voice | None = None, ablations: Sequence[str] = ()) -> None:
        self.judge = judge  # None: the deterministic rubric is the score of record
        self.voice = voice  # None: the simulated people speak the rules' words
        self.ablations = tuple(ablations)
        self.partial = "partial_reward" in self.ablations
        self._start: tuple[WorkflowsWorld, float] | None = None  # the last world's start partial (a group shares it)

    def generate(self, seed: int, options: Mapping[str, Any]) -> WorkflowsWorld:
        pack = options.get("pack")
        names = pool(options.get("template"), options.get("tier"), pack)
        chosen = names[0] if len(names) == 1 else stream(seed, "template").choice(names)
        return instantiate(packs.catalogue(pack)[chosen], seed, options["max_calls"], pack or "")

    new_state = staticmethod(state.new_state)
    apply = staticmethod(state.apply)
    observe = staticmethod(observe.observe)

    def precheck(self, ctx: Ctx, tool: str) -> None:
        check_permission(ctx, tool)

    def usable_tools(self, world: WorkflowsWorld) -> frozenset[str]:
        return usable_tools(world.task)

    def fire(self, ctx: Ctx, item: Scheduled) -> None:
        if item.kind == "user_action":  # a simulated person's action due at a minute of the sandbox clock
            users.fire(ctx, item)

    def end_reason(self, s: WorkflowsState, world: WorkflowsWorld) -> str | None:
        return "the agent finished the task" if s.finished else None

    def potential(self, s: WorkflowsState, world: WorkflowsWorld) -> float:
        """0; with ``partial_reward``, the progress the tables show (``verifier.progress``), so that a cut episode's
        return is its progress so far."""
        return verifier.progress(world, s, None, self._start_partial(world)) if self.partial else 0.0

    def _start_partial(self, world: WorkflowsWorld) -> float:
        kept = self._start
        if kept is None or kept[0] is not world:
            kept = self._start = (world, verifier.start_partial(world))
        return kept[1]

    def instructions(self, world: WorkflowsWorld, invalid_action_limit: int) -> str:
        return task_card(world.task, world.anchor, int(world.horizon), invalid_action_limit)

    def reward(self, ctx: Ctx, phi_before: float, phi_after: float, started: float, new: Sequence[Event]) -> float:
        """0 until the episode ends; then the verdict the final observation shows (1 pass, 0 fail): the
        return is the score's primary, and nothing is paid for a step before the agent is told the outcome.
        With ``partial_reward`` each step pays the change in ``verifier.progress`` (the tables' until the end, the
        whole verdict's at the end), so the return is the end's progress, 1 for a pass, and a cut episode's
        return is the progress its tables show."""
        if any(e.kind == "episode_ended" for e in new):
            passed = observe.verdict(ctx) == "pass"  # computes (and keeps) the report the score will hand out
            if self.partial:
                end = 1.0 if passed else verifier.progress(ctx.world, ctx.state, ctx.log,
                                                           self._start_partial(ctx.world), self.judge)  # fmt: skip
                return end - phi_before
            return 1.0 if passed else 0.0
        return phi_after - phi_before if self.partial else 0.0

    def score(self, world: WorkflowsWorld, s: WorkflowsState, log: EventLog, v: Verifier) -> dict[str, Any]:
        report = verifier.final_score(world, s, log, self.judge)
        # a run trained on a reshaped reward says so on its report (the figures themselves are the verifier's)
        return {**report, "training_ablations": list(self.ablations)} if self.ablations else report


class WorkflowsEnv(Environment[WorkflowsWorld, WorkflowsState]):
    """One short, checkable sales workflow over sandboxed replicas of four sales apps.

    Description
        The agent gets a request from a colleague (qualify an inbound lead, enrich contacts, sequence a list,
        book the earliest demo, turn a booking into a deal, hand off SQLs, re-engage a closed-lost account...)
        and carries it out with the tools of one to four app replicas: a CRM (HubSpot-shaped), a prospecting
        database (Sales Navigator-shaped), a sequencer (Outreach-shaped) and a scheduler (Calendly-shaped), each
        an independent implementation that enforces its platform's rules. Each seed draws a template and an
        instance of it: seeded synthetic data with provenance, and the task's scene.

    Tools
        49 typed tools whose names and argument shapes follow the platforms' public APIs and official MCP
        servers, plus ``ask_requester``, ``reply_message``, ``list_policies``, ``read_policy`` (the company's
        policy documents) and ``finish_task`` (``docs/workflows.md``). A task may use only its apps, some read
        only. Every call costs one minute of the sandbox clock.

    Observation
        ``{"text": str, "data": dict}``: the request, the clock and calls left, what the requester has said, the
        inbox (messages that arrive mid-episode), the last tool result, and at the end the verdict.

    Reward
        0 for every step; at the episode's end, 1 if the verifier passes the task, else 0: the verdict is shown
        in that final observation, so the reward is public, and the return equals the score's ``primary``.

    Episode end
        Terminated when the agent calls ``finish_task`` or the call budget runs out; truncated when invalid
        actions reach ``invalid_action_limit``.

    Arguments
        template (a template id, or None: the seed draws one), tier (1-4, or None), max_calls (10-400; 60),
        invalid_action_limit, verifier_key; judge (None: the deterministic message rubric decides; "llm": a
        language-model judge decides its wording checks), voice (None; "llm": a language-model voice answers as
        the simulated people, checked and recorded on the tape; or an object with ``answer()``, such as
        ``llm.TapeVoice`` replaying a recorded tape), llm (the endpoint of both: {"model", "base_url",
        "api_key_env"}), pack (a template pack's directory, or ``"workflows-counterparty"``, the pack the package
        ships: policy documents and simulated people who act; the templates come from it instead of the
        package's catalogue; ``docs/workflows.md``), ablation (training only, the reward reshaped:
        ``TRAINING_ABLATIONS``; ``salesgym bench`` refuses it).

    Version history
        v0 (workflows-gen/1, workflows-task/1): initial release. workflows-task/2: message rubrics, scripted
        mid-episode messages and ``reply_message``.

    >>> env = WorkflowsEnv(template="crm-lifecycle-reset")
    >>> obs, info = env.reset(seed=1)
    >>> env.step({"tool": "hubspot-list-owners", "args": {}})[4]["tool_result"]["status"]
    'ok'
    """

    def __init__(
        self,
        template: str | None = None,
        tier: int | None = None,
        max_calls: int = DEFAULT_MAX_CALLS,
        invalid_action_limit: int = 50,
        verifier_key: bytes | None = None,
        judge: Any = None,
        voice: Any = None,
        llm: Mapping[str, Any] | None = None,
        pack: str | Path | None = None,
        ablation: str | Sequence[str] | None = None,
    ) -> None:
        if invalid_action_limit < 1:
            raise ValueError("invalid_action_limit must be at least 1")
        ablations = (ablation,) if isinstance(ablation, str) else tuple(ablation or ())
        bad = [a for a in ablations if a not in TRAINING_ABLATIONS]
        if bad:
            raise ValueError(f"unknown ablation {bad}; choose from {list(TRAINING_ABLATIONS)}")
        check_options(template, tier, max_calls, pack)
        rules = WorkflowsRules(build("judge", judge, llm), build("voice", voice, llm), ablations)
        super().__init__(rules, invalid_action_limit=invalid_action_limit, verifier_key=verifier_key,
                         template=template, tier=tier, max_calls=max_calls,
                         pack=None if pack is None else pack if pack in packs.builtin()
                         else str(Path(pack).resolve()))  # fmt: skip
