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

