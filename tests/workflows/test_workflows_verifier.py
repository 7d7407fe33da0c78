"""The verifier: jq assertions and their operators, the invariant, the audit, forbidden actions, the partial
score, and a reward that is 0 until the verdict is shown at the episode's end."""

from __future__ import annotations

import pytest
from tests.workflows.wf_helpers import params, play_reference, step, workflow

from salesgym.envs.workflows import jqlib, verifier

DOC = {"crm": {"contacts": [{"id": "1", "properties": {"email": "A@x.io", "n": 5}}]}}


@pytest.mark.parametrize(("op", "values", "expected", "holds"), [
    ("equals", ["a"], "a", True), ("equals", ["a"], "b", False), ("equals", ["a", "a"], "a", False),
    ("not_equals", ["a"], "b", True), ("not_equals", ["a"], "a", False),
    ("contains", ["hello world"], "lo w", True), ("contains", [[1, 2]], 3, False), ("contains", [{"a": 1, "b": 2}],
                                                                                     {"a": 1}, True),
    ("count", [1, 2, 3], 3, True), ("count", [], 1, False),
    ("exists", [None], True, False), ("exists", [0], True, True), ("exists", [], False, True),
    ("gt", [5], 4, True), ("gt", [4], 4, False), ("gte", [4], 4, True), ("lt", ["2026-01-01"], "2026-02-01", True),
    ("lte", [5], 4, False), ("gt", [True], 0, False), ("gt", ["5"], 4, False),
    ("matches", ["Demo requested"], "(?i)demo", True), ("matches", ["nothing"], "demo", False),
    ("in", ["b"], ["a", "b"], True), ("in", ["c"], ["a", "b"], False),
])  # fmt: skip
def test_operators(op: str, values: list[object], expected: object, holds: bool) -> None:
    assert verifier.compare(op, values, expected)[0] is holds


def test_assertions_run_real_jq_with_parameters_and_report_metadata() -> None:
    assert jqlib.run('contact($e) | .properties.n', DOC, {"e": "a@X.io"}) == [5]
    ok = verifier.check_assertion(2, {"name": "n", "expr": "contact($e) | .properties.n", "op": "gte", "expected": 5},
                                  DOC, {"e": "a@x.io"})
    assert ok == {"step": 2, "name": "n", "expr": "contact($e) | .properties.n", "op": "gte", "expected": 5,
                  "actual": 5, "passed": True, "reason": ""}
    broken = verifier.check_assertion(1, {"name": "x", "expr": ".crm.contacts | tonumber", "op": "equals",
                                          "expected": 1}, DOC, {})
    assert not broken["passed"] and broken["reason"].startswith("jq error")


def test_an_unexpected_change_fails_the_invariant_even_when_every_assertion_holds() -> None:
    env = workflow("crm-inbound-sql")
    play_reference(env)
    other = next(k for k in env._state.rows("crm.contacts") if k != params(env)["contact_id"])
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": other, "properties":
                                                                              {"jobtitle": "Edited"}}])
    score = env.score()
    assert score["assertions"]["passed"] == score["assertions"]["total"] and not score["passed"]
    assert score["invariant"]["unexpected"] == [{"table": "crm.contacts", "id": other, "kind": "update",
                                                 "fields": ["jobtitle"]}]
    assert score["violations"] == {"invariant": 1} and 0 < score["partial"] < 1


def test_an_allowed_record_changed_in_a_field_outside_the_task_fails() -> None:
    env = workflow("crm-dedupe-inbound")
    play_reference(env)
    cid = params(env)["contact_id"]
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": cid, "properties":
                                                                              {"hs_lead_status": "BAD_TIMING"}}])
    assert not env.score()["passed"]


def test_forbidden_actions_are_checked_across_the_trajectory() -> None:
    env = workflow("enrich-contacts")
    lead = next(iter(env._state.rows("prospecting.leads").values()))
    step(env, "send_inmail", recipient_urn=lead["urn"], subject="Hi", body="x")  # refused: read only
    play_reference(env)
    score = env.score()
    assert score["forbidden"]["violations"] == [{"rule": "no InMail credit spent", "tool": "send_inmail",
                                                 "event": 1, "call": 0, "refused": True}]
    assert not score["passed"] and score["assertions"]["passed"] == score["assertions"]["total"]
    seq = workflow("seq-webinar-followup")
    p = params(seq)
    step(seq, "sequence_add_prospects", sequenceId=p["sequence_id"], prospectIds=[*p["eligible"], p["opted_out"]],
         mailboxId=p["mailbox"])  # the platform skips the opted-out prospect, and the attempt is forbidden
    assert [v["rule"] for v in seq.score()["forbidden"]["violations"]] == ["never try to sequence an opted-out "
                                                                         "prospect"]


def test_the_audit_ties_every_change_to_a_call_of_its_own_app() -> None:
    env = workflow("crm-inbound-sql")
    play_reference(env)
    assert verifier.audit(env._log) == []
    ctx = env._ctx()
    ctx.emit("record_updated", "agent", {"table": "crm.contacts", "id": params(env)["contact_id"],
                                         "record": env._state.rows("crm.contacts")[params(env)["contact_id"]],
                                         "changed": []})
    assert verifier.audit(env._log)[0]["problem"] == "changed outside any call"


def test_reward_is_zero_until_the_end_and_the_verdict_is_shown_then() -> None:
    env = workflow("crm-lifecycle-reset")
    rewards = [r["reward"] for r in play_reference(env) for r in [step(env, "hubspot-list-owners")]]
    assert rewards == [0.0, 0.0]
    assert env.observe()["data"]["episode"]["verdict"] is None
    obs, reward, terminated, _, _ = env.step({"tool": "finish_task", "args": {}})
    assert terminated and reward == 1.0 and obs["data"]["episode"]["verdict"] == "pass"
    assert "Verdict: pass" in obs["text"]
    out = workflow("crm-lifecycle-reset", max_calls=10)
    for _ in range(10):
        _, reward, terminated, _, _ = out.step({"tool": "hubspot-list-owners", "args": {}})
    assert terminated and reward == 0.0 and out.observe()["data"]["episode"]["verdict"] == "fail"


def test_editing_the_field_the_verifier_reads_without_the_rule_does_not_pass() -> None:
    # lifecycle reset: writing "lead" straight away is accepted by the platform and changes nothing
    env = workflow("crm-lifecycle-reset")
    cid = params(env)["contact_id"]
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": cid, "properties": {
        "lifecyclestage": "lead", "hs_lead_status": "OPEN"}}])
    assert step(env, "finish_task")["reward"] == 0.0
    # dedupe: creating a second contact is refused, so the only way through is the update
    dup = workflow("crm-dedupe-inbound")
    p = params(dup)
    assert step(dup, "hubspot-batch-create-objects", objectType="contacts",
                inputs=[{"properties": {"email": p["form_email"], "jobtitle": p["title"]}}])["status"] == "error"
    assert step(dup, "finish_task")["reward"] == 0.0


def test_hidden_facts_are_told_only_when_asked_for() -> None:
    env = workflow("crm-renewal-negotiation")
    amount = params(env)["amount"]
    vague = step(env, "ask_requester", question="Anything else?")
    assert amount not in str(vague["output"]) and env.observe()["data"]["told"] == {}
    told = step(env, "ask_requester", question="What amount did we agree?")
    assert told["output"]["answer"] == amount and env.observe()["data"]["told"] == {"amount": amount}
