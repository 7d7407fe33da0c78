"""Doctest collection of ``src/salesgym``: an adapter module whose stack library is not installed here is
skipped (each stack is tested in its own virtual environment, ``.ci/run``; ``import salesgym`` needs none)."""

from __future__ import annotations

import importlib.util

# adapter module -> the library it is built on (imported at the module's top)
_STACK_MODULES = {
    "src/salesgym/adapters/openenv.py": "openenv",
    "src/salesgym/adapters/skyrl.py": "skyrl_gym",
    "src/salesgym/adapters/verl_curriculum.py": "verl",
    "src/salesgym/adapters/verifiers_v1.py": "verifiers",
    "src/salesgym_verifiers/__init__.py": "verifiers",
}

collect_ignore = [path for path, library in _STACK_MODULES.items() if importlib.util.find_spec(library) is None]
