"""The computer-use environment: the workflows family's tasks done through the four apps' web pages in a real
headless Chromium, on the same state and the same verifier as the tool path."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import secrets
import weakref
from collections.abc import Mapping
from typing import Any

from salesgym.core.tools import ToolBox, ToolError, ToolResult, mcp_schema, quote
from salesgym.envs.workflows.env import TIERS, WorkflowsEnv
from salesgym.envs.workflows.state import WorkflowsState
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.envs.workflows.world import WorkflowsWorld
from salesgym.envs.workflows_ui import observe, outputs
from salesgym.envs.workflows_ui.actions import ACTION_SETS, from_text
from salesgym.envs.workflows_ui.instructions import task_card
from salesgym.webapps.origins import TEST_DOMAIN
from salesgym.webapps.run import Refused, Run
from salesgym.webapps.variants import variant as find_variant

START_URL = f"http://task.{TEST_DOMAIN}/"
MAX_ACTIONS_RANGE = (5, 1000)
PAGE_TIMEOUT_MS = 30_000  # a page that does not load in this fails the action; a cold Chromium on a loaded machine
# can take seconds for its first page, and nothing in the apps waits on purpose


class UIRules:
    """The family as the engine's callers see it on an instance (``env.family``: its name, its reset options)."""

    name = "workflows-ui"
    reset_options = frozenset({"template", "tier"})


class Session:
    """One episode's browser: its context and tabs, the active page, and the chat with the requester."""

    def __init__(self, run: Run, context: Any) -> None:
        self.run, self.context = run, context
        self.pages: list[Any] = []
        self.active = 0
        self.chat: list[dict[str, str]] = []
        self._cdp: dict[int, Any] = {}  # a DevTools session per page, opened once

    def cdp(self) -> Any:
        key = id(self.page)
        if key not in self._cdp:
            self._cdp[key] = self.context.new_cdp_session(self.page)
        return self._cdp[key]

    @property
    def page(self) -> Any:
        return self.pages[self.active]

    def open(self, url: str) -> None:
        page = self.context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.pages.append(page)
        self.active = len(self.pages) - 1
        if url:
            page.goto(url, wait_until="load")

    def new_tab(self) -> None:
        self.open("")

    def focus_tab(self, index: int) -> None:
        if not 0 <= index < len(self.pages):
            raise ToolError(f"no tab {index}: there are {len(self.pages)} (0 is the first)")
        self.active = index
        self.page.bring_to_front()

    def close_tab(self) -> None:
        closing = self.pages.pop(self.active)
        self._cdp.pop(id(closing), None)
        closing.close()
        if not self.pages:
            self.open("about:blank")
        self.active = min(self.active, len(self.pages) - 1)

    def say(self, text: str) -> str:
        """A chat message is a question to the requester (``ask_requester``); the answer comes back in the chat
        (a refused question, as the desk shows it: the sandbox's reason)."""
        self.chat.append({"role": "assistant", "text": text})
        try:
            out = self.run.write("task", "ask_requester", {"question": text})
        except Refused as err:
            out = {"answer": err.reason}
        answer = str(out.get("answer", ""))
        self.chat.append({"role": "user", "text": answer})
        self.run.chat += [{"from": "You", "to": "", "text": text}, {"from": str(out.get("from", "")), "to": "You",
                                                                    "text": answer}]  # fmt: skip
        return answer

    def give_up(self, reason: str) -> None:
        with contextlib.suppress(Refused):  # a refusal is recorded by the run as the desk's button's would be
            self.run.write("task", "finish_task", {"summary": f"infeasible: {reason}"[:1000]})

    def settle(self, timeout_s: float = 10.0) -> None:
        """Wait until the active page has replaced itself if the action started that (a form submitted, a link
        followed: the apps' script sets ``window.sgLeaving``), then until it has loaded."""
        import time

        page = self.page
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if not page.evaluate("() => window.sgLeaving === true"):
                    break
            except Exception:  # the old document is going away: the new one is on its way
                pass
            page.wait_for_timeout(10)
        with contextlib.suppress(Exception):  # a page that never loads shows as it is; the observation says so
            page.wait_for_load_state("load", timeout=int(timeout_s * 1000))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed with the browser
            self.context.close()


