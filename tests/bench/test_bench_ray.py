"""The Ray backend on a real local Ray cluster returns exactly what the local backend returns."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from salesgym.bench import runner
from salesgym.bench.runner import EpisodeSpec, LocalBackend, RayBackend
from salesgym.bench.store import EpisodeRecord

ray = pytest.importorskip("ray", reason="the ray extra is not installed")



def _key(records: Sequence[EpisodeRecord]) -> list[tuple[object, ...]]:
    return sorted((r.policy, r.territory_id, r.seed, r.status, repr(r.metrics), r.steps, r.tool_calls) for r in records)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    started = runner.init_ray(None, 2)  # a real local cluster, as `salesgym bench --backend ray` starts one
    yield
    if started:
        ray.shutdown()


@pytest.mark.campaign  # minutes: runs with the campaigns (python -m pytest -m campaign)
def test_ray_matches_local_on_the_debug_split(ray_cluster: None) -> None:
    from salesgym.agents import suite

    BASELINES = suite().baselines
    from salesgym.bench.splits import load

    manifest = load("debug")
    specs = [EpisodeSpec(p, t) for p in (*BASELINES, "oracle") for t in manifest.territories]
    local = list(LocalBackend(2).run(specs))
    remote = list(RayBackend().run(specs))
    assert all(r.status != "error" for r in local), [r.error for r in local if r.error][:1]
    assert _key(local) == _key(remote)
    assert ray.is_initialized()  # the backend does not shut down a cluster it did not start
