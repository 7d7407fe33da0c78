"""TRL's GRPOTrainer on salesgym worlds, end to end on CPU with a tiny random model (the real trainer)."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # tiny models: per-op overhead dominates, and threads fight on a shared 2-core machine
pytest.importorskip("trl")

from steering import ChoosingClient, candidate_ids  # noqa: E402
from token_fakes import PREFIX, call_text, make_tokenizer, tiny_model  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

import salesgym  # noqa: E402
from salesgym.adapters.curriculum import CurriculumConfig, Stage, TaskSampler  # noqa: E402
from salesgym.adapters.rollout import RolloutConfig  # noqa: E402
from salesgym.adapters.trl import (  # noqa: E402
    SalesgymRollout,
    environment_factory,
    episode_return,
    parse_task_key,
    task_dataset,
    task_key,
)
from salesgym.core.events import sha256_of  # noqa: E402

ENV = "territory-debug-v0"


def _world(row: dict[str, Any]) -> Any:
    env = salesgym.make(row["env_id"], **json.loads(row["make_kwargs"]))
    env.reset(seed=row["seed"])
    return env.hidden_truth()


def accepted_calls(completions: list[Any], salesgym_tool_events: list[list[dict[str, Any]]], **_: Any) -> list[float]:
    """This test's second reward: the share of calls the environment accepted (from salesgym's tool events)."""
    return [sum(e["tool_result"]["status"] == "ok" for e in ev) / max(1, len(ev)) for ev in salesgym_tool_events]


def test_grpo_trains_on_salesgym_rollouts(tmp_path: Any) -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    tok = make_tokenizer(PREFIX)
    model = tiny_model(tok)
    calls = [
        call_text("wait", {"hours": 4.0, "until": None}),
        call_text("research_account", {"account_id": "nobody"}),  # refused: no such account
    ]
    candidates = candidate_ids(tok, calls)
    seen: list[Any] = []

    class Recording(SalesgymRollout):
        def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            out = super().__call__(prompts, trainer)
            seen.extend(self.trajectories)
            return out

    recording = Recording(
        RolloutConfig(max_turns=2, max_new_tokens=64),
        client=lambda trainer: ChoosingClient(trainer.accelerator.unwrap_model(trainer.model), tok, candidates),
    )
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_steps=2,
        learning_rate=5e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        beta=0.0, seed=0, temperature=1.0, max_completion_length=256,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, reward_funcs=[episode_return, accepted_calls], args=args, train_dataset=task_dataset(ENV, [3, 4]),
        processing_class=tok, rollout_func=recording,
    )  # fmt: skip
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    trainer.train()

    assert len(seen) == 8  # 2 steps x 1 group of 4 clones
    assert {t.env_id for t in seen} == {ENV} and {t.seed for t in seen} <= {3, 4}
    for group in (seen[:4], seen[4:]):
        assert len({t.world_digest for t in group}) == 1 and len({t.group_id for t in group}) == 1
    statuses = [e["tool_result"]["status"] for t in seen for e in t.tool_events]
    assert "ok" in statuses and "error" in statuses  # real calls, judged by the environment
    assert all(len(t.mask) == len(t.completion_ids) and 0 < sum(t.mask) < len(t.mask) for t in seen)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    changed = [k for k, v in model.named_parameters() if not torch.equal(v.detach(), before[k])]
    assert changed, "no weight moved"


def test_task_keys_round_trip() -> None:
    assert parse_task_key(task_key(ENV, 12)) == (ENV, 12)
    with pytest.raises(ValueError, match="task key"):
        parse_task_key("Sell more.")


def test_environment_factory_tools_are_the_environments_tools() -> None:
    cls = environment_factory(ENV)
    env = cls()
    specs = {s["function"]["name"]: s["function"] for s in salesgym.make(ENV).tool_schemas()}
    methods = {n: getattr(env, n) for n in specs}
    for name, fn in methods.items():
        schema = get_json_schema(fn)["function"]  # what TRL renders into the prompt
        assert schema["name"] == name
        assert set(schema["parameters"]["properties"]) == set(specs[name]["parameters"]["properties"])
        assert schema["description"] and all(p.get("description") for p in schema["parameters"]["properties"].values())
    text = env.reset(seed=3, prompt="ignored")
    assert text is not None and text.startswith(salesgym.make(ENV).reset(seed=3)[1]["instructions"][:200])
    out = env.view_opportunity(opportunity_id=None, page=0)
    assert "o001" in out
    env.research_account(account_id="nobody")
    assert [e["tool_result"]["status"] for e in env._events] == ["ok", "error"]
    assert env.get_reward() == sum(env._rewards) == 0.0
    env.reset(seed=4)
    assert env._events == []
    row = TaskSampler(CurriculumConfig(stages=(Stage("tiny", {"n_opportunities": 3, "horizon_days": 30}),))).rows(1)[0]
    text = env.reset(**row)  # a curriculum row's make arguments remake the environment
    assert text is not None and "3 open opportunities" in text and env._env.hidden_truth() == _world(row)


def test_grpo_trains_through_trls_own_tool_loop(tmp_path: Any) -> None:
    """``environment_factory``: TRL renders the tools, generates, parses the calls (Qwen2.5's template, the
    one TRL knows how to parse), calls the environment's methods and trains on ``get_reward``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from steering import steered
    from trl.chat_template_utils import qwen2_5_chat_template

    tok = make_tokenizer(qwen2_5_chat_template)
    calls = [
        call_text("wait", {"hours": 4.0, "until": None}),  # accepted, pays 0
        call_text("research_account", {"account_id": "nobody"}),  # refused: no such account
        call_text("send_proposal", {"opportunity_id": "o001", "discount_pct": 50}),  # above authority: a penalty
    ]
    model = steered(tiny_model(tok), candidate_ids(tok, calls), tok.pad_token_id)
    episodes: list[dict[str, Any]] = []

    class Recorded(environment_factory(ENV)):  # type: ignore[misc]
        def get_reward(self) -> float:
            reward = super().get_reward()
            world = sha256_of(self._env.hidden_truth())
            episodes.append({"events": list(self._events), "reward": reward, "world": world})
            return reward

    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_steps=2,
        learning_rate=5e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        beta=0.0, seed=0, temperature=1.0, max_completion_length=512, max_tool_calling_iterations=2,
    )  # fmt: skip
    dataset = task_dataset(ENV, [3, 4]).map(lambda r: {"prompt": [{"role": "user", "content": "Work the territory."}]})
    trainer = GRPOTrainer(model=model, args=args, train_dataset=dataset, processing_class=tok,
                          environment_factory=Recorded)  # fmt: skip
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    trainer.train()

    assert len(episodes) == 8  # 2 steps x 4 rollouts, each scored by its environment
    worlds = {}
    for seed in (3, 4):
        env = salesgym.make(ENV)
        env.reset(seed=seed)
        worlds[sha256_of(env.hidden_truth())] = seed
    assert {ep["world"] for ep in episodes} <= set(worlds)  # the rows' worlds, reset by TRL through reset(**row)
    statuses = [e["tool_result"]["status"] for ep in episodes for e in ep["events"]]
    assert "ok" in statuses and "error" in statuses and len(statuses) >= 8  # TRL's calls, judged by salesgym
    assert {e["action"]["tool"] for ep in episodes for e in ep["events"]} <= {"wait", "research_account",
                                                                              "send_proposal"}  # fmt: skip
    assert len({ep["reward"] for ep in episodes}) > 1
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert [k for k, v in model.named_parameters() if not torch.equal(v.detach(), before[k])], "no weight moved"
