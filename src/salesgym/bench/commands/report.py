"""``salesgym report``: a run's Markdown and self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from salesgym.bench import analysis as an
from salesgym.bench.commands.console import check_out_dir, fail, open_store, out, write_error
from salesgym.bench.commands.options import (
    DEFAULT_DB,
    DbPath,
    PassThreshold,
    PriceCached,
    PriceIn,
    PriceOut,
    PricesFile,
)
from salesgym.bench.commands.prices import load_prices
from salesgym.bench.runner import BenchError
from salesgym.bench.store import StoreError


def report(
    run_id: Annotated[str, typer.Argument(help="run id printed by `salesgym bench`")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="output directory (default: runs/<RUN_ID>)")] = None,
    db: DbPath = DEFAULT_DB,
    compare: Annotated[
        list[str] | None, typer.Option("--compare", help="another run on the same split (e.g. an ablation); repeatable")
    ] = None,
    pass_threshold: PassThreshold = an.DEFAULT_PASS_THRESHOLD,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    price_cached: PriceCached = None,
    prices_file: PricesFile = None,
) -> None:
    """Write a Markdown and a self-contained HTML report of a run."""
    from salesgym.bench.report import write_report

    target = out_dir or Path("runs") / run_id
    check_out_dir(target, "the report")
    try:
        prices = load_prices(price_in, price_out, price_cached, prices_file)
    except BenchError as e:
        fail(str(e))
    store = open_store(db, readonly=True)
    try:
        run = store.get_run(run_id)
        assert run is not None
        for other in compare or []:
            o = store.get_run(other)
            assert o is not None
            if o.split != run.split:
                raise StoreError(f"--compare {other}: split {o.split!r} differs from {run.split!r}")
        files = write_report(store, run_id, target, compare or [], pass_threshold=pass_threshold, prices=prices)
    except StoreError as e:
        fail(str(e))
    except OSError as e:
        fail(write_error(target, "the report", e))
    finally:
        store.close()
    out.print(f"wrote {files.markdown} and {files.html}", markup=False, highlight=False, soft_wrap=True)
