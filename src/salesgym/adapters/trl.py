"""TRL's ``GRPOTrainer`` on salesgym worlds (``pip install 'salesgym[trl]'``; written against TRL 1.16).

Two ways in, both documented in docs/training.md:

``rollout_func`` (:class:`SalesgymRollout`)
    Our token-level loop (:mod:`salesgym.adapters.rollout`) with the trainer's own model: the trainer gets
    the exact ids, the logprobs and ``env_mask`` (1 on model tokens), and each group of ``num_generations``
    completions of one prompt is one world played on ``clone()`` copies. The dataset's prompts are task keys
    (:func:`task_dataset`); the reward is :func:`episode_return`, the environment's summed step rewards.
``environment_factory`` (:func:`environment_factory`)
    TRL's built-in tool loop: a class whose public methods are the environment's tools (made from its
    OpenAI tool schemas), ``reset(**row)`` and ``get_reward``. TRL then owns the chat template and the
    tool-call parsing (it needs a template it can parse tool calls with).

A curriculum and failure mining (:mod:`salesgym.adapters.curriculum`) plug into the first:
``SalesgymRollout(tasks=TaskSampler(...))`` with :func:`slot_dataset` chooses each group's world when it is
played and feeds its returns back; for the second, :meth:`TaskSampler.rows` gives fixed rows.

Nothing here is imported by ``import salesgym``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import salesgym
from salesgym.adapters.clients import ModelClient, TransformersClient
from salesgym.adapters.curriculum import Task, TaskSampler
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory, group_rollout
from salesgym.core.observation_text import observation_text

_KEY = re.compile(r"^salesgym task (?P<env>[A-Za-z0-9_.-]+) seed=(?P<seed>\d+)$")


def task_key(env_id: str, seed: int) -> str:
    """The prompt of one world in a :func:`task_dataset`: ``"salesgym task <env_id> seed=<seed>"``."""
    return f"salesgym task {env_id} seed={seed}"


def parse_task_key(prompt: Any) -> tuple[str, int]:
    match = _KEY.match(prompt) if isinstance(prompt, str) else None
    if match is None:
        raise ValueError(f"not a salesgym task key (see task_dataset): {str(prompt)[:80]!r}")
    return match["env"], int(match["seed"])


def slot_dataset(n: int) -> Any:
    """``n`` rows whose prompts are placeholders (``"salesgym slot <i>"``), for ``SalesgymRollout(tasks=...)``:
    the sampler picks each group's world when it is played, so promotions and mined worlds take effect at
    once (a dataset is read ahead of the rollouts)."""
    from datasets import Dataset

    return Dataset.from_dict({"prompt": [f"salesgym slot {i}" for i in range(n)]})


def task_dataset(env_id: str, seeds: Iterable[int]) -> Any:
    """A ``datasets.Dataset`` with one row per world: ``prompt`` (its task key), ``env_id``, ``seed``."""
    from datasets import Dataset

    seeds = list(seeds)
    return Dataset.from_dict(
        {"prompt": [task_key(env_id, s) for s in seeds], "env_id": [env_id] * len(seeds), "seed": seeds}
    )


def episode_return(completions: list[Any], salesgym_return: list[float], **_: Any) -> list[float]:
    """The reward function: each episode's undiscounted sum of step rewards (docs/reward.md)."""
    return [float(r) for r in salesgym_return]


class SalesgymRollout:
    """A ``rollout_func``: ``GRPOTrainer(..., rollout_func=SalesgymRollout(), reward_funcs=[episode_return])``.

    TRL hands it each prompt repeated ``num_generations`` times in a row; each run of equal prompts is one
    group: one world, played on that many clones. ``client`` makes the model client from the trainer
    (default: the trainer's model through :class:`TransformersClient` at ``args.temperature``).
    """

    def __init__(
        self,
        config: RolloutConfig | None = None,
        *,
        make_kwargs: Mapping[str, Any] | None = None,
        client: Callable[[Any], ModelClient] | None = None,
        tasks: TaskSampler | None = None,
    ) -> None:
        self.config = config or RolloutConfig(max_turns=8, max_new_tokens=256)
        self.make_kwargs = dict(make_kwargs or {})
        self.client = client or _trainer_client
        self.tasks = tasks  # when set, it picks every group's world (prompts are slots) and hears its returns
        self.trajectories: list[TokenTrajectory] = []  # the last batch's, for logging and tests
        self.played: list[Task] = []  # with ``tasks``: every group's task, in order

    def _task(self, prompt: Any, step: int) -> Task:
        if self.tasks is not None:
            return self.tasks.next(step)
        env_id, seed = parse_task_key(prompt)
        return Task(env_id, seed, self.make_kwargs, stage="")

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        client = self.client(trainer)
        tokenizer = trainer.processing_class
        step = int(getattr(getattr(trainer, "state", None), "global_step", 0) or 0)
        batch: list[TokenTrajectory] = []
        i = 0
        while i < len(prompts):
            j = i
            while j < len(prompts) and prompts[j] == prompts[i]:
                j += 1
            task = self._task(prompts[i], step)
            group = group_rollout(task.env_id, client, tokenizer, seed=task.seed, n=j - i, config=self.config,
                                  make_kwargs=task.make_kwargs, group_id=f"{task.env_id}:{task.seed}@{i}")  # fmt: skip
            if self.tasks is not None:
                self.played.append(task)
                for t in group:
                    self.tasks.record(task, t.episode_return)
            batch += group
            i = j
        self.trajectories = batch
        return {
            "prompt_ids": [t.prompt_ids for t in batch],
            "completion_ids": [t.completion_ids for t in batch],
            "logprobs": [t.logprobs if t.logprobs is not None else [0.0] * len(t.completion_ids) for t in batch],
            "env_mask": [t.mask for t in batch],
            "salesgym_return": [t.episode_return for t in batch],
            "salesgym_score": [t.score.get("primary") for t in batch],
            "salesgym_tool_events": [t.tool_events for t in batch],  # for rewards on the calls themselves
        }


