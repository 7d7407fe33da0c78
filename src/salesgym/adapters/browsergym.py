"""Every workflows template as a BrowserGym task (``browsergym-core``), so a BrowserGym or AgentLab agent runs it
unchanged: ``gym.make("browsergym/salesgym.workflows.<template>")`` after importing this module.

The task opens a run of the template's instance (the seed BrowserGym gives it) behind this process's web-app
server; the apps are at ``http://<app>.localhost:<port>`` (Chromium resolves ``*.localhost`` to loopback), the
start page is the task desk. A message the agent sends in BrowserGym's chat is a question to the requester, who
answers in the chat. The task is done when the agent presses "Mark the task done" on the desk (or its calls run
out); the reward is then 1 if the verifier passes it, else 0: the same verdict as ``workflows-ui-v0`` and the
tool path for the same instance. ``cheat`` plays the template's UI blueprint (STYLE: a task proves it can be
solved).

BrowserGym's ``BrowserEnv`` launches Chromium itself; this module points its launches at Debian's Chromium
(``browser.shared_playwright``), since no browser download works here. BrowserGym keeps that Playwright for the
life of the process, and Playwright's sync API marks an asyncio loop as running on its thread meanwhile: call
``stop_browsers()`` after closing the last ``BrowserEnv`` before ``asyncio.run`` on that thread.
"""

from __future__ import annotations

import secrets
from typing import Any

import playwright.sync_api
from browsergym.core.registration import register_task
from browsergym.core.task import AbstractBrowserTask

from salesgym.envs.workflows.env import WorkflowsEnv
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.envs.workflows_ui import browser
from salesgym.envs.workflows_ui.blueprints import writes_of
from salesgym.envs.workflows_ui.browser import stop_browsers
from salesgym.envs.workflows_ui.instructions import task_card
from salesgym.webapps.origins import APPS
from salesgym.webapps.run import COOKIE, Refused, Run
from salesgym.webapps.variants import variant as find_variant

PREFIX = "salesgym.workflows."
GREETING = "Hi! I am your UI assistant"  # BrowserEnv's own opening chat message: not a question to the requester


class WorkflowsBrowserTask(AbstractBrowserTask):
    """One template's instance (seeded by BrowserGym) on the apps' web pages."""

    @classmethod
    def get_task_id(cls) -> str:
        return PREFIX + "<template>"

    def __init__(self, seed: int, template: str, variant: str = "default", max_calls: int = 60) -> None:
        super().__init__(seed)
        if template not in TEMPLATES:
            raise ValueError(f"unknown template {template!r}")
        self.viewport = dict(browser.VIEWPORT)
        self.slow_mo = 0
        self.timeout = 5000
        self.locale = "en-US"
        self.timezone_id = "UTC"
        self.seed = int(seed or 0)
        self.template, self.variant, self.max_calls = template, find_variant(variant), max_calls
        self.run: Run | None = None
        self.answered = 0

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict[str, Any]]:
        work = browser.worker().serve()
        assert work.server is not None
        browser.shared_playwright()
        env = WorkflowsEnv(template=self.template, max_calls=self.max_calls)
        env.reset(seed=self.seed)
        origins = {app: f"http://{app}.localhost:{work.server.port}" for app in APPS}
        self.run = work.runs.open(env, self.variant, "bg-" + secrets.token_hex(8), origins)
        work.live += 1  # BrowserGym's browser runs on the shared Playwright: no environment's close stops it
        page.context.add_cookies([{"name": COOKIE, "value": self.run.run_id, "url": origin}
                                  for origin in origins.values()])  # fmt: skip
        page.goto(origins["task"] + "/", wait_until="load")
        world = env._world
        assert world is not None
        goal = task_card(world.task, world.anchor, int(world.horizon), env.invalid_action_limit, None, "bid", origins)
        return goal, {"template": self.template, "seed": self.seed, "run_id": self.run.run_id}

    def validate(self, page: playwright.sync_api.Page, chat_messages: list[Any]) -> tuple[float, bool, str,
                                                                                         dict[str, Any]]:
        run = self._run()
        answers = []
        for message in chat_messages[self.answered:]:
            text = str(message.get("message", ""))
            if message.get("role") == "assistant" and not text.startswith(GREETING):
                try:
                    answers.append(str(run.write("task", "ask_requester", {"question": text[:500]})["answer"]))
                except Refused as err:
                    answers.append(err.reason)
        self.answered = len(chat_messages)
        episode = run.observation()["episode"]
        done = bool(episode["terminated"] or episode["truncated"])
        reward = 1.0 if done and episode["verdict"] == "pass" else 0.0
        return reward, done, "\n".join(answers), {"verdict": episode["verdict"], "run_id": run.run_id}

    def cheat(self, page: playwright.sync_api.Page, chat_messages: list[Any]) -> None:
        """Play the template's reference solution through ``page``, form by form, as the UI blueprint says."""
        from salesgym.agents.workflows_ui.reference import UIReference

        run = self._run()
        truth = run.env.hidden_truth()
        agent = UIReference(self.seed, truth)
        agent.reset({}, [{"type": "function", "function": {"name": "fill"}}], "")
        origins = run.origins
        while agent.next_form():
            before = len(run.calls)
            for step in agent.actions:
                target = step.target
                if step.kind == "goto":
                    app = target.split("//", 1)[1].split(".", 1)[0]
                    page.goto(origins[app] + "/" + target.split("/", 3)[3], wait_until="load")
                elif step.kind == "fill":
                    page.fill(f"#{target}", str(step.value))
                elif step.kind == "select":
                    page.select_option(f"#{target}", str(step.value)) if step.value != "" else page.eval_on_selector(
                        f"#{target}", "e => { e.selectedIndex = 0; }")
                elif step.kind == "check":
                    page.check(f"#{target}")
                else:
                    with page.expect_navigation(wait_until="load"):
                        page.click(f"#{target}")
            agent.actions.clear()
            agent.took([c.public() for c in run.calls[before:]])

    def teardown(self) -> None:
        if self.run is not None:
            work = browser.worker()
            work.runs.close(self.run.run_id)
            work.live -= 1
            self.run = None

    def _run(self) -> Run:
        if self.run is None:
            raise RuntimeError("the task has not been set up")
        return self.run


def register() -> list[str]:
    """Register every template as ``browsergym/salesgym.workflows.<template>`` (idempotent); the ids."""
    import gymnasium as gym

    ids = []
    for template in TEMPLATES:
        task_id = PREFIX + template
        if f"browsergym/{task_id}" not in gym.registry:
            register_task(task_id, WorkflowsBrowserTask, task_kwargs={"template": template},
                          default_task_kwargs={"variant": "default"})  # fmt: skip
        ids.append(f"browsergym/{task_id}")
    return ids


browser.use_debian_chromium()  # before any BrowserEnv.reset: its launches use Debian's Chromium
IDS = register()
__all__ = ["IDS", "WorkflowsBrowserTask", "register", "stop_browsers", "writes_of"]
