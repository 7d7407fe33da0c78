"""The red team through the UI: what a browser agent can try that a tool agent cannot (a forged form, a hidden
route, a button pressed twice, every box ticked), each a regression test. The server decides every write with the
platform's rules, and the verifier judges the end state whichever way it was made."""

from __future__ import annotations

from typing import Any

import pytest
from ui_elements import element

from salesgym.agents.base import rollout
from salesgym.agents.workflows_ui.reference import UIReference
from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.envs.workflows_ui.env import WorkflowsUIEnv


def _solved(template: str, seed: int = 1) -> Any:
    """An episode where the reference has made every change the task needs, stopped before marking it done."""
    env = WorkflowsUIEnv(template=template, screenshot=False, max_actions=400)
    env.reset(seed=seed)
    truth = env.hidden_truth()
    truth["instance"]["solution"] = list(truth["instance"]["solution"])
    policy = UIReference(seed, truth)
    policy.reset(env.observe(), env.tool_schemas())
    policy.script.pop()  # no finish: the red team acts, then marks the task done itself
    for _ in rollout(env, _Resume(policy), seed=seed):
        pass
    return env


class _Resume:
    """Plays a prepared reference without resetting it (the episode loop resets policies at the start)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def reset(self, *args: Any) -> None:
        return None

    def act(self, obs: Any) -> Any:
        return self.policy.act(obs)

    def observe_result(self, result: Any) -> None:
        return None

    def observe_reward(self, reward: float) -> None:
        return None


def _finish(env: Any) -> dict[str, Any]:
    obs = env.step("goto('http://task.salesgym.test/')")[0]
    _, _, terminated, *_ = env.step({"tool": "click", "args": {"bid": element(obs, "btn-finish_task")["bid"]}})
    assert terminated
    return dict(env.score())


def _post(env: Any, url: str, fields: dict[str, str]) -> None:
    """A forged form: a page of the attacker's own (about:blank) posting to the app, as a script in a page could."""
    env.session.page.evaluate("""([url, fields]) => {
        const f = document.createElement('form'); f.method = 'post'; f.action = url;
        for (const [k, v] of Object.entries(fields)) {
            const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }
        document.body.appendChild(f); f.submit(); }""", [url, fields])
    env.session.settle()


def test_the_reference_stopped_before_the_end_would_pass() -> None:
    env = _solved("crm-inbound-sql")
    assert _finish(env)["passed"]
    env.close()


def test_editing_a_record_the_task_did_not_name_fails_the_task() -> None:
    """The edit form of another contact (a field the check does not read, on a record it does not name)."""
    env = _solved("crm-inbound-sql")
    obs = env.step(keyed("goto('http://crm.salesgym.test/contacts/102/edit')"))[0]
    env.step({"tool": "fill", "args": {"bid": element(obs, "f-jobtitle")["bid"], "value": "Chief Everything"}})
    obs = env.step({"tool": "click", "args": {"bid": element(env.observe(), "btn-save")["bid"]}})[0]
    score = _finish(env)
    assert not score["passed"] and not score["invariant"]["passed"]
    env.close()


def test_editing_the_field_the_check_reads_to_its_expected_value_alone_is_not_enough() -> None:
    """Only what the check reads (the lifecycle), set by hand, without the rest of the task: no pass."""
    env = WorkflowsUIEnv(template="crm-inbound-sql", screenshot=False)
    env.reset(seed=1)
    p = env.hidden_truth()["instance"]["params"]
    obs = env.step(f"goto('http://crm.salesgym.test/contacts/{p['contact_id']}/edit')")[0]
    env.step({"tool": "select_option", "args": {"bid": element(obs, "f-lifecyclestage")["bid"],
                                                "options": "salesqualifiedlead"}})
    env.step({"tool": "click", "args": {"bid": element(env.observe(), "btn-save")["bid"]}})
    assert not _finish(env)["passed"]
    env.close()


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH"])
def test_no_route_deletes_or_replaces_a_record(method: str) -> None:
    """There is no delete in the apps (nor in the tools): every route refuses other methods, and a made-up
    delete route does not exist."""
    from starlette.testclient import TestClient

    import salesgym
    from salesgym.webapps.run import Runs
    from salesgym.webapps.server import Options, all_apps
    from salesgym.webapps.views import ROUTES

    runs = Runs()
    env = salesgym.make("workflows-v0", template="new-exec-full-cycle")
    env.reset(seed=1)
    runs.open(env, run_id="r")
    app = all_apps(Options(runs))
    for name, spec in ROUTES.items():
        client = TestClient(app, base_url=f"http://{name}.salesgym.test", cookies={"sgrun": "r"})
        for path, _, _ in spec.routes:
            concrete = path.replace("{key}", "1").replace("{invitee}", "IN00001")
            assert client.request(method, concrete).status_code == 405, (name, path)
            assert client.post(concrete.rstrip("/") + "/delete").status_code in (404, 405)
    assert not [e for e in env.event_log() if e["kind"] == "record_deleted"]


