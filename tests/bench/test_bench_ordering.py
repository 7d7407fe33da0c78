"""The published splits rank policies the way the benchmark promises: oracle > expected-value > random on
`eval` and `held-out`, with the oracle's lead and expected-value's lead both clear (bootstrap CIs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from salesgym.bench import analysis as an
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.splits import load
from salesgym.bench.store import Store


@pytest.mark.parametrize("split", ["eval", "held-out"])
def test_oracle_beats_expected_value_beats_random(tmp_path: Path, split: str) -> None:
    with Store(tmp_path / "r.sqlite") as store:
        out = run_benchmark(store, load(split), ("random", "expected-value", "oracle"), LocalBackend(2))
        a = an.analyse(store.episodes(out.run.id), ["random", "expected-value", "oracle"], reference=("oracle",))
    rows = {r.policy: r for r in a.rows}
    oracle, ev, rnd = (rows[p].primary for p in ("oracle", "expected-value", "random"))
    assert oracle is not None and ev is not None and rnd is not None
    assert oracle.mean > 1.3 * ev.mean > 0 > rnd.mean or oracle.mean > 1.3 * ev.mean > 1.3 * rnd.mean
    # paired differences on the same territories: expected-value's lead over random is not noise
    diff = rows["random"].vs_anchor
    assert diff is not None and diff.significant and diff.mean < 0
    assert rows["expected-value"].normalised is not None and 0.3 < rows["expected-value"].normalised < 0.9
