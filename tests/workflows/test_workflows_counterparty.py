"""The ``workflows-counterparty`` pack: policy documents the agent reads through a tool (the decisive rule is in
the policy alone), and simulated people who act on the apps mid-episode (deterministic, on the event tape,
replayed and cloned exactly). Every template passes with the reference solution and fails for idle and random."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from tests.workflows.wf_helpers import params, play_reference, step

import salesgym
from salesgym.agents.workflows.idle import Idle
from salesgym.agents.workflows.random_policy import RandomPolicy
from salesgym.agents.workflows.sweep import sweep
from salesgym.envs.workflows import packs, policies, splits, verifier
from salesgym.envs.workflows.tasks.model import Act, resolve
from salesgym.envs.workflows.tasks.templates import TEMPLATES as PACKAGE
from salesgym.testing import CHECKS, Case

SEEDS = (1, 2, 5)
PACK = "workflows-counterparty"
TEMPLATES = packs.builtin()[PACK]
POLICY_TEMPLATES = [t for t in TEMPLATES.values() if t.policies]
USER_TEMPLATES = [t for t in TEMPLATES.values() if t.actions]


def make(template: str, seed: int = 1, **kwargs: Any) -> Any:
    env = salesgym.make("workflows-v0", template=template, pack=PACK, **kwargs)
    env.reset(seed=seed)
    return env


def finish(env: Any) -> dict[str, Any]:
    step(env, "finish_task", summary="done")
    return dict(env.score())


def play(policy: Any, env: Any, obs: Any) -> dict[str, Any]:
    policy.reset(obs, env.tool_schemas(), env.instructions())
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy.act(obs))
        policy.observe_result(info["tool_result"])
        done = terminated or truncated
    return dict(env.score())


def test_the_pack_is_outside_the_frozen_catalogue_and_splits() -> None:
    assert len(POLICY_TEMPLATES) >= 4 and len(USER_TEMPLATES) >= 3
    assert not set(TEMPLATES) & set(PACKAGE)
    placed = {t for names in splits.assign().values() for t in names}
    assert not set(TEMPLATES) & placed
    assert len({t.steps[0].app for t in POLICY_TEMPLATES}) >= 3  # policies over different domains
    assert len({p for t in POLICY_TEMPLATES for p in t.policies}) == 4


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_reference_passes_and_idle_fails(template: str) -> None:
    for seed in SEEDS:
        env = make(template, seed)
        results = play_reference(env)
        assert all(r["status"] == "ok" for r in results), (seed, results)
        score = finish(env)
        assert score["passed"], (seed, score["steps"], score["invariant"], score["forbidden"])
        idle = make(template, seed)
        assert not play(Idle(seed), idle, idle.observe())["passed"]


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_random_fails(template: str) -> None:
    for seed in SEEDS[:2]:
        env = salesgym.make("workflows-v0", template=template, pack=PACK, max_calls=40)
        obs, _ = env.reset(seed=seed)
        assert not play(RandomPolicy(seed), env, obs)["passed"]


# --- policies ---------------------------------------------------------------------------------------------------
def test_policies_are_read_through_a_tool_listed_for_openai_and_mcp() -> None:
    env = make("policy-term-discount")
    for listing in ([t["function"]["name"] for t in env.tool_schemas()], [t["name"] for t in env.mcp_tools()]):
        assert {"list_policies", "read_policy"} <= set(listing)
    listed = step(env, "list_policies")["output"]["policies"]
    assert [p["name"] for p in listed] == list(policies.library())
    assert [p["name"] for p in listed if p["applies_to_this_task"]] == ["discounting"]
    doc = step(env, "read_policy", name="discounting")["output"]
    assert doc["title"] == "Discounting" and "8% off list" in doc["text"]
    missing = step(env, "read_policy", name="pricing")
    assert missing["status"] == "error" and "no policy" in missing["output"]["error"]
    assert "lead-routing" in missing["output"]["error"]


def test_the_card_names_the_policies_and_the_rule_is_only_in_the_policy() -> None:
    for template in POLICY_TEMPLATES:
        env = make(template.id)
        card = env.instructions()
        for name in template.policies:
            assert f"`{name}`" in card and policies.library()[name].title in card
        assert env.observe()["data"]["task"]["policies"] == list(template.policies)
    discount = make("policy-term-discount")
    p = params(discount)
    assert f"{p['pct']}%" not in discount.instructions() and f"{p['pct']}%" in policies.library()["discounting"].text
    first = make("policy-first-meeting")
    assert "Discovery" not in first.instructions() and "Discovery Call" in policies.library()["meeting-hygiene"].text
    routing = make("policy-lead-routing")
    assert "company's owner" not in routing.instructions()
    # a task that names no policy has the card it always had
    assert "## Policies" not in salesgym.make("workflows-v0", template="crm-inbound-sql").reset(seed=1)[1][
        "instructions"]  # fmt: skip


def _first_calls(env: Any, n: int) -> list[dict[str, Any]]:
    secret = env._world.secret
    return [resolve(a, secret.params, []) for a in secret.solution[:n]]


@pytest.mark.parametrize(("template", "wrong"), [
    ("policy-lead-routing", lambda p: {"tool": "hubspot-batch-update-objects", "args": {
        "objectType": "contacts", "inputs": [{"id": p["contact_id"], "properties": {"hs_lead_status": "OPEN"}}]}}),
    ("policy-first-meeting", lambda p: {"tool": "meetings-create_invitee", "args": {
        "event_type": p["event_type"].replace(p["event_type"].rsplit("/", 1)[1], "X"), "start_time": p["start"],
        "invitee": {"name": p["invitee_name"], "email": p["invitee_email"], "timezone": p["tz"]}}}),
])  # fmt: skip
def test_ignoring_the_policy_fails(template: str, wrong: Any) -> None:
    env = make(template, 2)
    step(env, "read_policy", name=env._world.task.policies[0])
    env.step(wrong(params(env)))
    assert not finish(env)["passed"]


def test_a_demo_instead_of_the_policys_discovery_call_fails() -> None:
    env = make("policy-first-meeting", 3)
    p = params(env)
    demo = next(t for t in step(env, "event_types-list_event_types")["output"]["collection"] if t["slug"] == "demo")
    booked = step(env, "meetings-create_invitee", event_type=demo["uri"], start_time=p["start"],
                  invitee={"name": p["invitee_name"], "email": p["invitee_email"], "timezone": p["tz"]})
    assert booked["status"] == "ok"
    score = finish(env)
    assert not score["passed"] and [a["name"] for s in score["steps"] for a in s["assertions"] if not a["passed"]] == [
        "of the expected event type"]  # fmt: skip


def test_list_price_without_the_term_discount_fails() -> None:
    env = make("policy-term-discount", 4)
    p = params(env)
    script = env._world.secret.solution
    script[1]["args"]["inputs"][0]["properties"]["amount"]  # (the reference's own call, with the list price below)
    calls = [resolve(a, p, []) for a in script[:2]]
    calls[1]["args"]["inputs"][0]["properties"]["amount"] = p["list_price"]
    for c in calls:
        env.step(c)
    assert not finish(env)["passed"]


def test_enrolling_someone_active_elsewhere_fails() -> None:
    env = make("policy-one-sequence", 2)
    p = params(env)
    env.step({"tool": "sequence_add_prospects", "args": {"sequenceId": p["sequence_id"],
                                                         "prospectIds": p["eligible"] + p["busy"][:1],
                                                         "mailboxId": p["mailbox"]}})  # fmt: skip
    assert not finish(env)["passed"]


# --- acting users -----------------------------------------------------------------------------------------------
def test_the_prospect_books_through_the_link_the_agent_sent_and_only_then() -> None:
    env = make("user-books-from-link", 2)
    p = params(env)
    link = step(env, "scheduling_links-create_single_use_scheduling_link", owner=p["event_type"])["output"]
    url = link["resource"]["booking_url"]
    without = step(env, "send_inmail", recipient_urn=f"urn:li:fs_salesProfile:{p['lead_id']}", subject="Hi",
                   body="Happy to show you a demo; when suits you?")
    assert without["status"] == "ok" and env._state.acted == []  # no link in the message: nobody books
    env2 = make("user-books-from-link", 2)
    step(env2, "scheduling_links-create_single_use_scheduling_link", owner=p["event_type"])
    sent = step(env2, "send_inmail", recipient_urn=f"urn:li:fs_salesProfile:{p['lead_id']}", subject="Hi",
                body=f"Pick a time here: {url}")
    assert env2._state.acted == ["books"]
    events = [e for e in env2.event_log() if e["seq"] >= sent["state_version"] - 10 and e["actor"] == "user:prospect"]
    assert {e["kind"] for e in events} == {"record_created", "record_updated", "user_acted"}
    bookings = [r for r in env2._state.tables["scheduler.scheduled_events"].values() if r["status"] == "active"
                and r["start_time"] == p["start"]]  # fmt: skip
    assert len(bookings) == 1
    assert env2.observe()["data"]["inbox"][-1]["text"].startswith("Thanks for the link")
    # the link is single use: sending it again books nothing more
    step(env2, "send_inmail", recipient_urn=f"urn:li:fs_salesProfile:{p['lead_id']}", subject="Again", body=url)
    assert sum(1 for r in env2._state.tables["scheduler.scheduled_events"].values() if r["start_time"] ==
               p["start"]) == 1  # fmt: skip


def test_the_colleague_reassigns_by_the_clock_and_a_stale_owner_fails() -> None:
    env = make("user-owner-reassigned", 1)
    p = params(env)
    step(env, "hubspot-list-owners")  # minute 0 -> 1: nothing yet
    assert env._state.acted == [] and env._state.inbox == []
    step(env, "hubspot-list-owners")  # minute 1 -> 2: the colleague acts at 1.5
    assert env._state.acted == ["reassign"]
    assert env._state.tables["crm.contacts"][p["contact_id"]]["properties"]["hubspot_owner_id"] == p["new_owner"]
    assert p["new_owner_name"] in env.observe()["data"]["inbox"][0]["text"]
    score = finish(env)
    assert score["invariant"]["changes"] == []  # the colleague's change is not the agent's
    assert score["audit"]["passed"]
    stale = make("user-owner-reassigned", 1)
    calls = _first_calls(stale, 2)
    for c in calls:
        stale.step(c)
    stale.step({"tool": "hubspot-create-engagement", "args": {
        "type": "TASK", "ownerId": int(p["old_owner"]), "associations": {"contactIds": [int(p["contact_id"])]},
        "metadata": {"timestamp": p["due"], "subject": f"Call back {p['contact_name']}", "taskType": "CALL"}}})
    failed = [a["name"] for s in finish(stale)["steps"] for a in s["assertions"] if not a["passed"]]
    assert failed == ["owned by the new owner"]


def test_reverting_what_a_user_did_is_the_agents_change() -> None:
    env = make("user-owner-reassigned", 1)
    p = params(env)
    play_reference(env)
    step(env, "hubspot-batch-update-objects", objectType="contacts",
         inputs=[{"id": p["contact_id"], "properties": {"hubspot_owner_id": p["old_owner"]}}])
    score = finish(env)
    (unexpected,) = score["invariant"]["unexpected"]
    assert not score["passed"] and (unexpected["id"], unexpected["kind"]) == (p["contact_id"], "update")
    assert "hubspot_owner_id" in unexpected["fields"]


def test_the_customer_moves_the_booking_and_the_old_time_fails() -> None:
    env = make("user-reschedules", 3)
    p = params(env)
    first = _first_calls(env, 1)[0]
    env.step(first)
    assert env._state.acted == ["moves"]
    active = [r for r in env._state.tables["scheduler.scheduled_events"].values() if r["status"] == "active"
              and r["start_time"] in (p["start"], p["start2"])]  # fmt: skip
    assert [r["start_time"] for r in active] == [p["start2"]]
    step(env, "hubspot-create-engagement", type="MEETING", ownerId=p["owner_int"],
         associations={"contactIds": [int(p["contact_id"])]},
         metadata={"timestamp": p["start"], "title": "Demo", "startTime": p["start"],
                   "endTime": p["start"].replace(":00:00Z", ":30:00Z").replace(":30:00Z", ":30:00Z")})
    assert not finish(env)["passed"]


@pytest.mark.parametrize("template", [t.id for t in USER_TEMPLATES])
def test_acting_users_replay_and_clone_exactly(template: str) -> None:
    env = make(template, 5)
    secret = env._world.secret
    outputs: list[Any] = []
    half = len(secret.solution) // 2
    for action in secret.solution[:half]:
        outputs.append(env.step(resolve(action, secret.params, outputs))[4]["tool_result"]["output"])
    twin = env.clone()
    for e in (env, twin):
        outs = list(outputs)
        for action in secret.solution[half:]:
            outs.append(e.step(resolve(action, secret.params, outs))[4]["tool_result"]["output"])
        step(e, "finish_task", summary="done")
    assert env.event_log_hash() == twin.event_log_hash() and env.score()["passed"]
    assert any(e["kind"] == "user_acted" for e in env.event_log())
    replayed = env.replay()
    assert replayed.tables == env._state.tables and replayed.acted == env._state.acted
    again = make(template, 5)
    outs2: list[Any] = []
    for action in secret.solution:
        outs2.append(again.step(resolve(action, secret.params, outs2))[4]["tool_result"]["output"])
    step(again, "finish_task", summary="done")
    assert again.event_log_hash() == env.event_log_hash()  # the same calls, the same tape
    assert json.dumps(again.event_log()) == json.dumps(env.event_log())


def test_the_red_team_finds_nothing_on_the_pack() -> None:
    assert sweep(list(TEMPLATES), [1, 2], pack=PACK) == []


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("template", [*(t.id for t in USER_TEMPLATES), "policy-term-discount"])
def test_the_conformance_kit_holds_on_the_pack(template: str, check: str) -> None:
    if check == "determinism_across_processes" and template != "user-owner-reassigned":
        pytest.skip("one subprocess run is enough: the clock-triggered action")
    CHECKS[check](Case("workflows-v0", {"template": template, "pack": PACK}))


def test_the_pack_format_carries_policies_and_actions() -> None:
    for template in TEMPLATES.values():
        data = json.loads(json.dumps(packs.to_data(template, "m:f")))
        assert packs.to_template(packs.TemplateFile.model_validate(data), template.fixture) == template


@pytest.mark.parametrize(("change", "message"), [
    ({"policies": ("pricing",)}, "unknown policy 'pricing'; the policies are: discounting"),
    ({"actions": (Act("a", "x", "vanish", {}, after=("send_inmail",)),)}, "unknown verb 'vanish'"),
    ({"actions": (Act("a", "x", "reassign_owner", {"object": "contacts"}, after=("send_inmail",)),)},
     "needs ['id', 'owner_id']"),
    ({"actions": (Act("a", "x", "reschedule", {"email": "e", "after": "d"}),)}, "either 'after' tools or an 'at'"),
    ({"actions": (Act("a", "x", "reschedule", {"email": "e", "after": "d"}, after=("x",), at=2.0),)},
     "either 'after' tools or an 'at'"),
    ({"actions": (Act("a", "x", "reschedule", {"email": "e", "after": "d"}, after=("reply_message",)),)},
     "'after' names no replica tool: reply_message"),
])  # fmt: skip
def test_a_malformed_policy_or_action_is_refused_in_one_line(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        dataclasses.replace(TEMPLATES["user-reschedules"], **change).check()
    assert "\n" not in str(err.value)


def test_a_deletion_of_what_a_person_created_is_the_agents_change() -> None:
    made = {("crm.contacts", "1"): {"created": "user:x", "fields": [], "deleted": True},
            ("crm.contacts", "2"): {"created": "agent", "fields": [], "deleted": True},
            ("crm.contacts", "3"): {"created": "", "fields": ["lifecyclestage"], "deleted": False},
            ("crm.contacts", "4"): {"created": "user:x", "fields": [], "deleted": False}}  # fmt: skip
    changes = [{"table": "crm.contacts", "id": "3", "kind": "update", "fields": ["hubspot_owner_id",
                                                                              "lifecyclestage"]},
               {"table": "crm.contacts", "id": "4", "kind": "create"},
               {"table": "crm.notes", "id": "9", "kind": "create"}]  # fmt: skip
    assert verifier.agents_changes(changes, made) == [
        {"table": "crm.contacts", "id": "1", "kind": "delete"},
        {"table": "crm.contacts", "id": "3", "kind": "update", "fields": ["lifecyclestage"]},
        {"table": "crm.notes", "id": "9", "kind": "create"}]


def test_undoing_or_preempting_what_a_person_does_fails() -> None:
    moved = make("user-reschedules", 2)
    p = params(moved)
    moved.step(_first_calls(moved, 1)[0])
    new = next(r for r in moved._state.tables["scheduler.scheduled_events"].values() if r["start_time"] == p["start2"])
    assert step(moved, "meetings-cancel_event", uuid=new["uri"].rsplit("/", 1)[1], reason="keep the first")[
        "status"] == "ok"  # fmt: skip
    assert "never cancel a customer's booking" in [v["rule"] for v in finish(moved)["forbidden"]["violations"]]
    direct = make("user-books-from-link", 2)
    q = params(direct)
    step(direct, "meetings-create_invitee", event_type=q["event_type"], start_time=q["start"],
         invitee={"name": q["contact_name"], "email": q["contact_email"], "timezone": q["tz"]})
    score = finish(direct)
    assert not score["passed"] and score["forbidden"]["violations"][0]["rule"] == "no booking on their behalf"
