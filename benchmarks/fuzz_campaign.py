"""A long fuzz campaign against the territory tool parser and engine.

Runs the generator of ``tests/territory/test_fuzz.py`` (valid calls, re-spelled and mutated ones, junk JSON
texts and junk Python objects: deep nesting, huge integers, odd keys, objects whose methods raise) over many
episodes of every size (3-5 and 10-100 opportunities), horizon (30/90/180 days), scenario family and template,
and counts calls, uncaught exceptions and side effects (a refused call that changed anything besides its one
``invalid_action``). Every call gets the test's checks; work is split into chunks with their own seeds, so a
chunk that found a problem replays alone (``--seed S --chunk-calls N`` and the chunk's index in the output).

    python benchmarks/fuzz_campaign.py --calls 1000000 --seed 1 --workers 2 --json runs/fuzz_campaign.json

Needs the test extra (``pip install -e '.[test]'``). Exits 1 if any promise was broken.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (3, 4, 5, *range(10, 101))
HORIZONS = (30, 90, 180)
EPISODE_CALLS = 1000  # most episodes end sooner: the invalid-action ceiling, the horizon, every deal closed
PROBLEMS_KEPT = 20  # per chunk; the counts are complete


def _fuzz_module() -> ModuleType:
    """The test suite's generator and checks (one generator for the suite and the campaign)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import conftest  # noqa: F401 - registers the ``salesgym_testkit`` helpers the fuzz module imports

    spec = importlib.util.spec_from_file_location("salesgym_fuzz", ROOT / "tests" / "territory" / "test_fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the module runs
    spec.loader.exec_module(module)
    return module


_FUZZ: ModuleType | None = None


def run_chunk(task: tuple[int, int, int]) -> dict[str, Any]:
    """One chunk of calls with its own seed; returns plain counts (they cross a process boundary)."""
    global _FUZZ
    if _FUZZ is None:
        _FUZZ = _fuzz_module()
    index, seed, calls = task
    t0 = time.perf_counter()
    tally = _FUZZ.fuzz(seed, calls, sizes=SIZES, horizons=HORIZONS, episode_calls=EPISODE_CALLS,
                       max_problems=10**9)
    return {
        "chunk": index, "seed": seed, "seconds": time.perf_counter() - t0,
        "calls": tally.calls, "ok": tally.ok, "refused": tally.refused, "after_end": tally.after_end,
        "raised": tally.raised, "side_effects": tally.side_effects, "episodes": tally.episodes,
        "problem_count": len(tally.problems), "problems": tally.problems[:PROBLEMS_KEPT], "kinds": dict(tally.kinds),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000, help="calls in all (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=1, help="campaign seed; chunk i uses seed * 1,000,003 + i")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--chunk-calls", type=int, default=20_000, help="calls per chunk (default 20,000)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON to this path")
    args = parser.parse_args(argv)

    n_chunks = -(-args.calls // args.chunk_calls)
    tasks = [(i, args.seed * 1_000_003 + i, min(args.chunk_calls, args.calls - i * args.chunk_calls))
             for i in range(n_chunks)]
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    problems: list[str] = []
    t0 = time.perf_counter()
    with Pool(args.workers) as pool:
        for done, chunk in enumerate(pool.imap_unordered(run_chunk, tasks), 1):
            totals.update({k: chunk[k] for k in ("calls", "ok", "refused", "after_end", "raised", "side_effects",
                                                  "episodes", "problem_count")})
            kinds.update(chunk["kinds"])
            problems += [f"chunk {chunk['chunk']} (seed {chunk['seed']}): {p}" for p in chunk["problems"]]
            elapsed = time.perf_counter() - t0
            print(f"[{done}/{n_chunks}] {totals['calls']:,} calls, {totals['raised']} raised, "
                  f"{totals['side_effects']} side effects, {totals['problem_count']} problems, {elapsed:,.0f} s",
                  flush=True)
    wall = time.perf_counter() - t0
    summary = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "python": platform.python_version(), "workers": args.workers, "seed": args.seed,
        "chunk_calls": args.chunk_calls, "wall_seconds": round(wall, 1),
        "calls_per_second": round(totals["calls"] / wall, 1), **totals, "kinds": dict(sorted(kinds.items())),
        "problems": problems[:100],
    }
    print(json.dumps({k: v for k, v in summary.items() if k not in ("kinds", "problems")}, indent=2))
    print("calls by kind and status:")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind:24s} {n:>10,}")
    for p in problems[:20]:
        print("PROBLEM", p)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return 1 if totals["problem_count"] else 0


if __name__ == "__main__":
    sys.exit(main())
