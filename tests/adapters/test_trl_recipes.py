"""The data and the recipe for TRL, end to end on CPU with the real libraries (run in ``.venv-trl``):
``salesgym export --sft`` of a real debug run read by ``datasets`` and trained on by TRL's ``SFTTrainer``,
and the shipped GRPO + LoRA recipe (``recipes/trl/``) run with a tiny model for two steps."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

import datasets  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from steering import ChoosingClient, candidate_ids  # noqa: E402
from token_fakes import call_text, make_tokenizer, tiny_model  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402
from trl.chat_template_utils import qwen2_5_chat_template  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from salesgym.bench.runner import LocalBackend, run_benchmark  # noqa: E402
from salesgym.bench.splits import load  # noqa: E402
from salesgym.bench.store import Store  # noqa: E402
from salesgym.cli import app  # noqa: E402

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "trl"
torch.set_num_threads(1)  # tiny models: per-op overhead dominates, and threads fight on a shared 2-core machine


def _close(a: Any, b: Any) -> bool:
    """Equal, floats up to their last digit (datasets decodes JSON numbers through pandas' ujson)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _export(tmp_path: Path) -> Path:
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        run_id = run_benchmark(store, load("debug"), ("expected-value", "random"), LocalBackend(1)).run.id
    out = tmp_path / "sft"
    result = CliRunner().invoke(app, ["export", run_id, "--sft", "--top", "0.5", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_sft_export_loads_with_datasets_and_trains_with_sft_trainer(tmp_path: Path) -> None:
    out = _export(tmp_path)
    lines = [json.loads(x) for x in (out / "sft.jsonl").read_text().splitlines()]
    on_disk = datasets.load_from_disk(str(out / "dataset"))
    parquet = datasets.load_dataset("parquet", data_files=str(out / "sft.parquet"), split="train")
    assert len(lines) == len(on_disk) == len(parquet) == 3  # the better of two policies on each territory
    for ds in (on_disk, parquet):
        assert _close([dict(r) for r in ds], lines)  # every message and tool schema as written
    raw = pq.read_table(out / "sft.parquet").column("messages").to_pylist()
    assert [[json.loads(m) for m in row] for row in raw] == [r["messages"] for r in lines]  # stored exactly
    first = lines[0]
    tok = make_tokenizer(qwen2_5_chat_template)  # Qwen2.5-Instruct's template: renders tools and tool calls
    text = tok.apply_chat_template(first["messages"], tools=first["tools"], tokenize=False)
    prompt, _, conversation = text.partition("\n</tools>")
    assert all(json.dumps(t) in prompt for t in first["tools"])  # the tool schemas, as the agent had them
    calls = [m["tool_calls"][0]["function"] for m in first["messages"] if m.get("tool_calls")]
    at = 0
    for call in calls:  # each call as the policy made it, its arguments and nothing more, in order
        rendered = json.dumps({"name": call["name"], "arguments": call["arguments"]})
        at = conversation.index(f"<tool_call>\n{rendered}\n</tool_call>", at)
    assert conversation.count("<tool_response>") == len(calls)

    model = tiny_model(tok)
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    # the loss on the assistant's calls only (TRL swaps in Qwen2.5's training template, which marks them);
    # 5000 tokens of this tokenizer reach past the task card, the tools and the first observation
    args = SFTConfig(output_dir=str(tmp_path / "o"), max_steps=2, per_device_train_batch_size=1, learning_rate=5e-3,
                     max_length=5000, assistant_only_loss=True, logging_steps=1, save_strategy="no",
                     report_to="none", use_cpu=True, seed=0)  # fmt: skip
    trainer = SFTTrainer(model=model, args=args, train_dataset=on_disk, processing_class=tok)
    sample = trainer.train_dataset[0]
    trained = tok.decode([t for t, label in zip(sample["input_ids"], sample["labels"], strict=True) if label != -100])
    assert trained.startswith("\n<tool_call>\n") and "<tool_response>" not in trained and "# Tools" not in trained
    assert trained.count("<tool_call>") == trained.count("<|im_end|>") >= 1  # whole calls, each closing its turn
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert any(not torch.equal(v.detach(), before[k]) for k, v in model.named_parameters())


def _recipe_module(name: str = "grpo_lora") -> Any:
    """A script of recipes/trl as a module."""
    spec = importlib.util.spec_from_file_location(name, RECIPE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_trl_recipe_runs_end_to_end_with_a_tiny_model(tmp_path: Path) -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    recipe = _recipe_module()
    cfg = recipe.load_config(RECIPE / "grpo_lora.yaml", [
        f"grpo.output_dir={tmp_path}", "grpo.max_steps=2", "grpo.per_device_train_batch_size=4",
        "grpo.num_generations=4", "grpo.gradient_accumulation_steps=1", "grpo.bf16=false", "grpo.use_cpu=true",
        "grpo.activation_checkpointing=false", "grpo.learning_rate=0.01", "grpo.warmup_steps=0",
        "grpo.max_completion_length=256", "grpo.save_steps=1000", "rollout.max_turns=2",
        "rollout.max_new_tokens=64", "lora.r=4", "lora.lora_alpha=8", "lora.lora_dropout=0.0",
    ])  # fmt: skip
    assert cfg["model"] == "Qwen/Qwen2.5-1.5B-Instruct" and cfg["curriculum"]["stages"][0]["name"] == "debug"
    tok = make_tokenizer(qwen2_5_chat_template)
    model = tiny_model(tok)
    candidates = candidate_ids(tok, [
        call_text("wait", {"hours": 4.0, "until": None}),  # accepted, pays 0
        call_text("research_account", {"account_id": "nobody"}),  # refused: no such account
        call_text("send_proposal", {"opportunity_id": "o001", "discount_pct": 50}),  # above authority: a penalty
    ])  # fmt: skip
    built = recipe.build(
        cfg, model=model, tokenizer=tok,
        client=lambda trainer: ChoosingClient(trainer.accelerator.unwrap_model(trainer.model), tok, candidates),
    )  # fmt: skip
    peft_model = built.trainer.model
    lora = {k: v.detach().clone() for k, v in peft_model.named_parameters() if "lora_" in k}
    base = {k: v.detach().clone() for k, v in peft_model.named_parameters() if "lora_" not in k}
    assert lora and all(not v.requires_grad for k, v in peft_model.named_parameters() if "lora_" not in k)
    seen: list[Any] = []
    rollout_call = built.rollout.__call__

    def recording(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        result = rollout_call(prompts, trainer)
        seen.extend(built.rollout.trajectories)
        return result

    built.trainer.rollout_func = recording
    built.trainer.train()

    assert len(built.rollout.played) == 2 and len(seen) == 8  # 2 steps x 1 group of 4 clones
    for task, group in zip(built.rollout.played, (seen[:4], seen[4:]), strict=True):
        assert task.stage == "debug" and task.make_kwargs["n_opportunities"] == 4
        assert {t.seed for t in group} == {task.seed} and len({t.world_digest for t in group}) == 1
        assert task.make_kwargs["family"] in {"midmarket_saas", "enterprise_security", "healthcare"}
    statuses = [e["tool_result"]["status"] for t in seen for e in t.tool_events]
    assert "ok" in statuses and "error" in statuses  # real calls, judged by the environment
    assert len({t.episode_return for t in seen}) > 1 and min(t.episode_return for t in seen) < 0  # the penalty
    assert len(built.tasks._scores) == 2  # every group's returns went back to the sampler
    losses = [h["loss"] for h in built.trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    after = dict(peft_model.named_parameters())
    assert any(not torch.equal(after[k].detach(), v) for k, v in lora.items()), "no adapter weight moved"
    assert all(torch.equal(after[k].detach(), v) for k, v in base.items()), "a frozen base weight moved"


def test_the_warm_start_trains_an_adapter_that_grpo_starts_from(tmp_path: Path) -> None:
    """``sft_warm_start.py`` on ``grpo_smollm2_warm.yaml`` with a tiny model: the teacher's episodes that earned
    something, the loss on their replies only, an adapter saved where ``grpo_lora.py`` merges it from."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    recipe, warm = _recipe_module(), _recipe_module("sft_warm_start")
    cfg = recipe.load_config(RECIPE / "grpo_smollm2_warm.yaml", [
        f"warm_start.sft.output_dir={tmp_path / 'sft'}", "warm_start.worlds=3", "warm_start.sft.max_steps=2",
        "warm_start.sft.learning_rate=0.01", "warm_start.lora.r=4", "warm_start.lora.lora_alpha=8",
        "rollout.max_new_tokens=2048", "rollout.max_tokens=100000",  # the test tokenizer's tokens are short
        f"grpo.output_dir={tmp_path / 'grpo'}", "grpo.max_steps=1", "grpo.num_generations=2",
        "grpo.per_device_train_batch_size=2", "grpo.activation_checkpointing=false",
    ])  # fmt: skip
    tok = make_tokenizer(qwen2_5_chat_template)
    with pytest.raises(FileNotFoundError, match=r"sft_warm_start\.py"):  # GRPO refuses to start cold
        recipe.build(cfg, model=tiny_model(tok), tokenizer=tok)
    recipe.build({**cfg, "warm_start": None}, model=tiny_model(tok), tokenizer=tok)  # --set warm_start=null: cold
    trainer, played = warm.build(cfg, model=tiny_model(tok), tokenizer=tok)
    assert len(played) == 3 and any(p["kept"] for p in played)
    assert all(p["kept"] == (p["return"] >= 0.01) for p in played)
    templates = {"crm-inbound-sql", "crm-lifecycle-reset", "sched-earliest-demo", "sched-no-show-rebook"}
    assert {p["make_kwargs"]["template"] for p in played} <= templates
    grpo_worlds = recipe.TaskSampler(recipe.curriculum_config(cfg))
    assert not {grpo_worlds.next(0).seed for _ in range(10)} & {p["seed"] for p in played}  # GRPO plays others
    for row in trainer.train_dataset:  # the loss is on the teacher's calls, never on the prompt or the answers
        trained = tok.decode([t for t, label in zip(row["input_ids"], row["labels"], strict=True) if label != -100])
        assert trained.count("<tool_call>") == trained.count("</tool_call>") == trained.count("<|im_end|>") >= 2
        assert "<tool_response>" not in trained and "# Tools" not in trained
    trainer.train()
    trainer.save_model()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert (tmp_path / "sft" / "adapter_config.json").is_file()
    built = recipe.build(cfg, model=tiny_model(tok), tokenizer=tok)  # now it starts from the warm adapter, merged
    fresh = dict(tiny_model(tok).named_parameters())
    merged = {k.removeprefix("base_model.model."): v for k, v in built.trainer.model.named_parameters()
              if "lora_" not in k}  # fmt: skip
    moved = [k for k, v in merged.items() if k.replace(".base_layer", "") in fresh
             and not torch.equal(v.detach(), fresh[k.replace(".base_layer", "")].detach())]  # fmt: skip
    assert any("q_proj" in k for k in moved) and any("down_proj" in k for k in moved)  # every adapted layer moved
