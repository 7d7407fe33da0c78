"""verl's agent loop on salesgym worlds, tested against the real library (verl 0.9.1) on CPU.

The loop is built the way verl builds it (its registry entry through ``hydra.utils.instantiate``, or verl's
own ``AgentLoopWorker`` reading parquet rows through ``RLHFDataset``) and generates through a local server
with verl's async ``generate`` interface: a tiny randomly initialised transformers model, or fixed texts.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("verl")

import hydra  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import verl  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402
from token_fakes import PREFIX, THINK, call_text, make_tokenizer, tiny_model  # noqa: E402
from torchdata.stateful_dataloader import StatefulDataLoader  # noqa: E402
from transformers import LogitsProcessor, LogitsProcessorList  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopOutput,
    AgentLoopWorker,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.protocol import DataProto  # noqa: E402
from verl.tools.schemas import OpenAIFunctionToolSchema  # noqa: E402
from verl.trainer.ppo.ray_trainer import RayPPOTrainer  # noqa: E402
from verl.trainer.ppo.utils import create_rl_dataset, create_rl_sampler  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn, get_dataset_class  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import salesgym  # noqa: E402
from salesgym.adapters.clients import TransformersClient  # noqa: E402
from salesgym.adapters.verl import AGENT_NAME, TASK_KEY, SalesgymAgentLoop, Task, split_tasks, write_dataset  # noqa: E402
from salesgym.adapters.verl_curriculum import CurriculumDataset  # noqa: E402
from salesgym.adapters.verl_tools import FlatTools  # noqa: E402
from salesgym.agents.base import Episode, Policy  # noqa: E402
from salesgym.agents.territory import oracle  # noqa: E402
from salesgym.agents.workflows.reference import Reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "verl"
VERL_CONFIG = Path(verl.__file__).parent / "trainer" / "config"
TERRITORY = "territory-debug-v0"
WORKFLOWS = "workflows-debug-v0"


def default_config(*overrides: str) -> DictConfig:
    with initialize_config_dir(config_dir=str(VERL_CONFIG), version_base=None):
        return compose(config_name="ppo_trainer", overrides=list(overrides))


@pytest.fixture(scope="module")
def tok() -> Any:
    return make_tokenizer(PREFIX)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, tok: Any) -> Path:
    path = tmp_path_factory.mktemp("tiny")
    tiny_model(tok).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def config(model_dir: Path) -> DictConfig:
    """verl's own default trainer config, with this test's model and lengths (the small test tokenizer
    needs long prompts) and the recipe's agent-loop list."""
    return default_config(
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.prompt_length=32768",
        "actor_rollout_ref.rollout.response_length=32768",
        "actor_rollout_ref.rollout.name=vllm",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={RECIPE / 'agent_loops.yaml'}",
    )


# --- local servers with verl's generate interface --------------------------------------------------------


class OneOf(LogitsProcessor):
    """Lets the model choose only among whole ``candidates`` (token id lists), with its own probabilities."""

    def __init__(self, start: int, candidates: Sequence[Sequence[int]]) -> None:
        self.start, self.candidates = start, candidates

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        done = input_ids[0, self.start :].tolist()
        allowed = {c[len(done)] for c in self.candidates if list(c[: len(done)]) == done and len(c) > len(done)}
        out = torch.full_like(scores, float("-inf"))
        out[:, sorted(allowed)] = scores[:, sorted(allowed)]
        return out


class ModelServer:
    """``server_manager.generate`` over a local transformers model (``TransformersClient``); keeps every
    call's prompt and output. ``candidates`` restrict it to whole texts so a random model makes real calls."""

    def __init__(self, model: Any, tok: Any, candidates: Sequence[str] = ()) -> None:
        self.tok = tok
        self.client = TransformersClient(model, tok, temperature=1.0)
        self.candidates = [[*tok.encode(c, add_special_tokens=False), tok.eos_token_id] for c in candidates]
        self.calls: list[tuple[list[int], TokenOutput, dict[str, Any]]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **_: Any) -> TokenOutput:  # fmt: skip
        if self.candidates:
            processor = LogitsProcessorList([OneOf(len(prompt_ids), self.candidates)])
            self.client.generate_kwargs["logits_processor"] = processor
        gen = await asyncio.to_thread(self.client.generate, prompt_ids, max_new_tokens=sampling_params["max_tokens"],
                                      seed=len(self.calls))  # fmt: skip
        steps = {"global_steps": 3, "min_global_steps": 3, "max_global_steps": 3}  # as LLMServerClient sets them
        out = TokenOutput(token_ids=gen.ids, log_probs=gen.logprobs, extra_fields=steps)
        self.calls.append((list(prompt_ids), out, dict(sampling_params)))
        return out


