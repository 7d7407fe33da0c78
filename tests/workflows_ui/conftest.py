"""The computer-use tests drive a real headless Chromium (Debian's, ``apt-get install chromium-headless-shell``
or ``chromium``) with Playwright; without either they are skipped with the reason."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("playwright")
pytest.importorskip("browsergym.core")

from salesgym.envs.workflows_ui.browser import BrowserUnavailable, chromium_path, stop_browsers

try:
    chromium_path()
except BrowserUnavailable as err:
    pytest.skip(str(err), allow_module_level=True)



@pytest.fixture(autouse=True, scope="module")
def _stop_browsers_after_the_module() -> Iterator[None]:
    """Chromium stays warm through a module, then stops: a live Playwright marks an asyncio loop running on this
    thread, which would break the next module's ``anyio.run`` on the same worker (tests/conftest.py checks)."""
    yield
    stop_browsers()
