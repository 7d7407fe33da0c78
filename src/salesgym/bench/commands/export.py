"""``salesgym export``: a run's episodes as JSON or CSV, its trajectories as chat transcripts, or its successful
episodes as an SFT dataset (``--sft``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from salesgym.bench.commands.console import check_parents, fail, open_store, out, write_error
from salesgym.bench.commands.options import DEFAULT_DB, DbPath
from salesgym.bench.store import StoreError
from salesgym.cli_options import finite


class ExportFormat(StrEnum):
    json = "json"
    csv = "csv"


class ToolArguments(StrEnum):
    object = "object"
    string = "string"



def export(
    run_id: Annotated[str | None, typer.Argument(help="run id (--sft: or give --from files instead)")] = None,
    fmt: Annotated[
        ExportFormat | None, typer.Option("--format", case_sensitive=False, help="json (default) or csv")
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="output file (default: runs/<RUN_ID>.<format>, runs/<RUN_ID>.trajectories.jsonl); "
            "--sft: a new directory (default: runs/<RUN_ID>.sft)",
        ),
    ] = None,
    db: DbPath = DEFAULT_DB,
    trajectories: Annotated[
        bool,
        typer.Option(
            "--trajectories",
            help="write each episode as a chat transcript with tools (JSONL, the SFT format TRL reads)",
        ),
    ] = False,
    tool_arguments: Annotated[
        ToolArguments,
        typer.Option(
            case_sensitive=False,
            help="--trajectories, --sft: tool-call arguments as a JSON object (TRL, chat templates) or JSON text "
            "(OpenAI)",
        ),
    ] = ToolArguments.object,
    sft: Annotated[
        bool,
        typer.Option(
            "--sft",
            help="write the successful episodes as an SFT chat dataset with tools (JSONL, parquet, datasets on disk)",
        ),
    ] = False,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", callback=finite, help="--sft: keep episodes whose --metric is at least this"),
    ] = None,
    top: Annotated[
        float | None,
        typer.Option("--top", min=0, max=1, callback=finite,
                     help="--sft: keep the best share (0-1] of each territory's episodes by --metric"),
    ] = None,
    metric: Annotated[str, typer.Option("--metric", help="--sft: the score to select by (primary, return, ...)")] = (
        "primary"
    ),
    sft_policy: Annotated[
        list[str] | None,
        typer.Option("--policy", "-p", help="--sft: only these policies (default: all but the exploit probes)"),
    ] = None,
    from_files: Annotated[
        list[Path] | None,
        typer.Option("--from", dir_okay=False, help="--sft: transcript JSONL files (export --trajectories) as source"),
    ] = None,
    sft_format: Annotated[
        list[str] | None,
        typer.Option("--sft-format", help="--sft: jsonl, parquet, dataset (repeatable; default: all three)"),
    ] = None,
    tool_calls: Annotated[
        str, typer.Option("--tool-calls", help="--sft: structured, content (<tool_call> text) or auto (--tokenizer)")
    ] = "auto",
    tokenizer: Annotated[
        str | None,
        typer.Option("--tokenizer", help="--sft: the tokenizer (folder or .gguf) whose chat template --tool-calls auto "
                     "reads"),
    ] = None,
) -> None:
    """Export a run's episodes (with every metric) to JSON or CSV, its trajectories as JSONL chat transcripts,
    or its successful episodes as an SFT dataset (--sft). A private split's seeds are left out."""
    if sft:
        _export_sft(run_id, out_path, db, from_files or [], sft_format, fmt, trajectories,
                    min_score=min_score, top=top, metric=metric, policies=sft_policy or [],
                    tool_arguments=tool_arguments.value, tool_calls=tool_calls, tokenizer=tokenizer)  # fmt: skip
        return
    sft_only = [name for name, v in (("--min-score", min_score), ("--top", top), ("--policy", sft_policy),
                                     ("--from", from_files), ("--sft-format", sft_format), ("--tokenizer", tokenizer),
                                     ("--tool-calls", tool_calls != "auto")) if v]  # fmt: skip
    if sft_only or metric != "primary":
        fail(f"{', '.join(sft_only) or '--metric'}: only with --sft", 2)
    if run_id is None:
        fail("missing argument 'RUN_ID' (the run's id: see `salesgym runs`)", 2)
    if trajectories and fmt is not None:
        fail("--trajectories writes JSONL; --format applies to the episode export only", 2)
    suffix = "trajectories.jsonl" if trajectories else (fmt or ExportFormat.json).value
    target = out_path or Path("runs") / f"{run_id}.{suffix}"
    if target.is_dir():
        fail(f"{target}: is a directory (--out takes a file name)")
    check_parents(target)
    store = open_store(db, readonly=True)
    try:
        if trajectories:
            from salesgym.bench.transcripts import write_jsonl

            target.parent.mkdir(parents=True, exist_ok=True)
            n = write_jsonl(store, run_id, target, tool_arguments.value)
            message = f"wrote {target} ({n} episode transcript(s))"
        elif fmt is ExportFormat.csv:
            message = f"wrote {store.export_csv(run_id, target)}"
        else:
            message = f"wrote {store.export_json(run_id, target)}"
    except StoreError as e:
        fail(str(e))
    except OSError as e:
        fail(write_error(target, "the export", e))
    finally:
        store.close()
    out.print(message, markup=False, highlight=False, soft_wrap=True)


