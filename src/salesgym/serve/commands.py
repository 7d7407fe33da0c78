"""CLI commands of the service: ``serve`` (HTTP), ``mcp`` (an MCP server), ``play`` (a person in a terminal).

Registered on the main app by ``register``; each imports its web or MCP dependencies only when it runs, so the
CLI works without the extras, and a missing extra is one ``error:`` line naming it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from salesgym.cli_options import PORT_MAX, SEED_MAX, STEPS_MAX, finite, one_line


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def _need(extra: str, *modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"this needs {', '.join(missing)}: pip install 'salesgym[{extra}]'")


def serve(
    host: Annotated[str, typer.Option(help="address to listen on; beyond loopback, tokens are required")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=PORT_MAX, help="TCP port")] = 8765,
    db: Annotated[Path, typer.Option(help="SQLite file of sessions (created if missing)")] = Path("runs/serve.sqlite"),
    tokens_file: Annotated[Path | None, typer.Option(
        help='JSON {"operator": "...", "agents": [...]}; default: $SALESGYM_OPERATOR_TOKEN, $SALESGYM_AGENT_TOKENS'
    )] = None,
    durability: Annotated[str, typer.Option(help="normal: survives a crash of the process; full: fsync every "
                                            "step, survives power loss")] = "normal",
    max_steps: Annotated[int, typer.Option(min=1, max=STEPS_MAX, help="steps per session")] = 10_000,
    max_wall_s: Annotated[float, typer.Option(min=1, callback=finite, help="a session's lifetime in seconds")] = (
        86_400.0
    ),
    idle_s: Annotated[
        float, typer.Option(min=1, callback=finite, help="seconds untouched before a session expires")
    ] = 3_600.0,
    max_request_bytes: Annotated[int, typer.Option(min=1024, max=2**30, help="largest request body")] = 256 * 1024,
    access_log: Annotated[bool, typer.Option(help="log each request (method, path, status)")] = True,
    jq_cpu_s: Annotated[float, typer.Option(min=0.05, max=600, help="CPU seconds a caller's jq program may use "
                                            "(the verifier API's ad-hoc assertions)")] = 2.0,
    jq_memory_mib: Annotated[int, typer.Option(min=64, max=65_536, help="memory of a jq sandbox worker, MiB")] = 512,
    jq_workers: Annotated[int, typer.Option(min=1, max=64, help="jq programs that run at once")] = 2,
) -> None:
    """Serve sessions of every registered environment over HTTP (docs/serve.md)."""
    _need("serve", "fastapi", "uvicorn")
    from salesgym.bench.splits import SplitError
    from salesgym.serve.auth import AuthConfigError
    from salesgym.serve.sandbox import SandboxLimits
    from salesgym.serve.secrets import take
    from salesgym.serve.server import ServeOptions, run
    from salesgym.serve.sessions import Limits
    from salesgym.serve.store import StoreError

    if durability not in ("normal", "full"):
        _fail(f"--durability must be normal or full, got {durability!r}", 2)
    try:
        sandbox = SandboxLimits(cpu_s=jq_cpu_s, memory_mib=jq_memory_mib, workers=jq_workers)
        secrets = take(tokens_file)  # read once, then out of the environment
    except (ValueError, SplitError) as err:  # a limit, a token or a key that cannot be used
        _fail(str(err))
    limits = Limits(max_steps=max_steps, max_wall_s=max_wall_s, idle_s=idle_s, max_request_bytes=max_request_bytes)
    options = ServeOptions(host, port, db, durability, limits, access_log, sandbox=sandbox)  # type: ignore[arg-type]
    try:
        run(options, secrets)
    except (AuthConfigError, StoreError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot serve on {host}:{port}: {err.strerror or err}")


def _kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        _fail(f"--kwargs must be a JSON object, got {text[:80]!r}", 2)
    if not isinstance(value, dict):
        _fail("--kwargs must be a JSON object", 2)
    return value


def _check_env(env_id: str, seed: int, kwargs: dict[str, Any]) -> None:
    import salesgym

    if env_id not in salesgym.registry():
        _fail(f"unknown environment {env_id!r}; registered: {', '.join(sorted(salesgym.registry()))}", 2)
    try:
        salesgym.make(env_id, **kwargs).reset(seed=seed)
    except Exception as err:  # the family validates its own arguments
        _fail(f"cannot make {env_id}: {err}", 2)


def mcp(
    env_id: Annotated[str | None, typer.Argument(help="a registered environment id (default territory-debug-v0)",
                                                 show_default=False)] = None,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_MAX, help="world seed of every episode (default 0)")
    ] = None,
    kwargs: Annotated[str | None, typer.Option(help="JSON object of make() arguments")] = None,
    task: Annotated[str | None, typer.Option(help="a benchmark task, SPLIT/ID: its world and seed are picked here "
                                             "and never shown; score the record with salesgym bench --from-record "
                                             "(instead of ENV_ID, --seed, --kwargs)")] = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP at /mcp)")] = "stdio",
    host: Annotated[str, typer.Option(help="http: address; beyond loopback, agent tokens are required")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=PORT_MAX, help="http: TCP port")] = 8766,
    record: Annotated[Path | None, typer.Option(help="append each episode when it ends or its connection does "
                                                "(calls, event-log hash, score) to this JSON-lines file: the "
                                                "operator's copy")] = None,
    tokens_file: Annotated[Path | None, typer.Option(help="http: tokens file, as for serve")] = None,
) -> None:
    """Serve one environment's tools over MCP: one episode per connection (docs/serve.md)."""
    _need("mcp", "mcp")
    if transport not in ("stdio", "http"):
        _fail(f"--transport must be stdio or http, got {transport!r}", 2)
    from salesgym.bench.splits import SplitError
    from salesgym.serve.mcp_server import Episodes, EpisodeSpec
    from salesgym.serve.secrets import take

    try:
        secrets = take(tokens_file)  # read once, then out of the environment
    except (ValueError, SplitError) as err:
        _fail(str(err))
    if task is not None:
        given = env_id is not None or seed is not None or kwargs is not None
        spec = _task_spec(task, given, secrets.split_key, secrets.verifier_key)
    else:
        spec = EpisodeSpec(env_id or "territory-debug-v0", seed or 0, _kwargs(kwargs or "{}"),
                           verifier_key=secrets.verifier_key)
        _check_env(spec.env_id, spec.seed, spec.kwargs)
    episodes = Episodes(spec, record)
    if transport == "stdio":
        import anyio

        from salesgym.serve.mcp_server import serve_stdio

        anyio.run(serve_stdio, episodes)
        return
    _need("serve", "uvicorn")
    import uvicorn

    from salesgym.serve.auth import is_loopback
    from salesgym.serve.mcp_server import http_app

    tokens = secrets.tokens
    if not is_loopback(host) and not tokens.agents:
        _fail(f"binding to {host} needs agent tokens ($SALESGYM_AGENT_TOKENS or --tokens-file); refusing to start")

    def agent_check(header: str | None) -> bool:
        return tokens.check(header) is not None

    app = http_app(episodes, host, agent_check if tokens.enabled else None)
    try:
        # on SIGTERM uvicorn stops the sessions (each is recorded as its connection ends) within the grace period
        uvicorn.run(app, host=host, port=port, log_level="info", server_header=False, timeout_graceful_shutdown=5)
    except OSError as err:
        _fail(f"cannot serve on {host}:{port}: {err.strerror or err}")
    finally:
        episodes.flush()


