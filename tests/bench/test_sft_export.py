"""``salesgym export --sft``: the successful episodes of a real debug run as a chat dataset with tools.

Which episodes are kept (threshold, top share per territory, no exploit probes), the row format, the same
selection from a store and from transcript files, and bad input: one clear error, nothing written. The
dataset formats (parquet, ``datasets`` on disk) and TRL's SFTTrainer on them are in
``tests/adapters/test_trl_recipes.py`` (their own venv)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import salesgym
from salesgym.bench import sft
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.splits import load
from salesgym.bench.store import Store
from salesgym.cli import app

POLICIES = ("expected-value", "random", "spam-all")  # spam-all is an exploit probe
Run = tuple[Path, str, dict[tuple[str, str], float]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    db = tmp_path_factory.mktemp("sft") / "r.sqlite"
    with Store(db) as store:
        run_id = run_benchmark(store, load("debug"), POLICIES, LocalBackend(2)).run.id
        primary = {(e.policy, e.territory_id): float(e.metrics["primary"]) for e in store.episodes(run_id)}  # type: ignore[index]
    return db, run_id, primary


def _sft(db: Path, run_id: str | None, out: Path, *extra: str) -> tuple[int, str]:
    args = ["export", *([run_id] if run_id else []), "--sft", "--db", str(db), "--out", str(out), *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]


def test_top_share_keeps_each_territorys_best_and_never_a_probe(run: Run, tmp_path: Path) -> None:
    db, run_id, primary = run
    code, output = _sft(db, run_id, tmp_path / "top", "--top", "0.5", "--sft-format", "jsonl")
    assert code == 0, output
    rows = _rows(tmp_path / "top")
    kept = {(r["metadata"]["territory"], r["metadata"]["policy"]) for r in rows}
    territories = {t for _, t in primary}
    assert len(rows) == len(territories) == 3  # one of the two honest policies per territory
    for t in territories:
        best = max(("expected-value", "random"), key=lambda p: primary[(p, t)])
        assert (t, best) in kept
    assert all(p != "spam-all" for _, p in kept)
    record = json.loads((tmp_path / "top" / "selection.json").read_text())
    assert record["format"] == "salesgym-sft/1" and record["candidates"] == 9 and record["episodes"] == 3
    assert record["selection"]["top"] == 0.5 and record["files"] == ["sft.jsonl"]
    assert f"wrote {tmp_path / 'top'} (3 of 9 episode(s), 3 territories: sft.jsonl)" in output


def test_min_score_keeps_exactly_the_episodes_at_or_above_it(run: Run, tmp_path: Path) -> None:
    db, run_id, primary = run
    honest = sorted(v for (p, _), v in primary.items() if p != "spam-all")
    threshold = honest[len(honest) // 2]
    code, output = _sft(db, run_id, tmp_path / "min", "--min-score", str(threshold), "--sft-format", "jsonl")
    assert code == 0, output
    got = {(r["metadata"]["policy"], r["metadata"]["territory"]) for r in _rows(tmp_path / "min")}
    assert got == {k for k, v in primary.items() if v >= threshold and k[0] != "spam-all"}
    # naming a probe is the way to keep it
    code, _ = _sft(db, run_id, tmp_path / "probe", "--top", "1", "-p", "spam-all", "--sft-format", "jsonl")
    assert code == 0 and {r["metadata"]["policy"] for r in _rows(tmp_path / "probe")} == {"spam-all"}


def test_rows_are_chat_transcripts_with_tools(run: Run, tmp_path: Path) -> None:
    db, run_id, _ = run
    assert _sft(db, run_id, tmp_path / "d", "--top", "1", "--sft-format", "jsonl")[0] == 0
    rows = _rows(tmp_path / "d")
    tools = salesgym.make("territory-v0").tool_schemas()
    for r in rows:
        assert set(r) == {"messages", "tools", "metadata"} and r["tools"] == tools
        m = r["messages"]
        assert [x["role"] for x in m[:2]] == ["system", "user"] and m[0]["content"]
        calls = [x for x in m if x["role"] == "assistant" and x.get("tool_calls")]
        results = [x for x in m if x["role"] == "tool"]
        assert calls and len(calls) == len(results) == r["metadata"]["turns"]
        for call, result in zip(calls, results, strict=True):
            fn = call["tool_calls"][0]["function"]
            assert isinstance(fn["arguments"], dict) and fn["name"] in {t["function"]["name"] for t in tools}
            assert result["tool_call_id"] == call["tool_calls"][0]["id"] and result["name"] == fn["name"]
        assert isinstance(r["metadata"]["score"]["primary"], float)
    assert _sft(db, run_id, tmp_path / "s", "--top", "1", "--sft-format", "jsonl", "--tool-arguments", "string")[0] == 0
    for r, s in zip(rows, _rows(tmp_path / "s"), strict=True):  # the OpenAI fine-tuning form: arguments as text
        calls = [m["tool_calls"][0]["function"] for m in r["messages"] if m.get("tool_calls")]
        texts = [m["tool_calls"][0]["function"] for m in s["messages"] if m.get("tool_calls")]
        assert [json.loads(t["arguments"]) for t in texts] == [c["arguments"] for c in calls]


def test_transcript_files_select_like_the_store(run: Run, tmp_path: Path) -> None:
    db, run_id, _ = run
    transcripts = tmp_path / "t.jsonl"
    result = CliRunner().invoke(app, ["export", run_id, "--trajectories", "--db", str(db), "--out", str(transcripts)])
    assert result.exit_code == 0, result.output
    assert _sft(db, run_id, tmp_path / "a", "--top", "0.5", "--sft-format", "jsonl")[0] == 0
    code, output = _sft(db, None, tmp_path / "b", "--from", str(transcripts), "--top", "0.5", "--sft-format", "jsonl")
    assert code == 0, output
    assert _rows(tmp_path / "a") == _rows(tmp_path / "b")


def test_bad_input_is_one_clear_error_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    db, run_id, _ = run
    out = tmp_path / "x"
    bad_file = tmp_path / "bad.jsonl"
    bad_file.write_text('{"messages": []}\nnot json\n')
    cases = [
        ((run_id,), "choose the successful episodes"),
        ((run_id, "--top", "0"), "in (0, 1]"),
        ((run_id, "--min-score", "nan"), "finite"),
        ((run_id, "--top", "1", "--metric", "steps"), "--metric must be one of"),
        ((run_id, "--top", "1", "-p", "nobody", "--sft-format", "jsonl"), "no such policy"),
        ((run_id, "--min-score", "1e12", "--sft-format", "jsonl"), "no episode passes"),
        ((run_id, "--top", "1", "--sft-format", "csv"), "unknown SFT format"),
        (("no-such-run", "--top", "1", "--sft-format", "jsonl"), "no-such-run"),
        ((run_id, "--from", str(bad_file), "--top", "1"), "a run id or --from"),
        (("--from", str(bad_file), "--top", "1", "--sft-format", "jsonl"), "bad.jsonl:1"),
        (("--from", str(tmp_path / "missing.jsonl"), "--top", "1", "--sft-format", "jsonl"), "cannot read"),
    ]
    for args, message in cases:
        code, output = _sft(db, None, out, *args)
        assert code != 0 and "error:" in output and message in output and "Traceback" not in output, (args, output)
        assert not out.exists(), args
    (out / "old").mkdir(parents=True)
    code, output = _sft(db, run_id, out, "--top", "1", "--sft-format", "jsonl")
    assert code == 1 and "not an empty directory" in output and sorted(p.name for p in out.iterdir()) == ["old"]
    result = CliRunner().invoke(app, ["export", run_id, "--db", str(db), "--top", "0.5"])
    assert result.exit_code == 2 and "only with --sft" in result.output


def test_missing_datasets_library_is_named() -> None:
    try:
        import datasets  # noqa: F401
    except ImportError:
        with pytest.raises(sft.SFTError, match=r"salesgym\[sft\]"):
            sft.require_datasets(("jsonl", "parquet"))
    else:
        sft.require_datasets(sft.FORMATS)
    sft.require_datasets(("jsonl",))  # JSONL needs nothing