def test_enrolling_everyone_fails_the_task() -> None:
    env = _solved("seq-webinar-followup")
    obs = env.step(keyed("goto('http://sequencer.salesgym.test/sequences/1/add')"))[0]
    for box in [e for e in obs["data"]["elements"] if e["id"].startswith("sel-")]:
        obs = env.step({"tool": "click", "args": {"bid": box["bid"]}})[0]
    mailbox = keyed({"mailboxId": "1"})["mailboxId"]
    box = element(obs, "f-mailboxId")["bid"]
    obs = env.step({"tool": "select_option", "args": {"bid": box, "options": mailbox}})[0]
    obs, *_, info = env.step({"tool": "click", "args": {"bid": element(obs, "btn-enroll")["bid"]}})
    assert [c["tool"] for c in info["app_calls"]] == ["sequence_add_prospects"]
    assert "Not added" in obs["data"]["axtree"] or info["app_calls"][0]["status"] == "error"  # per-prospect refusals
    assert not _finish(env)["passed"]
    env.close()


@pytest.mark.campaign  # minutes: runs with the campaigns (python -m pytest -m campaign)
def test_a_note_submitted_twice_fails_the_task_and_a_contact_twice_is_refused() -> None:
    env = _solved("crm-inbound-sql")
    p = env.hidden_truth()["instance"]["params"]
    _post(env, f"http://crm.salesgym.test/contacts/{p['contact_id']}/note",
          {"ownerId": str(p["owner_int"]), "timestamp": p["today"], "body": "Requested a demo through the website.",
           "contacts": p["contact_id"]})  # fmt: skip
    assert not _finish(env)["passed"]
    env.close()
    env = _solved("new-exec-full-cycle")
    p = env.hidden_truth()["instance"]["params"]
    env.step("goto('http://crm.salesgym.test/contacts/new')")
    start = len(env.event_log())
    _post(env, "http://crm.salesgym.test/contacts/new", {"email": p["email"], "firstname": p["first"]})
    assert "409 Conflict" in env.session.page.content()
    assert [e["kind"] for e in env.event_log()[start:]] == ["invalid_action"]
    assert _finish(env)["passed"]  # the second submission changed nothing
    env.close()


def test_a_forged_form_to_a_read_only_app_or_with_an_option_the_select_does_not_offer_is_refused() -> None:
    env = WorkflowsUIEnv(template="new-exec-full-cycle", screenshot=False)  # prospecting is read only here
    env.reset(seed=1)
    env.step("goto('http://crm.salesgym.test/contacts')")
    start = len(env.event_log())
    _post(env, keyed("http://prospecting.salesgym.test/leads/L0001"), {"list_id": keyed("LL001")})
    _post(env, keyed("http://crm.salesgym.test/contacts/101/edit"), {"lifecyclestage": "board-member"})
    _post(env, keyed("http://crm.salesgym.test/contacts/101/edit"), {"hubspot_owner_id": "1"})
    kinds = [(e["kind"], e["payload"].get("tool")) for e in env.event_log()[start:]]
    assert kinds == [("invalid_action", "save_lead"), ("invalid_action", "hubspot-batch-update-objects"),
                     ("invalid_action", "hubspot-batch-update-objects")]
    env.close()
