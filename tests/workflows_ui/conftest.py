"""The computer-use tests drive a real headless Chromium (Debian's, ``apt-get install chromium``) with Playwright;
without either they are skipped with the reason."""

from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("playwright")
pytest.importorskip("browsergym.core")

from salesgym.envs.workflows_ui.browser import CHROMIUM_ENV, DEFAULT_CHROMIUM

if not shutil.which(os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM):
    pytest.skip("no Chromium here (apt-get install chromium)", allow_module_level=True)


def element(obs: dict, html_id: str) -> dict:
    """The observed element with this HTML id (a test's way to find a bid; agents read the tree)."""
    found = [e for e in obs["data"]["elements"] if e["id"] == html_id]
    assert found, f"no #{html_id} on {obs['data']['url']}"
    return found[0]
