"""The web apps over HTTP: one Starlette application per app, and a dispatcher that serves all five from one
socket by host name (``crm.salesgym.test``, ``crm.localhost``...).

A request finds its run by the ``sgrun`` cookie (``GET /open/<run id>`` sets it). The view builds a page from
the run's read tools, or submits a form as one tool call; a refused call is shown as the product shows it (the
form again, with the sandbox's reason and its HTTP status) and recorded as the tool path records it.

Control endpoints (``/api/...``, for a harness; an operator token when the server has one): open a run for a
task instance, export an app's end state and calls for the HTTP verifier API, close a run. ``GET /healthz``.
"""

from __future__ import annotations

import functools
import hmac
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from salesgym.webapps.origins import default_origins
from salesgym.webapps.page import Frame, Link, Notice, Page, Redirect, render
from salesgym.webapps.request import AppRoutes, Form, Q, View
from salesgym.webapps.run import COOKIE, Refused, Run, Runs
from salesgym.webapps.variants import variant as find_variant

log = logging.getLogger("salesgym.webapps")
MAX_BODY = 64 * 1024
MAX_FIELDS = 400


@dataclass
class Options:
    runs: Runs
    origins: Mapping[str, str] = field(default_factory=default_origins)
    operator_token: str = ""  # the control API needs it when set
    open_run: Callable[[Mapping[str, Any]], Run] | None = None  # POST /api/runs (standalone servers)


def _frame(q: Q, spec: AppRoutes, active: str) -> Frame:
    data = q.run.observation()
    clock = data["clock"]
    nav = [Link(q.word(key), href, key) for key, href in spec.nav]
    over = ""
    episode = data["episode"]
    if episode["terminated"] or episode["truncated"]:
        over = "This task is closed: nothing more can be changed."
    now = clock["now"].replace("T", " ").replace(":00Z", " UTC")
    return Frame(q.app, nav, active, f"{now} · {q.word('calls_left')} {clock['calls_left']}",
                 data["task"]["title"], q.origins["task"] + "/" if q.app != "task" else "", q.run.take_flash(q.app),
                 over)  # fmt: skip


def _page(q: Q, spec: AppRoutes, page: Page, active: str) -> HTMLResponse:
    html = render(page, _frame(q, spec, active), q.run.variant)
    return HTMLResponse(html, status_code=page.status, headers={"Cache-Control": "no-store"})


def _plain(status: int, title: str, text: str) -> HTMLResponse:
    body = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
            f"<link rel='stylesheet' href='/static/app.css'></head><body class='theme-light density-comfortable'>"
            f"<main><h1>{title}</h1><p class='notice error' role='alert'>{text}</p></main></body></html>")  # fmt: skip
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


async def _form(request: Request) -> Form | Response:
    if request.method != "POST":
        return Form([])
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return _plain(413, "Too large", f"A form is at most {MAX_BODY // 1024} KiB.")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        return _plain(400, "Bad form", "The form could not be read (UTF-8, application/x-www-form-urlencoded).")
    return Form(pairs)


def _endpoint(spec: AppRoutes, view: View, active: str, options: Options) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        run = options.runs.get(request.cookies.get(COOKIE))
        if run is None:
            return _plain(404, "No run is open", "Open a run first: its link is /open/&lt;run id&gt; on any app.")
        if spec.name != "task" and not run.uses(spec.name):
            return _plain(403, "No access", f"403 Forbidden: this task has no access to the {spec.name} app (it "
                          f"may use: {', '.join(run.task['apps'])}).")  # fmt: skip
        form = await _form(request)
        if isinstance(form, Response):
            return form
        q = Q(run, spec.name, request.method, dict(request.path_params), Form(list(request.query_params.multi_items())),
              form, run.origins or options.origins)  # fmt: skip
        if q.posted and run.over:
            return _page(q, spec, Page(spec.name, "Task closed", [Notice(
                "The task is closed: nothing more can be changed.", "error")], status=409), active)
        try:
            result = view(q)
        except Refused as err:
            result = Page(spec.name, "Not available", [Notice(err.reason, "error", "error")], status=err.status)
        if isinstance(result, Redirect):
            return RedirectResponse(result.href, status_code=303)
        return _page(q, spec, result, active)

    return endpoint


def _static(request: Request) -> Response:
    name = request.path_params["name"]
    kinds = {"app.css": "text/css", "app.js": "text/javascript"}
    if name not in kinds:
        return Response("not found", 404)
    body = resources.files("salesgym.webapps").joinpath("static", name).read_bytes()
    return Response(body, media_type=kinds[name], headers={"Cache-Control": "max-age=3600"})


