"""Episodes per second of the heuristic baseline suite with 1 and 2 local workers.

    python benchmarks/bench_throughput.py                  # debug split, workers 1 and 2
    python benchmarks/bench_throughput.py --split eval --workers 1 2 4 --json runs/throughput.json

Runs the same episodes for every worker count (no store, nothing skipped), checks that every worker count
produced identical results, and prints episodes/s, steps/s and the speed-up over one worker. Process
start-up is included in the wall time, as a user of ``salesgym bench`` pays it too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from salesgym.bench.runner import BenchError, EpisodeSpec, LocalBackend, policy_suite
from salesgym.bench.splits import SplitError, load


def measure(specs: list[EpisodeSpec], workers: int) -> tuple[float, list[tuple[object, ...]], int, int]:
    start = time.perf_counter()
    records = list(LocalBackend(workers=workers).run(specs))
    wall = time.perf_counter() - start
    key = sorted((r.policy, r.territory_id, r.status, json.dumps(r.metrics, sort_keys=True), r.steps) for r in records)
    return wall, key, sum(r.steps for r in records), sum(r.status == "error" for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="debug", help="split to use (default: debug)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default: 1 2)")
    parser.add_argument("--episodes", type=int, default=None, help="first N territories only")
    parser.add_argument("--splits-dir", default=None, help="directory of split manifests")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if any(w < 1 for w in args.workers):
        parser.error("--workers must be >= 1")
    try:
        manifest = load(args.split, args.splits_dir)
        suite = policy_suite("territory")
    except (SplitError, BenchError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    territories = manifest.limited(args.episodes)
    specs = [EpisodeSpec(p, t) for p in suite.baselines for t in territories]
    print(
        f"split {manifest.name}: {len(territories)} territories x {len(suite.baselines)} baselines = {len(specs)} "
        f"episodes; {os.cpu_count()} cores"
    )
    rows: list[dict[str, float | int]] = []
    reference: list[tuple[object, ...]] | None = None
    base_rate = 0.0
    for w in args.workers:
        wall, key, steps, errors = measure(specs, w)
        if errors:
            print(f"error: {errors} episode(s) failed with {w} worker(s)", file=sys.stderr)
            return 1
        if reference is None:
            reference = key
        elif key != reference:
            print(f"error: results with {w} workers differ from {args.workers[0]} worker(s)", file=sys.stderr)
            return 1
        rate = len(specs) / wall
        base_rate = base_rate or rate
        rows.append({"workers": w, "wall_s": wall, "episodes_per_s": rate, "steps_per_s": steps / wall})
        print(
            f"workers={w}: {wall:7.2f} s  {rate:7.2f} episodes/s  {steps / wall:9.0f} steps/s  x{rate / base_rate:.2f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"split": manifest.name, "episodes": len(specs), "cores": os.cpu_count(), "results": rows}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
