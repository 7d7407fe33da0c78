"""GRPO + LoRA on salesgym with TRL: the recipe of ``grpo_lora.yaml`` (README.md beside this file).

    python recipes/trl/grpo_lora.py --config recipes/trl/grpo_lora.yaml [--set grpo.max_steps=50 ...]

Each training step plays groups of ``num_generations`` clones of one world through salesgym's exact-token
rollout (``SalesgymRollout``); the curriculum and failure mining pick each group's world when it is played
and hear its returns; the reward is the episode return. ``build`` is what the CPU smoke test runs too, with
a tiny model, a tokenizer and a model client of its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from salesgym.adapters.clients import ModelClient
from salesgym.adapters.curriculum import CurriculumConfig, TaskSampler, split_scenarios
from salesgym.adapters.rollout import RolloutConfig
from salesgym.adapters.trl import SalesgymRollout, episode_return, slot_dataset

HERE = Path(__file__).resolve().parent
DEFAULT_CONFIG = HERE / "grpo_lora.yaml"


def load_config(path: Path = DEFAULT_CONFIG, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The YAML config with ``section.key=value`` overrides (values read as YAML: numbers, lists, ...)."""
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    for item in overrides:
        dotted, sep, raw = item.partition("=")
        if not sep or not dotted:
            raise ValueError(f"--set takes section.key=value, got {item!r}")
        *parents, leaf = dotted.split(".")
        node = cfg
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ValueError(f"--set {dotted}: {key!r} is not a section")
        node[leaf] = yaml.safe_load(raw)
    return dict(cfg)


def curriculum_config(cfg: Mapping[str, Any]) -> CurriculumConfig:
    data = dict(cfg.get("curriculum", {}))
    if cfg.get("scenarios_from_split"):
        data["scenarios"] = split_scenarios(str(cfg["scenarios_from_split"]))
    return CurriculumConfig.from_dict(data)


@dataclass
class Recipe:
    trainer: Any  # trl.GRPOTrainer
    rollout: SalesgymRollout
    tasks: TaskSampler


def build(
    cfg: Mapping[str, Any],
    *,
    model: Any = None,
    tokenizer: Any = None,
    client: Callable[[Any], ModelClient] | None = None,
) -> Recipe:
    """The trainer of ``cfg``: the model and tokenizer from ``cfg["model"]`` unless given, LoRA adapters on
    it, the curriculum's task sampler driving ``SalesgymRollout``."""
    import torch
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tasks = TaskSampler(curriculum_config(cfg))  # a bad configuration fails before any model is loaded
    rollout = SalesgymRollout(RolloutConfig(**cfg.get("rollout", {})), client=client, tasks=tasks)
    args = GRPOConfig(**cfg["grpo"])
    lora = LoraConfig(**cfg["lora"])
    if tokenizer is None:
        tokenizer = AutoTokenizer.from_pretrained(cfg["model"])
    if model is None:
        model = AutoModelForCausalLM.from_pretrained(cfg["model"], dtype=getattr(torch, cfg.get("dtype", "float32")))
    groups = max(1, args.per_device_train_batch_size * args.gradient_accumulation_steps // args.num_generations)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=slot_dataset(groups * max(1, args.max_steps)),
        rollout_func=rollout,
        reward_funcs=[episode_return],
        peft_config=lora,
    )
    return Recipe(trainer, rollout, tasks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ns = parser.parse_args(argv)
    try:
        cfg = load_config(ns.config, ns.overrides)
        recipe = build(cfg)
    except (OSError, TypeError, ValueError, yaml.YAMLError) as e:  # TypeError: an unknown GRPOConfig key
        print(f"error: {e}", file=sys.stderr)
        return 1
    recipe.trainer.train()
    recipe.trainer.save_model()
    print(json.dumps({"promotions": recipe.tasks.promotions, "output_dir": recipe.trainer.args.output_dir}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