class WorkflowsUIEnv:
    """The workflows family's tasks through the apps' web pages: a computer-use environment.

    Description
        The same task instances as ``workflows-v0`` (a template and a seed), done in a real headless Chromium
        (Debian's, driven by Playwright) on the four apps' web pages (a CRM, a sequencer, a scheduler, a
        prospecting tool) and the task desk (the request, the requester, the inbox, "mark the task done"). Every
        form submitted is one tool call of its app on the episode's workflows environment: the same events, rules,
        refusals and verifier as the tool path. Appearance variants (theme, density, wording, column order) change
        only the look.

    Tools
        Browser actions (``actions.py``): BrowserGym's high-level set by element id and its coordinate actions
        (``action_set="browsergym"``, the default), BrowserGym's default subsets (``"bid"``), or pixel actions after
        the usual computer-use conventions (``"computer"``). A step is a dict call ``{"tool", "args"}``, its JSON
        text, or a BrowserGym action string such as ``click('a12')``.

    Observation
        ``{"text", "data"}``: ``data.screenshot`` (base64 PNG of the 1280x800 viewport), ``data.axtree`` (the
        accessibility tree as BrowserGym writes it, with element ids), ``data.elements`` (interactive elements
        with ids, labels, values and boxes), ``data.url``, ``data.tabs``, the task, clock, told facts, inbox and
        chat, ``data.app_calls`` (the tool calls the pages made for the last action, with their results), the
        last action's error and the episode (with the verdict at the end).

    Reward
        0 for every step; at the end, 1 if the verifier passes the task, else 0 (shown in that observation).

    Episode end
        Terminated when the task is marked done (the desk's button, or ``report_infeasible``) or its calls run out;
        truncated at the invalid-action ceiling or after ``max_actions`` browser actions (judged as it stands).

    Arguments
        template, tier, max_calls, invalid_action_limit, verifier_key (as ``workflows-v0``); variant (the apps'
        look: default, dark, compact, reworded, rearranged); action_set (browsergym, bid, computer); max_actions
        (5-1000; 250); screenshot (False leaves the PNG out, for text-only agents); axtree (False leaves the tree
        text out, for agents that read ``data.elements`` or pixels: a cheaper step).

    Version history
        v0: initial release (workflows-task/2 instances, workflows-ui/1 pages).

    >>> env = WorkflowsUIEnv(template="crm-lifecycle-reset")  # doctest: +SKIP
    """

    def __init__(self, template: str | None = None, tier: int | None = None, variant: str = "default",
                 action_set: str = "browsergym", max_actions: int = 250, max_calls: int = 60,
                 invalid_action_limit: int = 50, verifier_key: bytes | None = None,
                 screenshot: bool = True, axtree: bool = True) -> None:  # fmt: skip
        find_variant(variant)
        if action_set not in ACTION_SETS:
            raise ValueError(f"unknown action_set {action_set!r}; choose from {', '.join(ACTION_SETS)}")
        low, high = MAX_ACTIONS_RANGE
        if not isinstance(max_actions, int) or isinstance(max_actions, bool) or not low <= max_actions <= high:
            raise ValueError(f"max_actions must be an int in {low}-{high}, got {max_actions!r}")
        self.inner = WorkflowsEnv(template=template, tier=tier, max_calls=max_calls,
                                  invalid_action_limit=invalid_action_limit, verifier_key=verifier_key)
        self.family = UIRules()
        self.options: dict[str, Any] = {
            "template": template, "tier": tier, "variant": variant, "action_set": action_set,
            "max_actions": max_actions, "max_calls": max_calls, "invalid_action_limit": invalid_action_limit,
            "verifier_key": verifier_key, "screenshot": screenshot, "axtree": axtree}  # fmt: skip
        self.invalid_action_limit = invalid_action_limit
        self.variant = find_variant(variant)
        self.box = ACTION_SETS[action_set]
        self.max_actions = max_actions
        self.screenshot = screenshot
        self.axtree = axtree
        self.session: Session | None = None
        self.run: Run | None = None
        self.actions: list[Any] = []
        self._last: dict[str, Any] = {}
        self._budget_spent = False
        self._finalizer: Any = None

    # -- lifecycle --------------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[dict[str, Any],
                                                                                                  dict[str, Any]]:
        self.inner.reset(seed=seed, options=options)
        return self._open()

    def start_world(self, world: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode in a given world (operator side, as ``Environment.start_world``)."""
        self.inner.start_world(world)
        return self._open()

    def _open(self) -> tuple[dict[str, Any], dict[str, Any]]:
        from salesgym.envs.workflows_ui import browser

        self._end_episode()
        work = browser.worker().start()
        self.run = work.runs.open(self.inner, self.variant, "ui-" + secrets.token_hex(8))
        context = work.context()
        context.add_cookies(browser.run_cookies(self.run.run_id))
        self.session = Session(self.run, context)
        work.live += 1
        self._finalizer = weakref.finalize(self, _release, work, self.session, self.run.run_id)
        self.session.open(START_URL)
        self.actions, self._budget_spent = [], False
        self._last = self._observe([], "", "")
        return self._last, {"state_version": self.state_version, "instructions": self.instructions()}

    def close(self) -> None:
        """End the episode; when no other episode is open in this process, also stop its Chromium, server and
        Playwright (``reset`` keeps them warm between episodes; an environment dropped without ``close`` does
        too, until the process exits)."""
        from salesgym.envs.workflows_ui import browser

        self._end_episode()
        browser.worker().shutdown_if_idle()

    def _end_episode(self) -> None:
        """Close the episode's browser context (the process's Chromium and server stay for the next episode)."""
        if self._finalizer is not None:
            from salesgym.envs.workflows_ui import browser

            self._finalizer()
            self._finalizer = None
            browser.worker().release()
        self.session = None

    # -- acting ---------------------------------------------------------------------------------------------------
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        session, run = self._require()
        if self._over():
            over = "the episode is over; call reset()"
            refused = ToolResult("error", self.state_version, 0.0, {}, (), {"error": over}).to_dict()
            obs = self._observe([], "", over)
            return obs, 0.0, *self._ended(), {"tool_result": refused, "state_version": self.state_version,
                                              "app_calls": []}
        self.actions.append(action)
        mark = len(run.calls)
        described = _describe(action)
        try:
            spec, args = self.box.parse(self._as_call(action))
            outcome = spec.handler(session, args)
        except ToolError as err:
            self._refuse(action, err)
            status, output, error = "error", {"error": err.reason}, err.reason
        else:
            session.settle()
            self._record(spec.name, args.model_dump(mode="json"))
            status, output, error = "ok", dict(outcome.output), ""
        calls = run.calls[mark:]
        reward = sum(c.reward for c in calls)
        if len(self.actions) >= self.max_actions and not any(self._ended()):
            self._budget_spent = True  # judged as it stands, and paid now: the return is the verdict
            reward = 1.0 if self.score()["passed"] else 0.0
        obs = self._observe([c.public() for c in calls], described, error)
        event_ids = tuple(i for c in calls for i in c.event_ids)
        result = ToolResult(status, self.state_version, float(len(calls)), {}, event_ids, output).to_dict()
        terminated, truncated = self._ended()
        return obs, float(reward), terminated, truncated, {"tool_result": result, "state_version": self.state_version,
                                                            "app_calls": obs["data"]["app_calls"]}

    def _as_call(self, action: Any) -> Any:
        if isinstance(action, str) and not action.lstrip().startswith(("{", "[")):
            found = from_text(action, self.box)
            if found is None:
                raise ToolError(f"not an action: {quote(action)}; e.g. click('a12') or {{\"tool\": \"click\", "
                                "\"args\": {\"bid\": \"a12\"}}")  # fmt: skip
            return found
        return action

    def _record(self, name: str, args: dict[str, Any]) -> None:
        """A browser action done: one ``ui_action`` event (not shown to the agent, folded by nothing), so the log is
        the whole trajectory, in order with the tool calls the pages made; replay and the verdict read only those."""
        self.inner._ctx().emit("ui_action", "agent", {"action": name, "args": args})

    def _refuse(self, action: Any, err: ToolError) -> None:
        """A browser action that could not be done: one ``invalid_action`` event in the episode's log (the
        engine's own refusal, so the ceiling counts it), and nothing else changes."""
        inner, state = self.inner, self._state
        inner._refuse(inner._ctx(), action, err, state.seq)

    def _ended(self) -> tuple[bool, bool]:
        s = self._state
        return bool(s.terminated), bool(s.truncated or self._budget_spent)

    def _over(self) -> bool:
        return any(self._ended())

    # -- what the agent sees ---------------------------------------------------------------------------------------
    def _observe(self, calls: list[dict[str, Any]], last_action: str, error: str) -> dict[str, Any]:
        session, _ = self._require()
        inner = copy.deepcopy(self.inner.observe()["data"])  # the tool path's (cached) data: never shared out
        inner.pop("last_result", None)
        terminated, truncated = self._ended()
        verdict = inner["episode"]["verdict"]
        if self._budget_spent and verdict is None:
            verdict = "pass" if self.score()["passed"] else "fail"
        inner["episode"] = {**inner["episode"], "terminated": terminated, "truncated": truncated, "verdict": verdict,
                            "actions_used": len(self.actions), "actions_left": self.max_actions - len(self.actions)}
        view = observe.page_view(session.page, session.cdp(), self.screenshot, self.axtree)
        tabs = [{"index": i, "url": p.url, "title": p.title(), "active": i == session.active}
                for i, p in enumerate(session.pages)]  # fmt: skip
        data = {**inner, "url": session.page.url, "tabs": tabs, **view, "chat": list(session.chat),
                "app_calls": calls, "last_action": last_action, "last_action_error": error}  # fmt: skip
        self._last = {"text": observe.render_text(data), "data": data}
        return self._last

    def observe(self) -> dict[str, Any]:
        return self._last

    def instructions(self) -> str:
        world = self._world
        return task_card(world.task, world.anchor, int(world.horizon), self.invalid_action_limit, self.max_actions,
                         str(self.options["action_set"]))

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.box.openai()

    def mcp_tools(self) -> list[dict[str, Any]]:
        return self.box.mcp()

    @property
    def toolbox(self) -> ToolBox[Any]:
        """The tools of this action set (what the conformance kit checks outputs against)."""
        return self.box

    observation_model = outputs.Observation  # the model of an observation's ``data``

    def observation_schema(self) -> dict[str, Any]:
        return mcp_schema(outputs.Observation)

    # -- operator side ------------------------------------------------------------------------------------------
    def score(self) -> dict[str, Any]:
        out = dict(self.inner.score())
        out["looks"] = [self.variant.name]  # a list: the report's per-look breakdown (its spec's scenario_tags)
        out["actions_used"] = len(self.actions)
        out["modality"] = "ui"
        return out

    def hidden_truth(self) -> dict[str, Any]:
        return {**self.inner.hidden_truth(), "look": self.variant.name}

    def event_log(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.inner.event_log()
        return found

    def event_log_hash(self) -> str:
        return str(self.inner.event_log_hash())

    def replay(self, events: Any = None) -> Any:
        return self.inner.replay(events)

    @property
    def state_version(self) -> int:
        return int(self.inner.state_version)

    @property
    def _state(self) -> WorkflowsState:
        state = self.inner._state
        if state is None:
            raise RuntimeError("call reset() first")
        return state

    @property
    def _world(self) -> WorkflowsWorld:
        world = self.inner._world
        if world is None:
            raise RuntimeError("call reset() first")
        return world

    def clone(self) -> WorkflowsUIEnv:
        """An exact, independent copy: a new browser context over the same world, with this episode's actions
        played again (a page's state, typed text included, lives only in the browser, so it is rebuilt the way it
        was made; the cost grows with the episode, unlike the tool path's ``clone``)."""
        twin = WorkflowsUIEnv(**self.options)
        twin.start_world(self._world)
        for action in self.actions:
            twin.step(action)
        return twin

    def screenshot_png(self) -> bytes:
        """The last observation's screenshot as PNG bytes (empty without one)."""
        import base64

        return base64.b64decode(self._last.get("data", {}).get("screenshot", ""))

    def _require(self) -> tuple[Session, Run]:
        if self.session is None or self.run is None:
            raise RuntimeError("call reset() first")
        return self.session, self.run


def _release(work: Any, session: Session, run_id: str) -> None:
    """Hand the episode's context and run back to the worker, which closes them before it opens the next context
    (a finalizer may run inside any call, Playwright's included: it only queues)."""
    work.closing.append((session, run_id))
    work.live -= 1


def _describe(action: Any) -> str:
    """The action as the observation repeats it (short; an action that is not JSON data by its type only)."""
    if isinstance(action, str):
        return action[:500]
    try:
        return json.dumps(action, sort_keys=True)[:500]
    except Exception:  # not JSON data (deep, huge, a foreign object): the observation names its type
        return f"<{type(action).__name__}>"


def fingerprint(obs: Mapping[str, Any]) -> str:
    """A digest of what the agent saw (screenshot bytes included): equal digests, equal observations."""
    return hashlib.sha256(json.dumps(obs, sort_keys=True).encode()).hexdigest()


__all__ = ["TEMPLATES", "TIERS", "WorkflowsUIEnv"]
