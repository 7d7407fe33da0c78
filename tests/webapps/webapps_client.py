"""Helpers for the web apps' tests: a run of a template behind the apps, and an HTTP client per app (not a
conftest.py: the doctest collector would import it under the same name as tests/workflows_ui/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("starlette")

import salesgym
from salesgym.webapps.run import COOKIE, Run, Runs
from salesgym.webapps.server import Options, all_apps


class Apps:
    """A run of one template instance and a client for each app (real ASGI requests, in process)."""

    def __init__(self, template: str, seed: int = 1, variant: str = "default") -> None:
        from starlette.testclient import TestClient

        from salesgym.webapps.variants import variant as find

        self.runs = Runs()
        self.env = salesgym.make("workflows-v0", template=template)
        self.env.reset(seed=seed)
        self.run: Run = self.runs.open(self.env, find(variant), run_id="test-run")
        self.asgi = all_apps(Options(self.runs))
        self._clients: dict[str, Any] = {}
        self._client = TestClient

    def __call__(self, app: str) -> Any:
        if app not in self._clients:
            client = self._client(self.asgi, base_url=f"http://{app}.salesgym.test")
            client.cookies.set(COOKIE, self.run.run_id)
            self._clients[app] = client
        return self._clients[app]

    def events(self) -> list[dict[str, Any]]:
        return self.env.event_log()
