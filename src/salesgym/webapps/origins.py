"""Where the apps live: their names and the environment's origins (``http://<app>.salesgym.test``). No
dependencies, so the computer-use environment's class can be imported without the web stack."""

from __future__ import annotations

APPS = ("crm", "sequencer", "scheduler", "prospecting", "task")
TEST_DOMAIN = "salesgym.test"  # the in-process environment's origins: http://<app>.salesgym.test


def default_origins(domain: str = TEST_DOMAIN, port: int | None = None) -> dict[str, str]:
    suffix = f":{port}" if port else ""
    return {app: f"http://{app}.{domain}{suffix}" for app in APPS}
