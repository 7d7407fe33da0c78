"""The noise-floor study: how many territories (and trials) the benchmark needs to separate two policies whose
normalised scores differ by 2 points, per horizon tier. Its figures size the scored splits (docs/benchmark.md,
"How many territories").

Run from the repository root (resumable: a second run plays only what is missing):

    python benchmarks/noise_floor.py                          # pool of 8 territories per template and tier
    python benchmarks/noise_floor.py --per-template 4 --workers 2 --json runs/noise-floor.json

1. A pool manifest is cut from eval's templates (same generator, its own seeds), at each horizon tier of the
   scored splits, with more territories than eval has.
2. The ranked baselines, the floors, the oracle (the normalisation's top) and ``ev+max-discount`` play it once;
   a stochastic seller (``expected-value`` that loses a few minutes before a call now and then, seeded by
   the trial) plays it ``--trials`` times.
3. Per tier: every pair of ranked baselines gives per-territory differences of normalised scores; their spread
   is the noise a comparison has to beat. ``salesgym.bench.power`` turns the median pair's differences into the
   territories the bootstrap needs for a 2-point difference (80% power), and the stochastic seller's
   trial-to-trial spread into the same figure for 1, 2, 4 and 8 trials.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from itertools import combinations
from pathlib import Path
from typing import Any

from salesgym.agents.base import Action, wait
from salesgym.agents.territory.expected_value import ExpectedValue
from salesgym.bench import analysis as an
from salesgym.bench import power
from salesgym.bench import splits as sp
from salesgym.bench.policyspec import resolve_agent
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.store import EpisodeRecord, Store
from salesgym.envs.territory import splits as territory_splits

HERE = Path(__file__).resolve().parent
BASELINES = ("crm-stage", "expected-value", "earliest-deadline", "greedy-single")
FLOORS, TOP = ("idle", "random"), "oracle"
PAIRED = ("ev+max-discount",)
NOISY = "expected-value~noisy"
DELTA = 0.02  # 2 points of the normalised score (0 = the better floor, 1 = the oracle)


class NoisySeller(ExpectedValue):
    """``expected-value`` made stochastic: before one call in ten (chosen by its seeded generator) it waits a
    quarter of an hour first. Its quality is close to its parent's; its trials differ the way a sampling model's
    do, by small perturbations that the rest of the episode amplifies."""

    name = NOISY

    def act(self, observation: dict[str, Any]) -> Action:
        move = super().act(observation)
        if move["tool"] != "wait" and self.rng.random() < 0.1:
            return self._send(wait(hours=0.25))
        return move


def pool(per_template: int) -> dict[str, Any]:
    """A sealed manifest: eval's templates at each of eval's horizon tiers, ``per_template`` territories each."""
    templates = territory_splits.assign_templates(territory_splits.catalogue())["eval"]
    tiers = tuple(territory_splits.Tier(t.horizon_days, t.sizes, per_template)
                  for t in territory_splits.SHAPES["eval"].tiers)
    shape = territory_splits.SplitShape("noise-floor pool", tiers, seed_base=900_000)
    territories = territory_splits._territories("noise-floor", templates, shape)
    return sp.seal({"format_version": sp.FORMAT_VERSION, "name": "noise-floor", "description": shape.description,
                    "territories": territories})


def play(per_template: int, trials: int, workers: int, db: Path) -> tuple[sp.Manifest, list[EpisodeRecord]]:
    directory = Path(tempfile.mkdtemp(prefix="salesgym-noise-"))
    sp.write_manifest(pool(per_template), directory / "noise-floor.json")
    manifest = sp.load("noise-floor", directory)
    noisy = resolve_agent("noise_floor:NoisySeller", str(HERE))
    backend = LocalBackend(workers)
    with Store(db) as store:
        fixed = run_benchmark(store, manifest, (*FLOORS, *BASELINES, *PAIRED, TOP), backend)
        stochastic = run_benchmark(store, manifest, (noisy,), backend, trials=trials)
        return manifest, store.episodes(fixed.run.id) + store.episodes(stochastic.run.id)


def analyse(manifest: sp.Manifest, episodes: list[EpisodeRecord]) -> dict[str, Any]:
    out: dict[str, Any] = {"delta": DELTA, "tiers": {}}
    for horizon in sorted({t.horizon_days for t in manifest.territories}):
        ids = {t.id for t in manifest.territories if t.horizon_days == horizon}
        eps = [e for e in episodes if e.territory_id in ids]
        norm = {p: an.normalised_by_territory(eps, p, FLOORS, (TOP,)) for p in (*BASELINES, *PAIRED)}
        pairs: list[dict[str, Any]] = []
        for a, b in combinations(BASELINES, 2):
            common = sorted(norm[a].keys() & norm[b].keys())
            diffs = [norm[a][t] - norm[b][t] for t in common]
            pairs.append({"pair": f"{a} - {b}", "mean": statistics.fmean(diffs), "sd": statistics.stdev(diffs),
                          "diffs": diffs})
        pairs.sort(key=lambda p: p["sd"])
        median = pairs[len(pairs) // 2]
        needed = power.territories_needed(median["diffs"], DELTA)
        per_trial = an.normalised_by_episode(eps, NOISY, FLOORS, (TOP,))
        groups: dict[str, list[float]] = {}
        for (tid, _), v in per_trial.items():
            groups.setdefault(tid, []).append(v)
        sd_trial = None  # without two trials of the stochastic seller on some territory: no trial table
        trial_table: dict[int, int] = {}
        if any(len(g) > 1 for g in groups.values()):
            sd_trial = power.trial_spread(list(groups.values()))
            trial_table = {
                k: power.normal_territories(power.with_trials(median["sd"], sd_trial, k), DELTA) for k in (1, 2, 4, 8)
            }
        probe = sorted(norm["ev+max-discount"].keys() & norm["expected-value"].keys())
        primary = {p: an.metric_by_territory(eps, p, "primary") for p in ("expected-value", "ev+max-discount")}
        probe_diffs = [primary["ev+max-discount"][t] - primary["expected-value"][t] for t in probe]
        out["tiers"][str(horizon)] = {
            "territories": len(ids),
            "with_oracle": len(norm["expected-value"]),
            "mean_normalised": {p: statistics.fmean(v.values()) for p, v in norm.items() if v},
            "sd_normalised": {p: statistics.stdev(v.values()) for p, v in norm.items() if len(v) > 1},
            "pairs": [{k: v for k, v in p.items() if k != "diffs"} for p in pairs],
            "median_pair": median["pair"],
            "needed": {"sd": needed.sd, "bootstrap": needed.bootstrap, "normal": needed.normal},
            "sd_trial": sd_trial,
            "needed_by_trials_one_stochastic": trial_table,
            "max_discount_minus_twin_primary": {"mean": statistics.fmean(probe_diffs),
                                                "negative": sum(d < 0 for d in probe_diffs),
                                                "zero": sum(d == 0 for d in probe_diffs), "n": len(probe_diffs)},
        }
    return out


def render(result: dict[str, Any]) -> str:
    lines = [f"{'tier':>6} {'terr':>5} {'median pair':<36} {'sd':>6} {'n boot':>7} {'n normal':>8} {'sd trial':>8} "
             f"{'n @k=1/2/4/8 (one stochastic)':>30}"]
    for horizon, t in result["tiers"].items():
        k = t["needed_by_trials_one_stochastic"]
        sd_trial = "—" if t["sd_trial"] is None else f"{t['sd_trial']:.3f}"
        by_trials = "/".join(str(k[x]) for x in (1, 2, 4, 8)) if k else "—"
        lines.append(f"{horizon + 'd':>6} {t['with_oracle']:>5} {t['median_pair']:<36} {t['needed']['sd']:>6.3f} "
                     f"{t['needed']['bootstrap'] or '>1024':>7} {t['needed']['normal']:>8} {sd_trial:>8} "
                     f"{by_trials:>30}")
    for horizon, t in result["tiers"].items():
        lines.append(f"{horizon}d pairs (sd of normalised differences): "
                     + ", ".join(f"{p['pair']} {p['sd']:.3f}" for p in t["pairs"]))
        m = t["max_discount_minus_twin_primary"]
        lines.append(f"{horizon}d ev+max-discount - expected-value (primary): mean {m['mean']:+.2f}, "
                     f"{m['negative']} of {m['n']} territories below, {m['zero']} equal")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-template", type=int, default=8, help="pool territories per template and tier")
    ap.add_argument("--trials", type=int, default=4, help="trials of the stochastic seller")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--db", type=Path, default=Path("runs/noise-floor.sqlite"))
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    a = ap.parse_args(argv)
    a.db.parent.mkdir(parents=True, exist_ok=True)
    manifest, episodes = play(a.per_template, a.trials, a.workers, a.db)
    result = analyse(manifest, episodes)
    print(render(result))
    if a.json is not None:
        a.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
