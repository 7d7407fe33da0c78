"""The ``salesgym`` command line: demo, benchmark, reports, split checks."""

from __future__ import annotations

import typer

from salesgym.bench.commands import register as register_bench

app = typer.Typer(add_completion=False, no_args_is_help=True, help="salesgym: enterprise selling as RL environments.")


@app.command()
def demo(
    seed: int = typer.Option(7, help="world seed"),
    n_opportunities: int = typer.Option(5, "--n-opportunities", "-n", help="territory size (3-100)"),
    horizon_days: int = typer.Option(30, "--horizon-days", help="30, 90 or 180"),
    family: str = typer.Option("midmarket_saas", help="scenario family"),
    max_steps: int = typer.Option(400, help="stop after this many tool calls"),
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

if __name__ == "__main__":
    app()