def _open(request: Request, options: Options) -> Response:
    run_id = request.path_params["run_id"]
    if options.runs.get(run_id) is None:
        return _plain(404, "No such run", "That run is not open on this server.")
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, run_id, httponly=True, samesite="lax")
    return response


def _authorised(request: Request, options: Options) -> bool:
    if not options.operator_token:
        return True
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    return hmac.compare_digest(given.encode(), options.operator_token.encode())


async def _api(request: Request, options: Options, app: str) -> Response:
    from salesgym.webapps.control import export, problem

    if not _authorised(request, options):
        return JSONResponse(problem("unauthorised", "an operator token is required (Authorization: Bearer ...)"),
                            status_code=401)
    action = request.path_params.get("action", "")
    if request.method == "POST" and request.url.path == "/api/runs":
        if options.open_run is None:
            return JSONResponse(problem("not_supported", "this server does not open runs"), status_code=405)
        try:
            spec = json.loads(await request.body())
            if not isinstance(spec, dict):
                raise ValueError("the body is a JSON object")
            opened = options.open_run(spec)
        except (ValueError, TypeError) as err:
            return JSONResponse(problem("invalid_run", str(err)[:300]), status_code=422)
        return JSONResponse({"run_id": opened.run_id, "open": f"/open/{opened.run_id}"}, status_code=201)
    run = options.runs.get(request.path_params.get("run_id"))
    if run is None:
        return JSONResponse(problem("unknown_run", "no such run on this server"), status_code=404)
    if request.method == "GET" and action == "export":
        return JSONResponse(export(run, app))
    if request.method == "DELETE" and not action:
        options.runs.close(run.run_id)
        return JSONResponse({"closed": run.run_id})
    return JSONResponse(problem("not_found", "no such endpoint"), status_code=404)


def build_app(spec: AppRoutes, options: Options) -> Starlette:
    """One app's ASGI application."""
    api = functools.partial(_api, options=options, app=spec.name)
    routes: list[Route] = [
        Route("/healthz", lambda r: JSONResponse({"status": "ok", "app": spec.name, "runs": len(options.runs)})),
        Route("/static/{name}", _static),
        Route("/open/{run_id}", lambda r: _open(r, options)),
        Route("/api/runs", api, methods=["POST"]),
        Route("/api/runs/{run_id}", api, methods=["DELETE"]),
        Route("/api/runs/{run_id}/{action}", api, methods=["GET"]),
    ]
    if all(path != "/" for path, _, _ in spec.routes):
        routes.append(Route("/", lambda r: RedirectResponse(spec.home, status_code=303)))
    for path, view, methods in spec.routes:
        matches = [(len(href), key) for key, href in spec.nav if href != "/" and path.startswith(href.split("?")[0])]
        active = max(matches)[1] if matches else ""
        routes.append(Route(path, _endpoint(spec, view, active, options), methods=list(methods)))
    return Starlette(routes=routes)


class HostDispatch:
    """An ASGI app serving each web app from its own host name (``<app>.<anything>``); one app when fixed."""

    def __init__(self, apps: Mapping[str, ASGIApp], fixed: str | None = None) -> None:
        self.apps = dict(apps)
        self.fixed = fixed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = self.fixed
        if name is None and scope["type"] in ("http", "websocket"):
            host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "")
            name = re.split(r"[.:]", host, maxsplit=1)[0]
        app = self.apps.get(name or "")
        if app is None:
            if scope["type"] == "lifespan":
                return
            response = _plain(404, "Unknown app", "Hosts are crm., sequencer., scheduler., prospecting. and task.")
            await response(scope, receive, send)
            return
        await app(scope, receive, send)


def all_apps(options: Options, only: str | None = None) -> HostDispatch:
    """Every app (or ``only`` one) behind one ASGI callable."""
    from salesgym.webapps.views import ROUTES

    if only is not None and only not in ROUTES:
        raise ValueError(f"unknown app {only!r}; choose from {', '.join(ROUTES)}")
    apps = {name: build_app(spec, options) for name, spec in ROUTES.items() if only in (None, name)}
    return HostDispatch(apps, only)


def variant_of(spec: Mapping[str, Any]) -> Any:
    return find_variant(str(spec.get("variant", "default")))


class Background:
    """An ASGI app served by uvicorn on a loopback port, in a daemon thread of this process (the computer-use
    environment's server: one per process, shared by its episodes). ``port`` is known once :meth:`start` returns."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        import socket

        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.port = int(self.sock.getsockname()[1])
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False, http="h11", ws="none")
        self.server = uvicorn.Server(config)
        self.thread: Any = None

    def start(self) -> Background:
        import threading
        import time

        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True,
                                       name="salesgym-webapps")  # fmt: skip
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                return self
            time.sleep(0.01)
        raise RuntimeError("the web apps' server did not start")

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=5)
        self.sock.close()
