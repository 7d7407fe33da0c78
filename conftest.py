"""Doctest collection of ``src/salesgym``: an adapter module whose stack library is not installed here is
skipped (each stack is tested in its own virtual environment, ``.ci/run``; ``import salesgym`` needs none)."""

from __future__ import annotations

import importlib.util

import pytest

# adapter module -> the library it is built on (imported at the module's top)
_STACK_MODULES = {
    "src/salesgym/adapters/openenv.py": "openenv",
    "src/salesgym/adapters/skyrl.py": "skyrl_gym",
    "src/salesgym/adapters/verl_curriculum.py": "verl",
    "src/salesgym/adapters/verifiers_v1.py": "verifiers",
    "src/salesgym_verifiers/__init__.py": "verifiers",
}

collect_ignore = [path for path, library in _STACK_MODULES.items() if importlib.util.find_spec(library) is None]

MAX_WORKERS = 4  # ``-n auto``: one worker per core, at most four (each holds the package, a Chromium, servers)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent where xdist is not installed
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``python -m pytest -n auto`` (README's test command) on this machine's cores, capped."""
    import os

    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else
                      os.cpu_count() or 1))  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    """With ``-n``, a file's tests share one worker (its module fixtures are built once), unless ``--dist`` says
    otherwise. Set here rather than in addopts so that a venv without pytest-xdist still runs the tests."""
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") == "load" and not any(
            a.startswith("--dist") for a in config.invocation_params.args):  # fmt: skip
        config.option.dist = "loadfile"
