"""Nothing hidden in the page: no hidden fact before it is told, no persona, assertion, parameter, reference
solution or verifier key in any observation or in anything the browser loaded or holds (every response body,
scripts and styles included, cookies, local and session storage), over reference and random-clicker episodes on
templates with hidden facts, scripted messages and four apps, and over every page of every app."""

from __future__ import annotations

from typing import Any

import pytest

from salesgym.agents.workflows_ui.random_clicker import UIRandom
from salesgym.agents.workflows_ui.reference import UIReference
from salesgym.envs.workflows.apps.common import format_id
from salesgym.envs.workflows_ui.conformance import LeakScanner
from salesgym.envs.workflows_ui.env import WorkflowsUIEnv
from salesgym.webapps.views import ROUTES

# one in the default suite, the others in the campaign (the campaign's sweep scans every template's episodes)
HIDDEN_FACTS = ("crm-budget-colleague", *(pytest.param(t, marks=pytest.mark.campaign) for t in (
    "sched-reschedule-request", "outbound-locked-mailbox", "inmail-reply-referral")))


def _scanned(env: Any, policy: Any, seed: int, max_steps: int = 400) -> LeakScanner:
    obs, info = env.reset(seed=seed)
    policy.reset(obs, env.tool_schemas(), info["instructions"])
    scanner = LeakScanner(env)
    scanner.scan(obs, {"info": info})
    for _ in range(max_steps):
        try:
            action = policy.act(obs)
        except Exception as stop:  # the reference stops when its solution is played
            assert "is played" in str(stop), stop
            break
        obs, _, terminated, truncated, info = env.step(action)
        scanner.learn(env.event_log())
        scanner.scan(obs, {"info": info})
        if terminated or truncated:
            break
    return scanner


@pytest.mark.parametrize("template", HIDDEN_FACTS)
def test_the_reference_episode_shows_no_hidden_value_before_it_is_told(template: str) -> None:
    env = WorkflowsUIEnv(template=template, screenshot=False)
    env.reset(seed=1)
    scanner = _scanned(env, UIReference(1, env.hidden_truth()), 1)
    assert scanner.pages_scanned > 5 and len(scanner.facts) > 1  # facts besides the "why", told on the way
    assert scanner.revealed and env.score()["passed"]
    env.close()


@pytest.mark.campaign
def test_a_random_clicker_sees_no_hidden_value() -> None:
    env = WorkflowsUIEnv(template="outbound-locked-mailbox", screenshot=False)
    scanner = _scanned(env, UIRandom(7), 7, max_steps=60)
    assert scanner.pages_scanned > 30
    env.close()

# the table of the first record a page with a {key} shows (its path's first segment, per app)
TABLES = {("crm", "contacts"): "crm.contacts", ("crm", "companies"): "crm.companies", ("crm", "deals"): "crm.deals",
          ("sequencer", "prospects"): "sequencer.prospects", ("sequencer", "sequences"): "sequencer.sequences",
          ("scheduler", "event-types"): "scheduler.event_types", ("scheduler", "events"): "scheduler.scheduled_events",
          ("prospecting", "leads"): "prospecting.leads", ("prospecting", "accounts"): "prospecting.accounts",
          ("prospecting", "lists"): "prospecting.lists"}  # fmt: skip


@pytest.mark.campaign  # minutes: runs with the campaigns (python -m pytest -m campaign)
def test_every_page_of_every_app_is_clean() -> None:
    """Every GET page of every app (with the first record's id where a page needs one), in a four-app task with a
    hidden fact: the page, its scripts and styles, and the browser's storage."""
    env = WorkflowsUIEnv(template="outbound-locked-mailbox", screenshot=False)
    obs, info = env.reset(seed=2)
    scanner = LeakScanner(env)
    visited, missing = 0, []
    for app, spec in ROUTES.items():
        for path, _, methods in spec.routes:
            if "GET" not in methods:
                continue
            table = TABLES.get((app, path.split("/")[1]))
            concrete = path.replace("{key}", format_id(table, 1, 2) if table else "")
            obs, _, _, _, info = env.step({"tool": "goto", "args": {"url": f"http://{app}.salesgym.test{concrete}"}})
            scanner.learn(env.event_log())
            scanner.scan(obs, {"info": info})
            visited += 1
            if "404 Not Found" in obs["data"]["axtree"] and table != "scheduler.scheduled_events":  # none booked yet
                missing.append(concrete)
    assert visited >= 30 and not scanner.revealed
    assert missing == [], missing  # every page shown with a record of the instance, not its 404
    env.close()


def test_the_control_api_is_closed_to_the_agent() -> None:
    """The run id lives in an HttpOnly cookie and the control API wants a token only the process knows: a page
    cannot read the run's export, open a run or close one."""
    env = WorkflowsUIEnv(template="crm-inbound-sql", screenshot=False)
    env.reset(seed=1)
    run_id = env.run.run_id
    for app in ("crm", "task"):
        obs = env.step({"tool": "goto", "args": {"url": f"http://{app}.salesgym.test/api/runs/{run_id}/export"}})[0]
        assert "unauthorised" in obs["data"]["axtree"] and "contacts" not in obs["data"]["axtree"]
    assert all(c["httpOnly"] for c in env.session.context.cookies())
    env.close()


# Each place the scanner reads, with a value planted there the way a careless app would (JS run in the page).
PLANTS = {
    "page text": "v => { document.body.append(v); }",
    "local storage": "v => { localStorage.setItem('draft', v); }",
    "session storage": "v => { sessionStorage.setItem('draft', v); }",
    "a response body only": "v => fetch('/planted').then(r => r.text()).then(() => 1)",
}


@pytest.fixture(scope="module")
def planted_env() -> Any:
    env = WorkflowsUIEnv(template="crm-budget-colleague", screenshot=False)
    yield env
    env.close()


@pytest.mark.parametrize("where", [*PLANTS, "a cookie"])
@pytest.mark.parametrize("what", ["an untold fact", "the verifier key", "the persona"])
def test_a_planted_hidden_value_is_found_wherever_the_browser_holds_it(planted_env: Any, where: str,
                                                                       what: str) -> None:  # fmt: skip
    """The scanner is not blind: a hidden value planted in any place it reads is reported (the sweep's scan of
    every episode is only as good as this)."""
    env = planted_env
    env.reset(seed=1)
    scanner = LeakScanner(env)
    scanner.scan(env.observe(), {})  # clean before anything is planted
    value = {"an untold fact": next(iter(scanner.facts.values())), "the verifier key": scanner.strings[0],
             "the persona": scanner.strings[1]}[what]  # fmt: skip
    session = env.session
    page = session.page
    if where == "a cookie":
        if " " in value or ";" in value:
            pytest.skip("a cookie cannot hold this value as written")
        session.context.add_cookies([{"name": "draft", "value": value, "url": page.url}])
    else:
        if where == "a response body only":  # the response carries the value; nothing of it lands in the page
            page.route("**/planted*", lambda route: route.fulfill(status=200, body=value))
        page.evaluate(PLANTS[where], value)
    with pytest.raises(AssertionError, match=r"hidden (fact|string)"):
        scanner.scan(env.observe(), {})
