"""`reference`: the template's scripted reference solution (operator side: it reads the instance from the
hidden truth), played through the tools; each call's output-references are resolved against the outputs of
the calls before it. It passes every template (a test runs it on all of them): the headroom, never ranked."""

from __future__ import annotations

from typing import Any

from salesgym.agents.base import Action, Policy, call
from salesgym.envs.workflows.tasks.model import resolve  # operator side: the blueprint's marker resolution


class Reference(Policy):
    name = "reference"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        instance = (self.hidden_truth or {}).get("instance", {})
        self.params: dict[str, Any] = instance.get("params", {})
        self.script: list[dict[str, Any]] = list(instance.get("solution", []))
        self.outputs: list[dict[str, Any]] = []

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.outputs.append(tool_result["output"])

    def act(self, observation: dict[str, Any]) -> Action:
        done = len(self.outputs)
        if done < len(self.script):
            action: Action = resolve(self.script[done], self.params, self.outputs)
            return action
        return call("finish_task", summary="reference solution played")
