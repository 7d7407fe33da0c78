"""benchmarks/compare_anchors.py: without an anchor it says what it needs and exits 0 (CI never depends on one);
half an anchor is a one-line usage error; salesgym's side of every row runs real desk steps that are all
accepted (a batch timed on refused calls or after the episode's end would compare nothing)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_anchors.py"


def _module() -> ModuleType:
    if "compare_anchors" in sys.modules:
        return sys.modules["compare_anchors"]
    spec = importlib.util.spec_from_file_location("compare_anchors", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = sys.modules["compare_anchors"] = importlib.util.module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_without_an_anchor_it_says_what_it_needs_and_exits_0() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "--salesbench PATH" in run.stdout and "--salesbench-python" in run.stdout


def test_half_an_anchor_is_a_usage_error_without_a_traceback(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--salesbench", str(tmp_path)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 2 and "Traceback" not in run.stderr and "--salesbench-python" in run.stderr


@pytest.mark.parametrize("key", ["reset", "search", "quote", "cycle"])
def test_the_desk_side_of_every_row_is_accepted_work(key: str) -> None:
    ca = _module()
    batch = ca.desk_side(key)
    assert batch(8 if key != "reset" else 2) > 0.0  # raises SystemExit if a call was refused or the episode ended


def test_a_batch_with_a_refused_call_is_not_compared() -> None:
    ca = _module()
    batch = ca.timed(lambda: None, lambda _, i: None, refused=lambda _: 1)
    with pytest.raises(SystemExit, match="not comparable"):
        batch(3)


def test_memory_per_live_desk_is_positive_and_bounded() -> None:
    held = _module().desk_side("memory")
    assert isinstance(held, float) and 0 < held < 1024 * 1024
