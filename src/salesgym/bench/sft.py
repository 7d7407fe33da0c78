"""Successful episodes as a supervised fine-tuning dataset: chat transcripts with tools, the format TRL's
``SFTTrainer`` reads (``salesgym export RUN --sft``; docs/training.md).

The episodes come from a run in a store or from transcript files (``salesgym export --trajectories``), and
are kept when they score well enough: at least ``min_score`` on ``metric``, and/or among the best ``top``
share of the episodes of their territory (scores of different territories are not comparable: a 4-deal
territory's primary is a tenth of a 5-deal one's). Exploit probes are left out unless named in ``policies``.

Each row is ``{"messages", "tools", "metadata"}`` exactly as :mod:`salesgym.bench.transcripts` writes it:
OpenAI / TRL chat messages (assistant ``tool_calls``, ``tool`` messages with their ``tool_call_id``), the
OpenAI function schemas the agent had, and where the episode came from with its score. Written as:

``sft.jsonl``
    one row per line (plain JSON; needs nothing but the standard library);
``sft.parquet`` and ``dataset/``
    the same rows as a ``datasets.Dataset`` (``datasets.load_dataset("parquet", ...)`` and
    ``datasets.load_from_disk``). ``messages``, ``tools`` and ``metadata`` are ``Json`` features, so each
    message and tool schema comes back as written: Arrow struct columns would merge every tool's argument
    names into one struct and fill the missing ones with nulls, which the chat template renders. The files
    hold the exact JSON text; ``datasets`` 5 decodes it through pandas' ujson, whose float parsing can be
    off in the last digit (``0.3`` reads as ``0.30000000000000004``): ``sft.jsonl`` reads back exactly.

Tool calls (``tool_calls``): ``structured`` keeps them as OpenAI ``tool_calls`` (templates that render tools
and calls: Qwen2.5, Llama 3.1, ...); ``content`` writes them into the assistant's content as Hermes
``<tool_call>`` blocks, the tool results as ``<tool_response>`` user messages and the tool list into the system
message (:func:`salesgym.llm.tool_prompt.content_calls`), for templates that render only role and content
(SmolLM2's: a call turn's ``content: null`` would fail there). ``auto`` reads the chat template of the tokenizer
the data is for (:func:`calls_mode`) and picks ``content`` when it ignores tools.

``selection.json`` says what was selected, from where and how. The directory appears only once complete.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from salesgym.bench.store import Store
from salesgym.bench.transcripts import SCORE_KEYS, iter_transcripts

FORMAT = "salesgym-sft/1"
FORMATS = ("jsonl", "parquet", "dataset")
CALL_MODES = ("auto", "structured", "content")
METRICS = tuple(k for k in SCORE_KEYS if k not in ("invalid_actions", "truncated"))


class SFTError(ValueError):
    """The selection or its source cannot make a dataset (bad threshold, unreadable file, nothing selected)."""


@dataclass(frozen=True)
class Selection:
    """Which episodes make the dataset: ``metric`` at least ``min_score`` and/or among the ``top`` share
    (0-1] of their territory's episodes; ``policies`` (empty: every policy but the exploit probes)."""

    metric: str = "primary"
    min_score: float | None = None
    top: float | None = None
    policies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise SFTError(f"--metric must be one of {', '.join(METRICS)}, got {self.metric!r}")
        if self.min_score is None and self.top is None:
            raise SFTError("choose the successful episodes: --min-score and/or --top (a share of each territory's)")
        if self.min_score is not None and not math.isfinite(self.min_score):
            raise SFTError(f"--min-score must be a finite number, got {self.min_score}")
        if self.top is not None and not 0 < self.top <= 1:
            raise SFTError(f"--top is a share of each territory's episodes, in (0, 1], got {self.top}")


