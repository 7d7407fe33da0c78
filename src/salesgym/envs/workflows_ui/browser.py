"""The browser side of the computer-use environment: one web-app server and one Chromium per process (a worker),
a fresh browser context per episode.

Chromium is Debian's, driven by Playwright through ``executable_path``; nothing is downloaded. Headless runs use
Debian's headless shell (``apt-get install chromium-headless-shell``: Chromium's old headless mode, the build
Playwright itself runs headless, with no browser UI behind the page: resets take half the time, an action a
fifth less) and fall back to the full ``chromium`` package, which a visible window needs.

Every app's origin (``http://<app>.salesgym.test``) resolves to the process's server by a host resolver rule given
at launch, so URLs are the same in every process and on every run (determinism), and each app keeps its own
origin. Rendering is fixed: the viewport, a device scale of 1, the UTC time zone, the en-US locale, reduced
motion, and the apps' own stylesheet (no animation, no caret).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from salesgym.webapps.origins import APPS, TEST_DOMAIN, default_origins
from salesgym.webapps.run import COOKIE, Runs
from salesgym.webapps.server import Background, Options, all_apps

CHROMIUM_ENV = "SALESGYM_CHROMIUM"  # another Chromium executable (default: the first of DEFAULT_CHROMIUMS found)
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
DEFAULT_CHROMIUMS = (HEADLESS_SHELL, "/usr/bin/chromium")  # Debian's; the shell cannot open a window
FLAGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-features=OverlayScrollbars,ExtendedOverlayScrollbars", "--font-render-hinting=none",
         "--force-color-profile=srgb", "--disable-lcd-text", "--hide-scrollbars")  # fmt: skip
VIEWPORT = {"width": 1280, "height": 800}


class BrowserUnavailable(RuntimeError):
    """No Chromium to drive, or Playwright is not installed: the message says what to install."""


def chromium_path(headless: bool = True) -> str:
    """The Chromium executable to launch: ``$SALESGYM_CHROMIUM`` if set, else the first of Debian's found (the
    headless shell only for a headless launch)."""
    named = os.environ.get(CHROMIUM_ENV)
    paths = [named] if named else [p for p in DEFAULT_CHROMIUMS if headless or p != HEADLESS_SHELL]
    for path in paths:
        found = path if os.path.isfile(path) else shutil.which(path)
        if found:
            return found
    raise BrowserUnavailable(f"no Chromium at {' or '.join(map(repr, paths))}: apt-get install "
                             f"chromium-headless-shell chromium (Debian), or set ${CHROMIUM_ENV}")


def launch_args(port: int) -> list[str]:
    """The environment's own launch flag (``DebianChromium`` adds ``FLAGS``): every app origin mapped to ``port``."""
    return [f"--host-resolver-rules=MAP *.{TEST_DOMAIN} 127.0.0.1:{port}"]


@dataclass
class Worker:
    """This process's server, run registry, Playwright and Chromium (started on first use)."""

    runs: Runs = field(default_factory=Runs)
    server: Background | None = None
    playwright: Any = None
    browser: Any = None
    thread: int = 0
    closing: list[tuple[Any, str]] = field(default_factory=list)  # (session, run id) of finished episodes
    live: int = 0  # episodes (and BrowserGym tasks) open in this process: ``shutdown_if_idle`` waits for none

    def serve(self) -> Worker:
        """Start this process's web-app server (and nothing else): what a BrowserGym task needs."""
        if self.server is None:  # the control API answers only a token nobody outside this process knows
            options = Options(self.runs, default_origins(), operator_token=secrets.token_hex(24))
            self.server = Background(all_apps(options)).start()
        return self

    def start(self) -> Worker:
        """The server and this process's Chromium (Debian's, through the process's one Playwright)."""
        if self.browser is not None:
            return self
        executable = chromium_path()
        self.serve()
        assert self.server is not None
        self.playwright = shared_playwright()
        try:  # Playwright gives every launch a fresh temporary profile (user-data-dir) of its own
            self.browser = self.playwright.chromium.launch(executable_path=executable, headless=True,
                                                           args=launch_args(self.server.port))
        except Exception as err:
            self.stop()
            raise BrowserUnavailable(f"Chromium did not start ({executable}): {str(err).splitlines()[0]}") from None
        self.thread = threading.get_ident()
        return self

    def context(self) -> Any:
        """A fresh browser context (no cookies, storage or cache from another episode)."""
        self.start()
        if threading.get_ident() != self.thread:
            raise RuntimeError("Playwright's sync API is bound to the thread that started it: use one worker "
                               "(process) per thread")  # fmt: skip
        self.release()
        return self.browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US", timezone_id="UTC",
                                        reduced_motion="reduce", color_scheme="light", java_script_enabled=True,
                                        service_workers="block", accept_downloads=False)  # fmt: skip

    def release(self) -> None:
        """Close the contexts and runs of episodes that are over (queued by their environments)."""
        while self.closing:
            session, run_id = self.closing.pop()
            session.close()
            self.runs.close(run_id)

    def stop(self) -> None:
        """Close Chromium and the server and stop Playwright: its sync API keeps an asyncio loop marked running
        on this thread while it lives, so ``asyncio.run`` would refuse to start after an episode."""
        self.release()
        for closing in (self.browser, self.server, self.playwright):
            with contextlib.suppress(Exception):  # a browser already gone at exit: nothing more to release
                if closing is not None:
                    closing.close() if closing is self.browser else closing.stop()
        self.browser = self.playwright = self.server = None

    def shutdown_if_idle(self) -> None:
        """``stop`` once no episode is open in this process (the last environment closed)."""
        if self.live <= 0:
            self.live = 0
            self.stop()


