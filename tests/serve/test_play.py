"""``salesgym play`` driven through a real pseudo-terminal to the end of a debug episode."""

from __future__ import annotations

import json
import re
import sys

import pexpect

import salesgym

NEXT_WEEK = '{"tool": "wait", "args": {"hours": null, "until": "next_week"}}'


def test_a_person_plays_a_debug_episode_to_the_end() -> None:
    child = pexpect.spawn(sys.executable, ["-m", "salesgym.cli", "play", "territory-debug-v0", "--seed", "3"],
                          encoding="utf-8", timeout=30, dimensions=(50, 200))
    try:
        child.expect("call> ")
        child.sendline("research_account")  # the picker: a tool by name, then one prompt per argument
        child.expect("account_id> ")
        child.sendline("a001")
        child.expect(r"\[(ok|error)\] reward")
        child.expect("call> ")
        child.sendline("18")  # by number: wait
        child.expect("hours> ")
        child.sendline("lots")  # not a number: asked again
        child.expect("not a valid hours")
        child.expect("hours> ")
        child.sendline("")  # empty: null
        child.expect("until> ")
        child.sendline("0")  # enum by index: next_event
        child.expect(r"\[ok\] reward")
        child.expect("call> ")
        child.sendline("{not json")  # a bad typed call is refused as data, the episode goes on
        child.expect(r"\[error\]")
        child.expect("call> ")
        child.sendline("h")
        child.expect("3. error")
        child.expect("call> ")
        weeks = 0
        for _ in range(20):
            child.sendline(NEXT_WEEK)
            weeks += 1
            if child.expect([r"episode over \(terminated\)", "call> "]) == 0:
                break
        else:
            raise AssertionError("the episode did not end")
        child.expect("verifier score after")
        child.expect(pexpect.EOF)
        score = json.loads(child.before[child.before.index("{"):])
    finally:
        child.close()
    assert child.exitstatus == 0
    env = salesgym.make("territory-debug-v0")
    env.reset(seed=3)
    for action in [{"tool": "research_account", "args": {"account_id": "a001"}},
                   {"tool": "wait", "args": {"hours": None, "until": "next_event"}}, "{not json",
                   *[NEXT_WEEK] * weeks]:
        env.step(action)
    assert score == json.loads(json.dumps(env.score()))  # the same calls in-process: the same verifier report


def test_the_first_screen_shows_the_portfolio_and_an_empty_answer_takes_the_default() -> None:
    env = salesgym.make("territory-debug-v0")
    obs, _ = env.reset(seed=3)
    rows = obs["data"]["portfolio"]["rows"]
    child = pexpect.spawn(sys.executable, ["-m", "salesgym.cli", "play", "territory-debug-v0", "--seed", "3"],
                          encoding="utf-8", timeout=60, dimensions=(50, 200))
    try:
        child.expect("call> ")
        first = child.before
        for opportunity_id, account, milestone, *_ in rows:  # ids, accounts and milestones up front
            assert re.search(rf"{opportunity_id}\s+{re.escape(account)}\s+{milestone}", first), first
        child.sendline("view_opportunity")
        child.expect("opportunity_id .*opportunity_id> ")
        child.sendline("o001")
        child.expect(r"page \(integer, empty for the default: 0\).*page> ")
        child.sendline("")  # the default, as docs/tools.md and the schema say: page is optional
        child.expect(r"\[(ok|error)\] reward")
        assert "invalid literal" not in child.before and child.after == "[ok] reward", child.before
        child.expect("call> ")
        child.sendline("wait")
        child.expect("hours> ")
        child.sendline("")  # left out: the default (null)
        child.expect("until> ")
        child.sendline("next_week")
        child.expect(r"\[ok\] reward")
        child.expect("call> ")
        child.sendline("q")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