def _export_sft(
    run_id: str | None,
    out_path: Path | None,
    db: Path,
    files: list[Path],
    formats: list[str] | None,
    fmt: ExportFormat | None,
    trajectories: bool,
    *,
    min_score: float | None,
    top: float | None,
    metric: str,
    policies: list[str],
    tool_arguments: str,
    tool_calls: str = "auto",
    tokenizer: str | None = None,
) -> None:
    """``export --sft``: every check before any work, then one directory written whole."""
    from salesgym.bench import sft as sf

    if fmt is not None or trajectories:
        fail("--sft writes its own formats (--sft-format); not with --format or --trajectories", 2)
    if (run_id is None) == (not files):
        fail("--sft takes a run id or --from transcript files (one of the two)", 2)
    try:
        selection = sf.Selection(metric=metric, min_score=min_score, top=top, policies=tuple(policies))
        chosen = tuple(dict.fromkeys(formats or sf.FORMATS))
        sf.require_datasets(chosen)
        calls = sf.calls_mode(tool_calls, sf.load_tokenizer(tokenizer) if tokenizer and tool_calls == "auto" else None)
    except sf.SFTError as e:
        fail(str(e), 2)
    target = out_path or Path("runs") / f"{run_id or files[0].stem}.sft"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        fail(f"{target}: exists and is not an empty directory (--out takes a new directory)")
    check_parents(target)
    try:
        if run_id is not None:
            store = open_store(db, readonly=True)
            try:
                rows = sf.rows_from_store(store, run_id, tool_arguments)
            finally:
                store.close()
            source: dict[str, object] = {"run_id": run_id, "db": str(db)}
        else:
            rows = sf.rows_from_files(files)
            source = {"files": [str(f) for f in files]}
        kept = sf.select(rows, selection)
        kept = sf.with_content_calls(kept) if calls == "content" else kept
        record = sf.write(kept, target, formats=chosen, source=source, selection=selection, candidates=len(rows),
                          tool_calls=calls)  # fmt: skip
    except (StoreError, sf.SFTError) as e:
        fail(str(e))
    except OSError as e:
        fail(write_error(target, "the SFT dataset", e))
    out.print(
        f"wrote {target} ({record['episodes']} of {record['candidates']} episode(s), "
        f"{record['territories']} territor{'y' if record['territories'] == 1 else 'ies'}: "
        f"{', '.join(record['files'])})",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip
