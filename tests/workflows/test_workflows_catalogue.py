"""The catalogue as a whole (distinct workflows, every app alone and in every pair and triple), and for the
templates written after the first ones (fixtures in ``fixtures_more.py``), the rule that bites: the shortcut an
agent might take fails the task, and the replica refuses what its platform refuses. (Every reference solution
passing, and doing nothing failing, is ``test_workflows_templates.py``'s, parametrised over the whole catalogue.)"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from tests.workflows.wf_helpers import params, play_reference, step, workflow

from salesgym.envs.workflows.contract import APPS
from salesgym.envs.workflows.tasks.templates import TEMPLATES


def test_titles_goals_and_prompts_are_distinct_across_the_catalogue() -> None:
    for attr in ("title", "goal", "prompt"):
        values = [getattr(t, attr) for t in TEMPLATES.values()]
        assert len(set(values)) == len(values), f"two templates share a {attr}"


def test_every_app_alone_and_every_pair_and_triple_of_apps_has_workflows() -> None:
    by_apps: dict[frozenset[str], int] = {}
    for t in TEMPLATES.values():
        by_apps[frozenset(t.apps)] = by_apps.get(frozenset(t.apps), 0) + 1
    for n in (1, 2, 3):
        for apps in combinations(APPS, n):
            assert by_apps.get(frozenset(apps), 0) >= (2 if n == 1 else 1), apps
    more = [t for t in TEMPLATES.values() if t.fixture.__module__.endswith("fixtures_more")]
    assert len(more) >= 40 and {t.tier for t in more} == {1, 2, 3}


def finish(env: Any) -> dict[str, Any]:
    step(env, "finish_task", summary="done")
    score: dict[str, Any] = env.score()
    return score


def failing(score: dict[str, Any]) -> set[str]:
    return {a["name"] for s in score["steps"] for a in s["assertions"] if not a["passed"]}


# --- tier 1 -----------------------------------------------------------------------------------------------------
def test_a_closed_lost_note_without_the_requesters_reason_fails() -> None:
    env = workflow("crm-close-lost-reason")
    p = params(env)
    step(env, "hubspot-batch-update-objects", objectType="deals",
         inputs=[{"id": p["deal_id"], "properties": {"dealstage": "closedlost"}}])
    step(env, "hubspot-create-engagement", type="NOTE", ownerId=p["owner_int"],
         associations={"dealIds": [int(p["deal_id"])]}, metadata={"timestamp": p["today"], "body": "Lost."})
    assert failing(finish(env)) == {"the note gives the reason"}


def test_owners_are_fixed_on_the_account_only() -> None:
    env = workflow("crm-fix-owner")
    p = params(env)
    play_reference(env)
    other = next(o for o in env._state.rows("crm.owners") if o != p["decoy_owner"])
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[
        {"id": p["decoy_id"], "properties": {"hubspot_owner_id": other}}])  # another company's contact
    score = finish(env)
    assert failing(score) == {"the other company's contact untouched"} and score["violations"] == {"invariant": 1}


def test_a_renewal_stage_needs_its_pipeline() -> None:
    env = workflow("crm-open-renewal")
    p = params(env)
    out = step(env, "hubspot-batch-create-objects", objectType="deals", inputs=[
        {"properties": {"dealname": p["deal_name"], "dealstage": "7430022"}}])  # no pipeline: the default one
    assert out["status"] == "error" and "not a stage of pipeline" in out["output"]["error"]


def test_a_no_show_before_the_event_and_a_half_hour_gap_for_an_hour_are_refused() -> None:
    env = workflow("sched-no-show-rebook")
    play_reference(env)
    new = next(i for i in env._state.rows("scheduler.invitees").values() if i["uri"] != params(env)["old_invitee"])
    out = step(env, "invitee_no_shows-create", invitee=new["uri"])
    assert out["status"] == "error" and "not started" in out["output"]["error"]
    again = step(env, "invitee_no_shows-create", invitee=params(env)["old_invitee"])
    assert again["status"] == "error" and again["output"]["error"].startswith("409")
    dive = workflow("sched-deep-dive-length")
    p = params(dive)
    assert p["gap"] < p["start"]
    out = step(dive, "meetings-create_invitee", event_type=p["event_type"], start_time=p["gap"],
               invitee={"name": p["invitee_name"], "email": p["invitee_email"], "timezone": p["tz"]})
    assert out["status"] == "error" and out["output"]["error"].startswith("409")


def test_cancelling_the_wrong_booking_of_a_double_booking_fails() -> None:
    env = workflow("sched-double-booking")
    p = params(env)
    step(env, "meetings-cancel_event", uuid=p["keep_id"], reason="duplicate")
    score = finish(env)
    assert not score["passed"] and score["violations"].get("invariant")


def test_making_room_in_an_exclusive_sequence_is_forbidden() -> None:
    env = workflow("seq-exclusive-nurture")
    p = params(env)
    out = step(env, "sequence_add_prospects", sequenceId=p["sequence_id"], prospectIds=[p["busy"]],
               mailboxId=p["mailbox"])
    assert out["status"] == "error" and "exclusive" in out["output"]["error"]
    busy_state = next(s for s in env._state.rows("sequencer.sequence_states").values()
                      if s["relationships"]["prospect"]["data"]["id"] == p["busy"])  # fmt: skip
    step(env, "sequence_state_finish", id=busy_state["id"])
    step(env, "sequence_add_prospects", sequenceId=p["sequence_id"], prospectIds=[*p["eligible"], p["busy"]],
         mailboxId=p["mailbox"])
    score = finish(env)
    assert [v["rule"] for v in score["forbidden"]["violations"]] == ["nobody is pulled out of a sequence"]


def test_finishing_everyone_instead_of_the_replies_fails() -> None:
    env = workflow("seq-finish-replied")
    p = params(env)
    for sid in [*p["replied"], *p["quiet"]]:
        step(env, "sequence_state_finish", id=sid)
    assert failing(finish(env)) == {"the others still active"}


def test_paid_inmails_are_forbidden_and_spend_a_credit() -> None:
    env = workflow("pros-inmail-free")
    p = params(env)
    play_reference(env)
    out = step(env, "send_inmail", recipient_urn=p["paid_urns"][0], subject=p["subject"], body=p["body"])
    assert out["status"] == "ok" and out["output"]["credit_spent"]
    score = finish(env)
    assert failing(score) == {"exactly the free leads got it", "no credit spent"}
    assert [v["rule"] for v in score["forbidden"]["violations"]] == ["no paid InMail"]


def test_a_lead_is_saved_once_per_list() -> None:
    env = workflow("pros-list-topup")
    p = params(env)
    out = step(env, "save_lead", lead_id=p["already"], list_id=p["list_id"])
    assert out["status"] == "error" and out["output"]["error"].startswith("409")


# --- tiers 2 and 3 ----------------------------------------------------------------------------------------------
def test_a_duplicate_prospect_is_refused_and_the_existing_one_is_used() -> None:
    env = workflow("existing-prospect-sequence")
    p = params(env)
    out = step(env, "prospect_create", attrs={"emails": [p["contact_email"]]})
    assert out["status"] == "error" and out["output"]["error"].startswith("422")


def test_the_locked_reps_mailbox_is_refused() -> None:
    env = workflow("handoff-locked-rep")
    p = params(env)
    prospect = step(env, "prospect_create", attrs={"emails": [p["contact_email"]]}, accountId=p["account_id"])
    owner_mailbox = next(m["id"] for m in env._state.rows("sequencer.mailboxes").values()
                         if env._state.rows("sequencer.users")[str(m["attributes"]["userId"])]["attributes"]["locked"])
    out = step(env, "sequence_add_prospects", sequenceId=p["sequence_id"],
               prospectIds=[prospect["output"]["data"]["id"]], mailboxId=owner_mailbox)
    assert out["status"] == "error" and "locked" in out["output"]["error"]


def test_sql_outbound_does_not_take_a_no_show_twice() -> None:
    env = workflow("no-show-winback")
    p = params(env)
    out = step(env, "sequence_add_prospects", sequenceId=p["sql_id"], prospectIds=[p["prospect_id"]],
               mailboxId=p["mailbox"])
    assert out["status"] == "error" and "already been in this sequence" in out["output"]["error"]


def test_recreating_a_known_contact_is_refused() -> None:
    env = workflow("list-to-sequence")
    p = params(env)
    known = env._state.rows("crm.contacts")[p["known_id"]]["properties"]["email"]
    out = step(env, "hubspot-batch-create-objects", objectType="contacts", inputs=[{"properties": {"email": known}}])
    assert out["status"] == "error" and out["output"]["error"].startswith("409")


def test_the_meeting_follows_the_leads_seniority() -> None:
    seen = set()
    for seed in range(12):
        env = workflow("inbound-seniority-route", seed)
        p = params(env)
        seen.add(p["senior"])
        types = {t["slug"]: t["uri"] for t in step(env, "event_types-list_event_types")["output"]["collection"]}
        assert (p["event_type"] == types["deep-dive"]) == p["senior"]
    assert seen == {True, False}
    env = workflow("inbound-seniority-route", 0)
    p = params(env)
    types = {t["slug"]: t["uri"] for t in step(env, "event_types-list_event_types")["output"]["collection"]}
    wrong = types["demo"] if p["senior"] else types["deep-dive"]
    slots = step(env, "event_types-list_event_type_available_times", event_type=wrong,
                 start_time=f"{p['after']}T00:00:00Z", end_time=f"{p['after']}T23:59:00Z")["output"]["collection"]
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[
        {"id": p["contact_id"], "properties": {"jobtitle": p["title"], "lifecyclestage": "salesqualifiedlead"}}])
    step(env, "meetings-create_invitee", event_type=wrong, start_time=slots[0]["start_time"],
         invitee={"name": p["contact_name"], "email": p["contact_email"], "timezone": p["tz"]})
    assert "booked at the expected open slot" in failing(finish(env))


def test_read_only_apps_refuse_writes_in_the_new_templates() -> None:
    env = workflow("booked-finish-outreach")
    booking = next(iter(env._world.tables["scheduler.scheduled_events"]))
    out = step(env, "meetings-cancel_event", uuid=booking, reason="x")
    assert out["status"] == "error" and out["output"]["error"].startswith("403")
    for template in ("optout-sync", "reply-reschedule"):
        env = workflow(template)
        out = step(env, "sequence_state_finish", id=1)
        assert out["status"] == "error" and out["output"]["error"].startswith("403")


def test_a_sick_day_cancels_that_day_only_and_call_tasks_go_to_the_unanswered_only() -> None:
    env = workflow("sched-sick-day")
    p = params(env)
    play_reference(env)
    step(env, "meetings-cancel_event", uuid=p["kept"][0], reason="out sick")
    score = finish(env)
    assert failing(score) == {"the other day's untouched"} and score["violations"] == {"invariant": 2}
    env = workflow("crm-attempted-call-tasks")
    p = params(env)
    play_reference(env)
    other = next(int(k) for k, c in env._state.rows("crm.contacts").items() if k not in p["targets"])
    step(env, "hubspot-create-engagement", type="TASK", ownerId=p["owner_int"], associations={"contactIds": [other]},
         metadata={"timestamp": p["due_time"], "subject": "Call to follow up", "taskType": "CALL"})
    assert failing(finish(env)) == {"no other task"}
