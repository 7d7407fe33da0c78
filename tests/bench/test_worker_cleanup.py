"""A benchmark killed mid-run leaves no process behind: its workers exit when their parent dies, and the fork
server and resource tracker follow.

Real subprocesses, found through ``/proc``. The bench plays a split of large territories so it is still
running when it is killed (the ``debug`` split finishes in about two seconds, too short to kill mid-run
reliably on a busy two-core machine); the split is otherwise an ordinary sealed manifest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from salesgym.bench import splits as sp

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SETTLE_S = 15.0  # how long the leftovers get to go away


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, process group) of a live process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may contain spaces and parentheses
    return fields[0], int(fields[1]), int(fields[2])


def group(pgid: int) -> dict[int, tuple[str, int]]:
    """Live (not zombie) processes of a process group: pid -> (state, ppid)."""
    out: dict[int, tuple[str, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[2] == pgid and st[0] != "Z":
                out[int(entry.name)] = (st[0], st[1])
    return out


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def slow_split(tmp_path: Path) -> Path:
    pytest.importorskip("salesgym.envs.territory.env")
    d = tmp_path / "splits"
    territories = [
        sp.Territory(f"slow-{i:03d}", "midmarket_saas", "standard", 50_000 + i, 100, 180).to_dict() for i in range(16)
    ]
    data = {"format_version": 1, "name": "slow", "description": "large territories", "territories": territories}
    sp.write_manifest(data, d / "slow.json")
    return d


@contextlib.contextmanager
def _bench(slow_split: Path, tmp_path: Path, workers: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "salesgym.cli",
            "bench",
            "--split",
            "slow",
            "--splits-dir",
            str(slow_split),
            "--workers",
            str(workers),
            "-p",
            "expected-value",
            "-p",
            "oracle",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: everything it starts can be found by group id
        env={**os.environ, "MPLCONFIGDIR": str(tmp_path / ".mpl")},
    )
    try:
        yield proc
    finally:  # never leave a test's processes behind, whatever the outcome
        for pid in group(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture
def bench(slow_split: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with _bench(slow_split, tmp_path, workers=2) as proc:
        yield proc


def _workers_running(proc: subprocess.Popen[bytes]) -> bool:
    """The two workers are up: children of the fork server, itself a child of the bench."""
    procs = group(proc.pid)
    servers = {pid for pid, (_, ppid) in procs.items() if ppid == proc.pid}
    return sum(1 for _, ppid in procs.values() if ppid in servers) >= 2


def test_kill_9_of_the_bench_leaves_no_process(bench: subprocess.Popen[bytes]) -> None:
    assert wait_for(lambda: _workers_running(bench), 60), f"workers never started: {group(bench.pid)}"
    assert bench.poll() is None, "the bench finished before it could be killed"
    assert len(group(bench.pid)) >= 5  # bench, resource tracker, fork server, two workers
    os.kill(bench.pid, signal.SIGKILL)
    bench.wait()
    gone = wait_for(lambda: not group(bench.pid), SETTLE_S)
    assert gone, f"left behind {SETTLE_S:.0f} s after kill -9: {group(bench.pid)}"


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM: the bench stops within a minute with exit 143 and its one line, no traceback."""
    os.kill(proc.pid, signal.SIGTERM)
    try:
        _, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the bench played on for 60 s after SIGTERM")
    text = stderr.decode()
    assert proc.returncode == 143, text
    assert "Traceback" not in text
    assert [line for line in text.splitlines() if line.startswith("error:")] == [
        "error: terminated (SIGTERM); finished episodes are saved: run the same command again to resume"
    ]


def test_sigterm_stops_the_bench_cleanly(bench: subprocess.Popen[bytes], tmp_path: Path) -> None:
    assert wait_for(lambda: _workers_running(bench), 60), f"workers never started: {group(bench.pid)}"
    _terminate(bench)
    assert wait_for(lambda: not group(bench.pid), SETTLE_S), f"left behind: {group(bench.pid)}"
    done = subprocess.run(
        [sys.executable, "-m", "salesgym.cli", "runs", "--db", str(tmp_path / "runs.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "slow-" in done.stdout, done.stdout + done.stderr


def test_sigterm_stops_an_in_process_bench_without_failing_the_episode(slow_split: Path, tmp_path: Path) -> None:
    """With one worker the episodes play in the bench's own process, so SIGTERM arrives inside an episode: it
    must stop the run, not be taken for the episode's failure (which marks it invalid and plays on)."""
    db = tmp_path / "runs.sqlite"
    with _bench(slow_split, tmp_path, workers=1) as proc:
        time.sleep(8)  # well inside the first episode (a 100-opportunity, 180-day territory)
        assert proc.poll() is None, "the bench finished before it could be stopped"
        _terminate(proc)
    with contextlib.closing(sqlite3.connect(db)) as con:
        statuses = [s for (s,) in con.execute("SELECT status FROM episodes")]
    assert "error" not in statuses, statuses
