"""The curriculum and failure mining (:mod:`salesgym.adapters.curriculum`) as verl's training dataset
(``pip install 'salesgym[verl]'``; written against verl 0.9.1).

verl 0.9.1 has one hook that sees what a step scored: after every training step its legacy trainer
(``trainer.use_v1: false``, ``verl.trainer.ppo.ray_trainer``) calls ``train_dataset.on_batch_end(batch=...)``
with the step's ``DataProto``. Its sampler is fixed (``create_rl_sampler``: a random or sequential sampler,
no ``data.sampler`` class in this version), and the v1 trainer calls no dataset hook. The dataset class
itself is configurable: ``data.custom_cls`` (``get_dataset_class``), which both trainers and verl's
``AgentLoopWorker`` use. So :class:`CurriculumDataset` is that class:

- ``data.train_files`` naming YAML files: a curriculum (the keys of
  :meth:`~salesgym.adapters.curriculum.CurriculumConfig.from_dict`, plus ``tasks``, the rows of one epoch,
  and ``scenarios_from_split``). Several files merge in order and their ``ablations`` add up, so an ablation
  is one more file on the command line. Each ``__getitem__`` hands out the sampler's next task (the index
  is a slot, as TRL's ``slot_dataset``): step ``draws // batch size``, where the batch size is
  ``data.gen_batch_size`` or ``data.train_batch_size``.
- :meth:`CurriculumDataset.on_batch_end` records every episode of the step (a group's copies each count)
  by the ``world_id`` and ``episode_return`` the salesgym agent loop puts in ``non_tensor_batch``, so stage
  promotion by score and failure mining act on the next step's draws.
- Parquet or JSON files (the validation split): verl's own ``RLHFDataset``, unchanged.

The sampler lives in the dataset, so the dataloader must run in the trainer's process
(``data.dataloader_num_workers: 0``): worker processes would each hold a copy and never see the scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
import yaml
from verl.utils.dataset.rl_dataset import RLHFDataset

from salesgym.adapters import curriculum
from salesgym.adapters.curriculum import CurriculumConfig, TaskSampler, split_scenarios
from salesgym.adapters.verl import Task, task_rows

CURRICULUM_SUFFIXES = (".yaml", ".yml")
SPEC_KEYS = ("tasks", "scenarios_from_split")  # the keys a curriculum file adds to CurriculumConfig's


def load_spec(paths: Sequence[str | Path]) -> dict[str, Any]:
    """The curriculum files merged in order (a later file's keys win; ``ablations`` add up)."""
    spec: dict[str, Any] = {}
    ablations: list[str] = []
    for path in paths:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            raise ValueError(f"cannot read the curriculum file {path}: {err}") from None
        if not isinstance(data, dict):
            raise ValueError(f"the curriculum file {path} is not a mapping")
        ablations += [a for a in data.pop("ablations", None) or () if a not in ablations]
        spec.update(data)
    spec["ablations"] = ablations
    return spec


def curriculum_config(spec: Mapping[str, Any]) -> CurriculumConfig:
    """The curriculum of a merged spec (its ``tasks`` aside)."""
    data = {k: v for k, v in spec.items() if k not in SPEC_KEYS}
    if spec.get("scenarios_from_split"):
        data["scenarios"] = split_scenarios(str(spec["scenarios_from_split"]))
    return CurriculumConfig.from_dict(data)


def world_id(task: curriculum.Task) -> str:
    """The id a curriculum task's episodes report back (a mined replay reports its original's)."""
    scenario = "/".join(str(task.make_kwargs[k]) for k in ("family", "template") if k in task.make_kwargs)
    return f"{task.stage}/{task.env_id}:{task.seed}" + (f"/{scenario}" if scenario else "")


def _files(data_files: Any) -> list[str]:
    if isinstance(data_files, str | Path):
        return [str(data_files)]
    return [str(f) for f in data_files]  # a list, or the ListConfig Hydra makes of one


def _get(config: Any, key: str, default: Any = None) -> Any:
    value = config.get(key, default) if hasattr(config, "get") else getattr(config, key, default)
    return default if value is None else value


class CurriculumDataset(RLHFDataset):  # type: ignore[misc]  # verl is untyped
    """verl's ``data.custom_cls``: curriculum tasks from YAML files, verl's ``RLHFDataset`` otherwise.

    Built as verl builds a dataset: ``(data_files, tokenizer, config, processor, max_samples)``;
    ``max_samples`` (``data.train_max_samples``) above 0 caps the curriculum's ``tasks``.
    """

    def __init__(
        self, data_files: Any, tokenizer: Any, config: Any, processor: Any = None, max_samples: int = -1
    ) -> None:
        files = _files(data_files)
        yamls = [f.endswith(CURRICULUM_SUFFIXES) for f in files]
        self.sampler: TaskSampler | None = None
        if not any(yamls):
            super().__init__(data_files, tokenizer, config, processor, max_samples)
            return
        if not all(yamls):
            raise ValueError(f"data files are either curriculum YAML files or rows, not both: {files}")
        workers = int(_get(config, "dataloader_num_workers", 0))
        if workers:
            raise ValueError(f"a curriculum needs data.dataloader_num_workers=0 (got {workers}): the scores of "
                             "each step reach the dataset in the trainer's process only")  # fmt: skip
        spec = load_spec(files)
        n = spec.get("tasks")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"a curriculum file needs tasks: the rows of one epoch, a positive integer (got {n!r})")
        self.n = min(n, max_samples) if max_samples > 0 else n
        self.batch_size = int(_get(config, "gen_batch_size", 0) or _get(config, "train_batch_size", 1))
        self.sampler = TaskSampler(curriculum_config(spec))
        self.tokenizer, self.processor, self.config, self.max_samples = tokenizer, processor, config, max_samples
        self.data_files = self.original_data_files = files
        self.serialize_dataset = True  # pickled whole (RLHFDataset.__getstate__ drops a dataframe)
        self.draws = 0
        self.issued: dict[str, curriculum.Task] = {}  # world id -> task, for the scores coming back

    def __len__(self) -> int:
        return self.n if self.sampler is not None else int(super().__len__())

    def __getitem__(self, item: int) -> dict[str, Any]:
        if self.sampler is None:
            row: dict[str, Any] = super().__getitem__(item)
            return row
        task = self.sampler.next(self.draws // self.batch_size)
        wid = world_id(task)
        self.issued[wid] = task
        row = task_rows([Task(task.env_id, task.seed, wid, make_kwargs=task.make_kwargs)])[0]
        row["extra_info"].update(index=self.draws, stage=task.stage, mined=task.mined)
        self.draws += 1
        # the fields RLHFDataset.__getitem__ adds to a row
        return {**row, "raw_prompt": row["prompt"], "dummy_tensor": torch.tensor([0], dtype=torch.uint8),
                "index": row["extra_info"]["index"], "tools_kwargs": {}, "interaction_kwargs": {}}  # fmt: skip

    def on_batch_end(self, batch: Any) -> None:
        """Record each episode of a finished step (verl's legacy trainer calls this after every step)."""
        if self.sampler is None:
            return
        fields = batch.non_tensor_batch
        missing = [k for k in ("world_id", "episode_return") if k not in fields]
        if missing:
            raise ValueError(f"the batch has no {missing}: the curriculum's rows must be played by the salesgym "
                             "agent loop (agent_name 'salesgym')")  # fmt: skip
        for wid, ret in zip(fields["world_id"], fields["episode_return"], strict=True):
            task = self.issued.get(str(wid))
            if task is None:
                raise ValueError(f"the batch reports world {wid!r}, which this curriculum never handed out")
            self.sampler.record(task, float(ret))
