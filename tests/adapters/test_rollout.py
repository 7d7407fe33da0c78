"""The token-level rollout: exact alignment with two chat templates, and group rollouts over clones."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from token_fakes import PREFIX, THINK, call_text, make_tokenizer

import salesgym
from salesgym.adapters.clients import ScriptedClient
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory, group_rollout, play
from salesgym.agents.llm.text_calls import parse_tool_call

PORTFOLIO = call_text("view_opportunity", {"opportunity_id": None, "page": 0})
WAIT = call_text("wait", {"hours": 2.0, "until": None})
RESEARCH = call_text("research_account", {"account_id": "nobody"})
SCRIPT = [
    PORTFOLIO,
    "I think I will look around first.",  # no tool call: refused as an invalid action
    '<tool_call>\n{"name": "wait", "arguments": {"hours": </tool_call>',  # malformed
    WAIT,
    RESEARCH,
]


def _play(template: str, texts: list[str], seed: int = 3, max_turns: int = 5) -> tuple[TokenTrajectory, ScriptedClient]:
    tok = make_tokenizer(template)
    client = ScriptedClient(tok, texts)
    env = salesgym.make("territory-debug-v0")
    env.reset(seed=seed)
    traj = play(env, client, tok, seed=seed, config=RolloutConfig(max_turns=max_turns), env_id="territory-debug-v0")
    return traj, client


def _check_alignment(traj: TokenTrajectory, client: ScriptedClient, texts: list[str]) -> None:
    tok = client.tokenizer
    seq = traj.prompt_ids + traj.completion_ids
    assert len(traj.mask) == len(traj.completion_ids)
    assert len(traj.turns) == len(client.generated)
    covered = set()
    for k, turn in enumerate(traj.turns):
        # what the model was given is exactly the sequence built so far: nothing was re-tokenised
        assert client.prompts[k] == seq[: len(traj.prompt_ids) + turn.start]
        span = traj.completion_ids[turn.start : turn.end]
        assert span == client.generated[k]
        assert tok.decode(span, skip_special_tokens=False) == texts[k] + "<|im_end|>"
        assert turn.text == texts[k] + "<|im_end|>"
        assert traj.mask[turn.start : turn.end] == [1] * len(span)
        assert set(traj.mask[turn.end : turn.env_end]) <= {0}
        covered.update(range(turn.start, turn.end))
        if k + 1 < len(traj.turns):
            assert traj.turns[k + 1].start == turn.env_end > turn.end  # the environment's answer sits between
            answer = tok.decode(traj.completion_ids[turn.end : turn.env_end], skip_special_tokens=False)
            assert traj.messages[3 + 2 * k]["content"] in answer
            assert answer.endswith(
                "<|im_start|>assistant\n" + ("<think>\n\n</think>\n\n" if "<think>" in answer else "")
            )
    assert covered == {i for i, m in enumerate(traj.mask) if m == 1}  # the mask covers exactly the model's ids
    assert sum(traj.mask) == sum(len(g) for g in client.generated)


@pytest.mark.parametrize("template", [PREFIX, THINK], ids=["prefix-preserving", "not-prefix-preserving"])
def test_every_turn_is_aligned_and_masked_exactly(template: str) -> None:
    traj, client = _play(template, SCRIPT)
    _check_alignment(traj, client, SCRIPT)
    statuses = [e["tool_result"]["status"] for e in traj.tool_events]
    assert statuses == ["ok", "error", "error", "ok", "error"]
    assert traj.tool_events[0]["action"] == {"tool": "view_opportunity", "args": {"opportunity_id": None, "page": 0}}
    assert traj.score["invalid_actions"] == 3 and traj.end == "max_turns"
    assert traj.episode_return == sum(traj.rewards) and len(traj.rewards) == 5
    assert traj.logprobs is None  # a scripted client gives none


def test_the_think_template_is_not_prefix_preserving_and_retokenising_would_misalign() -> None:
    traj, client = _play(THINK, SCRIPT)
    tok = client.tokenizer
    rendered = tok.apply_chat_template(
        traj.messages[:-1], tools=traj_tools(), add_generation_prompt=False, tokenize=False
    )
    # re-rendering the transcript loses the reasoning block each reply was generated after
    assert tok.encode(rendered, add_special_tokens=False) != traj.prompt_ids + traj.completion_ids
    prompt = tok.decode(traj.prompt_ids, skip_special_tokens=False)
    assert prompt.endswith("<think>\n\n</think>\n\n") and not rendered.startswith(prompt)


def traj_tools() -> list[dict[str, object]]:
    return salesgym.make("territory-debug-v0").tool_schemas()


def test_a_reply_cut_at_max_new_tokens_is_closed_by_the_environment_side() -> None:
    tok = make_tokenizer(PREFIX)
    client = ScriptedClient(tok, [WAIT, WAIT])
    env = salesgym.make("territory-debug-v0")
    env.reset(seed=1)
    traj = play(env, client, tok, seed=1, config=RolloutConfig(max_turns=2, max_new_tokens=5))
    first = traj.turns[0]
    assert first.finish == "length" and first.end - first.start == 5
    answer = tok.decode(traj.completion_ids[first.end : first.env_end], skip_special_tokens=False)
    assert answer.startswith("<|im_end|>\n<|im_start|>user")  # the turn's end token is added, masked out
    assert traj.mask[first.end] == 0


def test_parse_tool_call() -> None:
    assert parse_tool_call(WAIT) == (
        {"tool": "wait", "args": {"hours": 2.0, "until": None}},
        {"name": "wait", "arguments": {"hours": 2.0, "until": None}},
    )
    assert parse_tool_call("no call") == ("no call", None)
    assert parse_tool_call("<tool_call>[1]</tool_call>") == ("[1]", None)


def test_group_copies_share_the_world_and_play_independently() -> None:
    tok = make_tokenizer(PREFIX)
    a = [PORTFOLIO, WAIT, WAIT, PORTFOLIO]
    b = [call_text("wait", {"hours": None, "until": "next_week"}), RESEARCH, WAIT, WAIT]
    clients = [ScriptedClient(tok, a), ScriptedClient(tok, b), ScriptedClient(tok, a)]
    group = group_rollout("territory-debug-v0", clients, tok, seed=5, n=3, config=RolloutConfig(max_turns=4))
    assert {t.world_digest for t in group} == {group[0].world_digest}
    assert {t.group_id for t in group} == {"territory-debug-v0:5"} and [t.index for t in group] == [0, 1, 2]
    assert group[0].prompt_ids == group[1].prompt_ids == group[2].prompt_ids
    # copy 1 acted differently: its own state moved, the others' did not
    assert group[1].tool_events != group[0].tool_events
    assert group[1].turns[0].tool_result["time_cost"] != group[0].turns[0].tool_result["time_cost"]
    for field in ("completion_ids", "mask"):
        assert getattr(group[0], field) == getattr(group[2], field)
    assert group[0].tool_events == group[2].tool_events and group[0].score == group[2].score
    # and each copy is what a fresh reset of the same world gives
    solo, _ = _play(PREFIX, a, seed=5, max_turns=4)
    assert solo.completion_ids == group[0].completion_ids and solo.tool_events == group[0].tool_events
    assert solo.world_digest == group[0].world_digest
    other = group_rollout(
        "territory-debug-v0", ScriptedClient(tok, a), tok, seed=6, n=1, config=RolloutConfig(max_turns=1)
    )
    assert other[0].world_digest != group[0].world_digest


ID_TEMPLATE = PREFIX.replace("<tool_response>\n{{ m.content }}",
                             "<tool_response id={{ m.tool_call_id }}>\n{{ m.content }}")  # writes the call id
STRIP_TEMPLATE = PREFIX.replace("{{ m.content }}<|im_end|>\n{% endif %}",
                                "{{ m.content | trim }}<|im_end|>\n{% endif %}")  # changes a user message


@pytest.mark.parametrize("template", [PREFIX, THINK, ID_TEMPLATE, STRIP_TEMPLATE],
                         ids=["prefix", "think", "id", "strip"])
def test_the_environments_turn_is_framed_once_and_always_as_the_template_renders_it(template: str) -> None:
    """Each turn's text comes from the frame the template puts around one message (found once); it is what
    rendering the template gives, and a template that writes another field (a call id) or changes the
    content (trims it) is rendered each turn instead."""
    from salesgym.adapters.chat_tokens import ChatTokens
    from salesgym.agents.llm.policy import NUDGE

    chat = ChatTokens(make_tokenizer(template), traj_tools())
    env = salesgym.make("territory-debug-v0")
    obs, _ = env.reset(seed=2)
    answers = [{"role": "tool", "tool_call_id": f"call_{i}", "content": obs["text"] + " " * i} for i in range(3)]
    answers += [{"role": "user", "content": f"{NUDGE}\n\n  {obs['text']}\n"}]
    for message in answers:
        assert chat.env_text([message]) == chat._rendered([message])
    framed = {key[0]: frame is not None for key, frame in chat._frames.items()}
    assert framed == {"tool": template != ID_TEMPLATE, "user": template != STRIP_TEMPLATE}


def test_compact_tool_schemas_shorten_the_prompt_and_nothing_else() -> None:
    tok = make_tokenizer(PREFIX)
    trajs = {}
    for shown in ("full", "compact"):
        env = salesgym.make("workflows-debug-v0")
        env.reset(seed=3)
        cfg = RolloutConfig(max_turns=1, tool_schemas=shown)  # type: ignore[arg-type]
        trajs[shown] = play(env, ScriptedClient(tok, [WAIT]), tok, seed=3, config=cfg, env_id="workflows-debug-v0")
    full, compact = trajs["full"], trajs["compact"]
    assert len(compact.prompt_ids) < 0.7 * len(full.prompt_ids)
    prompt = tok.decode(compact.prompt_ids, skip_special_tokens=False)
    assert "hubspot-batch-update-objects" in prompt and "lifecycle stage never moves backwards" not in prompt
    assert "lifecycle stage never moves backwards" in tok.decode(full.prompt_ids, skip_special_tokens=False)
    assert compact.messages == full.messages and compact.turns[0].tool_result == full.turns[0].tool_result
