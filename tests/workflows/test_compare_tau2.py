"""benchmarks/compare_tau2.py without tau2-bench: it says what it needs and exits 0 (CI never depends on it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_tau2.py"


@pytest.mark.parametrize("args", [[], ["--tau2", "/nonexistent/tau2-bench", "--python", "/nonexistent/python"]])
def test_without_a_tau2_checkout_it_says_what_it_needs_and_exits_0(args: list[str], tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "needs a tau2-bench checkout" in out.stdout and "Nothing measured." in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
