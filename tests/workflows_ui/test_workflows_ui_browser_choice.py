"""Which Chromium a launch uses: ``$SALESGYM_CHROMIUM`` if set; else Debian's headless shell for a headless launch
(lighter: no browser UI behind the page) and the full ``chromium`` for a window or where the shell is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from salesgym.envs.workflows_ui import browser
from salesgym.envs.workflows_ui.browser import CHROMIUM_ENV, BrowserUnavailable, chromium_path


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    shell, full = tmp_path / "chromium-headless-shell", tmp_path / "chromium"
    for path in (shell, full):
        path.write_text("#!/bin/sh\n")
    monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    monkeypatch.setattr(browser, "HEADLESS_SHELL", str(shell))
    monkeypatch.setattr(browser, "DEFAULT_CHROMIUMS", (str(shell), str(full)))
    return shell, full


def test_headless_takes_the_headless_shell_and_a_window_the_full_chromium(installed: tuple[Path, Path]) -> None:
    shell, full = installed
    assert chromium_path() == str(shell)
    assert chromium_path(headless=False) == str(full)
    shell.unlink()
    assert chromium_path() == str(full)  # the shell not installed: the full browser runs headless too


def test_a_named_chromium_wins_and_a_missing_one_is_said_not_replaced(installed: tuple[Path, Path],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shell, full = installed
    monkeypatch.setenv(CHROMIUM_ENV, str(full))
    assert chromium_path() == str(full)
    monkeypatch.setenv(CHROMIUM_ENV, str(shell.with_name("gone")))
    with pytest.raises(BrowserUnavailable, match="gone"):
        chromium_path()


def test_no_chromium_names_the_packages_to_install(installed: tuple[Path, Path]) -> None:
    for path in installed:
        path.unlink()
    with pytest.raises(BrowserUnavailable, match="apt-get install chromium-headless-shell chromium"):
        chromium_path()
