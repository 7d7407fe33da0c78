"""``salesgym apps``: serve the web apps (one app per process or all five), open a task for a person in a
browser, and judge a run whose apps run in separate processes through the HTTP verifier API."""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Annotated, NoReturn

import typer

from salesgym.cli_options import SEED_MAX, one_line

APP_NAMES = ("crm", "sequencer", "scheduler", "prospecting", "task")
TOKEN_ENV = "SALESGYM_OPERATOR_TOKEN"

apps_cli = typer.Typer(help="The sales apps as web apps (docs/computer-use.md).", no_args_is_help=True)


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def _need() -> None:
    missing = [m for m in ("jinja2", "starlette", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"this needs {', '.join(missing)}: pip install 'salesgym[ui]'")


def _origins(pairs: list[str], port: int) -> dict[str, str]:
    out = {app: f"http://{app}.localhost:{port}" for app in APP_NAMES}
    for pair in pairs:
        app, sep, url = pair.partition("=")
        if not sep or app not in APP_NAMES or not url.startswith(("http://", "https://")):
            _fail(f"--origin takes APP=URL with APP one of {', '.join(APP_NAMES)}, got {pair!r}", 2)
        out[app] = url.rstrip("/")
    return out


@apps_cli.command()
def serve(
    app: Annotated[str, typer.Argument(help="crm, sequencer, scheduler, prospecting, task, or all (by host name)")],
    host: Annotated[str, typer.Option(help="address; beyond loopback $SALESGYM_OPERATOR_TOKEN is required")] = (
        "127.0.0.1"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port")] = 8100,
    origin: Annotated[list[str], typer.Option(help="APP=URL: where another app is served (the links between "
                                              "apps); default http://APP.localhost:PORT")] = [],  # noqa: B006
) -> None:
    """Serve one app (or all five, told apart by host name) for runs a harness opens through POST /api/runs."""
    _need()
    import uvicorn

    from salesgym.webapps.control import open_run
    from salesgym.webapps.run import Runs
    from salesgym.webapps.server import Options, all_apps

    if app not in (*APP_NAMES, "all"):
        _fail(f"unknown app {app!r}; choose from {', '.join(APP_NAMES)} or all", 2)
    token = os.environ.get(TOKEN_ENV, "")
    if host not in ("127.0.0.1", "localhost", "::1") and len(token) < 16:
        _fail(f"serving beyond loopback needs ${TOKEN_ENV} (16 characters or more): it guards /api", 2)
    runs = Runs()
    options = Options(runs, _origins(origin, port), token, lambda spec: open_run(runs, spec))
    asgi = all_apps(options, None if app == "all" else app)
    typer.echo(f"serving {app} on http://{host}:{port} (runs: POST /api/runs; a person: GET /open/<run id>)")
    uvicorn.run(asgi, host=host, port=port, log_level="warning", lifespan="off")


@apps_cli.command("open")
def open_task(
    template: Annotated[str, typer.Option(help="a workflows template id (salesgym.envs.workflows.tasks)")],
    seed: Annotated[int, typer.Option(min=0, max=SEED_MAX, help="the instance seed")] = 1,
    variant: Annotated[str, typer.Option(help="the apps' look: default, dark, compact, reworded, rearranged")] = (
        "default"),
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port (loopback)")] = 8100,
) -> None:
    """Open one task instance in all five apps on this machine and print where a person starts it."""
    _need()
    import uvicorn

    from salesgym.webapps.control import open_run
    from salesgym.webapps.run import Runs
    from salesgym.webapps.server import Options, all_apps

    runs = Runs()
    try:
        run = open_run(runs, {"kwargs": {"template": template}, "seed": seed, "variant": variant})
    except ValueError as err:
        _fail(str(err), 2)
    origins = _origins([], port)
    typer.echo(f"task {template} (seed {seed}): open {origins['task']}/open/{run.run_id} in a browser "
               "(Chromium and Firefox resolve *.localhost here); Ctrl-C ends it")  # fmt: skip
    uvicorn.run(all_apps(Options(runs, origins)), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


@apps_cli.command()
def judge(
    run: Annotated[str, typer.Option(help="the apps' run id")],
    verifier: Annotated[str, typer.Option(help="the verifier API's base URL (salesgym serve)")],
    verifier_run: Annotated[str, typer.Option(help="the verifier API's run for the same instance")],
    app: Annotated[list[str], typer.Option(help="APP=URL for each app of the task (and task=URL)")],
) -> None:
    """Send each app's end state and calls to the verifier API and print its verdict (JSON)."""
    from salesgym.webapps.control import judge as run_judge

    origins: dict[str, str] = {}
    for pair in app:
        name, sep, url = pair.partition("=")
        if not sep or name not in APP_NAMES:
            _fail(f"--app takes APP=URL with APP one of {', '.join(APP_NAMES)}, got {pair!r}", 2)
        origins[name] = url
    token = os.environ.get(TOKEN_ENV, "")
    try:
        verdict = run_judge(run, origins, verifier, verifier_run, token, token)
    except RuntimeError as err:
        _fail(str(err))
    typer.echo(json.dumps(verdict, indent=2))


def register(main: typer.Typer) -> None:
    main.add_typer(apps_cli, name="apps")
