"""`random`: a random valid-looking call each turn. It picks one of the task's apps' tools (from the names in
the tool schemas and the apps the request names), fills the arguments from the schema and fills strings with
ids and values it has seen in earlier results; it never declares the task done, so it runs to the call budget."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from salesgym.agents.base import Action, Policy
from salesgym.core.events import strings_in

PREFIXES = {"crm": ("hubspot-",), "scheduler": ("event_types-", "availability-", "meetings-", "scheduling_links-",
                                                "invitee_no_shows-", "users-"),
            "sequencer": ("prospect_", "account_", "sequence_", "mailbox_", "current_user", "emails_", "task_"),
            "prospecting": ("sales_", "get_", "save_lead", "send_inmail")}  # fmt: skip




def sample(schema: Mapping[str, Any], rng: random.Random, seen: list[str]) -> Any:
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"] or schema["anyOf"]
        return sample(rng.choice(options), rng, seen) if rng.random() < 0.6 else None
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {k: sample(v, rng, seen) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = rng.randint(schema.get("minItems", 0), min(schema.get("maxItems", 2), 2))
        return [sample(schema["items"], rng, seen) for _ in range(n)]
    if kind == "integer":
        lo, hi = schema.get("minimum", 0), min(schema.get("maximum", 10), 60)
        return rng.randint(int(lo), int(max(lo, hi)))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0), min(schema.get("maximum", 10), 60)), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    return rng.choice(seen) if seen and rng.random() < 0.8 else "x"


class RandomPolicy(Policy):
    name = "random"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        apps = observation["data"]["task"]["apps"]
        prefixes = tuple(p for app in apps for p in PREFIXES[app])
        self.tools = [t["function"] for t in tool_schemas if t["function"]["name"].startswith(prefixes)]
        self.seen: list[str] = [s for s in strings_in(observation["data"]["task"]) if 0 < len(s) <= 60]

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        if tool_result["status"] == "ok":
            found = [s for s in strings_in(tool_result["output"]) if 0 < len(s) <= 60]
            self.seen = (self.seen + found)[-300:]

    def act(self, observation: dict[str, Any]) -> Action:
        tool = self.rng.choice(self.tools)
        return {"tool": tool["name"], "args": sample(tool["parameters"], self.rng, self.seen)}
