"""The red team against every template: no attack passes, and an attack that commits a violation never scores
a partial above doing nothing. Each exploit it found is pinned here (see docs/workflows.md, "Red team")."""

from __future__ import annotations

from typing import Any

import pytest
from wf_helpers import play_reference, step, workflow

import salesgym
from salesgym.agents.base import Episode
from salesgym.agents.workflows.red_team import ATTACKS, RedTeam
from salesgym.agents.workflows.sweep import sweep
from salesgym.envs.workflows.tasks.model import resolve
from salesgym.envs.workflows.tasks.templates import TEMPLATES


def _play(template: str, policy: Any, seed: int) -> dict[str, Any]:
    env = salesgym.make("workflows-v0", template=template)
    env.reset(seed=seed)
    for _ in Episode(env, policy, seed, 200):
        pass
    return dict(env.score())


SHARE = 5  # attacks per template here, rotating: every attack meets every other template; the sweep runs all


@pytest.mark.parametrize(("i", "template"), list(enumerate(TEMPLATES)))
def test_no_attack_passes_and_a_violation_scores_below_doing_nothing(i: int, template: str) -> None:
    attacks = [ATTACKS[(i * SHARE + j) % len(ATTACKS)] for j in range(SHARE)]
    assert sweep([template], [1], attacks) == []


def test_the_seed_draws_the_attack_and_the_record_says_which() -> None:
    env = workflow("crm-inbound-sql", seed=1)
    picks = {RedTeam(s, env.hidden_truth()) for s in range(40)}
    for p in picks:
        p.reset(env.reset(seed=1)[0], [])
    assert {p.episode_record()["attack"] for p in picks} == set(ATTACKS)
    with pytest.raises(ValueError, match="unknown attack"):
        RedTeam(0, None, attack="nope")


# -- the exploits it found, one regression each ---------------------------------------------------------------
def test_a_second_note_is_a_duplicate_not_a_pass() -> None:
    env = workflow("crm-inbound-sql", seed=1)
    play_reference(env)
    secret = env._world.secret
    step(env, "hubspot-create-engagement", type="NOTE", ownerId=secret.params["owner_int"],
         associations={"contactIds": [secret.params["contact_id_int"]]},
         metadata={"timestamp": secret.params["today"], "body": "Requested a demo again."})  # fmt: skip
    score = env.score()
    assert not score["passed"] and "more than 1 crm.notes" in score["invariant"]["unexpected"][0]["why"]


def test_a_lead_saved_to_another_list_is_an_unexpected_change() -> None:
    env = workflow("pros-abm-list", seed=1)
    play_reference(env)
    lists = step(env, "get_lead_lists")["output"]["elements"]
    other = next(x["id"] for x in lists if x["id"] != env._world.secret.params["list_id"]) if len(lists) > 1 else (
        env._world.secret.params["list_id"])
    lead = next(e["lead_id"] for e in step(env, "sales_search_leads", count=25)["output"]["elements"]
                if e["lead_id"] not in env._world.secret.params["targets"])  # fmt: skip
    assert step(env, "save_lead", lead_id=lead, list_id=other)["status"] == "ok"
    assert not env.score()["passed"]


def test_an_extra_single_use_link_fails_the_task() -> None:
    env = workflow("sched-deep-dive-link", seed=1)
    play_reference(env)
    types = step(env, "event_types-list_event_types")["output"]["collection"]
    other = next(t["uri"] for t in types if t["uri"] != env._world.secret.params["event_type"] and t["active"])
    assert step(env, "scheduling_links-create_single_use_scheduling_link", owner=other)["status"] == "ok"
    assert not env.score()["passed"]


@pytest.mark.parametrize(("template", "seed"), [
    *((t, 1) for t in ("sql-handoff", "abm-outreach", "dormant-winback", "new-exec-full-cycle",
                       "inbound-enterprise-4app", "changed-jobs-sequence", "champion-left-replace",
                       "existing-prospect-sequence",
                       "list-to-sequence", "list-expansion-finance", "no-show-winback", "new-hire-link-outreach",
                       "seq-prospects-no-upsert")),
    ("handoff-locked-rep", 3)])  # fmt: skip
def test_enrolling_everyone_fails_the_task(template: str, seed: int) -> None:
    score = _play(template, RedTeam(seed, workflow(template, seed=seed).hidden_truth(), attack="enrol-everyone"), seed)
    assert not score["passed"] and score["violations"]


@pytest.mark.parametrize("template", ["crm-close-lost-reason", "left-company-cleanup", "inmail-open-profile",
                                      "new-hire-link-outreach", "inmail-reply-referral"])
def test_a_second_record_of_a_create_fails_the_task(template: str) -> None:
    """A second note, InMail or single-use link: the uncapped create rules admitted any number of them."""
    score = _play(template, RedTeam(1, workflow(template, seed=1).hidden_truth(), attack="duplicate"), 1)
    assert not score["passed"] and any("more than" in c.get("why", "") for c in score["invariant"]["unexpected"])


def _bounce_note(env: Any, contact: int) -> dict[str, Any]:
    return step(env, "hubspot-create-engagement", type="NOTE", ownerId=env._world.secret.params["owner_int"],
                associations={"contactIds": [contact]},
                metadata={"timestamp": env._world.secret.params["today"], "body": "Email bounced again."})  # fmt: skip


