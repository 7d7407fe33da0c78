"""Every request stays within ``context_tokens`` under each strategy, counted by the server's own tokenizer,
and each strategy shows what it says it shows."""

from __future__ import annotations

import re
import signal
from itertools import pairwise
from types import FrameType

import pytest
from llm_helpers import Baseline, llm, play_baseline, run, scripted_server

from salesgym.agents.base import Episode
from salesgym.agents.llm import LLMConfig, sampling_seed
from salesgym.agents.llm.context import (
    MIN_CUT_CHARS,
    STATE_CHARS,
    Block,
    CallNote,
    ContextBuilder,
    ContextOverflow,
    args_text,
    digest,
)
from salesgym.agents.llm.tokens import TokenEstimator
from salesgym.llm.config import DEFAULT_CONTEXT_TOKENS
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions

server = scripted_server  # the module's scripted server (a fixture)


SEED = 4
SMALL = 16_000  # tight for the 10-opportunity episode: every strategy has to cut


@pytest.fixture(scope="module")
def ev() -> Baseline:
    return play_baseline("territory-v0", SEED, n_opportunities=10, horizon_days=30)


def prompts(server: ScriptedOpenAI) -> list[dict[str, object]]:
    return server.requests_for(sampling_seed(SEED))


@pytest.mark.parametrize("strategy", ["full", "window", "summary", "state"])
def test_every_request_fits_and_the_episode_is_unchanged(strategy: str, ev: Baseline, server: ScriptedOpenAI) -> None:
    env = ev.env()
    policy = llm(server, SEED, moves_from_actions(ev.actions), context=strategy, context_tokens=SMALL, max_tokens=512)
    episode = run(env, policy, SEED)
    assert episode.end == ev.end and env.event_log_hash() == ev.log_hash
    served = prompts(server)
    assert len(served) == len(ev.actions)
    tokens = [r["usage"]["prompt_tokens"] for r in served]  # type: ignore[index]
    assert max(tokens) + 512 <= SMALL
    assert max(tokens) > 0.8 * (SMALL - 512)  # the budget was used, not avoided
    for r in served:
        messages = r["body"]["messages"]  # type: ignore[index]
        assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
        # every tool call shown is answered, and no tool message is shown without its call
        ids = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert answered == ids[: len(answered)] and len(ids) - len(answered) <= 0
    record = policy.episode_record()
    assert record["max_prompt_tokens"] == max(tokens)
    assert record["context"]["strategy"] == strategy and record["context"]["context_tokens"] == SMALL


def test_full_keeps_everything_until_it_must_cut_then_cuts_back(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions), context="full", context_tokens=SMALL, max_tokens=512)
    run(ev.env(), policy, SEED)
    served = prompts(server)
    lengths = [len(r["body"]["messages"]) for r in served]  # type: ignore[index]
    first_cut = next(i for i, (a, b) in enumerate(pairwise(lengths)) if b < a) + 1
    assert lengths[:first_cut] == list(range(2, 2 * first_cut + 1, 2))  # every turn, verbatim
    cut = served[first_cut]["body"]["messages"]  # type: ignore[index]
    assert re.match(r"\[Turns t1-t\d+ are not shown", cut[1]["content"])
    assert served[first_cut]["usage"]["prompt_tokens"] < 0.85 * served[first_cut - 1]["usage"]["prompt_tokens"]  # type: ignore[index]


def test_window_shows_the_latest_turns_and_where_things_stood(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions), context="window", window_turns=6)
    steps = list(Episode(ev.env(), policy, SEED))
    served = prompts(server)
    late = served[100]["body"]["messages"]  # type: ignore[index]
    shown = [m for m in late if m["role"] == "assistant"]
    assert 6 <= len(shown) <= 8  # the window moves in steps of half its size
    note, state = late[1]["content"].split("\n", 1)
    k = len(steps[:100]) - len(shown)  # turns before the window
    assert note == f"[Turns t1-t{k} are not shown: you see the latest turns only.]"
    assert state == f"Where things stood after turn {k}:\n" + steps[k].observation["text"][:STATE_CHARS]
    assert late[-1] == {"role": "tool", "tool_call_id": shown[-1]["tool_calls"][0]["id"],
                        "content": steps[100].observation["text"]}  # fmt: skip
    # between steps the prompt up to the window is unchanged, so it is served from the cache
    cached = [r["usage"]["prompt_tokens_details"]["cached_tokens"] for r in served[90:110]]  # type: ignore[index]
    assert sum(c > 2000 for c in cached) >= 10


