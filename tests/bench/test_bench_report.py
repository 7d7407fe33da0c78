"""Reports and the analysis behind them, on a small synthetic store (real SQLite file)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from salesgym.bench import analysis as an
from salesgym.bench.fakes import synthetic_episodes, synthetic_territories
from salesgym.bench.report import write_report
from salesgym.bench.store import RunRecord, Store

POLICIES = ("random", "expected-value", "crm-stage", "spam-all", "forger", "always-discount", "oracle")


def _store(
    tmp_path: Path, policies: tuple[str, ...] = POLICIES, run_id: str = "eval-test", ablation: str | None = None
) -> Store:
    store = Store(tmp_path / "runs.sqlite")
    store.ensure_run(RunRecord(run_id, "", "eval", "c" * 64, policies, {"ablation": ablation}, "0.1.0", None))
    for ep in synthetic_episodes(policies, synthetic_territories(8)):
        store.record(run_id, ep)
    return store


def test_analysis_ranks_and_checks_exploits(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        a = an.analyse(store.episodes("eval-test"), list(POLICIES))
    ranked = [r.policy for r in a.rows if not r.reference]
    assert ranked[0] == "expected-value" and "oracle" not in ranked
    assert a.rows[-1].policy == "oracle" and a.rows[-1].reference
    by = {r.policy: r for r in a.rows}
    assert by["random"].normalised == pytest.approx(0.0)
    assert by["oracle"].normalised == pytest.approx(1.0)
    assert by["random"].vs_anchor is not None and by["random"].vs_anchor.mean < 0
    assert by["expected-value"].vs_anchor is None
    assert a.exploit_check == "passed" and {e.policy for e in a.exploits} == {"spam-all", "forger", "always-discount"}
    assert a.failures["forger"].violations["claim_without_evidence"] > 0
    assert list(a.funnels["oracle"])[:2] == ["identified", "engaged"]
    assert a.costs["random"].episodes == 8


def test_exploit_check_fails_when_a_probe_beats_the_anchor(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        eps = store.episodes("eval-test")
    boosted = [
        e if e.policy != "spam-all" else type(e)(**{**e.to_dict(), "metrics": {**(e.metrics or {}), "primary": 1e6}})
        for e in eps
    ]
    a = an.analyse(boosted, list(POLICIES))
    assert a.exploit_check == "failed"
    assert "spam-all" in an.exploit_line(a)
    assert an.exploit_check(eps, ["spam-all"], anchor="nobody")[1].startswith("not run")


def test_report_files_and_inline_png(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        files = write_report(store, "eval-test", tmp_path / "report")
    md = files.markdown.read_text()
    page = files.html.read_text()
    assert "## Leaderboard" in md and "| expected-value |" in md and "headroom" in md
    assert "Exploit check: passed" in md and "Paired differences vs expected-value" in md
    assert "<table" in page and "<td>expected-value</td>" in page
    images = re.findall(r'<img[^>]+src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) >= 2
    assert base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in files.images)
    assert 'src="http' not in page  # self-contained


def test_report_compares_ablation_runs(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        store.ensure_run(
            RunRecord("eval-abl", "", "eval", "c" * 64, POLICIES, {"ablation": "no_hidden_state"}, "0.1.0")
        )
        for ep in synthetic_episodes(POLICIES, synthetic_territories(8)):
            store.record("eval-abl", ep)
        files = write_report(store, "eval-test", tmp_path / "r", compare=["eval-abl"])
    assert "## Ablations" in files.markdown.read_text()
    assert "no_hidden_state" in files.markdown.read_text()


def test_report_with_only_some_policies(tmp_path: Path) -> None:
    with _store(tmp_path, policies=("random",), run_id="eval-one") as store:
        files = write_report(store, "eval-one", tmp_path / "one")
    md = files.markdown.read_text()
    assert "not run" in md  # exploit check needs the anchor and a probe
    assert "normalised score needs" in md
