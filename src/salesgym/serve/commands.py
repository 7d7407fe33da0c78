"""CLI commands of the service: ``serve`` (HTTP), ``mcp`` (an MCP server), ``play`` (a person in a terminal).

Registered on the main app by ``register``; each imports its web or MCP dependencies only when it runs, so the
CLI works without the extras, and a missing extra is one ``error:`` line naming it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from salesgym.bench.commands import one_line


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def _need(extra: str, *modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"this needs {', '.join(missing)}: pip install 'salesgym[{extra}]'")


def serve(
    host: Annotated[str, typer.Option(help="address to listen on; beyond loopback, tokens are required")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port")] = 8765,
    db: Annotated[Path, typer.Option(help="SQLite file of sessions (created if missing)")] = Path("runs/serve.sqlite"),
    tokens_file: Annotated[Path | None, typer.Option(
        help='JSON {"operator": "...", "agents": [...]}; default: $SALESGYM_OPERATOR_TOKEN, $SALESGYM_AGENT_TOKENS'
    )] = None,
    durability: Annotated[str, typer.Option(help="normal: survives a crash of the process; full: fsync every "
                                            "step, survives power loss")] = "normal",
    max_steps: Annotated[int, typer.Option(min=1, help="steps per session")] = 10_000,
    max_wall_s: Annotated[float, typer.Option(min=1, help="a session's lifetime in seconds")] = 86_400.0,
    idle_s: Annotated[float, typer.Option(min=1, help="seconds untouched before a session expires")] = 3_600.0,
    max_request_bytes: Annotated[int, typer.Option(min=1024, help="largest request body")] = 256 * 1024,
    access_log: Annotated[bool, typer.Option(help="log each request (method, path, status)")] = True,
) -> None:
    """Serve sessions of every registered environment over HTTP (docs/serve.md)."""
    _need("serve", "fastapi", "uvicorn")
    from salesgym.serve.auth import AuthConfigError, Tokens
    from salesgym.serve.server import ServeOptions, run
    from salesgym.serve.sessions import Limits
    from salesgym.serve.store import StoreError

    if durability not in ("normal", "full"):
        _fail(f"--durability must be normal or full, got {durability!r}", 2)
    try:
        tokens = Tokens.load(tokens_file)
        limits = Limits(max_steps=max_steps, max_wall_s=max_wall_s, idle_s=idle_s,
                        max_request_bytes=max_request_bytes)
        options = ServeOptions(host, port, db, durability, limits, access_log)  # type: ignore[arg-type]
        run(options, tokens)
    except (AuthConfigError, StoreError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot serve on {host}:{port}: {err.strerror or err}")


def register(app: typer.Typer) -> None:
    """Add the service's commands to ``app``."""
    app.command()(serve)
