"""Which worlds a training run plays, as configuration: a curriculum of territory size and horizon, failure
mining, and the training-side ablations as switches (docs/training.md). Framework-neutral: nothing here
imports a trainer; :class:`TaskSampler` hands out :class:`Task` s (an environment id, a world seed, make
arguments) and is told each task's score, and :meth:`TaskSampler.rows` writes fixed dataset rows.

**Curriculum.** Stages from ``debug`` up, each a set of make arguments (``n_opportunities``,
``horizon_days``). A stage is left for the next after ``steps`` training steps in it, or once the mean
score of its last ``window`` recorded tasks reaches ``promote_score``, whichever comes first; the last stage
is kept.

**Failure mining.** Once ``min_seen`` tasks of the current stage have scores, a ``share`` of new tasks
replays one of the ``pool`` lowest-scoring of them (a task's score is the mean of what was recorded for it)
instead of a fresh world. Every draw (fresh seeds, the scenario, whether and what to mine) comes from keyed
streams (:mod:`salesgym.core.rng`) of the sampler's seed and the draw's number, so the same seed and the
same recorded scores give the same tasks.

**Switches** (:class:`TrainingSwitches`): ``curriculum`` (off: every task from the last stage),
``failure_mining`` (off: fresh worlds only), and three reward terms that map onto the environment's own
training ablations (its family spec's ``training_ablations``; the score never changes, only the reward):
``shaping`` (off: ``sparse_reward``), ``throughput_reward`` (off: ``no_throughput_reward``),
``terminal_economics`` (off: ``no_terminal_economics``).
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import salesgym
from salesgym.core.rng import stream_seed, uniform

SEED_SPACE = 2**31  # world seeds of fresh tasks: below this, like every manifest's


@dataclass(frozen=True)
class Stage:
    """One curriculum stage: the make arguments of its worlds and when to leave it."""

    name: str
    make_kwargs: Mapping[str, Any]
    steps: int | None = None  # leave after this many training steps in the stage
    promote_score: float | None = None  # or once the mean score of the last ``window`` tasks reaches this
    window: int = 16

    def __post_init__(self) -> None:
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"stage {self.name!r}: steps must be at least 1, got {self.steps}")
        if self.promote_score is not None and not math.isfinite(self.promote_score):
            raise ValueError(f"stage {self.name!r}: promote_score must be finite")
        if self.window < 1:
            raise ValueError(f"stage {self.name!r}: window must be at least 1")


# From debug up: the debug size, then the sizes and horizons of the train split's territories.
TERRITORY_STAGES = (
    Stage("debug", {"n_opportunities": 4, "horizon_days": 30}, steps=100),
    Stage("small", {"n_opportunities": 10, "horizon_days": 30}, steps=200),
    Stage("standard", {"n_opportunities": 20, "horizon_days": 90}, steps=400),
    Stage("large", {"n_opportunities": 50, "horizon_days": 90}),
)

# switch -> (the environment's training ablation that turns the term off)
REWARD_SWITCHES = {
    "shaping": "sparse_reward",
    "throughput_reward": "no_throughput_reward",
    "terminal_economics": "no_terminal_economics",
}


@dataclass(frozen=True)
class TrainingSwitches:
    """What a training run uses; each ``no_<name>`` ablation turns one off and nothing else."""

    curriculum: bool = True
    failure_mining: bool = True
    shaping: bool = True
    throughput_reward: bool = True
    terminal_economics: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f"no_{f.name}" for f in fields(cls))

    @classmethod
    def ablate(cls, ablations: Iterable[str]) -> TrainingSwitches:
        """The switches with every ``no_<name>`` in ``ablations`` off."""
        wanted = list(ablations)
        bad = [a for a in wanted if a not in cls.names()]
        if bad:
            raise ValueError(f"unknown training ablation {bad}; choose from {list(cls.names())}")
        return cls(**{a.removeprefix("no_"): False for a in wanted})

    def env_ablations(self, env_id: str) -> tuple[str, ...]:
        """The environment ablations the reward switches ask for; an environment without one is an error."""
        wanted = tuple(ablation for switch, ablation in REWARD_SWITCHES.items() if not getattr(self, switch))
        offered = dict(salesgym.family(env_id).training_ablations)
        missing = [a for a in wanted if a not in offered]
        if missing:
            raise ValueError(f"{env_id} has no training ablation {missing} (it offers {sorted(offered) or 'none'})")
        return wanted


@dataclass(frozen=True)
class Task:
    """One world to play: ``salesgym.make(env_id, **make_kwargs).reset(seed=seed)``."""

    env_id: str
    seed: int
    make_kwargs: Mapping[str, Any]
    stage: str
    mined: bool = False

    @property
    def key(self) -> tuple[str, int, str]:
        return self.env_id, self.seed, json.dumps(dict(self.make_kwargs), sort_keys=True)

    def row(self) -> dict[str, Any]:
        """A dataset row (``make_kwargs`` as JSON text, so every row has the same columns)."""
        return {"env_id": self.env_id, "seed": self.seed, "make_kwargs": json.dumps(dict(self.make_kwargs),
                sort_keys=True), "stage": self.stage, "mined": self.mined}  # fmt: skip


@dataclass(frozen=True)
class CurriculumConfig:
    """A training run's choice of worlds, as plain data (what a recipe's YAML holds)."""

    env_id: str = "territory-v0"
    stages: tuple[Stage, ...] = TERRITORY_STAGES
    scenarios: tuple[Mapping[str, Any], ...] = ()  # make arguments drawn per task (family, template); () = none
    mining_share: float = 0.25
    mining_pool: int = 8
    mining_min_seen: int = 8
    switches: TrainingSwitches = field(default_factory=TrainingSwitches)
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.stages:
            raise ValueError("a curriculum needs at least one stage")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        stuck = [s.name for s in self.stages[:-1] if s.steps is None and s.promote_score is None]
        if stuck:
            raise ValueError(f"stages {stuck} are never left: give each but the last steps or promote_score")
        if not 0 <= self.mining_share <= 1:
            raise ValueError(f"mining_share must be in [0, 1], got {self.mining_share}")
        if self.mining_pool < 1 or self.mining_min_seen < 1:
            raise ValueError("mining_pool and mining_min_seen must be at least 1")
        ablation = self.switches.env_ablations(self.env_id)  # an environment without one fails here
        if ablation:  # and so does a combination the environment refuses (one that leaves no reward)
            salesgym.make(self.env_id, **{**self.stages[0].make_kwargs, "ablation": list(ablation)})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CurriculumConfig:
        """From plain data (a recipe's YAML): ``stages`` as mappings, ``ablations`` as ``no_<switch>`` names."""
        data = dict(data)
        known = {f.name for f in fields(cls)} | {"ablations"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown curriculum keys {unknown}; known: {sorted(known - {'switches'})}")
        if "stages" in data:
            data["stages"] = tuple(Stage(**s) for s in data["stages"])
        if "scenarios" in data:
            data["scenarios"] = tuple(dict(s) for s in data["scenarios"])
        data["switches"] = TrainingSwitches.ablate(data.pop("ablations", ()))
        return cls(**data)


class TaskSampler:
    """Hands out tasks by the curriculum and failure mining of ``config``; ``record`` feeds back scores.

    ``next(step)`` takes the trainer's global step (the step-count promotion rule reads it).
    """

    def __init__(self, config: CurriculumConfig) -> None:
        self.config = config
        sw = config.switches
        self.stages: tuple[Stage, ...] = config.stages if sw.curriculum else (config.stages[-1],)
        self.mining = sw.failure_mining and config.mining_share > 0
        self._ablation = sw.env_ablations(config.env_id)
        self.stage_index = 0
        self._stage_start = 0
        self._recent: deque[float] = deque(maxlen=self.stage.window)
        self._scores: dict[tuple[str, int, str], list[float]] = {}
        self._tasks: dict[tuple[str, int, str], Task] = {}
        self._draws = 0
        self._step = 0
        self.promotions: list[tuple[int, str]] = []  # (step, stage entered)

    @property
    def stage(self) -> Stage:
        return self.stages[self.stage_index]

    def _promote(self, step: int) -> None:
        if self.stage_index + 1 < len(self.stages):
            self.stage_index += 1
            self._stage_start = step
            self._recent = deque(maxlen=self.stage.window)
            self.promotions.append((step, self.stage.name))

    def _update(self, step: int) -> None:
        while self.stage.steps is not None and step - self._stage_start >= self.stage.steps:
            before = self.stage_index
            self._promote(self._stage_start + self.stage.steps)
            if self.stage_index == before:
                break

    def next(self, step: int = 0) -> Task:
        """The next task to play at training step ``step``."""
        self._step = step
        self._update(step)
        n, seed, stage = self._draws, self.config.seed, self.stage
        self._draws += 1
        if self.mining and uniform(seed, "mine?", n) < self.config.mining_share:
            worst = self.lowest(stage.name, self.config.mining_pool)
            if len(self._seen(stage.name)) >= self.config.mining_min_seen and worst:
                pick = worst[int(uniform(seed, "mine", n) * len(worst))]
                return Task(pick.env_id, pick.seed, pick.make_kwargs, stage.name, mined=True)
        kwargs: dict[str, Any] = {}
        if self.config.scenarios:
            scenarios = self.config.scenarios
            kwargs.update(scenarios[int(uniform(seed, "scenario", n) * len(scenarios))])
        kwargs.update(stage.make_kwargs)
        if self._ablation:
            kwargs["ablation"] = list(self._ablation)
        return Task(self.config.env_id, stream_seed(seed, "world", n) % SEED_SPACE, kwargs, stage.name)

    def record(self, task: Task, score: float) -> None:
        """The score ``task`` earned (call once per episode; a group's copies each count)."""
        if not math.isfinite(score):
            raise ValueError(f"a task's score must be finite, got {score}")
        self._scores.setdefault(task.key, []).append(float(score))
        self._tasks.setdefault(task.key, task)
        if task.stage == self.stage.name:
            self._recent.append(float(score))
            goal = self.stage.promote_score
            if goal is not None and len(self._recent) == self._recent.maxlen and _mean(self._recent) >= goal:
                self._promote(self._step)  # by score: the next stage's steps count from the last step seen

    def _seen(self, stage: str) -> list[Task]:
        return [t for t in self._tasks.values() if t.stage == stage]

    def lowest(self, stage: str, k: int) -> list[Task]:
        """The ``k`` tasks of ``stage`` with the lowest mean score (ties: by seed), lowest first."""
        ranked = sorted(self._seen(stage), key=lambda t: (_mean(self._scores[t.key]), t.seed, t.key))
        return ranked[:k]

    def rows(self, n: int, *, per_step: int = 1) -> list[dict[str, Any]]:
        """``n`` fixed dataset rows (no scores fed back: step-count promotion only, no mining), ``per_step``
        tasks per training step; for trainers that take a fixed dataset (TRL's ``environment_factory``)."""
        sampler = TaskSampler(self.config)
        sampler.mining = False
        return [sampler.next(i // per_step).row() for i in range(n)]


def _mean(xs: Sequence[float] | deque[float]) -> float:
    return sum(xs) / len(xs)


def split_scenarios(split: str) -> tuple[dict[str, Any], ...]:
    """The (family, template) pairs of a frozen split's territories, as make arguments: train on the train
    split's scenarios so that held-out families and templates stay unseen."""
    from salesgym.bench.splits import load

    pairs = dict.fromkeys((t.family, t.template) for t in load(split).territories)
    return tuple({"family": f, "template": tmpl} for f, tmpl in pairs)
