"""Cost of the desk environment at 100 leads: reset, step (with observation), clone, beside a reference
operation measured in the same run (a json dumps+loads round trip of a ~2 KB dict, as ``bench_env.py``).

Run from the repository root:

    python benchmarks/bench_desk.py            # about ten seconds
    python benchmarks/bench_desk.py --json out.json

Steps are the calls the `quote-then-fit` and `random` baselines make over whole shifts (searches, calls,
discovery, quotes, offers, callbacks, waits), replayed against fresh environments so only ``env.step`` is
timed. Targets (issue 11): reset <= 2 ms, step <= 50 us, clone <= 0.1 ms.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from typing import Any

from timing import REFERENCE, best_of

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout

ENV_ID, N_LEADS, SHIFT_DAYS = "desk-v0", 100, 2
TARGETS = {"reset_ms": 2.0, "step_us": 50.0, "clone_ms": 0.1}




def actions(policy: str, seed: int) -> list[Any]:
    env = salesgym.make(ENV_ID, n_leads=N_LEADS, shift_days=SHIFT_DAYS)
    return [s.action for s in rollout(env, make_policy(policy, seed, family="desk"), seed)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    reference_s = best_of(lambda: json.loads(json.dumps(REFERENCE)), 7, 2000)
    env = salesgym.make(ENV_ID, n_leads=N_LEADS, shift_days=SHIFT_DAYS)
    reset_s = best_of(lambda: env.reset(seed=11), 7, 50)
    step_times: list[float] = []
    steps = 0
    for policy, seed in (("quote-then-fit", 1), ("quote-then-fit", 2), ("random", 3)):
        calls = actions(policy, seed)
        for _ in range(5):
            env.reset(seed=seed)
            gc.disable()
            t = time.perf_counter()
            for a in calls:
                env.step(a)
            step_times.append((time.perf_counter() - t) / len(calls))
            gc.enable()
        steps += len(calls)
    env.reset(seed=1)
    for a in actions("quote-then-fit", 1)[:150]:  # clone mid-shift
        env.step(a)
    clone_s = best_of(env.clone, 7, 500)
    figures = {
        "reference_us": reference_s * 1e6,
        "reset_ms": reset_s * 1e3,
        "step_us": statistics.median(step_times) * 1e6,
        "clone_ms": clone_s * 1e3,
        "steps_timed": steps,
    }
    print(f"desk-v0 at {N_LEADS} leads; reference op (json round trip of a 2 KB dict): "
          f"{figures['reference_us']:.1f} us")  # fmt: skip
    for key, target in TARGETS.items():
        value = figures[key]
        unit = key.split("_")[1]
        ratio = value * (1e3 if unit == "ms" else 1.0) / figures["reference_us"]
        verdict = "ok" if value <= target else "OVER"
        print(f"  {key[:-3]:6s} {value:8.3f} {unit}  = {ratio:6.1f} x reference   "
              f"target <= {target:g} {unit}  {verdict}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
