"""Write the recipe's verl datasets from salesgym split manifests (one row per world, routed to the
``salesgym`` agent loop): ``python recipes/verl/make_data.py [--train train] [--val eval-lite] [--out data/salesgym]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from salesgym.adapters.verl import split_tasks, write_dataset
from salesgym.bench.splits import SplitError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", default="train", help="split for data.train_files (default: train)")
    parser.add_argument("--val", default="eval-lite", help="split for data.val_files (default: eval-lite)")
    parser.add_argument("--out", default="data/salesgym", type=Path, help="folder for train.parquet, eval.parquet")
    args = parser.parse_args(argv)
    try:
        for name, split in (("train", args.train), ("eval", args.val)):
            path = write_dataset(args.out / f"{name}.parquet", split_tasks(split))
            print(f"{path}: split {split}")
    except (SplitError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
