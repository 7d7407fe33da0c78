"""Every file the repository's text points at is in the repository: a clone has nothing else.

* Markdown links (``[text](target)``) in every tracked Markdown file resolve from that file's folder.
* Backticked paths in Markdown (``src/salesgym/core/env.py``, ``docs/serve.md``, ``tasks/model.py``) name a
  tracked file or folder: the whole path from the root, or its tail, as a page about ``src/salesgym/`` writes
  ``core/env.py``. A span is a path when it has no spaces or placeholders and ends in a file extension or ``/``.
* Markdown file names anywhere (Markdown prose, Python docstrings and comments, configs): a name with a folder
  (``docs/reward.md``, ``shared/notes/x.md``) or in capitals (``DESIGN.md``) names a tracked file.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSIONS = ("md", "py", "toml", "json", "jsonl", "yaml", "yml", "sh", "txt", "cfg", "html", "png", "csv")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
TICKED = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"(?:\.\.?/)*[\w.-]+(?:/[\w.-]+)*/?")  # not "/openapi.json": a URL path, not a file
MD_NAME = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.md|[A-Z][A-Z0-9_]*\.md)\b")


@cache
def tracked() -> tuple[str, ...]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return tuple(out.splitlines())


@cache
def folders() -> frozenset[str]:
    return frozenset(str(p) for f in tracked() for p in Path(f).parents if str(p) != ".")


def exists(name: str, where: Path) -> bool:
    """``name`` as a tracked file or folder: from ``where``'s folder, from the root, or as the tail of one."""
    clean = name.strip("/")
    for base in (where.parent, ROOT):
        target = (base / clean).resolve()
        if target.is_relative_to(ROOT) and target.exists():
            rel = str(target.relative_to(ROOT))
            if rel in tracked() or rel in folders():
                return True
    every = (*tracked(), *folders())
    return any(p == clean or p.endswith("/" + clean) for p in every)


def is_path(span: str) -> bool:
    if not PATHLIKE.fullmatch(span) or "//" in span:
        return False
    if span.endswith("/"):
        return span.strip("/").count("/") >= 1 or span.startswith(("../", "./"))
    last = span.rsplit("/", 1)[-1]
    return ("/" in span or last.endswith(".md")) and "." in last and last.rsplit(".", 1)[1] in EXTENSIONS


def text_files(*patterns: str) -> list[str]:
    return [f for f in tracked() if any(Path(f).match(p) for p in patterns) and not f.startswith("splits/")]


MARKDOWN = text_files("*.md")
# this file's own examples name missing files on purpose
OTHER_TEXT = [f for f in text_files("*.py", "*.toml", "*.yaml", "*.yml", "*.cfg", "Dockerfile", ".ci/*")
              if f != "tests/docs/test_references.py"]


def test_the_walk_sees_the_docs() -> None:
    assert {"README.md", "docs/serve.md", "src/salesgym/core/README.md"} <= set(MARKDOWN)
    assert "src/salesgym/core/env.py" in OTHER_TEXT


def test_the_path_rules() -> None:
    assert is_path("docs/serve.md") and is_path("core/env.py") and is_path("DESIGN.md") and is_path("agents/llm/")
    assert not is_path("runs/<RUN_ID>/report.md") and not is_path("salesgym/Territory-v0")
    assert not is_path("--price-in/--price-out") and not is_path("tools/list") and not is_path("dataset/")
    assert exists("tasks/model.py", ROOT / "docs/x.md") and exists("../docs/reward.md", ROOT / "tests/x.md")
    assert not exists("DESIGN.md", ROOT / "README.md") and not exists("shared/TERRITORY.md", ROOT / "docs/x.md")


@pytest.mark.parametrize("name", MARKDOWN)
def test_markdown_references(name: str) -> None:
    path = ROOT / name
    text = path.read_text(encoding="utf-8")
    bad = []
    for m in LINK.finditer(text):
        target = m.group(1).split("#", 1)[0]
        if target and not re.match(r"[a-z][a-z0-9+.-]*:", target) and not exists(target, path):
            bad.append(f"link ({m.group(1)})")
    for m in TICKED.finditer(text):
        span = m.group(1).strip()
        if is_path(span) and not exists(span, path):
            bad.append(f"`{span}`")
    for m in MD_NAME.finditer(TICKED.sub(" ", text)):
        if not exists(m.group(1), path):
            bad.append(m.group(1))
    assert not bad, f"{name} points at files a clone does not have: {', '.join(bad)}"


@pytest.mark.parametrize("name", OTHER_TEXT)
def test_other_files_name_only_tracked_markdown(name: str) -> None:
    path = ROOT / name
    bad = [m.group(1) for m in MD_NAME.finditer(path.read_text(encoding="utf-8")) if not exists(m.group(1), path)]
    assert not bad, f"{name} points at files a clone does not have: {', '.join(bad)}"
