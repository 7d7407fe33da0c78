"""A supervised warm start before GRPO: a small model learns to write calls from an honest policy's episodes.

    python recipes/trl/sft_warm_start.py --config recipes/trl/grpo_smollm2_warm.yaml --report runs/sft-warm.json
    python recipes/trl/grpo_lora.py --config recipes/trl/grpo_smollm2_warm.yaml --report runs/grpo-warm.json

A model whose replies are never calls the environment accepts earns equal (zero) returns in every group, and
GRPO has no gradient (README.md beside this file). The YAML's ``warm_start`` section says how it first learns
from demonstrations. The registered ``policy`` (an honest one: it reads what the model reads) plays ``worlds``
tasks drawn from the curriculum's first stage with its own ``seed`` (other worlds than GRPO's), through the
same token-level rollout GRPO samples with (:mod:`salesgym.adapters.demonstrations`). The episodes whose return
is at least ``min_return`` are kept. TRL's ``SFTTrainer`` trains a LoRA adapter (``warm_start.lora``) on their
reply tokens only (``warm_start.sft`` are its ``SFTConfig`` arguments) and saves it in
``warm_start.sft.output_dir``; ``grpo_lora.py`` with the same config merges it into the model before adding
its own LoRA.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grpo_lora import curriculum_config, load_config, load_model

from salesgym.adapters.curriculum import TaskSampler
from salesgym.adapters.demonstrations import demonstrate, sft_rows
from salesgym.adapters.rollout import RolloutConfig, TokenTrajectory


def demonstrations(cfg: Mapping[str, Any], tokenizer: Any) -> tuple[list[TokenTrajectory], list[dict[str, Any]]]:
    """The teacher's episodes on ``worlds`` tasks of the first stage: those kept, and a line on every one played."""
    warm = cfg["warm_start"]
    tasks = TaskSampler(dataclasses.replace(curriculum_config(cfg), seed=int(warm["seed"])))
    rollout = RolloutConfig(**cfg.get("rollout", {}))
    kept: list[TokenTrajectory] = []
    played: list[dict[str, Any]] = []
    for _ in range(int(warm["worlds"])):
        task = tasks.next(0)
        t = demonstrate(task.env_id, warm["policy"], tokenizer, seed=task.seed, config=rollout,
                        make_kwargs=task.make_kwargs)  # fmt: skip
        keep = t.episode_return >= float(warm["min_return"]) and all(turn.finish == "stop" for turn in t.turns)
        played.append({"make_kwargs": dict(task.make_kwargs), "seed": task.seed, "return": t.episode_return,
                       "tokens": len(t.prompt_ids) + len(t.completion_ids), "kept": keep})  # fmt: skip
        if keep:
            kept.append(t)
    return kept, played


def build(cfg: Mapping[str, Any], *, model: Any = None, tokenizer: Any = None) -> tuple[Any, list[dict[str, Any]]]:
    """The ``SFTTrainer`` of ``cfg``'s warm start on its demonstrations, and the line on each episode played."""
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    if not cfg.get("warm_start"):
        raise ValueError("the config has no warm_start section")
    warm = cfg["warm_start"]
    args = SFTConfig(**{"completion_only_loss": True, **warm["sft"]})
    model, tokenizer = load_model(cfg, model, tokenizer)
    kept, played = demonstrations(cfg, tokenizer)
    if not kept:
        raise ValueError(f"{warm['policy']} earned at least {warm['min_return']} in none of {len(played)} worlds")
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(sft_rows(kept)),
                         processing_class=tokenizer, peft_config=LoraConfig(**warm["lora"]))  # fmt: skip
    return trainer, played


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--report", type=Path, default=None, help="write the demonstrations and losses (JSON) here")
    ns = parser.parse_args(argv)
    started = time.monotonic()
    try:
        cfg = load_config(ns.config, ns.overrides)
        trainer, played = build(cfg)
    except (OSError, TypeError, ValueError, KeyError, ImportError, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    ready = time.monotonic()
    trainer.train()
    trainer.save_model()
    history = trainer.state.log_history
    summary = {"output_dir": trainer.args.output_dir, "demonstrations": played,
               "kept": sum(p["kept"] for p in played), "seconds_demonstrations": round(ready - started, 1),
               "seconds_training": round(time.monotonic() - ready, 1),
               "loss": [h["loss"] for h in history if "loss" in h],
               "token_accuracy": [h["mean_token_accuracy"] for h in history if "mean_token_accuracy" in h]}  # fmt: skip
    if ns.report:
        ns.report.parent.mkdir(parents=True, exist_ok=True)
        ns.report.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "demonstrations"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