class ScriptServer:
    """``server_manager.generate`` that answers with ``texts(prompt_text)``, closed with the end token."""

    def __init__(self, tok: Any, texts: Callable[[str], str]) -> None:
        self.tok, self.texts = tok, texts
        self.calls: list[tuple[list[int], TokenOutput, dict[str, Any]]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **_: Any) -> TokenOutput:  # fmt: skip
        text = self.texts(self.tok.decode(prompt_ids, skip_special_tokens=False))
        ids = [*self.tok.encode(text, add_special_tokens=False), self.tok.eos_token_id]
        out = TokenOutput(token_ids=ids, log_probs=None)
        self.calls.append((list(prompt_ids), out, dict(sampling_params)))
        return out


class Scripted:
    """Emits ``actions`` in order as tool calls (flat arguments through ``flat`` when given)."""

    def __init__(self, actions: Sequence[dict[str, Any]], flat: FlatTools | None = None) -> None:
        self.actions, self.flat, self.i = list(actions), flat, 0

    def __call__(self, _prompt: str) -> str:
        action = self.actions[min(self.i, len(self.actions) - 1)]
        self.i += 1
        args = self.flat.flatten_args(action["tool"], action["args"]) if self.flat else action["args"]
        return call_text(action["tool"], args)


def build_loop(config: DictConfig, server: Any, tok: Any, **entry: Any) -> Any:
    """The loop exactly as verl's ``AgentLoopWorker._run_agent_loop`` builds it: the registry entry through
    ``hydra.utils.instantiate``, with the keyword arguments verl passes."""
    return hydra.utils.instantiate(
        config={**_agent_loop_registry[AGENT_NAME], **entry},
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=tok,
        processor=None,
        hf_model_type=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


def run_row(loop: Any, task: Task, sampling: dict[str, Any] | None = None) -> AgentLoopOutput:
    row = {"raw_prompt": [], "extra_info": {"index": 0, TASK_KEY: task.to_json()}}
    params = sampling or {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}
    out: AgentLoopOutput = asyncio.run(loop.run(params, **row))
    return out


def direct_return(task: Task, actions: Sequence[dict[str, Any]], max_steps: int) -> tuple[float, int, bool]:
    """The environment's own episode return for ``actions`` (no model, no tokens), its steps and whether
    it terminated."""
    env = task.make_env()
    env.reset(seed=task.seed)
    total, steps, done = 0.0, 0, False
    for action in actions[:max_steps]:
        _, reward, terminated, truncated, _ = env.step(action)
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            done = bool(terminated)
            break
    return total, steps, done


def reference_actions(task: Task, make_policy: Callable[[dict[str, Any]], Policy]) -> tuple[list[Any], float]:
    env = task.make_env()
    env.reset(seed=task.seed)
    policy = make_policy(env.hidden_truth())
    steps = list(Episode(env, policy, task.seed, max_steps=200))
    return [s.action for s in steps], sum(s.reward for s in steps)


# --- the tests ------------------------------------------------------------------------------------------


def test_registered_with_verl() -> None:
    assert _agent_loop_registry[AGENT_NAME] == {"_target_": "salesgym.adapters.verl.SalesgymAgentLoop"}
    entries = OmegaConf.load(RECIPE / "agent_loops.yaml")
    assert [e.name for e in entries] == [AGENT_NAME]
    assert hydra.utils.get_class(entries[0]._target_) is SalesgymAgentLoop


@pytest.mark.parametrize("template", [PREFIX, THINK], ids=["prefix-preserving", "not-prefix-preserving"])
def test_tokens_line_up_on_every_turn(config: DictConfig, model_dir: Path, template: str) -> None:
    tok = make_tokenizer(template)
    calls = [call_text("wait", {"hours": 4.0, "until": None}), call_text("research_account", {"account_id": "nobody"})]
    server = ModelServer(tiny_model(tok), tok, calls)
    loop = build_loop(config, server, tok, max_turns=4, max_new_tokens=64)
    out = run_row(loop, Task(TERRITORY, 3))

    assert len(server.calls) == 4 and out.num_turns == 8  # first user message, 4 replies, 3 tool answers
    ids = out.response_ids
    assert len(out.response_mask) == len(ids) == len(out.response_logprobs or [])
    covered = [0] * len(ids)
    for prompt, gen, params in server.calls:
        start = len(prompt) - len(out.prompt_ids)
        end = start + len(gen.token_ids)
        assert prompt == out.prompt_ids + ids[:start]  # exactly the ids the model was given
        assert ids[start:end] == gen.token_ids
        assert tok.decode(ids[start:end]) == tok.decode(gen.token_ids)
        assert out.response_logprobs is not None and out.response_logprobs[start:end] == pytest.approx(gen.log_probs)
        assert params["max_tokens"] == 64 and params["temperature"] == 1.0
        covered[start:end] = [1] * (end - start)
    assert out.response_mask == covered  # 1 on exactly the model's ids
    assert all(lp == 0.0 for lp, m in zip(out.response_logprobs or [], out.response_mask, strict=True) if not m)
    assert out.reward_score == out.extra_fields["episode_return"] == sum(out.extra_fields["turn_scores"])
    assert out.extra_fields["world_id"] == f"{TERRITORY}:3" and out.extra_fields["seed"] == 3
    assert out.extra_fields["max_global_steps"] == 3  # the server's fields reach verl, as its tool loop does
    assert out.metrics.generate_sequences > 0


@pytest.mark.parametrize("tool_format", ["native", "flat"])
def test_workflows_reward_is_the_environments_return(config: DictConfig, tok: Any, tool_format: str) -> None:
    task = Task(WORKFLOWS, 5)
    actions, expected = reference_actions(task, lambda truth: Reference(0, truth))
    assert expected > 0 and len(actions) >= 2
    flat = FlatTools(task.make_env().tool_schemas()) if tool_format == "flat" else None
    server = ScriptServer(tok, Scripted(actions, flat))
    loop = build_loop(config, server, tok, max_turns=len(actions) + 2, max_new_tokens=4096, tool_format=tool_format)
    out = run_row(loop, task)

    assert out.extra_fields["end"] == "terminated" and len(server.calls) == len(actions)
    assert out.reward_score == pytest.approx(expected)
    assert out.reward_score == pytest.approx(direct_return(task, actions, len(actions))[0])
    assert out.extra_fields["score"] == pytest.approx(1.0) and out.response_logprobs is None
    if flat is not None:  # the model saw the flat schemas (verl's shape), and the world got the real arguments
        shown = server.tok.decode(server.calls[0][0])
        dotted = [n for s in flat.schemas for n in s["function"]["parameters"]["properties"] if "." in n]
        assert dotted and dotted[0] in shown


def test_territory_reward_is_the_environments_return(config: DictConfig, tok: Any) -> None:
    """The oracle's opening moves of a debug world: the shaped return differs from the verifier's score, and
    the loop's reward is the return (the score rides along in extra_fields)."""
    task = Task(TERRITORY, 3)
    actions = reference_actions(task, lambda truth: oracle.Oracle(0, truth))[0][:34]
    expected, steps, _ = direct_return(task, actions, len(actions))
    server = ScriptServer(tok, Scripted(actions))
    out = run_row(build_loop(config, server, tok, max_turns=len(actions), max_new_tokens=256), task)

    assert out.extra_fields["end"] == "max_turns" and len(server.calls) == steps == len(actions)
    assert expected != 0 and out.reward_score == pytest.approx(expected)
    assert out.extra_fields["score"] != pytest.approx(expected)  # so the reward is not the score
    assert sum(out.response_mask) == sum(len(o.token_ids) for _, o, _ in server.calls)


def test_debug_territory_episodes_through_verls_worker(config: DictConfig, tok: Any, tmp_path: Path) -> None:
    """The ``debug`` split as a parquet file, read by verl's RLHFDataset and played by verl's AgentLoopWorker
    (which routes the rows by ``agent_name`` to the loop declared in the recipe's agent-loop list)."""
    tasks = split_tasks("debug")
    path = write_dataset(tmp_path / "debug.parquet", tasks)
    dataset = RLHFDataset(data_files=str(path), tokenizer=tok, config=config.data)
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    week = {"tool": "wait", "args": {"hours": None, "until": "next_week"}}
    server = ScriptServer(tok, Scripted([week]))
    out = asyncio.run(AgentLoopWorker(config, server).generate_sequences(batch))

    n = len(tasks)
    assert out.batch["responses"].shape[0] == n
    for i, task in enumerate(tasks):
        expected, steps, terminated = direct_return(task, [week] * 32, 32)
        assert terminated and out.non_tensor_batch["end"][i] == "terminated"  # the whole 30-day episode
        assert out.non_tensor_batch["world_id"][i] == task.world_id and out.non_tensor_batch["seed"][i] == task.seed
        assert out.batch["rm_scores"][i].sum().item() == pytest.approx(expected)
        assert len(out.non_tensor_batch["turn_scores"][i]) == steps
        assert out.non_tensor_batch["score"][i] is not None
        reply = len(server.calls[0][1].token_ids)  # every reply is the same call; the episodes run concurrently
        assert out.batch["response_mask"][i].sum().item() == steps * reply
    assert len(server.calls) == sum(direct_return(t, [week] * 32, 32)[1] for t in tasks)
    assert "rollout_log_probs" not in out.batch.keys()  # noqa: SIM118 (a TensorDict has no "in")


def test_a_prompt_over_the_prompt_length_is_refused(model_dir: Path, tok: Any) -> None:
    short = default_config(f"actor_rollout_ref.model.path={model_dir}", "actor_rollout_ref.rollout.prompt_length=256",
                           "actor_rollout_ref.rollout.response_length=32768")  # fmt: skip
    server = ScriptServer(tok, lambda _p: "hello")
    with pytest.raises(ValueError, match="prompt_length"):
        run_row(build_loop(short, server, tok), Task(TERRITORY, 1))
    assert server.calls == []  # refused before any generation


def test_bad_rows_are_refused(config: DictConfig, tok: Any) -> None:
    loop = build_loop(config, ScriptServer(tok, lambda _p: ""), tok)
    with pytest.raises(ValueError, match="salesgym_task"):
        asyncio.run(loop.run({}, raw_prompt=[], extra_info={"index": 0}))
    with pytest.raises(ValueError, match="unknown environment"):
        run_row(loop, Task("no-such-env-v0", 1))
    with pytest.raises((ValueError, hydra.errors.InstantiationException), match="tool_format"):
        build_loop(config, None, tok, tool_format="xml")


# --- flat tool schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ["territory-v0", "desk-v0", "workflows-v0"])
def test_flat_schemas_survive_verls_schema_model(env_id: str) -> None:
    native = salesgym.make(env_id).tool_schemas()
    flat = FlatTools(native).schemas
    for spec in flat:  # nothing is dropped: verl's model gives back exactly the flat schema
        kept = OpenAIFunctionToolSchema.model_validate(spec).model_dump(exclude_unset=True, exclude_none=True)
        assert kept == spec
    lossy = 0
    for spec in native:  # while the environment's own schemas do not survive it
        try:
            kept = OpenAIFunctionToolSchema.model_validate(spec).model_dump(exclude_unset=True, exclude_none=True)
            lossy += kept != spec
        except ValueError:
            lossy += 1
    assert lossy > 0
    assert [s["function"]["name"] for s in flat] == [s["function"]["name"] for s in native]


def _calls(task: Task, make_policy: Callable[[dict[str, Any]], Policy]) -> Iterator[dict[str, Any]]:
    actions, _ = reference_actions(task, make_policy)
    yield from (a for a in actions if isinstance(a, dict))


def test_flat_arguments_round_trip() -> None:
    """Real calls (the workflows reference on three tiers, the territory oracle) go flat and come back equal."""
    sources = [(Task("workflows-v0", 11 + tier, make_kwargs={"tier": tier}), Reference) for tier in (1, 2, 3)]
    sources.append((Task(TERRITORY, 4), oracle.Oracle))
    nested = 0
    for task, policy in sources:
        tools = FlatTools(task.make_env().tool_schemas())
        names = {s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in tools.schemas}
        for action in list(_calls(task, lambda truth, p=policy: p(0, truth)))[:60]:
            tool, args = action["tool"], action["args"]
            flat_args = tools.flatten_args(tool, args)
            assert set(flat_args) <= names[tool], (tool, set(flat_args) - names[tool])
            assert tools.unflatten(tool, json.loads(json.dumps(flat_args))) == args
            nested += any(isinstance(v, dict | list) for v in args.values())
    assert nested >= 3  # the calls exercised nested objects and arrays, not only scalars


def test_flat_unflatten_keeps_bad_json_for_the_environment() -> None:
    tools = FlatTools(salesgym.make("workflows-v0").tool_schemas())
    args = tools.unflatten("hubspot-search-objects", {"objectType": "contacts", "filterGroups": "[{not json"})
    assert args == {"objectType": "contacts", "filterGroups": "[{not json"}
    assert tools.unflatten("meetings-create_invitee", {"invitee.email": "a@b.c", "invitee.name": "A"})["invitee"] == {
        "email": "a@b.c", "name": "A"}  # fmt: skip


# --- dataset rows ---------------------------------------------------------------------------------------


def test_dataset_rows_load_with_pandas_and_pyarrow(tmp_path: Path) -> None:
    tasks = [*split_tasks("debug"), *split_tasks("workflows-train")[:3], Task(WORKFLOWS, 9, make_kwargs={"tier": 2})]
    path = write_dataset(tmp_path / "rows.parquet", tasks)
    frame = pd.read_parquet(path)
    table = pq.read_table(path)
    assert len(frame) == table.num_rows == len(tasks)
    assert set(frame["agent_name"]) == {AGENT_NAME}
    assert {"data_source", "prompt", "extra_info", "reward_model"} <= set(table.column_names)
    back = [Task.from_json(info[TASK_KEY]) for info in frame["extra_info"]]
    assert back == tasks and [info["index"] for info in frame["extra_info"]] == list(range(len(tasks)))
    assert back[0].territory is not None and back[0].split == "debug"
    assert frame["data_source"].iloc[-1] == f"salesgym/{WORKFLOWS}"
    first = tasks[3].make_env()  # a split task builds the world salesgym bench builds for it
    assert first.reset(seed=tasks[3].seed)[0] == back[3].make_env().reset(seed=back[3].seed)[0]
    with pytest.raises(ValueError, match="no tasks"):
        write_dataset(tmp_path / "empty.parquet", [])


# --- the recipe -----------------------------------------------------------------------------------------


def _leaf_paths(node: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaf_paths(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix


def _has(node: Any, parts: list[str]) -> bool:
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_recipe_keys_exist_in_verls_default_config() -> None:
    """Every key the recipe sets is a key of verl's own default config, so the recipe cannot rot silently
    when verl renames one; and the recipe composes with Hydra as verl's trainer composes it."""
    recipe = OmegaConf.to_container(OmegaConf.load(RECIPE / "salesgym_grpo_lora.yaml"))
    assert isinstance(recipe, dict)
    defaults = OmegaConf.to_container(default_config(), resolve=False)  # unresolved: "???" keys count too
    paths = list(_leaf_paths({k: v for k, v in recipe.items() if k not in ("defaults", "hydra")}))
    missing = [p for p in paths if not _has(defaults, p.split("."))]
    assert paths and not missing, missing
    with initialize_config_dir(config_dir=str(RECIPE), version_base=None):
        composed = compose(config_name="salesgym_grpo_lora")
    assert composed.actor_rollout_ref.rollout.agent.default_agent_loop == AGENT_NAME
    assert composed.algorithm.adv_estimator == "grpo" and composed.actor_rollout_ref.model.lora_rank > 0
    assert os.path.basename(composed.actor_rollout_ref.rollout.agent.agent_loop_config_path) == "agent_loops.yaml"


# --- the curriculum as verl's dataset ---------------------------------------------------------------------

SMALL = {"n_opportunities": 4, "horizon_days": 30}
TEST_CURRICULUM = {
    "tasks": 48, "env_id": "territory-v0", "seed": 7,
    "stages": [{"name": "debug", "make_kwargs": SMALL, "steps": 50, "promote_score": 70.0, "window": 8},
               {"name": "small", "make_kwargs": {"n_opportunities": 6, "horizon_days": 30}}],
    "mining_share": 0.5, "mining_pool": 3, "mining_min_seen": 4, "ablations": [],
}  # fmt: skip


def curriculum_file(tmp_path: Path, name: str = "curriculum", **changes: Any) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps({**TEST_CURRICULUM, **changes}))  # JSON is YAML
    return path


def recipe_config(model_dir: Path, files: Sequence[Path], *overrides: str) -> DictConfig:
    """The shipped recipe composed as verl's trainer composes it, with this test's model, lengths, batch size
    and curriculum files."""
    listed = ",".join(str(f) for f in files)
    with initialize_config_dir(config_dir=str(RECIPE), version_base=None):
        return compose(config_name="salesgym_grpo_lora", overrides=[
            f"actor_rollout_ref.model.path={model_dir}", f"data.train_files=[{listed}]",
            "actor_rollout_ref.rollout.prompt_length=32768", "actor_rollout_ref.rollout.response_length=32768",
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={RECIPE / 'agent_loops.yaml'}",
            "data.train_batch_size=4", "actor_rollout_ref.rollout.n=2", *overrides])  # fmt: skip


def train_loader(config: DictConfig, tok: Any) -> StatefulDataLoader:
    """The training dataloader exactly as verl's legacy trainer builds it (main_ppo_v0, RayPPOTrainer)."""
    data = config.data
    dataset = create_rl_dataset(data.train_files, data, tok, None, is_train=True,
                                max_samples=data.get("train_max_samples", -1))  # fmt: skip
    return StatefulDataLoader(dataset=dataset, batch_size=data.get("gen_batch_size") or data.train_batch_size,
                              num_workers=data["dataloader_num_workers"], drop_last=True, collate_fn=collate_fn,
                              sampler=create_rl_sampler(data, dataset))  # fmt: skip


def returns_by_seed(seed: int) -> float:
    """A stand-in policy's return, lower for some worlds than others (seed-determined)."""
    return float(seed % 97)


def emitted(gen_batch: DataProto, returns: Callable[[int], float]) -> DataProto:
    """The fields the salesgym agent loop emits for ``gen_batch`` (world id, seed and return per episode)."""
    tasks = [Task.from_json(info[TASK_KEY]) for info in gen_batch.non_tensor_batch["extra_info"]]
    rets = [returns(t.seed) for t in tasks]
    return DataProto.from_dict(
        tensors={"rm_scores": torch.tensor(rets, dtype=torch.float32).unsqueeze(-1)},
        non_tensors={"world_id": np.array([t.world_id for t in tasks], dtype=object),
                     "seed": np.array([t.seed for t in tasks], dtype=object),
                     "episode_return": np.array(rets, dtype=object)})  # fmt: skip


def trainer_step(
    config: DictConfig, batch_dict: dict[str, Any], generate: Callable[[DataProto], DataProto]
) -> DataProto:
    """One step of verl's legacy ``RayPPOTrainer.fit`` up to the batch it hands ``on_batch_end``: the uid, the
    generation batch (verl's own ``_get_gen_batch``), ``rollout.n`` copies of each row, the union."""
    batch = DataProto.from_single_dict(batch_dict)
    batch.non_tensor_batch["uid"] = np.array([str(i) for i in range(len(batch))], dtype=object)
    gen_batch = RayPPOTrainer._get_gen_batch(None, batch)
    n = config.actor_rollout_ref.rollout.n
    out = generate(gen_batch.repeat(repeat_times=n, interleave=True))
    return batch.repeat(repeat_times=n, interleave=True).union(out)


def train(
    config: DictConfig, tok: Any, returns: Callable[[int], float] = returns_by_seed
) -> tuple[Any, list[dict[str, Any]]]:
    """Every step of one epoch, each batch's returns handed back as the legacy trainer does; the dataset
    and the rows it handed out, in order."""
    loader = train_loader(config, tok)
    rows: list[dict[str, Any]] = []
    for batch_dict in loader:
        rows += [dict(info) for info in batch_dict["extra_info"]]
        batch = trainer_step(config, batch_dict, lambda gen: emitted(gen, returns))
        loader.dataset.on_batch_end(batch=batch)
    return loader.dataset, rows


def test_recipe_builds_the_curriculum_through_verls_factory(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    config = recipe_config(model_dir, [RECIPE / "curriculum.yaml"])
    assert get_dataset_class(config.data) is CurriculumDataset and config.trainer.use_v1 is False
    train_set = create_rl_dataset(config.data.train_files, config.data, tok, None, is_train=True)
    spec = OmegaConf.to_container(OmegaConf.load(RECIPE / "curriculum.yaml"))
    assert isinstance(train_set, CurriculumDataset) and isinstance(spec, dict) and len(train_set) == spec["tasks"]
    assert train_set.sampler is not None and [s.name for s in train_set.sampler.stages] == [
        s["name"] for s in spec["stages"]]  # fmt: skip
    assert train_set.sampler.config.scenarios  # the train split's families and templates
    val_path = write_dataset(tmp_path / "eval.parquet", split_tasks("debug"))
    val_set = create_rl_dataset(str(val_path), config.data, tok, None, is_train=False)  # the same class, as rows
    assert (
        isinstance(val_set, CurriculumDataset) and val_set.sampler is None and len(val_set) == len(split_tasks("debug"))
    )
    assert Task.from_json(val_set[0]["extra_info"][TASK_KEY]) == split_tasks("debug")[0]


def test_curriculum_rows_play_through_verls_worker(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    """Curriculum batches played by verl's AgentLoopWorker: the returns the worker reports are what the
    curriculum records for each world, a group's copies each counting."""
    config = recipe_config(model_dir, [curriculum_file(tmp_path, tasks=4)])
    loader = train_loader(config, tok)
    week = {"tool": "wait", "args": {"hours": None, "until": "next_week"}}
    worker = AgentLoopWorker(config, ScriptServer(tok, Scripted([week])))
    batch_dict = next(iter(loader))
    batch = trainer_step(config, batch_dict, lambda gen: asyncio.run(worker.generate_sequences(gen)))
    dataset = loader.dataset
    dataset.on_batch_end(batch=batch)

    assert len(batch) == 8 and set(batch.non_tensor_batch["end"]) == {"terminated"}
    for info in batch_dict["extra_info"]:
        task = dataset.issued[Task.from_json(info[TASK_KEY]).world_id]
        expected = direct_return(Task(task.env_id, task.seed, make_kwargs=task.make_kwargs), [week] * 32, 32)[0]
        assert dataset.sampler._scores[task.key] == pytest.approx([expected, expected])
    assert dataset.sampler._recent and len(dataset.sampler._recent) == 8

    # one world, one episode, the oracle's opening moves: a return that is not zero reaches the curriculum
    config = recipe_config(model_dir, [curriculum_file(tmp_path, "one", tasks=1)], "data.train_batch_size=1",
                           "actor_rollout_ref.rollout.n=1")  # fmt: skip
    loader = train_loader(config, tok)
    batch_dict = next(iter(loader))
    task = Task.from_json(batch_dict["extra_info"][0][TASK_KEY])
    turns = config.actor_rollout_ref.rollout.multi_turn.max_assistant_turns
    actions = reference_actions(task, lambda truth: oracle.Oracle(0, truth))[0][:turns]
    expected = direct_return(task, actions, turns)[0]
    worker = AgentLoopWorker(config, ScriptServer(tok, Scripted(actions)))
    batch = trainer_step(config, batch_dict, lambda gen: asyncio.run(worker.generate_sequences(gen)))
    loader.dataset.on_batch_end(batch=batch)
    assert expected != 0 and batch.batch["rm_scores"][0].sum().item() == pytest.approx(expected)
    assert list(loader.dataset.sampler._recent) == pytest.approx([expected])


def test_curriculum_promotes_and_mines_the_lowest(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    stages = [
        {"name": "debug", "make_kwargs": SMALL, "steps": 5},
        {"name": "small", "make_kwargs": {"n_opportunities": 6, "horizon_days": 30}, "promote_score": 1e9},
    ]
    config = recipe_config(model_dir, [curriculum_file(tmp_path, stages=stages)])
    dataset, rows = train(config, tok)

    assert len(rows) == 48 and dataset.sampler.promotions == [(5, "small")]  # 4 tasks a step: rows 20+ are "small"
    assert [r["stage"] for r in rows] == ["debug"] * 20 + ["small"] * 28
    seen: dict[str, dict[int, float]] = {}
    mined = 0
    for row in rows:  # a mined world is one of the 3 lowest-returning worlds of its stage recorded so far
        task = Task.from_json(row[TASK_KEY])
        stage = seen.setdefault(row["stage"], {})
        if row["mined"]:
            mined += 1
            assert task.seed in sorted(stage, key=lambda s: (stage[s], s))[:3]
        if row["index"] % 4 == 3:  # the step's returns come back after its last row
            stage.update({Task.from_json(r[TASK_KEY]).seed: returns_by_seed(Task.from_json(r[TASK_KEY]).seed)
                          for r in rows[: row["index"] + 1] if r["stage"] == row["stage"]})  # fmt: skip
    assert mined >= 8  # half of the rows once 4 worlds have scores


def test_curriculum_promotes_by_score(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    config = recipe_config(model_dir, [curriculum_file(tmp_path)])  # promote at a mean return of 70 over 8
    _, low = train(config, tok, lambda _seed: 10.0)
    dataset, high = train(config, tok, lambda _seed: 80.0)
    assert {r["stage"] for r in low} == {"debug"}
    # step 0's 4 worlds x 2 copies fill the window: promoted at the last step seen, the next step is "small"
    assert dataset.sampler.promotions == [(0, "small")] and [r["stage"] for r in high] == ["debug"] * 4 + ["small"] * 44


def test_curriculum_is_deterministic_by_seed(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    key = [TASK_KEY, "stage", "mined"]
    one = [[r[k] for k in key] for r in train(recipe_config(model_dir, [curriculum_file(tmp_path)]), tok)[1]]
    two = [[r[k] for k in key] for r in train(recipe_config(model_dir, [curriculum_file(tmp_path)]), tok)[1]]
    other = [[r[k] for k in key] for r in train(recipe_config(model_dir, [curriculum_file(tmp_path, seed=8)]), tok)[1]]
    assert one == two and one != other and any(mined for _, _, mined in one)


@pytest.mark.parametrize("ablation", ["no_curriculum", "no_failure_mining", "no_shaping"])
def test_curriculum_ablations_are_switches(model_dir: Path, tok: Any, tmp_path: Path, ablation: str) -> None:
    """Each shipped ablation file, added to data.train_files, turns off only what it names."""
    base = train(recipe_config(model_dir, [curriculum_file(tmp_path)]), tok)[1]
    ablated = train(
        recipe_config(model_dir, [curriculum_file(tmp_path), RECIPE / "ablations" / f"{ablation}.yaml"]), tok
    )[1]
    tasks = [Task.from_json(r[TASK_KEY]) for r in ablated]
    if ablation == "no_curriculum":  # every world from the last stage
        assert {r["stage"] for r in ablated} == {"small"} and {t.make_kwargs["n_opportunities"] for t in tasks} == {6}
    else:
        assert [r["stage"] for r in ablated] == [r["stage"] for r in base]
    if ablation == "no_failure_mining":  # fresh worlds only, the same fresh worlds as with mining
        assert not any(r["mined"] for r in ablated) and any(r["mined"] for r in base)
        fresh = [(i, r[TASK_KEY]) for i, r in enumerate(base) if not r["mined"]]
        assert all(ablated[i][TASK_KEY] == text for i, text in fresh)
    else:
        assert any(r["mined"] for r in ablated)
    assert all(
        t.make_kwargs.get("ablation") == (["sparse_reward"] if ablation == "no_shaping" else None) for t in tasks
    )


def test_curriculum_refusals(model_dir: Path, tok: Any, tmp_path: Path) -> None:
    path = curriculum_file(tmp_path)
    with pytest.raises(ValueError, match="dataloader_num_workers=0"):
        train_loader(recipe_config(model_dir, [path], "data.dataloader_num_workers=2"), tok)
    with pytest.raises(ValueError, match="not both"):
        train_loader(recipe_config(model_dir, [path, write_dataset(tmp_path / "r.parquet", split_tasks("debug"))]), tok)
    with pytest.raises(ValueError, match="tasks"):
        train_loader(recipe_config(model_dir, [curriculum_file(tmp_path, "none", tasks=0)]), tok)
    with pytest.raises(ValueError, match="unknown training ablation"):
        train_loader(recipe_config(model_dir, [curriculum_file(tmp_path, "bad", ablations=["no_reward"])]), tok)
    with pytest.raises(ValueError, match="cannot read"):
        train_loader(recipe_config(model_dir, [tmp_path / "missing.yaml"]), tok)
    config = recipe_config(model_dir, [path])
    loader = train_loader(config, tok)
    batch_dict = next(iter(loader))
    with pytest.raises(ValueError, match="salesgym agent loop"):
        loader.dataset.on_batch_end(batch=DataProto.from_single_dict(batch_dict))
    stranger = trainer_step(config, batch_dict, lambda gen: emitted(gen, returns_by_seed))
    stranger.non_tensor_batch["world_id"] = np.array(["elsewhere"] * len(stranger), dtype=object)
    with pytest.raises(ValueError, match="never handed out"):
        loader.dataset.on_batch_end(batch=stranger)
