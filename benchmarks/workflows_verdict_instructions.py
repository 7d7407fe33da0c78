"""Instructions of a workflows verdict, counted by valgrind: a figure that does not move with machine load.

Plays a template's reference solution on a few episodes, then finishes them: the ``finish_task`` step (it judges
the task) and the ``score()`` after it, each as the difference of two child runs under ``valgrind
--tool=cachegrind`` (one that stops before finishing, one that finishes, one that also scores). The template's
jq programs are compiled first in every run, so the figures are what every later episode pays. Compare two
versions of the code side by side:

    python benchmarks/workflows_verdict_instructions.py                        # inbound-new-company, 4 episodes
    PYTHONPATH=/path/to/other/src python benchmarks/workflows_verdict_instructions.py --template T

A few minutes (valgrind runs Python some 50x slower); runs differ by about 2 M instructions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import timing


def child(mode: str, plan_file: str) -> None:
    import salesgym
    from salesgym.envs.workflows.tasks.model import resolve

    plan = json.loads(Path(plan_file).read_text())

    def played(seed: int) -> object:
        env = salesgym.make("workflows-v0", template=plan["template"])
        env.reset(seed=seed)
        secret, outputs = env._world.secret, list[Any]()
        for action in secret.solution:
            outputs.append(env.step(resolve(action, secret.params, outputs))[4]["tool_result"]["output"])
        return env

    warm = played(10_000)
    warm.step({"tool": "finish_task", "args": {}})  # type: ignore[attr-defined]
    warm.score()  # type: ignore[attr-defined]
    envs = [played(seed) for seed in range(1, plan["episodes"] + 1)]
    if mode in ("finish", "score"):
        for env in envs:
            env.step({"tool": "finish_task", "args": {}})  # type: ignore[attr-defined]
    if mode == "score":
        for env in envs:
            env.score()  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default="inbound-new-company")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--child", choices=("played", "finish", "score"), help=argparse.SUPPRESS)
    parser.add_argument("--calls", help=argparse.SUPPRESS)  # the plan file (timing.instructions passes --calls)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.json"
        path.write_text(json.dumps({"template": args.template, "episodes": args.episodes}))
        played, finished, scored = (timing.instructions(__file__, mode, path) for mode in ("played", "finish", "score"))
    print(json.dumps({"template": args.template, "episodes": args.episodes,
                      "finish_task_step": round((finished - played) / args.episodes),
                      "score_after_finish": round((scored - finished) / args.episodes)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
