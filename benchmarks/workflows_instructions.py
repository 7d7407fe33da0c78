"""Instructions per workflows step, counted by valgrind: a figure that does not move with machine load.

Records every template's reference solution (as ``bench_workflows.py`` does), then replays the calls in child
processes under ``valgrind --tool=cachegrind`` and subtracts a run that only resets the environments, so the
difference is the steps alone. Compare two versions of the code side by side:

    python benchmarks/workflows_instructions.py                 # needs valgrind (apt install valgrind)
    PYTHONPATH=/path/to/other/src python benchmarks/workflows_instructions.py --calls runs/wf_calls.json

About a minute (valgrind runs Python some 50x slower).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import timing

EPISODES_PER_TEMPLATE = 3


def child(mode: str, calls_file: str) -> None:
    import salesgym

    for template, seed, calls in json.loads(Path(calls_file).read_text()):
        env = salesgym.make("workflows-v0", template=template)
        for _ in range(EPISODES_PER_TEMPLATE):
            env.reset(seed=seed)
            if mode == "steps":
                for call in calls:
                    env.step(call)


def instructions(mode: str, path: Path) -> int:
    return timing.instructions(__file__, mode, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", help="reuse (or write) the recorded calls here, to compare two code versions")
    parser.add_argument("--child", choices=("steps", "resets"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.calls or Path(tmp) / "calls.json")
        if not path.exists():
            sys.path.insert(0, str(Path(__file__).parent))
            from bench_workflows import solutions

            path.write_text(json.dumps(solutions()))
        plan = json.loads(path.read_text())
        steps = sum(len(calls) for _, _, calls in plan) * EPISODES_PER_TEMPLATE
        diff = instructions("steps", path) - instructions("resets", path)
    print(json.dumps({"steps": steps, "instructions_per_step": round(diff / steps)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
