"""A benchmark's progress: on a terminal the live bar; into a log file or a pipe, plain lines (done/total,
elapsed, ETA) at most every 30 s, so a run written to a log is never silent until its end."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pexpect
import pytest
from rich.console import Console
from rich.progress import Progress
from typer.testing import CliRunner

from salesgym.bench import progress as bar
from salesgym.cli import app

PLAIN = re.compile(r"^debug: (\d+)(?:/3)? episodes, \d+s elapsed, (ETA \d+s|ETA unknown|done)$")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_at_most_every_30_s_with_done_elapsed_and_eta() -> None:
    clock, sink = Clock(), io.StringIO()
    p = bar.PlainProgress(Console(file=sink), every=30, clock=clock)
    p._tick = lambda: None  # type: ignore[method-assign]  # this test drives time itself
    task = p.add_task("eval", total=None)
    with p:
        p.update(task, total=48)
        for _ in range(10):  # ten episodes in 20 s: too soon for a line
            clock.now += 2
            p.advance(task)
        assert sink.getvalue() == ""
        clock.now += 10  # 30 s since the start
        p.poll()  # the timer's check, with no episode ending
        assert sink.getvalue().splitlines() == ["eval: 10/48 episodes, 30s elapsed, ETA 1m54s"]
        for _ in range(14):  # 28 s later: still one line
            clock.now += 2
            p.advance(task)
        assert len(sink.getvalue().splitlines()) == 1
        clock.now += 2
        p.advance(task)  # 30 s since the last line
        assert sink.getvalue().splitlines()[-1] == "eval: 25/48 episodes, 1m00s elapsed, ETA 55s"
    assert sink.getvalue().splitlines()[-1] == "eval: 25/48 episodes, 1m00s elapsed, ETA 55s"  # the last line


def test_the_live_bar_on_a_terminal_plain_lines_elsewhere() -> None:
    assert isinstance(bar.make(Console(file=io.StringIO(), force_terminal=True)), Progress)
    assert isinstance(bar.make(Console(file=io.StringIO())), bar.PlainProgress)


def test_bench_into_a_pipe_prints_plain_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bar, "EVERY_S", 0.0)  # a line at each finished episode: this run takes seconds, not minutes
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "-p", "idle", "--workers", "1",
                                      "--db", str(tmp_path / "runs.sqlite")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("debug:")]
    assert lines and all(PLAIN.match(line) for line in lines), result.stderr
    counts = [int(PLAIN.match(line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert counts == sorted(counts) and {1, 2, 3} <= set(counts), lines
    assert "━" not in result.stderr and "\x1b[" not in result.stderr  # no bar, no escape codes


def test_bench_on_a_terminal_draws_the_live_bar(tmp_path: Path) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "salesgym.cli", "bench", "--split", "debug", "-p", "idle",
                                           "--workers", "1", "--db", str(tmp_path / "runs.sqlite")],
                          encoding="utf-8", timeout=300, dimensions=(40, 160), env={"TERM": "xterm-256color",
                                                                                    "PATH": "/usr/bin:/bin"})
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    shown = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", child.before)  # colours and cursor moves: a live bar
    assert shown != child.before and re.search(r"debug ━+ 3/3 episodes", shown), child.before
    assert not re.search(r"^debug: \d+/3 episodes", shown, re.M)