def shared_playwright() -> Any:
    """The process's one Playwright (BrowserGym's global instance, so a BrowserGym environment in the same process
    shares it), with Chromium launches pointed at Debian's executable (``DebianChromium``)."""
    found = use_debian_chromium()
    found.selectors.set_test_id_attribute("bid")  # BrowserGym finds elements by their bid attribute
    return found


def use_debian_chromium() -> DebianPlaywright:
    """Make BrowserGym's global Playwright one whose Chromium launches use Debian's executable (started on first
    use): call it before ``BrowserEnv.reset`` (importing ``salesgym.adapters.browsergym`` does)."""
    try:
        import browsergym.core as bgym
    except ImportError:
        raise BrowserUnavailable("Playwright and BrowserGym are not installed: pip install 'salesgym[ui]'") from None
    current = bgym._PLAYWRIGHT
    if isinstance(current, DebianPlaywright):
        return current
    found = DebianPlaywright(current)
    bgym._set_global_playwright(found)
    return found


class DebianChromium:
    """Playwright's ``chromium`` whose ``launch`` uses Debian's executable and the sandbox's flags unless told
    otherwise: BrowserGym's ``BrowserEnv`` (and its chat window) launch Chromium themselves, with no way to name
    an executable, and no browser can be downloaded here."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def launch(self, **kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", chromium_path(bool(kwargs.get("headless", True))))
        kwargs["args"] = [*FLAGS, *(kwargs.get("args") or [])]
        return self._real.launch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class DebianPlaywright:
    """A Playwright instance (started on first use) whose ``chromium`` is :class:`DebianChromium`; everything else
    passes through."""

    def __init__(self, real: Any = None) -> None:
        self._started = real

    def stop(self) -> None:
        """Stop the Playwright this wraps (if started); the next use starts a fresh one."""
        started, self._started = self._started, None
        if started is not None:
            started.stop()

    @property
    def _real(self) -> Any:
        if self._started is None:
            from playwright.sync_api import sync_playwright

            self._started = sync_playwright().start()
        return self._started

    @property
    def chromium(self) -> DebianChromium:
        return DebianChromium(self._real.chromium)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


_WORKER: Worker | None = None
_LOCK = threading.Lock()


def worker() -> Worker:
    """The process's worker (one server and one Chromium per process; each episode gets its own context)."""
    global _WORKER
    with _LOCK:
        if _WORKER is None:
            _WORKER = Worker()
            atexit.register(_WORKER.stop)
        return _WORKER


def stop_browsers() -> None:
    """Stop this process's worker and Playwright (BrowserGym's global one too), after its last episode or
    ``BrowserEnv`` is closed. Playwright's sync API marks an asyncio loop as running on its thread while it
    lives, so ``asyncio.run`` and ``anyio.run`` refuse to start there until it stops; the next episode starts a
    fresh one."""
    if _WORKER is not None:
        _WORKER.live = 0
        _WORKER.stop()
    with contextlib.suppress(ImportError):
        import browsergym.core as bgym

        if isinstance(bgym._PLAYWRIGHT, DebianPlaywright):
            with contextlib.suppress(Exception):  # already gone (a browser killed under it)
                bgym._PLAYWRIGHT.stop()


def keep_warm() -> None:
    """Hold this process's Chromium and server open until it exits, whatever episodes close (a pool worker that
    plays one episode after another)."""
    worker().live += 1


@contextlib.contextmanager
def warm() -> Iterator[Worker]:
    """Hold this process's Chromium and server open for the block (episodes closed inside it keep them), then
    stop them if no episode is left open."""
    work = worker()
    work.live += 1
    try:
        yield work
    finally:
        work.live -= 1
        work.shutdown_if_idle()


def run_cookies(run_id: str) -> list[dict[str, Any]]:
    """The run's cookie for every app's origin (each origin keeps its own cookies)."""
    return [{"name": COOKIE, "value": run_id, "domain": f"{app}.{TEST_DOMAIN}", "path": "/", "httpOnly": True,
             "sameSite": "Lax"} for app in APPS]  # fmt: skip
