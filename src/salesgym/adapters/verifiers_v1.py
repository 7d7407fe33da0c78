"""verifiers v1: salesgym worlds as a ``vf.Taskset`` whose tasks carry a ``vf.Toolset`` over the
environment's own tools (``pip install 'salesgym[verifiers]'``; written against verifiers 0.4.0, whose only
API is ``verifiers.v1``: Taskset, Task, Toolset, Harness, Env).

* :class:`SalesgymTaskset` (``--env.taskset.id salesgym-verifiers``: the package ``salesgym_verifiers`` exports
  it) yields one task per world of a split manifest (``splits/``, default ``debug``) or, with
  ``env_id`` and ``seeds``, per seed of any registered id. A task's system prompt is the task card and its
  prompt the first observation.
* :class:`SalesgymToolset` is launched by verifiers per rollout (an MCP server, by default in a subprocess
  runtime). It makes the task's world in ``setup_task`` and serves every tool of the environment under its
  own name with the environment's own MCP input schema; a call steps the environment and answers the
  observation text. The per-rollout :class:`SalesgymState` (synced to the host by verifiers) records the
  step rewards, the end and, once over, the event-log hash and the verifier's score.
* :class:`SalesgymTask` scores with v1's hooks: ``@vf.reward`` ``episode_return`` (the undiscounted sum of
  the step rewards, docs/reward.md), ``@vf.metric`` ``verifier_score`` (the verifier's primary score) and ``steps``,
  and ``@vf.stop`` ``episode_over``, which ends the rollout once the environment's episode is over.

Limits: verifiers' MCP layer (mcp 2.0 ``MCPServer``) drops argument fields a tool's schema does not list
and decodes JSON text given for a field that is not a string before the environment sees the call;
everything else (types, bounds, enums, ids) the environment judges as it always does.

Nothing here is imported by ``import salesgym``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from salesgym.adapters.tool_episode import SplitTask, ToolEpisode, split_tasks

__all__ = ["SalesgymTaskset"]  # verifiers loads the one Taskset a plugin module exports

_UNSET: Any = object()  # an argument the call did not give (the environment applies its default)


class SalesgymData(vf.TaskData):
    """Which world: a registered id and seed, or a split's territory (made as ``salesgym bench`` makes it)."""

    env_id: str
    seed: int
    split: str | None = None
    territory: dict[str, Any] | None = None
    make_kwargs: dict[str, Any] = Field(default_factory=dict)

    def start(self) -> ToolEpisode:
        if self.territory is not None:
            return SplitTask(self.split or "", self.env_id, dict(self.territory)).start()
        return ToolEpisode.start(self.env_id, self.seed, make_kwargs=self.make_kwargs)


class SalesgymState(vf.State):
    """Per rollout, written by the tool server after every call and read by the task's hooks."""

    rewards: list[float] = Field(default_factory=list)
    done: bool = False
    terminated: bool = False
    truncated: bool = False
    event_log_hash: str | None = None
    score: dict[str, Any] | None = None


class SalesgymToolsetConfig(vf.ToolsetConfig):
    pass


