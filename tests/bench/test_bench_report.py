"""Reports and the analysis behind them, on a real small bench run: every registered policy on `debug`."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from salesgym.agents import suite
from salesgym.bench import analysis as an
from salesgym.bench.report import write_report
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.splits import load
from salesgym.bench.store import EpisodeRecord, Store

SUITE = suite("territory")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One real run of every policy on the debug split (about two seconds), shared by the tests here."""
    db = tmp_path_factory.mktemp("report") / "runs.sqlite"
    with Store(db) as store:
        run_id = run_benchmark(store, load("debug"), SUITE.all, LocalBackend(2)).run.id
        run_benchmark(store, load("debug"), ("random", "expected-value"), LocalBackend(2), ablation="no_hidden_state")
    yield db, run_id


def _episodes(bench: tuple[Path, str]) -> list[EpisodeRecord]:
    with Store(bench[0]) as store:
        return store.episodes(bench[1])


def test_analysis_ranks_references_and_probes_apart(bench: tuple[Path, str]) -> None:
    a = an.analyse(_episodes(bench), list(SUITE.all), SUITE)
    labels = [label for label, _ in an.ranked(a.rows, "ref")]
    assert labels[-1] == "ref" and a.rows[-1].policy == "oracle"
    assert labels.count("probe") == len(SUITE.exploits)
    ranked = [r.policy for r in a.rows if not (r.reference or r.probe)]
    assert set(ranked) == set(SUITE.baselines)
    norms = [r.normalised.mean for r in a.rows if not (r.reference or r.probe) and r.normalised]
    assert norms == sorted(norms, reverse=True)  # ranked by the normalised score
    by = {r.policy: r for r in a.rows}
    assert by["oracle"].normalised is not None and by["oracle"].normalised.mean == pytest.approx(1.0)
    assert by["expected-value"].vs_anchor is None
    assert by["random"].vs_anchor is not None
    assert {e.policy for e in a.exploits} == set(SUITE.exploits)
    assert a.failures["ev+truncation"].truncated == 3  # every episode ended at the invalid-action ceiling
    assert list(a.funnels["oracle"])[:1] == ["Engaged"]
    assert a.costs["random"].episodes == 3


def test_the_exploit_check_fails_when_a_probe_beats_its_twin(bench: tuple[Path, str]) -> None:
    eps = _episodes(bench)
    for probe in ("ev+crm-inflation", "spam-all"):
        boosted = [e if e.policy != probe else type(e)(**{**e.to_dict(), "metrics": {**(e.metrics or {}),
                   "primary": 1e6, "closed_value": 1e6}}) for e in eps]
        a = an.analyse(boosted, list(SUITE.all), SUITE)
        assert a.exploit_check.startswith("failed") and probe in an.exploit_line(a)
        assert not next(r for r in a.exploits if r.policy == probe).passed
    assert an.exploit_check(eps, ["spam-all"], anchor="nobody", paired={})[1].startswith("not run")


def test_report_files_and_inline_png(bench: tuple[Path, str], tmp_path: Path) -> None:
    with Store(bench[0]) as store:
        files = write_report(store, bench[1], tmp_path / "report")
    md = files.markdown.read_text()
    page = files.html.read_text()
    assert "## Leaderboard" in md and "| expected-value |" in md and "headroom" in md
    assert "normalised score" in md and "Paired differences vs expected-value" in md
    assert "Exploit check" in md and "| ev+crm-inflation | expected-value |" in md
    assert "<table" in page and "<td>expected-value</td>" in page
    images = re.findall(r'<img[^>]+src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) >= 2
    assert base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in files.images)
    assert 'src="http' not in page  # self-contained


def test_report_compares_ablation_runs(bench: tuple[Path, str], tmp_path: Path) -> None:
    with Store(bench[0]) as store:
        ablation = next(r.id for r in store.runs() if r.config.get("ablation") == "no_hidden_state")
        files = write_report(store, bench[1], tmp_path / "r", compare=[ablation])
    assert "## Ablations" in files.markdown.read_text()
    assert "no_hidden_state" in files.markdown.read_text()


def test_report_with_only_some_policies(tmp_path: Path) -> None:
    with Store(tmp_path / "one.sqlite") as store:
        run_id = run_benchmark(store, load("debug"), ("random",), LocalBackend(1)).run.id
        files = write_report(store, run_id, tmp_path / "one")
    md = files.markdown.read_text()
    assert "not run" in md  # the exploit check needs a probe
    assert "normalised score needs" not in md  # random is a floor: the score is made against the ceiling
