"""The lookup agent of issue 18 §7, as a user's ``--agent`` module: handed only its task (no hidden truth), it
looks the task up in what is public, the split manifests (whose seeds rebuild their worlds) and the package's
templates (whose prompts it matches), and plays the shipped reference solution of what it finds. It passed all 57
held-out workflows tasks when nothing was private; it must pass none of a private split's over a template pack.

Tests copy this file into a temporary folder and run it with ``salesgym bench --agent lookup_agent:Lookup``."""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Any

from salesgym.agents.base import Action, Policy, call
from salesgym.bench import splits as sp
from salesgym.envs.workflows import packs
from salesgym.envs.workflows.tasks.model import instantiate, resolve


@lru_cache(maxsize=1)
def public_instances() -> dict[str, tuple[dict[str, Any], tuple[dict[str, Any], ...]]]:
    """Every public workflows task's prompt -> its parameters and reference solution (rebuilt from its seed)."""
    found: dict[str, tuple[dict[str, Any], tuple[dict[str, Any], ...]]] = {}
    for check in sp.verify_all(sp.default_splits_dir() / "workflows"):
        m = check.manifest
        if m is None or m.private:
            continue
        for t in m.territories:
            template = packs.catalogue(packs.shipped_with(t.template))[t.template]  # (a shipped pack's is public)
            world = instantiate(template, t.seed, 60)
            found[world.task.prompt] = (dict(world.secret.params), tuple(world.secret.solution))
    return found


def _pattern(prompt: str) -> tuple[re.Pattern[str], dict[str, str]]:
    """A template's prompt as a regular expression, and which of its groups is which plain parameter."""
    out, groups = [], {}
    for text, field, _, _ in string.Formatter().parse(prompt):
        out.append(re.escape(text))
        if field is not None:
            if field in groups.values():
                out.append(f"(?P={next(g for g, f in groups.items() if f == field)})")
            else:
                groups[f"g{len(groups)}"] = field
                out.append(f"(?P<g{len(groups) - 1}>.+?)")
    return re.compile("".join(out) + "$", re.S), groups


def recognise(prompt: str) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]] | None:
    """A shipped template whose prompt this is, with the parameters the prompt spells out."""
    shipped = [t for pack in packs.shipped().values() for t in pack.templates.values()]
    for template in [*packs.package().values(), *shipped]:
        pattern, groups = _pattern(template.prompt)
        match = pattern.match(prompt)
        if match:
            return {groups[g]: v for g, v in match.groupdict().items() if groups[g].isidentifier()}, tuple(
                template.solution)
    return None


class Lookup(Policy):
    name = "lookup"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        prompt = observation["data"]["task"]["prompt"]
        self.how = "nothing"
        self.params: dict[str, Any] = {}
        self.script: tuple[dict[str, Any], ...] = ()
        if prompt in public_instances():
            self.how, (self.params, self.script) = "public manifest", public_instances()[prompt]
        elif (found := recognise(prompt)) is not None:
            self.how, (self.params, self.script) = "shipped template", found
        self.outputs: list[Any] = []

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.outputs.append(tool_result.get("output", {}))

    def act(self, observation: dict[str, Any]) -> Action:
        while len(self.outputs) < len(self.script):
            try:
                action: Action = resolve(self.script[len(self.outputs)], self.params, self.outputs)
                return action
            except (KeyError, IndexError, ValueError, TypeError):  # a value the prompt does not spell out
                self.outputs.append({})
        return call("finish_task", summary="done")

    def episode_record(self) -> dict[str, Any]:
        return {"found": self.how}