def test_one_bounce_note_per_contact_passes_and_a_second_fails() -> None:
    """A note on each bounced contact (one each, not the reference's shared one) passes; a second bounce note on a
    contact is a duplicate, though the notes still fit the cap of one per contact."""
    env = workflow("bounced-cleanup", seed=1)
    play_reference(env, stop=2)  # the sequence states finished, no note yet
    for contact in env._world.secret.params["bounced_ints"]:
        assert _bounce_note(env, contact)["status"] == "ok"
    assert env.score()["passed"]
    env = workflow("bounced-cleanup", seed=1)
    play_reference(env)
    assert _bounce_note(env, env._world.secret.params["bounced_ints"][0])["status"] == "ok"
    score = env.score()
    assert not score["passed"] and not score["violations"]  # within the cap, caught by the assertion


def test_a_referral_followed_without_replying_to_the_lead_fails() -> None:
    """Dropping the reply (how the agent learns the referral's name) left every checked record in place."""
    env = workflow("inmail-reply-referral", seed=1)
    secret = env._world.secret
    outputs: list[Any] = []
    for action in secret.solution:
        if action["tool"] == "reply_message":
            outputs.append({})
            continue
        info = env.step(resolve(action, secret.params, outputs))[4]
        outputs.append(info["tool_result"]["output"])
    score = env.score()
    reply = next(a for s in score["steps"] for a in s["assertions"] if a.get("rubric") == "the reply to the lead")
    assert not score["passed"] and not reply["passed"]
    assert score["invariant"]["passed"]  # every record the task asks for is there: only the reply is missing


def test_a_lead_saved_to_another_list_fails_the_top_up() -> None:
    score = _play("pros-list-topup", RedTeam(1, workflow("pros-list-topup", seed=1).hidden_truth(),
                                             attack="extra-write"), 1)  # fmt: skip
    assert not score["passed"] and score["invariant"]["unexpected"]


def test_a_violation_voids_the_assertions_credit() -> None:
    env = workflow("crm-lifecycle-reset", seed=1)
    play_reference(env)
    honest = env.score()
    assert honest["passed"] and honest["partial"] == 1.0
    others = step(env, "hubspot-search-objects", objectType="contacts", limit=50)["output"]["results"]
    target = next(c["id"] for c in others if c["id"] != env._world.secret.params["contact_id"])
    step(env, "hubspot-batch-update-objects", objectType="contacts",
         inputs=[{"id": target, "properties": {"jobtitle": "Head of Everything"}}])
    score = env.score()
    n = score["assertions"]["total"] + 3
    assert score["assertions"]["passed"] == score["assertions"]["total"]  # every assertion still holds...
    assert score["partial"] == round(2 / n, 6)  # ...but only the two clean global checks count


def test_the_benchmark_checks_the_red_team_against_doing_nothing() -> None:
    """The exploit check pairs the red team with idle: zero passes is ok, one pass fails the check loudly."""
    from salesgym.agents import suite
    from salesgym.bench import analysis as an
    from salesgym.bench.store import EpisodeRecord

    s = suite("workflows")
    assert "red-team" in s.exploits and s.paired["red-team"] == "idle" and s.reads_truth("red-team")

    def episodes(red_passes: int) -> list[EpisodeRecord]:
        out = []
        for i in range(6):
            for policy, primary in (("idle", 0.0), ("first-plausible", 0.0), ("red-team", float(i < red_passes))):
                out.append(EpisodeRecord(policy, f"t{i}", i, "ok", {"primary": primary, "closed_value": 0.3,
                                                                   "passed": primary == 1.0}, 0.1, 3, 3))
        return out

    assert an.analyse(episodes(0), ["idle", "first-plausible", "red-team"], s).exploit_check == "passed"
    failed = an.analyse(episodes(1), ["idle", "first-plausible", "red-team"], s)
    assert failed.exploit_check == "failed" and "red-team failed" in an.exploit_line(failed)


# the templates whose seed-1 calls solved other instances before ids were keyed by the seed (issue 18 §5: 241 of
# 260 fresh episodes of thirteen of them; measured again, these 25 solved 1 to 20 of twenty other seeds)
BLIND_REPLAYED = ("crm-inbound-sql", "crm-lifecycle-reset", "sched-deep-dive-link", "seq-webinar-followup",
                  "pros-abm-list", "crm-close-lost-reason", "crm-fix-owner", "crm-mql-promote", "sched-double-booking",
                  "seq-finish-replied", "seq-exclusive-nurture", "pros-list-topup", "inmail-open-profile",
                  "optout-sync", "won-stop-outreach", "existing-prospect-sequence", "week-demos-connected",
                  "inmail-deep-dive-link", "booked-finish-outreach", "no-show-winback", "not-interested-close",
                  "exec-inmail-demo-link", "sched-sick-day", "bounced-cleanup",
                  "reengage-opted-out-inmail")  # fmt: skip


@pytest.mark.parametrize("template", BLIND_REPLAYED)
def test_another_instances_calls_replayed_blind_fail(template: str) -> None:
    for seed in (1, 2):
        policy = RedTeam(seed, workflow(template, seed=seed).hidden_truth(), attack="replay")
        score = _play(template, policy, seed)
        assert not score["passed"], f"{template} seed {seed}: another instance's calls passed"
        assert policy.episode_record()["attack"] == "replay"
