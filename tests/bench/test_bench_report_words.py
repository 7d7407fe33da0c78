"""Reports speak each family's words: the primary score, the second column, the secondary metrics and the funnel
come from the family's own ``envs/<family>/report_words.py``; a workflows report never mentions value-weighted
milestone advances, closed value or win rate. The HTML fits a 1280 px page in a real headless Chromium (its
document's scroll width, measured in the page), and the plots stay readable with the territory's 20 policies."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import salesgym
from salesgym.bench import vocabulary
from salesgym.bench.report import write_report
from salesgym.bench.runner import LocalBackend, policy_suite, run_benchmark
from salesgym.bench.splits import load
from salesgym.bench.store import Store
from salesgym.cli import app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENV_OF = {"territory": "territory-debug-v0", "desk": "desk-debug-v0", "workflows": "workflows-debug-v0",
          "workflows-ui": "workflows-debug-v0"}  # the same verifier and score; no browser in this process
# (split, territories, trials) of a real run per family: the territory's whole suite (20 policies)
RUNS = {"territory": ("debug", None, 2), "desk": ("desk-eval", 2, 1), "workflows": ("workflows-eval", 12, 1)}
TERRITORY_WORDS = ("value-weighted", "milestone advances", "closed value", "win rate", "seller hours")


@pytest.mark.parametrize("family", sorted(salesgym.families()))
def test_every_family_states_its_words_and_they_name_real_metrics(family: str) -> None:
    words = vocabulary.for_family(family)
    assert words is not vocabulary.NEUTRAL, f"envs/{family}/report_words.py is missing"
    env = salesgym.make(ENV_OF[family])
    env.reset(seed=1)
    score = env.score()
    for metric in (words.closed, *words.columns, *words.secondary):
        assert metric.key in score, f"{family}: {metric.key!r} is not a key of env.score()"
    if words.funnel is not None:
        assert isinstance(score[words.funnel.key], dict)


def test_a_family_without_words_gets_neutral_ones_and_bad_words_are_refused() -> None:
    assert vocabulary.for_family("no_such_family") is vocabulary.NEUTRAL
    with pytest.raises(ValueError, match="REPORT_WORDS needs exactly"):
        vocabulary.parse({"unit": ["a", "b"]}, "somewhere")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A real run of each family's whole policy suite, and its report."""
    tmp = tmp_path_factory.mktemp("words")
    out: dict[str, Path] = {}
    with Store(tmp / "runs.sqlite") as store:
        for family, (split, episodes, trials) in RUNS.items():
            run = run_benchmark(store, load(split), policy_suite(family).all, LocalBackend(2), episodes=episodes,
                                trials=trials).run
            out[family] = write_report(store, run.id, tmp / family).html.parent
    yield out


def test_a_workflows_report_speaks_of_tasks_and_passes(reports: dict[str, Path]) -> None:
    md = (reports["workflows"] / "report.md").read_text()
    for word in TERRITORY_WORDS:
        assert word not in md.lower(), f"the workflows report says {word!r}"
    assert "pass rate" in md and "partial score" in md and "tasks" in md
    assert "Milestone funnel" not in md


def test_a_desk_report_speaks_of_mrr_and_leads(reports: dict[str, Path]) -> None:
    md = (reports["desk"] / "report.md").read_text()
    for word in TERRITORY_WORDS:
        assert word not in md.lower(), f"the desk report says {word!r}"
    assert "converted MRR ($)" in md and "## Lead funnel" in md and "conversion rate" in md


def test_a_territory_report_keeps_its_words(reports: dict[str, Path]) -> None:
    md = (reports["territory"] / "report.md").read_text()
    assert "closed value ($k)" in md and "## Milestone funnel" in md and "value-weighted" in md


def test_the_terminal_leaderboard_speaks_the_familys_words(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "--family", "workflows", "--episodes", "2", "-p", "idle", "-p",
                                      "reference", "--workers", "1", "--db", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "policy" in line and "norm" in line)
    assert "partial" in header and "closed" not in header
    assert "pass rate" in result.stdout and "closed value" not in result.stdout


def _scroll_width(page: Path, tmp: Path) -> int:
    """Open ``page`` at 1280 px in headless Chromium and read the document's scroll width from the page."""
    assert CHROMIUM is not None
    probe = tmp / "probe.html"
    probe.write_text(page.read_text().replace(
        "</body>", '<script>document.body.setAttribute("data-scroll-width", '
                   "String(document.documentElement.scrollWidth))</script></body>"))
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", "--window-size=1280,900",
                           "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=180, check=True)
    found = re.search(r'data-scroll-width="(\d+)"', done.stdout)
    assert found, done.stdout[:500]
    return int(found.group(1))


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (.ci/run installs it)")
@pytest.mark.parametrize("family", sorted(RUNS))
def test_the_html_report_fits_a_1280_px_page(reports: dict[str, Path], family: str, tmp_path: Path) -> None:
    assert _scroll_width(reports[family] / "report.html", tmp_path) <= 1280


def test_plots_give_each_of_20_policies_room(reports: dict[str, Path]) -> None:
    import matplotlib.image as mpimg

    for name in ("scores.png", "funnel.png"):
        pixels = mpimg.imread(io.BytesIO((reports["territory"] / name).read_bytes()))
        assert pixels.shape[0] >= 20 * 22, f"{name}: {pixels.shape[0]} px for 20 policies"  # a readable row each
