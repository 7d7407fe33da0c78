"""A library that what ``bench`` is about to do needs, but that is missing, is one error line before the first
episode (never a failure per episode reported after all of them): the workflows family's verifier (jq), the
language-model policy, the Ray backend and the service client. Each case runs the real CLI in a subprocess
where the library cannot be imported (``sitecustomize`` puts ``None`` in ``sys.modules``, which workers
inherit through the environment), and checks that nothing was played or written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BLOCKER = """import os, sys
for name in os.environ.get("BLOCK_MODULES", "").split(","):
    if name:
        sys.modules[name] = None  # `import name` fails; importlib.util.find_spec(name) is None
"""

CASES = [
    pytest.param(["--family", "workflows", "--episodes", "2"], "jq", "jq", id="workflows-without-jq"),
    pytest.param(["--split", "debug", "--policy", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"],
                 "openai", "openai", id="llm-without-openai"),
    pytest.param(["--split", "debug", "-p", "idle", "--backend", "ray"], "ray", "Ray", id="ray-without-ray"),
    pytest.param(["--split", "debug", "--from-service", "http://127.0.0.1:9"], "httpx", "serve",
                 id="service-without-httpx"),
]


def test_jq_is_a_base_dependency() -> None:
    """The workflows family ships in the base install, so its verifier's library does too."""
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    assert any(d.split(">")[0].split("=")[0].strip() == "jq" for d in project["dependencies"])


@pytest.mark.parametrize(("args", "blocked", "named"), CASES)
def test_a_missing_library_is_reported_before_the_first_episode(tmp_path: Path, args: list[str], blocked: str,
                                                                  named: str) -> None:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "BLOCK_MODULES": blocked, "OPENAI_API_KEY": "x",
           "SALESGYM_OPERATOR_TOKEN": "t" * 32}
    db = tmp_path / "runs.sqlite"
    done = subprocess.run([sys.executable, "-m", "salesgym.cli", "bench", *args, "--db", str(db)],
                          capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0, done.stderr
    assert lines and lines[-1].startswith("error:") and named in lines[-1], done.stderr
    assert "Traceback" not in done.stderr
    assert not any(line.startswith("salesgym bench: split") for line in lines), "episodes started"
    assert not db.exists(), "the run database was written"
