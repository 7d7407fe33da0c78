"""The report's scenario breakdowns: mean primary per family / template / size of the split, in the
environment's own words (the desk's transfer split: per buyer variant), from real runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from salesgym.bench import splits as sp
from salesgym.bench.breakdown import breakdowns
from salesgym.bench.report import write_report
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.store import Store


@pytest.fixture(scope="module")
def desk_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("breakdown") / "r.sqlite"
    manifest = sp.load("desk-transfer")
    with Store(db) as store:
        run = run_benchmark(store, manifest, ["quote-then-fit", "idle", "random", "oracle"], LocalBackend(1),
                            episodes=6).run
    return db, run.id


def test_cells_are_the_mean_primary_of_each_value(desk_run: tuple[Path, str]) -> None:
    db, run_id = desk_run
    manifest = sp.load("desk-transfer")
    with Store(db, readonly=True) as store:
        episodes = store.episodes(run_id)
    layout = manifest.layout[:6]
    by = {b.dimension: b for b in breakdowns(layout, episodes, ["quote-then-fit", "oracle"])}
    assert set(by) == {"family", "template"}  # one size and one horizon here: no table for those
    variant = {t.id: t.family for t in layout}
    for policy in ("quote-then-fit", "oracle"):
        for value in by["family"].values:
            scores = [e.metrics["primary"] for e in episodes
                      if e.policy == policy and e.metrics and variant[e.territory_id] == value]
            assert by["family"].cells[policy][value] == pytest.approx(sum(scores) / len(scores))
    assert by["family"].territories == {v: 3 for v in by["family"].values}


def test_the_report_names_the_desks_dimensions(desk_run: tuple[Path, str], tmp_path: Path) -> None:
    db, run_id = desk_run
    with Store(db, readonly=True) as store:
        md = write_report(store, run_id, tmp_path / "rep").markdown.read_text()
    assert "## By buyer variant (mean primary)" in md and "## By lead mix (mean primary)" in md
    header = next(line for line in md.splitlines() if line.startswith("| policy | skeptical"))
    assert header == "| policy | skeptical (3) | impulsive (3) |"  # only what the run played
    assert md.index("## By buyer variant") < md.index("## Secondary metrics")


def test_a_territory_report_breaks_down_by_family(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    with Store(db) as store:
        run = run_benchmark(store, sp.load("debug"), ["expected-value", "idle"], LocalBackend(1)).run
        md = write_report(store, run.id, tmp_path / "rep").markdown.read_text()
    assert "## By family (mean primary)" in md and "## By opportunities (mean primary)" in md


def test_a_workflow_counts_once_for_each_app_it_uses(tmp_path: Path) -> None:
    """The per-app table: a task on the CRM and the scheduler counts in both columns; cells are mean primaries."""
    from salesgym.bench.breakdown import tag_breakdowns

    manifest = sp.load("workflows-eval")
    db = tmp_path / "w.sqlite"
    with Store(db) as store:
        run = run_benchmark(store, manifest, ["idle", "reference"], LocalBackend(1), episodes=7).run
        episodes = store.episodes(run.id)
        md = write_report(store, run.id, tmp_path / "rep").markdown.read_text()
    from salesgym.envs.workflows.tasks.templates import TEMPLATES

    (by_app,) = tag_breakdowns(manifest.layout[:7], episodes, ["idle", "reference"], {"apps": "app"})
    # every task counts once in the column of each app its template uses (the split's first 7 tasks)
    expected = Counter(app for slot in manifest.layout[:7] for app in TEMPLATES[slot.template].apps)
    assert len(expected) >= 2 and max(expected.values()) > 1  # the split still has tasks on several apps
    assert by_app.territories == dict(expected)
    assert by_app.cells["reference"] == dict.fromkeys(expected, 1.0)
    assert set(by_app.cells["idle"].values()) == {0.0}
    header = "| policy | " + " | ".join(f"{app} ({n})" for app, n in by_app.territories.items()) + " |"
    assert "## By app (mean primary)" in md and header in md
    assert "## By tier (mean primary)" in md
