"""The benchmark's commands on the main command line (``salesgym bench``, ``calibrate``, ``report``, ``export``,
``runs``, ``view``, ``splits``): each lives in its own module; this one only puts them on the app, so no command
module imports another's (they share the ``commands`` package's options, console and checks)."""

from __future__ import annotations

import typer

from salesgym.bench.calibrate_command import calibrate
from salesgym.bench.commands.bench import bench
from salesgym.bench.commands.export import export
from salesgym.bench.commands.report import report
from salesgym.bench.commands.runs import runs
from salesgym.bench.commands.splits import splits_app
from salesgym.bench.view import view_command


def register(app: typer.Typer) -> None:
    """Add the benchmark's commands to ``app``."""
    app.command()(bench)
    app.command()(calibrate)
    app.command()(report)
    app.command()(export)
    app.command()(runs)
    app.command("view")(view_command)
    app.add_typer(splits_app, name="splits")
