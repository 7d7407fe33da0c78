"""What the benchmark scripts share: best-of timing with the collector off, the reference operation every
figure is a ratio to, and valgrind's instruction count of a child run (a figure machine load does not move).
The scripts run as ``python benchmarks/<name>.py``, so this folder is on ``sys.path``."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# the reference operation: a JSON round trip of a small record list, about the size of an observation
REFERENCE = {"leads": [{"id": f"L{i:03d}", "age": 30 + i, "income": 90_000 + i, "band": "$100-200",
                        "status": "new", "calls": i % 3} for i in range(24)]}  # fmt: skip


def best_of(fn: Callable[[], Any], repeat: int, number: int) -> float:
    """Seconds per call: the best of ``repeat`` batches of ``number`` calls (garbage collection off)."""
    gc.disable()
    try:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - t) / number)
        return min(times)
    finally:
        gc.enable()


def reference_s(repeat: int = 5, number: int = 2000) -> float:
    """Seconds per reference operation, measured now."""
    return best_of(lambda: json.loads(json.dumps(REFERENCE)), repeat, number)


def instructions(script: str, mode: str, calls: Path) -> int:
    """Instructions valgrind counts for ``script --child MODE --calls CALLS`` (Python's start-up included)."""
    return instructions_of([sys.executable, script, "--child", mode, "--calls", str(calls)])


def instructions_of(argv: list[str]) -> int:
    """Instructions valgrind counts for the whole process ``argv`` (start-up included)."""
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *argv],
        capture_output=True, text=True, check=True, env=os.environ,
    )  # fmt: skip
    match = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))
