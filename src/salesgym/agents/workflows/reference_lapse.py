"""`reference-lapse`: the reference solution played by a careless operator, the stochastic agent the shipped
calibration bands come from. Each call of the script is skipped with probability ``LAPSE`` (drawn from the
policy's seed, so every trial lapses differently); a skipped call's output reads as empty, so a later call that
needed it goes out with a missing id and is refused. It always declares the task done at the end.

What its bands measure, honestly: how many of a template's calls are essential and how unforgiving the verifier
is about each (a skipped lookup whose output nothing uses costs nothing; a skipped write fails the task). A task
where it lands below 10% is one whose every call matters, not one a model finds hard; a studio re-calibrates
with its own model through the same command (``salesgym calibrate --policy llm``).
"""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, call
from salesgym.agents.workflows.reference import Reference
from salesgym.envs.workflows.tasks.model import resolve  # operator side: the blueprint's marker resolution

LAPSE = 0.12  # chance of skipping each call; at this rate a typical template spreads over all three bands


class ReferenceLapse(Reference):
    name = "reference-lapse"

    def act(self, observation: dict[str, Any]) -> Action:
        while len(self.outputs) < len(self.script):
            index = len(self.outputs)
            if self.rng.random() >= LAPSE:
                try:
                    action: Action = resolve(self.script[index], self.params, self.outputs)
                except (ValueError, KeyError, IndexError, TypeError):
                    return call("finish_task", summary="done")  # an output it needed was never fetched
                return action
            self.outputs.append({})  # the lapse: the call is never made, its output never seen
        return call("finish_task", summary="reference solution played (with lapses)")
