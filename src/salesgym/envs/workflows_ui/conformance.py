"""The computer-use family's hooks for the conformance kit (``salesgym.testing``), loaded only by the kit.

- ``random_call(env, rng)``: a random clicker's action on the page the agent sees (an element clicked, a field
  filled with a string the page shows, an option picked, a chat question, a page of one of the apps opened); it
  never marks the task done;
- ``hidden_variant`` / ``neutral_variant``: the workflows family's twin worlds (other hidden facts / persona);
- ``told(observation)``: what an observation tells the agent beyond the page (what the requester said, the inbox,
  the chat, what the page's forms returned, the verdict);
- ``same_observation(a, b)``: two observations the agent sees as the same (the screenshots up to Chromium's
  rasterising noise, ``observe.same_screen``);
- ``LeakScanner``: the workflows family's scanner (no hidden fact before it is told, no persona, assertion,
  parameter, solution or verifier key) over the observation *and* everything the browser holds: every response
  the pages loaded (HTML, scripts, styles), the cookies and the pages' local and session storage.
"""

from __future__ import annotations

import json
import random
from typing import Any

from salesgym.envs.workflows.conformance import LeakScanner as ToolLeakScanner
from salesgym.envs.workflows.conformance import hidden_variant, neutral_variant
from salesgym.envs.workflows_ui.observe import same_view as same_observation
from salesgym.webapps.origins import TEST_DOMAIN

__all__ = ["LeakScanner", "PageRecorder", "hidden_variant", "neutral_variant", "random_call", "same_observation",
           "told"]

NEVER = ("btn-finish_task",)  # the random driver never marks the task done (episodes run to their budget)
STORAGE_JS = "() => [Object.entries(localStorage), Object.entries(sessionStorage)]"
PAGES = ("crm/contacts", "crm/deals/board", "sequencer/sequences", "scheduler/event-types", "prospecting/leads",
         "task/")  # fmt: skip


def random_call(env: Any, rng: random.Random) -> dict[str, Any]:
    data = env.observe()["data"]
    elements = [e for e in data["elements"] if e["visible"] and not e["disabled"] and e["id"] not in NEVER
                and e["tag"] != "option"]  # fmt: skip
    roll = rng.random()
    if roll < 0.1 or not elements:
        app, path = rng.choice(PAGES).split("/", 1)
        return {"tool": "goto", "args": {"url": f"http://{app}.{TEST_DOMAIN}/{path}"}}
    if roll < 0.13:
        return {"tool": "send_msg_to_user", "args": {"text": rng.choice(("why?", "which amount?", "what day?"))}}
    e = rng.choice(elements)
    if e["tag"] in ("input", "textarea") and e["type"] not in ("checkbox", "radio"):
        seen = [x["label"] for x in data["elements"] if x["label"]] or ["x"]
        return {"tool": "fill", "args": {"bid": e["bid"], "value": rng.choice(seen)[:40],
                                         "enable_autocomplete_menu": False}}  # fmt: skip
    if e["tag"] == "select":
        return {"tool": "select_option", "args": {"bid": e["bid"], "options": ""}}
    return {"tool": "click", "args": {"bid": e["bid"], "button": "left", "modifiers": []}}


def told(obs: dict[str, Any]) -> Any:
    data = obs["data"]
    calls = [(c["tool"], c["status"], c["output"]) for c in data["app_calls"]]
    return data["told"], data["inbox"], data["chat"], calls, data["episode"]["verdict"]


class PageRecorder:
    """Everything the episode's browser has loaded or holds, as text: each response body, the cookies, and the
    open pages' local and session storage."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.responses: list[Any] = []
        self.read = 0
        env.session.context.on("response", lambda response: self.responses.append(response))

    def new_text(self) -> str:
        """What arrived since the last call, and what the browser holds now."""
        bodies = []
        for response in self.responses[self.read:]:
            try:
                bodies.append(f"{response.url}\n{response.text()}")
            except Exception:  # a body the browser has already dropped (a redirect): nothing to read
                bodies.append(response.url)
        self.read = len(self.responses)
        session = self.env.session
        held = [json.dumps(session.context.cookies())]
        for page in session.pages:
            held.append(page.content())
            held.append(json.dumps(page.evaluate(STORAGE_JS)))
        return "\n".join(bodies + held)


class LeakScanner(ToolLeakScanner):
    """The workflows family's scanner, over the observation and over everything the browser holds."""

    def __init__(self, env: Any) -> None:
        super().__init__(_Secrets(env))
        self.recorder = PageRecorder(env)
        self.pages_scanned = 0

    def scan(self, obs: dict[str, Any], output: dict[str, Any]) -> None:
        super().scan(obs, output)
        text = self.recorder.new_text()
        self.pages_scanned += 1
        for secret in self.strings:
            assert secret not in text, f"hidden string {secret[:40]!r} is in what the browser loaded"
        for key, value in self.facts.items():
            if key not in self.revealed:
                assert value not in text, f"hidden fact {key!r} is in what the browser loaded before it was told"


class _Secrets:
    """What the workflows scanner reads from an environment: the world and the verifier key."""

    def __init__(self, env: Any) -> None:
        self._world = env._world
        self._secret = env.inner._secret
