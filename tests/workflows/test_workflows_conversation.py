"""The message rubric (named items, facts, forbidden claims, length: assertions of the verdict) and the
conversational simulator (facts behind conditions, canned replies, scripted mid-episode messages as events,
``reply_message``): behaviour, exact replay and clones, and no hidden fact in an observation before it is told."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.workflows.wf_helpers import params, play_reference, step, workflow

from salesgym.envs.workflows import rubric
from salesgym.envs.workflows.conformance import LeakScanner
from salesgym.envs.workflows.tasks.model import FactSpec, Needs, Rubric, Turn
from salesgym.envs.workflows.tasks.templates import TEMPLATES

CONVERSATIONAL = ("sched-reschedule-request", "inmail-reply-referral", "crm-budget-colleague")


def _rubric(**kw: Any) -> dict[str, Any]:
    base = {"name": "r", "target": ".text", "step": 1, "tools": ["t"], "must_mention": [], "facts": [],
            "forbidden_claims": [], "max_len": None, "criteria": ""}
    return {**base, **kw}


def _checks(text: str, **kw: Any) -> list[dict[str, Any]]:
    return rubric.check(_rubric(**kw), {}, [{"tool": "t", "args": {"text": text}, "refused": False}], {})


def test_rubric_checks_each_rule_deterministically() -> None:
    found = _checks("We booked the demos; contract signed for $48,213.00 by Ana Diaz.",
                    must_mention=[["demo"], ["ai"], ["pricing", "signed"]],
                    facts=[["amount", "48213"], ["name", "ana diaz"], ["wrong amount", "4821"]],
                    forbidden_claims=[["a discount", r"\bdiscount|\d+\s*%\s*off"]], max_len=40)
    by_name = {c["name"].split(": ", 1)[1]: c for c in found}
    assert by_name["mentions demo"]["passed"] and by_name["mentions demo"]["actual"] == "demo"  # "demos"
    assert not by_name["mentions ai"]["passed"]  # a word start: "ai" is not in "contract signed ... Diaz"
    assert by_name["mentions pricing / signed"]["passed"]
    assert by_name["states the amount"]["passed"] and by_name["states the name"]["passed"]
    assert not by_name["states the wrong amount"]["passed"]  # digits compared whole, not as a substring
    assert by_name["no claim of a discount"]["passed"] and not by_name["at most 40 characters"]["passed"]
    assert {c["op"] for c in found} == {"mentions", "states", "no_claim", "max_len"}
    assert all(c["step"] == 1 and c["expr"] == ".text" and c["judged_by"] == "rules" for c in found)
    claim = _checks("You get 15 % off this quarter.", forbidden_claims=[["a discount", r"\d+\s*%\s*off"]])[0]
    assert not claim["passed"] and claim["reason"] == "claims a discount" and "15 % off" in claim["actual"]
    empty = _checks("", must_mention=[["x"]], forbidden_claims=[["y", "y"]], max_len=5)
    assert [c["passed"] for c in empty] == [False] * 3 and {c["reason"] for c in empty} == {"nothing was written"}


def _closed_won(body: str) -> dict[str, Any]:
    env = workflow("crm-closed-won", 4)
    play_reference(env, stop=2)  # the amount asked and the deal closed; now the agent's own note
    p = params(env)
    note = step(env, "hubspot-create-engagement", type="NOTE", ownerId=p["owner_int"],
                associations={"dealIds": [p["deal_id_int"]]}, metadata={"timestamp": p["today"],
                                                                       "body": body.format(**p)})
    assert note["status"] == "ok"
    step(env, "finish_task", summary="done")
    return dict(env.score())


def test_the_rubric_is_part_of_the_verdict_and_the_partial_score() -> None:
    good = _closed_won("Contract signed for ${amount}.")
    assert good["passed"] and good["rubric"] == {"passed": 5, "total": 5, "judged_by": ["rules"]}
    wrong = _closed_won("Contract signed for $1,000.")  # the wrong figure
    failed = [a for s in wrong["steps"] for a in s["assertions"] if not a["passed"]]
    assert not wrong["passed"] and wrong["partial"] < 1.0 and [a["op"] for a in failed] == ["states"]
    assert failed[0]["step"] == 2 and failed[0]["expected"] == params(workflow("crm-closed-won", 4))["amount"]
    assert failed[0]["rubric"] == "the signature note" and "1,000" in failed[0]["actual"]
    promised = _closed_won("Contract signed for ${amount}; we guarantee a free month.")
    reasons = {a["reason"] for s in promised["steps"] for a in s["assertions"] if not a["passed"]}
    assert not promised["passed"] and reasons == {"claims a discount", "claims a guarantee"}
    assert promised["partial"] < good["partial"] == 1.0


def test_a_malformed_rubric_or_rule_is_refused_when_the_template_is_checked() -> None:
    import dataclasses

    base = TEMPLATES["crm-budget-colleague"]
    bad = [dataclasses.replace(base, rubrics=(Rubric("x", ".a", 9),)),
           dataclasses.replace(base, rubrics=(Rubric("x", ".a", 1, forbidden_claims=(("bad", "(unclosed"),)),)),
           dataclasses.replace(base, facts=(FactSpec("budget", ("budget",), "budget", requires=({"when": 1},)),)),
           dataclasses.replace(base, facts=(FactSpec("budget", ("budget",), "budget", holder="ghost"),)),
           dataclasses.replace(base, turns=(Turn("t", ("send_inmail",), "x", "y", sender_key="a"),),
                               facts=(FactSpec("budget", ("budget",), "budget", holder="b"),))]
    for template in bad:
        with pytest.raises((ValueError, re.error)):
            template.check()


def _blob(env: Any) -> str:
    obs = env.observe()
    return obs["text"] + json.dumps(obs["data"])


def test_a_fact_behind_a_condition_and_a_canned_reply_tell_nothing_until_asked_right() -> None:
    env = workflow("crm-budget-colleague", 6)
    p = params(env)
    budget, decision = p["budget"], p["decision_date"]
    vague = step(env, "ask_requester", question="What amount should the deal have?")
    assert vague["output"]["answer"].startswith("Which figure do you mean?")
    early = step(env, "ask_requester", question="When is their decision?")
    assert early["output"]["answer"] == "Let's settle the budget first; ask me about it."
    assert env._state.revealed == {} and budget not in _blob(env) and decision not in _blob(env)
    told = step(env, "ask_requester", question="What's their budget?")
    assert told["output"]["answer"] == budget and env._state.revealed == {"budget": budget}
    assert decision not in _blob(env)
    later = step(env, "ask_requester", question="When is their decision?")
    assert later["output"]["answer"] == decision and set(env._state.revealed) == {"budget", "decision_date"}
    assert [e["kind"] for e in env.event_log()].count("fact_revealed") == 2


def _book(env: Any, start: str) -> dict[str, Any]:
    p = params(env)
    return step(env, "meetings-create_invitee", event_type=p["event_type"], start_time=start,
                invitee={"name": p["invitee_name"], "email": p["invitee_email"], "timezone": p["tz"]})


def test_a_scripted_message_arrives_after_the_booking_as_an_event_and_replays_exactly() -> None:
    env = workflow("sched-reschedule-request", 2)
    p = params(env)
    assert env.observe()["data"]["inbox"] == []
    step(env, "event_types-list_event_types")  # a read does not trigger the turn
    assert env.observe()["data"]["inbox"] == [] and step(env, "reply_message", message_id="MSG1",
                                                         text="hi")["status"] == "error"
    booked = _book(env, p["start"])
    assert booked["status"] == "ok"
    inbox = env.observe()["data"]["inbox"]
    assert [m["id"] for m in inbox] == ["MSG1"] and inbox[0]["from"] == p["invitee_name"]
    assert "Message MSG1 from" in env.observe()["text"]
    kinds = [e["kind"] for e in env.event_log()]
    assert kinds.count("message_received") == 1 and kinds.index("message_received") < len(kinds) - 1
    twin = env.clone()
    asked = step(env, "reply_message", message_id="MSG1", text="Which day works for you?")
    assert asked["output"]["answer"].startswith("Could you propose a day and time?")
    assert p["new_day"] not in _blob(env)
    told = step(env, "reply_message", message_id="MSG1", text="Would Thursday at 14:00 work?")
    assert told["output"] == {"from": p["invitee_name"], "answer": p["new_day"]}
    assert env._state.revealed == {"new_day": p["new_day"]} and twin._state.revealed == {}
    assert len(twin._state.inbox) == 1 and twin.observe()["data"]["inbox"] == inbox
    _book(env, p["start2"])  # a second booking: the turn was delivered once
    assert len(env._state.inbox) == 1
    assert env.replay().snapshot() == env._state.snapshot()


def test_a_turn_waits_for_its_condition() -> None:
    env = workflow("inmail-reply-referral", 1)
    p = params(env)
    other = step(env, "send_inmail", recipient_urn=f"urn:li:fs_salesProfile:{p['referral_id']}", subject="Hi",
                 body="Hello")
    assert other["status"] == "ok" and env._state.inbox == []  # not the lead: the lead has nothing to answer
    step(env, "send_inmail", recipient_urn=f"urn:li:fs_salesProfile:{p['lead_id']}", subject="Hi", body="Hello")
    assert [m["turn"] for m in env._state.inbox] == ["referral"]
    assert step(env, "ask_requester", question="Who is the right person?")["output"]["answer"] != p["referral_name"]
    assert step(env, "reply_message", message_id="MSG1", text="Who should I talk to?")["output"]["answer"] == \
        p["referral_name"]


@pytest.mark.parametrize("template", CONVERSATIONAL)
def test_no_hidden_fact_is_shown_before_it_is_told(template: str) -> None:
    for seed in (0, 9):
        env = workflow(template, seed)
        scanner = LeakScanner(env)
        secret = env._world.secret
        outputs: list[dict[str, Any]] = []
        from salesgym.envs.workflows.tasks.model import resolve

        for action in secret.solution:
            seen = len(env.event_log())
            obs, _, _, _, info = env.step(resolve(action, secret.params, outputs))
            outputs.append(info["tool_result"]["output"])
            scanner.learn(env.event_log()[seen:])
            scanner.scan(obs, info["tool_result"]["output"])
        assert set(env._state.revealed) >= {f.key for f in secret.facts if f.key != "context"}


def test_needs_are_plain_data() -> None:
    assert Needs.told("a") == {"told": "a"} and Needs.says("x") == {"says": "x"}
    assert Needs.called("t") == {"called": {"tool": "t", "args": None}} and Needs.holds(".x") == {"holds": ".x"}
