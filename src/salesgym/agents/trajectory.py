"""What an agent did in one episode, as plain JSON data: the trajectory the run store keeps, the viewer shows
and ``salesgym export --trajectories`` turns into chat transcripts.

A trajectory (format ``salesgym-trajectory/1``)::

    {"format", "env_id", "policy", "territory", "seed", "trial",
     "instructions": the task card, "tools": the OpenAI tool schemas the agent was given,
     "observation": the first observation's text, "data": its public data (the keys below),
     "turns": [{"action": the call as the policy made it, "model": the policy's turn record or null
                (a language model's messages, usage, failures), "tool_result": info["tool_result"],
                "reward": float, "observation": the text after the step, "data": {...}}, ...],
     "end": "terminated" | "truncated" | "step_cap" | "stopped: <reason>",
     "totals": the policy's episode record (tokens, failures by kind, sampling parameters)}

Only the agent's side is recorded: nothing here is hidden truth (the score and the event log stay with the
operator). ``data`` keeps the ``trajectory_data`` keys of ``obs["data"]`` that the family of a registered ``env_id``
states (the territory keeps the clock, capacity, milestone counts and inbox; the large views are left out, the text
has them); without an ``env_id`` it keeps all of ``data``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import salesgym
from salesgym.agents.base import Episode, Step

FORMAT = "salesgym-trajectory/1"


def _action_data(action: Any) -> Any:
    """The action as JSON data: dicts and texts as they are, anything else by its repr (a bad call is data too)."""
    if isinstance(action, str | dict | list | int | float | bool) or action is None:
        return action
    try:
        return repr(action)[:2000]
    except Exception:  # an object whose repr raises is still a call the agent made
        return f"<{type(action).__name__}>"


class Recorder:
    """Iterate an :class:`Episode` through this to get its steps and, afterwards, ``trajectory``.

    >>> import salesgym
    >>> from salesgym.agents import make_policy
    >>> env = salesgym.make("territory-debug-v0")
    >>> rec = Recorder(Episode(env, make_policy("random", 1), seed=1, max_steps=5), env_id="territory-debug-v0")
    >>> steps = list(rec)
    >>> len(rec.trajectory["turns"]) == len(steps) == 5, rec.trajectory["end"]
    (True, 'step_cap')
    """

    def __init__(self, episode: Episode, env_id: str = "", **meta: Any) -> None:
        self.episode = episode
        keys: Sequence[str] | None = None
        if env_id in salesgym.registry():
            keys = salesgym.family(env_id).trajectory_data
        self.keys = tuple(keys) if keys is not None else None
        self.trajectory: dict[str, Any] = {"format": FORMAT, "env_id": env_id, **meta}

    def _data(self, obs: dict[str, Any]) -> dict[str, Any]:
        data = obs.get("data", {})
        return dict(data) if self.keys is None else {k: data[k] for k in self.keys if k in data}

    def __iter__(self) -> Iterator[Step]:
        ep, traj = self.episode, self.trajectory
        turns: list[dict[str, Any]] = []
        started = False
        for step in ep:
            if not started:
                started = True
                traj.update(self._start(step.observation))
                traj["turns"] = turns
            obs = ep.env.observe()
            turns.append(
                {
                    "action": _action_data(step.action),
                    "model": ep.policy.turn_record(),
                    "tool_result": step.info["tool_result"],
                    "reward": step.reward,
                    "observation": obs["text"],
                    "data": self._data(obs),
                }
            )
            yield step
        if not started:  # the policy stopped before its first action
            traj.update(self._start(ep.env.observe()))
            traj["turns"] = turns
        traj["end"] = ep.end
        traj["totals"] = ep.policy.episode_record()

    def _start(self, first: dict[str, Any]) -> dict[str, Any]:
        ep = self.episode
        return {
            "seed": ep.seed,
            "policy": self.trajectory.get("policy", getattr(ep.policy, "name", type(ep.policy).__name__)),
            "instructions": ep.instructions,
            "tools": ep.env.tool_schemas(),
            "observation": first.get("text", ""),
            "data": self._data(first),
        }
