"""The typer options several benchmark commands declare (one definition each, so their flags and help agree)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from salesgym.bench import splits as sp
from salesgym.cli_options import finite

DEFAULT_DB = Path("runs") / "salesgym.sqlite"
WORKERS_MAX = 1024


SplitsDir = Annotated[
    Path | None,
    typer.Option("--splits-dir", help=f"directory of split manifests (default: ${sp.ENV_VAR} or <repo>/splits)"),
]
DbPath = Annotated[Path, typer.Option("--db", help="SQLite run database", dir_okay=False)]
RetryErrors = Annotated[bool, typer.Option("--retry-errors", help="re-run episodes that ended in an error")]
KeyFile = Annotated[
    Path | None,
    typer.Option(
        "--key-file", help=f"key of a private split (default: ${sp.KEY_ENV_VAR}); see `salesgym splits keygen`"
    ),
]
TemplatesDir = Annotated[
    Path | None,
    typer.Option(
        "--templates-dir",
        help=f"a workflows template pack's directory: the split cut over it (default: ${sp.PACK_ENV_VAR}); "
        "see docs/workflows.md, 'Template packs'",
    ),
]


PassThreshold = Annotated[
    float,
    typer.Option(
        "--pass-threshold",
        min=0,
        max=1,
        callback=finite,
        help="pass^k: a territory passes when every trial's normalised score is at least this",
    ),
]
PriceIn = Annotated[
    float | None, typer.Option("--price-in", min=0, callback=finite, help="$ per million prompt tokens")
]
PriceOut = Annotated[
    float | None, typer.Option("--price-out", min=0, callback=finite, help="$ per million completion tokens")
]
BuyerPriceIn = Annotated[
    float | None,
    typer.Option("--buyer-price-in", min=0, callback=finite,
                 help="--buyer llm: the buyer model's $ per million prompt tokens (its cost in the report)"),
]
BuyerPriceOut = Annotated[
    float | None,
    typer.Option("--buyer-price-out", min=0, callback=finite,
                 help="--buyer llm: the buyer model's $ per million completion tokens"),
]
PriceCached = Annotated[
    float | None,
    typer.Option(
        "--price-cached", min=0, callback=finite, help="$ per million cached prompt tokens (default: --price-in)"
    ),
]
PricesFile = Annotated[
    Path | None,
    typer.Option(
        "--prices", dir_okay=False, help="TOML or JSON file with input, output, cached ($/Mtok); flags override it"
    ),
]