class SalesgymToolset(vf.Toolset[SalesgymToolsetConfig, SalesgymState]):
    """The environment's tools over MCP, one world per rollout (``setup_task``)."""

    TOOL_PREFIX = None  # the environment's own tool names, unprefixed

    def __init__(self, config: SalesgymToolsetConfig) -> None:
        super().__init__(config)
        self.episode: ToolEpisode | None = None

    async def setup_task(self, task: Any) -> None:
        data = task if isinstance(task, SalesgymData) else SalesgymData.model_validate(task.model_dump())
        self.episode = data.start()

    def register(self, mcp: Any) -> None:
        episode = self.episode
        if episode is None:
            raise RuntimeError("SalesgymToolset serves one task's world: setup_task() comes first")
        manager = mcp._tool_manager  # mcp 2.0: the registered Tool carries the schema that tools/list shows
        for spec in episode.env.mcp_tools():
            fn = self._with_state(self._tool(spec))
            mcp.add_tool(fn, name=spec["name"], description=spec["description"])
            manager._tools[spec["name"]].parameters = spec["inputSchema"]  # the environment's own schema

    def _tool(self, spec: dict[str, Any]) -> Callable[..., str]:
        name = spec["name"]

        def call(**kwargs: Any) -> str:
            return self._call(name, {k: v for k, v in kwargs.items() if v is not _UNSET})

        # keyword parameters named after the schema's fields and typed Any: the environment does the checking
        params = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=_UNSET, annotation=Any)
                  for p in spec["inputSchema"].get("properties", {})]  # fmt: skip
        call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
        call.__name__ = call.__qualname__ = name.replace("-", "_")
        return call

    def _call(self, tool: str, args: dict[str, Any]) -> str:
        episode = self.episode
        assert episode is not None
        step = episode.call(tool, args)
        state = self.state
        state.rewards = list(episode.rewards)
        state.terminated, state.truncated, state.done = step.terminated, step.truncated, step.done
        state.event_log_hash = episode.env.event_log_hash()
        if step.done:
            state.score = episode.env.score()
        return step.text


class SalesgymTaskConfig(vf.TaskConfig):
    tools: SalesgymToolsetConfig = SalesgymToolsetConfig()


class SalesgymTask(vf.Task[SalesgymData, SalesgymState, SalesgymTaskConfig]):
    @classmethod
    def toolsets(cls, config: SalesgymTaskConfig) -> list[vf.Toolset]:
        return [SalesgymToolset(config.tools)]

    @vf.reward(weight=1.0)
    async def episode_return(self, trace: vf.Trace) -> float:
        """The undiscounted sum of the environment's step rewards (docs/reward.md)."""
        return float(sum(trace.state.rewards))

    @vf.metric
    async def verifier_score(self, trace: vf.Trace) -> float:
        """The verifier's primary score once the episode is over (0.0 before)."""
        primary = (trace.state.score or {}).get("primary")
        return float(primary) if isinstance(primary, int | float) else 0.0

    @vf.metric
    async def steps(self, trace: vf.Trace) -> float:
        return float(len(trace.state.rewards))

    @vf.stop
    def episode_over(self, trace: vf.Trace) -> bool:
        """The rollout ends when the environment's episode does."""
        return bool(trace.state.done)


class SalesgymTasksetConfig(vf.TasksetConfig):
    split: str = "debug"
    """A split manifest (``splits/``); ignored when ``env_id`` is set."""
    splits_dir: str | None = None
    limit: int | None = None
    """The split's first worlds only."""
    env_id: str | None = None
    """Any registered id, played at ``seeds`` (instead of a split)."""
    seeds: list[int] = Field(default_factory=list)
    make_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Arguments of ``salesgym.make(env_id, ...)`` (with ``env_id`` only)."""
    task: SalesgymTaskConfig = SalesgymTaskConfig()


class SalesgymTaskset(vf.Taskset[SalesgymTask, SalesgymTasksetConfig]):
    """One task per world of ``split`` (or per seed of ``env_id``)."""

    def load(self) -> Iterator[SalesgymTask]:
        config = self.config
        if config.env_id is not None:
            for seed in config.seeds:
                yield self._task(SalesgymData(env_id=config.env_id, seed=seed, make_kwargs=config.make_kwargs,
                                              name=f"{config.env_id}#{seed}"))  # fmt: skip
            return
        for t in split_tasks(config.split, config.splits_dir, config.limit):
            yield self._task(SalesgymData(env_id=t.env_id, seed=t.seed, split=t.split, territory=t.territory,
                                          id=f"{t.split}/{t.id}", name=t.id))  # fmt: skip

    def _task(self, data: SalesgymData) -> SalesgymTask:
        episode = data.start()
        data = data.model_copy(update={"prompt": episode.first_text, "system_prompt": episode.instructions})
        return SalesgymTask(data, self.config.task)


if __name__ == "__main__":  # verifiers starts a rollout's tool server as ``python -m <this module>``
    SalesgymToolset.run()
