"""`ui-reference`: the template's reference solution played through the browser (operator side: it reads the
instance from the hidden truth). Each call becomes the forms a person fills (``envs/workflows_ui/blueprints.py``);
each form's fields and buttons are found on the page by their HTML ids in the observation's element list, and
acted on by element id (BrowserGym's actions). Output references (``OUT``) are resolved against what the pages
returned (``info["app_calls"]``) and, for a page visited to read it, against a tool-path twin fed the same
writes (a read on its clone: it moves no clock). It passes every template through the browser (the campaign test
runs them all); idle and a random clicker pass none."""

from __future__ import annotations

from collections import deque
from typing import Any

from salesgym.agents.base import Action, Policy, StopEpisode, call
from salesgym.envs.workflows.tasks.model import resolve  # operator side: the blueprint's marker resolution
from salesgym.envs.workflows_ui.blueprints import UIAction, UIWrite, merged, writes_of


def as_read(tool: str, args: dict[str, Any]) -> Any:
    """The arguments as the tool reads them (its argument model's values, defaults filled in): a form that leaves
    out an empty association list makes the same call as a solution that sends ``[]``. A list of record ids is a
    selection, read in id order: a page submits the boxes ticked in the order it lists them, a solution in the
    order it found them (the verdict, compared apart, says whether the order changed anything)."""
    from salesgym.envs.workflows.tools import TOOLS

    spec = TOOLS.specs.get(tool)
    try:
        read = spec.args.model_validate(args).model_dump() if spec is not None else args
    except ValueError:  # arguments the tool would refuse: compared as sent
        return args
    return _ids_in_order(read)


def _ids_in_order(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _ids_in_order(v) for k, v in value.items()}
    if isinstance(value, list) and all(type(v) is int for v in value):
        return sorted(value)
    return value


class UIReference(Policy):
    name = "ui-reference"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        import salesgym

        super().reset(observation, tool_schemas, instructions)
        truth = self.hidden_truth or {}
        instance = truth.get("instance", {})
        self.params: dict[str, Any] = instance.get("params", {})
        self.script: deque[dict[str, Any]] = deque(instance.get("solution", []))
        self.script.append({"tool": "finish_task", "args": {"summary": "reference solution played in the apps"}})
        self.outputs: list[dict[str, Any]] = []
        self.shadow = salesgym.make("workflows-v0", template=instance.get("template"),
                                    max_calls=int(truth.get("max_calls", 60)))  # fmt: skip
        self.shadow.reset(seed=int(truth.get("seed", 0)))
        self.call: dict[str, Any] | None = None
        self.parts: deque[UIWrite] = deque()
        self.done_parts: list[UIWrite] = []
        self.part_outputs: list[dict[str, Any]] = []
        self.actions: deque[UIAction] = deque()
        self.expected: dict[str, Any] | None = None
        self.pixels = not any(t["function"]["name"] == "fill" for t in tool_schemas)
        self.mismatches: list[str] = []

    def _look(self, tool: str, args: Any) -> dict[str, Any]:
        info = self.shadow.clone().step({"tool": tool, "args": dict(args)})[4]
        return dict(info["tool_result"]["output"])

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.last_result = tool_result

    def act(self, observation: dict[str, Any]) -> Action:
        data = observation["data"]
        self.took(data.get("app_calls", []))
        while True:
            while not self.actions:
                if not self.next_form():
                    raise StopEpisode("the reference solution is played")
            action = self._browser_action(self.actions.popleft(), data)
            if action is not None:
                return action

    def took(self, calls: list[dict[str, Any]]) -> None:
        """The tool calls the last action's form made: the expected one's output, or a mismatch noted."""
        for made in calls:
            expected = self.expected
            if expected is None or made["tool"] != expected["tool"]:
                self.mismatches.append(f"the page called {made['tool']}, expected {expected and expected['tool']}")
                continue
            if as_read(made["tool"], made["args"]) != as_read(expected["tool"], expected["args"]):
                self.mismatches.append(f"{made['tool']}: the form sent {made['args']}, the blueprint's call is "
                                       f"{expected['args']}")
            self.shadow.step({"tool": made["tool"], "args": made["args"]})
            self.part_outputs.append(made["output"] if made["status"] == "ok" else {})
            self.expected = None

    def next_form(self) -> bool:
        if not self.parts:
            if self.call is not None:
                self.outputs.append(merged(self.call, self.part_outputs, self.done_parts))
            if not self.script:
                return False
            self.call = resolve(self.script.popleft(), self.params, self.outputs)
            assert self.call is not None
            self.parts = deque(writes_of(self.call, self._look))
            self.done_parts, self.part_outputs = [], []
            if all(p.call is None for p in self.parts):  # a page visited to read: its output is the read's
                self.part_outputs.append(self._look(self.call["tool"], self.call.get("args", {})))
        part = self.parts.popleft()
        self.done_parts.append(part)
        self.actions = deque(part.actions)
        self.expected = part.call
        return True

    def _browser_action(self, step: UIAction, data: dict[str, Any]) -> Action | None:
        """The env action for one UI step (None: nothing to do, a box already ticked)."""
        if step.kind == "goto":
            return call("goto", url=step.target)
        element = next((e for e in data["elements"] if e["id"] == step.target), None)
        if element is None:
            raise StopEpisode(f"ui-reference: no element #{step.target} on {data['url']}")
        bid = element["bid"]
        if step.kind == "fill":
            return call("fill", bid=bid, value=str(step.value))
        if step.kind == "select":
            return call("select_option", bid=bid, options=str(step.value))
        if step.kind == "check" and element["checked"]:
            return None
        return call("click", bid=bid)

    def turn_record(self) -> dict[str, Any] | None:
        return {"mismatches": list(self.mismatches)} if self.mismatches else None

    def episode_record(self) -> dict[str, Any]:
        return {"mismatches": len(self.mismatches)}
