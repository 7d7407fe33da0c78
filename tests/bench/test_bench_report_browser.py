"""The HTML report as a person sees it: rendered by a real headless Chromium, not just parsed as text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from salesgym.bench.report import write_report
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.splits import load
from salesgym.bench.store import Store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (.ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
POLICIES = ("idle", "random", "expected-value", "spam-all", "ev+spam", "oracle")


def _report(tmp_path: Path) -> Path:
    """A report of a real bench run on the debug split."""
    with Store(tmp_path / "runs.sqlite") as store:
        run_id = run_benchmark(store, load("debug"), POLICIES, LocalBackend(2)).run.id
        write_report(store, run_id, tmp_path / "out")
    return tmp_path / "out" / "report.html"


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def test_report_renders_tables_and_decodable_plots(tmp_path: Path) -> None:
    html = _report(tmp_path)
    # --dump-dom prints the DOM after the page loaded in the browser
    dom = _chromium(tmp_path, "--dump-dom", html.as_uri()).stdout
    assert "Leaderboard" in dom and "expected-value" in dom and "Exploit check" in dom
    assert dom.count("<img") >= 2 and "data:image/png;base64," in dom


def test_report_screenshot_is_not_blank(tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    html = _report(tmp_path)
    shot = tmp_path / "shot.png"
    _chromium(tmp_path, "--window-size=1200,1600", f"--screenshot={shot}", html.as_uri())
    pixels = mpimg.imread(shot)
    assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1000
    # a rendered report has text, tables and plots: many distinct colours and real contrast
    assert pixels.std() > 0.05
    assert len({tuple(p) for p in pixels[::16, ::16, :3].reshape(-1, 3).round(2).tolist()}) > 20
