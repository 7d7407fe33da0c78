"""Instructions per step and per reset, counted by valgrind: a figure that does not move with machine load.

Wall times on a shared machine wander by ±30% between runs; the number of instructions the CPU retires for
the same work does not. This records the calls of scripted episodes at 100 opportunities (the same policy
as ``bench_env.py``), then runs them again in child processes under ``valgrind --tool=cachegrind`` and
subtracts a run that only builds the environments. Use it to compare two versions of the code side by side:

    python benchmarks/step_instructions.py                  # needs valgrind (apt install valgrind)
    python benchmarks/step_instructions.py --policy expected-value   # a registered policy's calls instead
    PYTHONPATH=/path/to/other/src python benchmarks/step_instructions.py --calls runs/calls.json

It takes about half a minute (valgrind runs Python some 50× slower).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import timing

STEPS_PER_EPISODE = 400
EPISODES = 2
RESETS = 20


def record(path: Path, policy: str | None) -> None:
    """The calls to count: ``bench_env``'s scripted episodes, or whole episodes of a registered ``policy`` (the
    calls ``bench_env`` times as "step, expected-value's calls")."""
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_env

    episodes = []
    for seed in range(EPISODES):
        if policy is None:
            ep = bench_env.Episode(100, 1000 + seed)
            ep.run(STEPS_PER_EPISODE)
            episodes.append({"seed": ep.seed, "calls": ep.actions})
        else:
            rec = bench_env.record_policy(policy, 100, 7 + seed)
            episodes.append({"seed": rec.seed, "calls": rec.actions})
    path.write_text(json.dumps(episodes))


def child(mode: str, path: Path) -> None:
    """What runs under valgrind: build the environments, then (by mode) step the calls or reset."""
    import salesgym

    episodes = json.loads(path.read_text())
    envs = []
    for ep in episodes:
        env = salesgym.make("territory-v0", n_opportunities=100, horizon_days=90, invalid_action_limit=10**9)
        env.reset(seed=ep["seed"])
        envs.append(env)
    if mode == "steps":
        for env, ep in zip(envs, episodes, strict=True):
            for call in ep["calls"]:
                len(env.step(call)[0]["text"])
    elif mode == "resets":
        for seed in range(RESETS):
            envs[0].reset(seed=60_000 + seed)


def instructions(mode: str, path: Path) -> int:
    return timing.instructions(__file__, mode, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, help="recorded calls (JSON); recorded afresh if missing")
    parser.add_argument("--policy", help="record whole episodes of this registered policy (default: scripted calls)")
    parser.add_argument("--child", choices=["setup", "steps", "resets"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.calls)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = args.calls or Path(tmp) / "calls.json"
        if not path.exists():
            record(path, args.policy)
        n_steps = sum(len(ep["calls"]) for ep in json.loads(path.read_text()))
        setup = instructions("setup", path)
        per_step = (instructions("steps", path) - setup) / n_steps
        per_reset = (instructions("resets", path) - setup) / RESETS
    print(f"{per_step / 1e3:.1f}k instructions per step ({n_steps} recorded calls at 100 opportunities)")
    print(f"{per_reset / 1e6:.2f}M instructions per reset (100 opportunities, fresh seeds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
