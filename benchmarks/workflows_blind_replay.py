"""The blind-replay campaign over the workflows catalogue: for every template, the calls that solved seed A's
instance (its reference solution, exactly as sent) replayed on twenty other seeds; how many each solves, and the
worst template. A count, not a timing: the same on any machine.

    python benchmarks/workflows_blind_replay.py                 # seed 1, every template (a few minutes)
    python benchmarks/workflows_blind_replay.py --seed 7 --template crm-lifecycle-reset
    python benchmarks/workflows_blind_replay.py --json runs/blind_replay.json

Exit status 1 when a template's calls solve more than one of the twenty (the conformance kit's bound).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.testing import Case
from salesgym.testing.conformance import BLIND_SEEDS, blind_replay

MOST = 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="the instance whose calls are replayed (seed A)")
    parser.add_argument("--template", action="append", help="only these templates (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the per-template counts here")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.template or ()) - set(TEMPLATES))
    if unknown:
        parser.error(f"unknown template(s): {', '.join(unknown)}")
    counts: dict[str, int] = {}
    for template in args.template or list(TEMPLATES):
        counts[template] = len(blind_replay(Case("workflows-v0", {"template": template}), args.seed))
        if counts[template]:
            print(f"{template}: seed {args.seed}'s calls solved {counts[template]} of {len(BLIND_SEEDS)}", flush=True)
    worst = max(counts, key=lambda t: counts[t])
    episodes = len(counts) * len(BLIND_SEEDS)
    print(f"{len(counts)} templates, {episodes} replayed episodes: {sum(counts.values())} solved; worst "
          f"{worst} ({counts[worst]} of {len(BLIND_SEEDS)}); templates above {MOST}: "
          f"{sum(c > MOST for c in counts.values())}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"seed": args.seed, "others": list(BLIND_SEEDS), "solved": counts}, indent=1))
    return 1 if counts[worst] > MOST else 0


if __name__ == "__main__":
    sys.exit(main())
