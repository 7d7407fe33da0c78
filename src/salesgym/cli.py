"""The ``salesgym`` command line: demo, benchmark, reports, split checks, the service (serve, mcp, play), the
workflow templates (templates list/show).

Errors are one ``error:`` line on stderr and a non-zero exit: 2 for a bad command line, 1 for bad input
(a split, a database, a path), 130/143 when interrupted, 70 for a bug (set ``SALESGYM_DEBUG=1`` to see its
traceback). Never a traceback otherwise.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from salesgym.bench.cli import register as register_bench
from salesgym.cli_options import SEED_MAX, STEPS_MAX, one_line
from salesgym.cli_templates import register as register_templates
from salesgym.serve.commands import register as register_serve
from salesgym.webapps.commands import register as register_apps

DEBUG_ENV = "SALESGYM_DEBUG"
EXIT_INTERNAL = 70  # EX_SOFTWARE


def _is_cli_error(e: BaseException) -> bool:
    """A usage or parameter error of the command line (click's, or the copy newer typers carry)."""
    return callable(getattr(e, "format_message", None)) and isinstance(getattr(e, "exit_code", None), int)


class _OneLineErrors(TyperGroup):
    """Typer's group, with usage errors and unexpected exceptions reported as one ``error:`` line."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # click's main(args, prog_name, complete_var, standalone_mode, ...): run it non-standalone to see errors
        positional = list(args)
        if len(positional) > 3:
            standalone = bool(positional[3])
            positional[3] = False
        else:
            standalone = bool(kwargs.pop("standalone_mode", True))
            kwargs["standalone_mode"] = False
        if not standalone:
            return super().main(*positional, **kwargs)
        try:
            rv = super().main(*positional, **kwargs)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        except Exception as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # bare `salesgym` or `salesgym splits`: show the help
                e.show()  # type: ignore[attr-defined]
                sys.exit(e.exit_code)  # type: ignore[attr-defined]
            if _is_cli_error(e):
                ctx = getattr(e, "ctx", None)
                hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
                typer.echo(f"error: {one_line(e.format_message())}{hint}", err=True)  # type: ignore[attr-defined]
                sys.exit(e.exit_code)  # type: ignore[attr-defined]
            if os.environ.get(DEBUG_ENV):  # a bug: say so in one line; the traceback only on request
                raise
            typer.echo(
                f"error: internal error: {type(e).__name__}: {one_line(str(e))[:300]} "
                f"(please report it; set {DEBUG_ENV}=1 for the traceback)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=_OneLineErrors,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # help texts are plain text (they quote POLICY/TERRITORY[/TRIAL]), never markup
    help="salesgym: enterprise selling as RL environments.",
)


@app.command()
def demo(
    seed: int = typer.Option(7, min=0, max=SEED_MAX, help="world seed"),
    n_opportunities: int = typer.Option(5, "--n-opportunities", "-n", min=3, max=100, help="territory size"),
    horizon_days: int = typer.Option(30, "--horizon-days", min=30, max=180, help="30, 90 or 180"),
    family: str = typer.Option("midmarket_saas", help="scenario family"),
    max_steps: int = typer.Option(400, min=1, max=STEPS_MAX, help="stop after this many tool calls"),
) -> None:
    """Play the built-in heuristic seller through a small territory and print a readable trace."""
    from salesgym.demo import run_demo

    try:
        run_demo(
            seed=seed, n_opportunities=n_opportunities, horizon_days=horizon_days, family=family, max_steps=max_steps
        )
    except ValueError as err:  # bad arguments: one clear line, no traceback
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None


register_bench(app)
register_serve(app)
register_apps(app)
register_templates(app)

if __name__ == "__main__":
    app()
