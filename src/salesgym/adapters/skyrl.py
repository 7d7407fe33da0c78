"""SkyRL-gym: any registered salesgym environment as a ``skyrl_gym`` text environment (``pip install
'salesgym[skyrl]'``; written against skyrl-gym 0.4.0).

SkyRL's generator makes one environment per dataset row, ``skyrl_gym.make(row["env_class"], env_config=...,
extras=row)``, gives ``init`` the row's prompt and then every model reply, as text, to ``step``. So:

* ``init`` answers with the conversation the model starts from: the task card and the tools (their JSON
  schemas, with the Hermes / Qwen call format) as the system message, the first observation as the user
  message. The row's own prompt is only a placeholder (:func:`task_rows` writes the task key there).
* ``step`` parses the reply's first ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block
  (:func:`salesgym.agents.llm.text_calls.parse_tool_call`) and steps it; a reply without one is refused by the
  environment as one counted invalid action, as always. The answer is the observation text (a ``user``
  message), the reward is the step's reward, ``done`` is the episode's end or ``max_turns``.
* The final step's ``metadata`` carries the operator-side report (return, event-log hash, the verifier's
  score); ``get_metrics`` gives the return, the steps and the primary score for SkyRL's logs (an episode cut
  at ``max_turns`` is scored as it stands then).

Rows say which world: ``env_id`` and ``seed`` (and optionally ``make_kwargs``), or ``split`` and
``territory`` (a split manifest's world, :func:`split_rows`). Registered with skyrl_gym on import as
``salesgym`` (any id, from the row) and as ``salesgym/<env_id>`` for every registered id.

Nothing here is imported by ``import salesgym``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skyrl_gym import register, registry
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

import salesgym
from salesgym.adapters.tool_episode import SplitTask, ToolEpisode, split_tasks
from salesgym.agents.llm.text_calls import parse_tool_call
from salesgym.llm.tool_prompt import system_with_tools

__all__ = ["ENV_CLASS", "SalesgymTextEnv", "register_envs", "split_rows", "system_prompt", "task_rows"]

ENV_CLASS = "salesgym"
DEFAULT_MAX_TURNS = 64

def system_prompt(instructions: str, tools: Iterable[Mapping[str, Any]]) -> str:
    """The task card, then the tools' OpenAI schemas and how to call them (the renderer every adapter shares:
    :func:`salesgym.llm.tool_prompt.system_with_tools`)."""
    return system_with_tools(instructions, tools)


def _config_value(config: Any, key: str) -> Any:
    """``key`` of SkyRL's ``env_config`` (an omegaconf ``DictConfig``, a dict or None)."""
    if config is None:
        return None
    getter = getattr(config, "get", None)
    return getter(key) if callable(getter) else getattr(config, key, None)


class SalesgymTextEnv(BaseTextEnv):
    """One episode per instance: ``skyrl_gym.make("salesgym", env_config=..., extras=row)``.

    The world comes from ``extras`` (``env_id`` + ``seed`` [+ ``make_kwargs``], or ``split`` + ``territory``),
    then from ``env_id`` (set by the ``salesgym/<env_id>`` registrations) or ``env_config.env_id``.
    ``max_turns`` is ``extras["max_turns"]``, else ``env_config.max_turns``, else 64.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None, env_id: str | None = None):
        super().__init__()
        extras = dict(extras or {})
        max_turns = extras.get("max_turns", _config_value(env_config, "max_turns"))
        self.max_turns = int(max_turns) if max_turns is not None else DEFAULT_MAX_TURNS
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {self.max_turns}")
        if "territory" in extras:
            world = SplitTask(str(extras.get("split", "")), str(extras["env_id"]), dict(extras["territory"]))
            self.episode = world.start()
        else:
            chosen = extras.get("env_id") or env_id or _config_value(env_config, "env_id")
            if not chosen or "seed" not in extras:
                raise ValueError("a salesgym row needs 'env_id' and 'seed' (or 'split' and 'territory') in its extras")
            self.episode = ToolEpisode.start(str(chosen), int(extras["seed"]), make_kwargs=extras.get("make_kwargs"))
        self.last_report: dict[str, Any] = {}

    def init(self, prompt: Any = None) -> tuple[list[dict[str, str]], dict[str, Any]]:
        tools = self.episode.env.tool_schemas()
        conversation = [
            {"role": "system", "content": system_prompt(self.episode.instructions, tools)},
            {"role": "user", "content": self.episode.first_text},
        ]
        return conversation, {"env_id": self.episode.env_id, "seed": self.episode.seed}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        call, _ = parse_tool_call(action if isinstance(action, str) else str(action))
        step = self.episode.act(call)
        done = step.done or self.turns >= self.max_turns
        metadata: dict[str, Any] = {"tool_result": step.tool_result, "terminated": step.terminated,
                                    "truncated": step.truncated or (done and not step.done)}  # fmt: skip
        if done:
            self.last_report = self.episode.report()
            if "score" not in self.last_report:  # cut at max_turns: the verifier's score of the episode so far
                self.last_report["score"] = self.episode.env.score()
            metadata["salesgym"] = self.last_report
        observations = [] if done else [{"role": "user", "content": step.text}]
        return BaseTextEnvStepOutput(observations=observations, reward=step.reward, done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        ended = self.episode.done or self.turns >= self.max_turns  # cut at max_turns: scored as it stands
        score = self.episode.env.score() if ended else {}
        primary = score.get("primary")
        metrics: dict[str, Any] = {"episode_return": self.episode.episode_return, "steps": len(self.episode.rewards)}
        if isinstance(primary, int | float):
            metrics["score"] = float(primary)
        return metrics


def task_rows(env_id: str, seeds: Iterable[int], *, max_turns: int = DEFAULT_MAX_TURNS) -> list[dict[str, Any]]:
    """SkyRL dataset rows, one per world: a placeholder prompt (the task key), ``env_class``, the world."""
    return [{"prompt": [{"role": "user", "content": f"salesgym task {env_id} seed={s}"}], "env_class": ENV_CLASS,
             "env_id": env_id, "seed": int(s), "max_turns": max_turns} for s in seeds]  # fmt: skip


def split_rows(split: str, *, max_turns: int = DEFAULT_MAX_TURNS, limit: int | None = None) -> list[dict[str, Any]]:
    """SkyRL dataset rows for the worlds of a split manifest (``splits/``), made as the benchmark makes them."""
    return [{"prompt": [{"role": "user", "content": f"salesgym split {t.split} {t.id}"}], "env_class": ENV_CLASS,
             "env_id": t.env_id, "split": t.split, "territory": t.territory, "seed": t.seed, "max_turns": max_turns}
            for t in split_tasks(split, limit=limit)]  # fmt: skip


def register_envs() -> None:
    """Register ``salesgym`` and ``salesgym/<env_id>`` for every registered id with skyrl_gym (idempotent)."""
    entry = f"{__name__}:SalesgymTextEnv"
    if ENV_CLASS not in registry:
        register(id=ENV_CLASS, entry_point=entry)
    for env_id in salesgym.registry():
        name = f"{ENV_CLASS}/{env_id}"
        if name not in registry:
            register(id=name, entry_point=entry, kwargs={"env_id": env_id})


register_envs()
