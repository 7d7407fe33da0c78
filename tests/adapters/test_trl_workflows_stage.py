"""The workflows first stage of the real-weights recipe (``recipes/trl/grpo_smollm2_workflows.yaml``): its
templates are tier-1 templates of the train split and its worlds pay the partial reward."""

from __future__ import annotations

from pathlib import Path

import pytest

import salesgym
from salesgym.adapters.curriculum import CurriculumConfig, TaskSampler
from salesgym.adapters.rollout import RolloutConfig
from salesgym.bench.splits import load

yaml = pytest.importorskip("yaml")

CONFIG = Path(__file__).resolve().parents[2] / "recipes" / "trl" / "grpo_smollm2_workflows.yaml"


def test_the_stage_draws_tier1_train_templates_with_the_partial_reward_and_the_usable_tools_compact() -> None:
    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    train = {t.template for t in load("workflows-train").territories if t.family == "tier1"}
    assert {s["template"] for s in cfg["curriculum"]["scenarios"]} == train
    shown = RolloutConfig(**cfg["rollout"])
    assert shown.tool_schemas == "compact" and shown.tools == "usable"
    task = TaskSampler(CurriculumConfig.from_dict(cfg["curriculum"])).next(0)
    assert task.make_kwargs["ablation"] == "partial_reward" and task.make_kwargs["template"] in train
    env = salesgym.make(task.env_id, **task.make_kwargs)
    env.reset(seed=task.seed)
    env.step({"tool": "finish_task", "args": {"summary": "nothing done"}})
    assert env.score()["training_ablations"] == ["partial_reward"]