def _task_spec(task: str, given: bool, key: Any, verifier_key: bytes | None) -> Any:
    """The episodes of one benchmark task (``SPLIT/ID``), resolved as the HTTP service resolves them (a private
    split's seed from ``key``)."""
    from salesgym.serve.mcp_server import EpisodeSpec
    from salesgym.serve.sessions import ServiceError
    from salesgym.serve.tasks import resolve

    if given:
        _fail("--task picks the environment, its arguments and its seed: give it without ENV_ID, --seed, --kwargs", 2)
    split, slash, task_id = task.partition("/")
    if not (split and slash and task_id):
        _fail(f"--task is SPLIT/ID (e.g. eval/eval-003), got {task!r}", 2)
    try:
        found = resolve(split, task_id, key)
    except ServiceError as err:
        _fail(err.detail)
    return EpisodeSpec(found.env_id, found.seed, found.kwargs, found.ref, found.split_sha256, verifier_key)


def play(
    env_id: Annotated[str, typer.Argument(help="a registered environment id")] = "territory-debug-v0",
    seed: Annotated[int, typer.Option(min=0, max=SEED_MAX, help="world seed")] = 0,
    kwargs: Annotated[str, typer.Option(help="JSON object of make() arguments")] = "{}",
) -> None:
    """Play an episode yourself in the terminal: pick tools, answer argument prompts, see the score."""
    import sys

    import salesgym
    from salesgym.serve.play import Player

    args = _kwargs(kwargs)
    _check_env(env_id, seed, args)
    Player(salesgym.make(env_id, **args), input, sys.stdout).play(seed)


def register(app: typer.Typer) -> None:
    """Add the service's commands to ``app``."""
    app.command()(serve)
    app.command()(mcp)
    app.command()(play)
