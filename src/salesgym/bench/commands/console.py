"""Where the commands print, and how they fail: one ``error:`` line on stderr and a non-zero exit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from salesgym.bench.store import Store, StoreError
from salesgym.cli_options import one_line

# Into a file or a pipe rich assumes 80 columns and cuts the leaderboard's figures ("0.…"); a terminal keeps its width.
out = Console() if sys.stdout.isatty() else Console(width=200)
err = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    # escaped: a message quotes user input (a policy name, a path), which must not be read as rich markup
    err.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def write_error(path: Path, what: str, e: OSError) -> str:
    where = e.filename if isinstance(e.filename, str) else str(path)
    return f"{where}: cannot write {what}: {e.strerror or e}"


def check_parents(path: Path) -> None:
    """The nearest existing ancestor of an output path must be a directory (else nothing can be created)."""
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                fail(f"{parent}: is not a directory, so {path} cannot be created")
            return


def check_out_dir(path: Path, what: str) -> None:
    """An output directory that exists as something else is refused before any work is done."""
    if path.exists() and not path.is_dir():
        fail(f"{path}: exists and is not a directory (--out takes a directory for {what})")
    check_parents(path)


def open_store(db: Path, *, readonly: bool = False) -> Store:
    """The run database; readers open it read-only and need it to exist."""
    if readonly and not db.exists():
        fail(f"{db}: no run database here (run `salesgym bench` first or pass --db)")
    try:
        return Store(db, readonly=readonly)
    except StoreError as e:
        fail(str(e))