def _trainer_client(trainer: Any) -> ModelClient:
    model = trainer.accelerator.unwrap_model(trainer.model)
    return TransformersClient(model, trainer.processing_class, temperature=float(trainer.args.temperature))


# --- environment_factory --------------------------------------------------------------------------------

_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                          "object": dict}  # fmt: skip


def _annotation(schema: Mapping[str, Any]) -> tuple[Any, bool]:
    """The Python type of a JSON Schema property, and whether it may be null."""
    options = schema.get("anyOf", [schema])
    types = [_TYPES.get(o.get("type", "string"), str) for o in options if o.get("type") != "null"]
    nullable = len(types) < len(options)
    hint: Any = types[0] if types else str
    return (hint | None if nullable else hint), nullable


def _tool_method(spec: Mapping[str, Any]) -> Callable[..., str]:
    fn = spec["function"]
    name, params = fn["name"], fn.get("parameters", {})
    props: Mapping[str, Mapping[str, Any]] = params.get("properties", {})

    def tool(self: SalesgymToolEnv, **kwargs: Any) -> str:
        return self._call(name, kwargs)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    lines = [" ".join(str(fn.get("description", name)).split()), "", "Args:"]
    for arg, prop in props.items():
        hint, nullable = _annotation(prop)
        default = None if nullable else inspect.Parameter.empty
        parameters.append(inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        annotations[arg] = hint
        lines.append(f"    {arg}: {' '.join(str(prop.get('description', arg)).split())}")
    if not props:
        lines.pop()
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = "\n".join(lines) + "\n\nReturns:\n    The observation after the call."
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return tool


class SalesgymToolEnv:
    """The base of :func:`environment_factory`'s classes: one episode per ``reset(**row)``."""

    ENV_ID = ""
    MAKE_KWARGS: Mapping[str, Any] = {}

    def __init__(self) -> None:
        self._made: dict[str, Any] = dict(self.MAKE_KWARGS)
        self._env = salesgym.make(self.ENV_ID, **self._made)
        self._rewards: list[float] = []
        self._events: list[dict[str, Any]] = []
        self._done = False

    def reset(self, **row: Any) -> str | None:
        """Start the episode of ``row["seed"]``: returns the task card and the first observation. A row's
        ``make_kwargs`` (JSON text, as :meth:`TaskSampler.rows` writes it) remake the environment first."""
        kwargs = {**self.MAKE_KWARGS, **json.loads(row.get("make_kwargs") or "{}")}
        if kwargs != self._made:
            self._env, self._made = salesgym.make(self.ENV_ID, **kwargs), kwargs
        obs, info = self._env.reset(seed=int(row["seed"]))
        self._rewards, self._events, self._done = [], [], False
        return f"{info['instructions']}\n\n{observation_text(obs)}"

    def _call(self, tool: str, args: dict[str, Any]) -> str:
        if self._done:  # TRL keeps calling until the model stops; the world does not move any more
            return "The episode is over."
        obs, reward, terminated, truncated, info = self._env.step({"tool": tool, "args": args})
        self._rewards.append(float(reward))
        self._events.append({"action": {"tool": tool, "args": args}, "tool_result": info["tool_result"]})
        self._done = bool(terminated or truncated)
        return observation_text(obs)

    def get_reward(self) -> float:
        """The episode's undiscounted sum of step rewards (docs/reward.md)."""
        return float(sum(self._rewards))


def environment_factory(env_id: str, **make_kwargs: Any) -> type[SalesgymToolEnv]:
    """A class for ``GRPOTrainer(environment_factory=...)``: its public methods are ``env_id``'s tools, each
    typed and documented from the tool's OpenAI schema (what ``transformers.utils.get_json_schema`` reads);
    the environment checks every call as it always does (bounds, enums, ids)."""
    specs = salesgym.make(env_id, **make_kwargs).tool_schemas()
    clash = {s["function"]["name"] for s in specs} & {"reset", "get_reward"}
    if clash:
        raise ValueError(f"{env_id}: tools named {sorted(clash)} clash with TRL's reserved methods")
    members: dict[str, Any] = {s["function"]["name"]: _tool_method(s) for s in specs}
    members.update(ENV_ID=env_id, MAKE_KWARGS=dict(make_kwargs), __doc__=f"{env_id} for TRL's tool loop.")
    name = "Salesgym" + "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]", env_id) if p)
    return type(name, (SalesgymToolEnv,), members)