def _score(row: Mapping[str, Any], metric: str) -> float | None:
    value = row["metadata"].get("score", {}).get(metric)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _probes(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """The exploit probes of every family the rows come from (their policies game the environment)."""
    import salesgym
    from salesgym.agents import suite
    from salesgym.bench.runner import family_of

    probes: set[str] = set()
    for env_id in {r["metadata"].get("env_id") for r in rows}:
        if isinstance(env_id, str) and env_id in salesgym.registry():
            probes.update(suite(family_of(env_id)).exploits)
    return probes


def select(rows: Sequence[Mapping[str, Any]], selection: Selection) -> list[dict[str, Any]]:
    """The rows ``selection`` keeps, in their given order. An episode without the metric is never kept."""
    wanted = set(selection.policies)
    if wanted:
        known = {r["metadata"].get("policy") for r in rows}
        missing = sorted(wanted - known)
        if missing:
            raise SFTError(f"--policy {', '.join(missing)}: no such policy in the source (it has {sorted(known)})")
        pool = [r for r in rows if r["metadata"].get("policy") in wanted]
    else:
        probes = _probes(rows)
        pool = [r for r in rows if r["metadata"].get("policy") not in probes]
    scored = [(r, s) for r in pool if (s := _score(r, selection.metric)) is not None]
    keep = {id(r) for r, s in scored if selection.min_score is None or s >= selection.min_score}
    if selection.top is not None:
        by_territory: dict[Any, list[tuple[Mapping[str, Any], float]]] = {}
        for r, s in scored:
            by_territory.setdefault(r["metadata"].get("territory"), []).append((r, s))
        best: set[int] = set()
        for group in by_territory.values():
            ranked = sorted(group, key=lambda rs: (-rs[1], str(rs[0]["metadata"].get("policy")),
                                                   int(rs[0]["metadata"].get("trial") or 0)))  # fmt: skip
            best.update(id(r) for r, _ in ranked[: math.ceil(selection.top * len(ranked))])
        keep &= best
    return [dict(r) for r in pool if id(r) in keep]


# -- sources ---------------------------------------------------------------------------------------------
def rows_from_store(store: Store, run_id: str, mode: str = "object") -> list[dict[str, Any]]:
    """Every stored trajectory of the run as a transcript row (a private split's seeds left out); ``mode``:
    tool-call arguments as a JSON object (TRL, chat templates) or as JSON text (OpenAI fine-tuning)."""
    return list(iter_transcripts(store, run_id, mode))


def _check_row(row: Any, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise SFTError(f"{where}: not a JSON object")
    messages, tools, meta = row.get("messages"), row.get("tools"), row.get("metadata")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        raise SFTError(f"{where}: 'messages' must be a list of chat messages (written by export --trajectories)")
    if not isinstance(tools, list) or not isinstance(meta, dict) or not isinstance(meta.get("score"), dict):
        raise SFTError(f"{where}: needs 'tools' (a list) and 'metadata' with its 'score' (export --trajectories)")
    return row


def rows_from_files(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Transcript rows from JSONL files written by ``salesgym export --trajectories``."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise SFTError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError as e:
                raise SFTError(f"{path}:{n}: not JSON ({e})") from None
            rows.append(_check_row(data, f"{path}:{n}"))
    if not rows:
        raise SFTError("the transcript files hold no episode")
    return rows


# -- tool calls for the chat template ------------------------------------------------------------------------
def load_tokenizer(path: str) -> Any:
    """A tokenizer from a local folder, or from a GGUF file (``model.gguf``), with ``transformers``."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise SFTError("--tokenizer needs the transformers library (pip install 'salesgym[trl]')") from None
    where = Path(path)
    try:
        if where.suffix == ".gguf":
            return AutoTokenizer.from_pretrained(str(where.parent), gguf_file=where.name)
        return AutoTokenizer.from_pretrained(path)
    except Exception as e:  # transformers raises OSError, ValueError, ... for a folder that is not a tokenizer
        raise SFTError(f"--tokenizer {path}: cannot load a tokenizer: {str(e).splitlines()[0][:200]}") from None


def calls_mode(choice: str, tokenizer: Any = None) -> str:
    """``structured`` or ``content`` for ``choice`` (``auto``: ``content`` when ``tokenizer``'s chat template
    ignores tools, ``structured`` when it renders them or no tokenizer is given)."""
    if choice not in CALL_MODES:
        raise SFTError(f"--tool-calls must be one of {', '.join(CALL_MODES)}, got {choice!r}")
    if choice != "auto":
        return choice
    if tokenizer is None:
        return "structured"
    from salesgym.llm.tool_prompt import renders_tools

    def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        return str(tokenizer.apply_chat_template(messages, tools=tools, tokenize=False))

    return "structured" if renders_tools(render) else "content"


def with_content_calls(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with their calls, tool results and tool list written as text (the ``content`` mode)."""
    from salesgym.llm.tool_prompt import content_calls

    return [{**r, "messages": content_calls(r["messages"], r["tools"]),
             "metadata": {**r["metadata"], "tool_calls": "content"}} for r in rows]  # fmt: skip


# -- writing ---------------------------------------------------------------------------------------------
def require_datasets(formats: Sequence[str]) -> None:
    """Fail before any work when a format needs the ``datasets`` library and it is missing."""
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise SFTError(f"unknown SFT format {', '.join(bad)}; choose from {', '.join(FORMATS)}")
    if any(f != "jsonl" for f in formats):
        try:
            import datasets  # noqa: F401
        except ImportError:
            raise SFTError(
                "the parquet and dataset formats need the datasets library (pip install 'salesgym[sft]'); "
                "--sft-format jsonl writes JSONL alone"
            ) from None


def _exact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def to_dataset(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The rows as a ``datasets.Dataset`` with ``Json`` features. Each value is stored as its exact JSON
    text (``datasets`` would encode it through pandas' ujson, which keeps 10 decimals of a float)."""
    from datasets import Dataset, Features, Json, List

    features = Features({"messages": List(Json()), "tools": List(Json()), "metadata": Json()})
    encoded = [{"messages": [_exact(m) for m in r["messages"]], "tools": [_exact(t) for t in r["tools"]],
                "metadata": _exact(r["metadata"])} for r in rows]  # fmt: skip
    return Dataset.from_list(encoded, features=features)


def _rows_json(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for r in rows:
        yield json.dumps({k: r[k] for k in ("messages", "tools", "metadata")}, separators=(",", ":"),
                         ensure_ascii=False) + "\n"  # fmt: skip


def write(
    rows: Sequence[Mapping[str, Any]],
    out_dir: Path,
    *,
    formats: Sequence[str] = FORMATS,
    source: Mapping[str, Any],
    selection: Selection,
    candidates: int,
    tool_calls: str = "structured",
) -> dict[str, Any]:
    """Write ``rows`` into ``out_dir`` (which must not exist or be empty) in ``formats``; returns the
    selection record (also written as ``selection.json``). The directory appears only once complete."""
    if not rows:
        raise SFTError(
            f"no episode passes the selection (of {candidates} candidate(s)); lower --min-score or raise --top"
        )
    require_datasets(formats)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise SFTError(f"{out_dir}: exists and is not an empty directory (--out takes a new directory)")
    record = {
        "format": FORMAT,
        "source": dict(source),
        "selection": asdict(selection),
        "tool_calls": tool_calls,
        "candidates": candidates,
        "episodes": len(rows),
        "by_policy": _count(r["metadata"].get("policy") for r in rows),
        "territories": len({r["metadata"].get("territory") for r in rows}),
        "files": [{"jsonl": "sft.jsonl", "parquet": "sft.parquet", "dataset": "dataset"}[f] for f in formats],
    }
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        if "jsonl" in formats:
            with (tmp / "sft.jsonl").open("w", encoding="utf-8") as fh:
                fh.writelines(_rows_json(rows))
        if "parquet" in formats or "dataset" in formats:
            _write_dataset(to_dataset(rows), tmp, formats)
        (tmp / "selection.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        if out_dir.exists():
            out_dir.rmdir()  # empty, checked above
        os.replace(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return record


def _write_dataset(ds: Any, tmp: Path, formats: Sequence[str]) -> None:
    import datasets

    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # a command's output is its one summary line
    try:
        if "parquet" in formats:
            ds.to_parquet(str(tmp / "sft.parquet"))
        if "dataset" in formats:
            ds.save_to_disk(str(tmp / "dataset"))
    finally:
        if shown:
            datasets.enable_progress_bars()


def _count(values: Iterable[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return dict(sorted(out.items()))