def test_summary_digests_older_turns_one_line_a_call(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions), context="summary", window_turns=4, digest_turns=30)
    run(ev.env(), policy, SEED)
    late = prompts(server)[150]["body"]["messages"]  # type: ignore[index]
    text = late[1]["content"]
    assert text.startswith("Where the episode started:\nMon 2027-01-04 09:00")
    lines = [line for line in text.splitlines() if re.match(r"t\d+ ", line)]
    assert len(lines) == 30
    assert re.search(r"^t1-t\d+: \d+ calls \(", text, re.M)  # the oldest, counted by tool
    first_shown = next(m for m in late if m["role"] == "assistant")
    name = first_shown["tool_calls"][0]["function"]["name"]
    assert name in {a["tool"] for a in ev.actions}
    # the last digest line is the call just before the window
    n_before = int(re.search(r"\[Turns t1-t(\d+) in brief", text).group(1))  # type: ignore[union-attr]
    assert lines[-1].startswith(f"t{n_before} {ev.actions[n_before - 1]['tool']}(")


def test_state_shows_the_environments_tables_and_a_bounded_history(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions), context="state")
    steps = list(Episode(ev.env(), policy, SEED))
    served = prompts(server)
    for i in (60, 150, len(served) - 1):  # request i is made after i calls, on steps[i]'s observation
        messages = served[i]["body"]["messages"]  # type: ignore[index]
        shown = [m for m in messages if m["role"] == "assistant"]
        assert 6 <= len(shown) <= 9  # the last 6 turns (the window moves in steps of 3)
        head = messages[1]["content"]
        assert head.startswith("Where the episode started:\nMon 2027-01-04 09:00")
        assert re.search(r"\[Turns t1-t\d+ are not shown, in brief:\] t1-t\d+: \d+ calls \(", head)
        tables = messages[-1]
        assert tables["role"] == "user" and tables["content"].startswith(f"The environment's tables after turn {i}:")
        rows = steps[i].observation["data"]["portfolio"]["rows"]  # what the latest observation shows
        lines = tables["content"].splitlines()
        assert lines[1].startswith(f"portfolio ({len(rows)} rows): id | account | milestone")
        assert lines[2:] == [" | ".join(str(int(c)) if isinstance(c, float) and c.is_integer() else str(c)
                                        for c in row) for row in rows]
        assert messages[-2]["role"] == "tool" and messages[-2]["content"] == steps[i].observation["text"]
    # the prompt does not grow with the episode
    tokens = [r["usage"]["prompt_tokens"] for r in served]  # type: ignore[index]
    assert max(tokens[150:]) <= 1.15 * max(tokens[30:150])
    assert policy.episode_record()["context"]["window_turns"] == 6


def test_digest_lines_are_short_and_deterministic() -> None:
    args = {"stakeholder_id": "o002s4", "subject": "x" * 100, "body": "hello", "none": None, "ids": list(range(40))}
    text = args_text(args)
    assert text.startswith('stakeholder_id="o002s4", subject="' + "x" * 24 + '…"')
    assert "none=" not in text and len(text) <= 97
    block = Block(3, notes=[CallNote(3, "wait", "hours=2.0", "ok 2h"), CallNote(4, "view_opportunity", "", "error: x")])
    assert digest([block], 5) == "t3 wait(hours=2.0) -> ok 2h\nt4 view_opportunity() -> error: x"
    assert digest([block], 1) == (
        "t3-t3: 1 calls (wait 1), 0 refused, 0 replies without a tool call\nt4 view_opportunity() -> error: x"
    )


def _cut_within(builder: ContextBuilder, messages: list[dict[str, object]], seconds: int = 5) -> object:
    """``builder._cut(messages)``: its result, or the ContextOverflow it raised; a loop that never ends fails."""

    def stuck(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"_cut still running after {seconds} s: it loops")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        return builder._cut(messages)  # type: ignore[arg-type]
    except ContextOverflow as overflow:
        return overflow
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("text_chars", [MIN_CUT_CHARS + 1, MIN_CUT_CHARS + 30, MIN_CUT_CHARS + 60, 300, 401, 5_000])
@pytest.mark.parametrize("spare_chars", [0, 100, 240, 1_000])
def test_the_last_resort_cut_ends_fitting_or_with_an_overflow(text_chars: int, spare_chars: int) -> None:
    """The last resort halves the longest texts with a note of what was cut. Whatever the texts, it ends: with a
    prompt within the budget, or with ContextOverflow when the texts it may not cut (the system prompt, the tool
    calls) leave no room. (A text just above the floor came back longer with its note, and it looped forever.)"""
    config = LLMConfig(model="m", context_tokens=4_000, max_tokens=256)
    builder = ContextBuilder(config, TokenEstimator(), tools_chars=0)
    system = {"role": "system", "content": "s"}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "x"}}]}  # fmt: skip
    texts = [{"role": "user", "content": "u" * text_chars}, call, {"role": "tool", "tool_call_id": "c1",
             "content": "t" * text_chars}]  # fmt: skip
    fixed_chars = builder.estimator.chars_for(builder.limit, 4) - (2 * MIN_CUT_CHARS + spare_chars)
    system["content"] = "s" * max(1, fixed_chars)  # the system prompt leaves room for the texts' floors and the spare
    messages = [system, *texts]
    outcome = _cut_within(builder, messages)
    if isinstance(outcome, ContextOverflow):
        assert "does not fit" in str(outcome)
        assert builder.tokens(messages) > builder.limit
    else:
        assert isinstance(outcome, list)
        assert builder.tokens(outcome) <= builder.limit
        assert outcome[0] == system and outcome[2] == call  # never cut: the system prompt and the tool calls
        for before, after in zip(messages, outcome, strict=True):
            text = before.get("content")
            if isinstance(text, str) and after["content"] != text:
                assert len(after["content"]) < len(text) and "characters cut to fit the context" in after["content"]


def test_a_context_too_small_for_the_task_card_stops_with_a_reason(ev: Baseline, server: ScriptedOpenAI) -> None:
    policy = llm(server, SEED, moves_from_actions(ev.actions), context_tokens=4000, max_tokens=256)
    episode = run(ev.env(), policy, SEED)
    assert episode.end is not None and episode.end.startswith("stopped: context_overflow: the task card and the tool")
    assert prompts(server) == []


@pytest.mark.campaign  # minutes: runs with the campaigns (python -m pytest -m campaign)
def test_the_default_fits_the_longest_episode(server: ScriptedOpenAI) -> None:
    """territory-v0 with 100 opportunities over 180 days, played by expected-value: 1,277 turns, longer than any
    published split's episode. Every request of the default configuration stays within context_tokens."""
    seed = 1
    base = play_baseline("territory-v0", seed, n_opportunities=100, horizon_days=180)
    assert len(base.actions) > 1000
    default = LLMConfig()
    policy = llm(server, seed, moves_from_actions(base.actions))
    env = base.env()
    run(env, policy, seed)
    assert env.event_log_hash() == base.log_hash
    served = server.requests_for(sampling_seed(seed))
    assert len(served) == len(base.actions)
    worst = max(r["usage"]["prompt_tokens"] for r in served)
    used = policy.episode_record()["context"]["context_tokens"]
    assert default.context_tokens is None and used == DEFAULT_CONTEXT_TOKENS
    assert worst + default.max_tokens <= DEFAULT_CONTEXT_TOKENS
    record = policy.episode_record()
    assert record["max_prompt_tokens"] == worst and record["context"]["strategy"] == "state"
    # bounded by the window and the territory, not by the episode: the second half asks no more than the first
    tokens = [r["usage"]["prompt_tokens"] for r in served]
    half = len(tokens) // 2
    assert max(tokens[half:]) <= 1.15 * max(tokens[100:half])
