"""The company's policy documents: short Markdown files shipped with the package (``policy_docs/<name>.md``), one
per domain (lead routing, discounting, sequencing and opt-out, meeting hygiene). The agent reads them through
``list_policies`` and ``read_policy`` (``tools.py``); a task card names those that apply (``Template.policies``),
and a template may leave its decisive rule to a policy alone: its verifier checks the rule was followed.

A document's title is its first line (``# Title``); the library is read once and never changes during a run.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import NamedTuple

DOCS = "policy_docs"


class Policy(NamedTuple):
    name: str
    title: str
    text: str


@lru_cache(maxsize=1)
def library() -> MappingProxyType[str, Policy]:
    """Every policy document by name (the file name without ``.md``), in name order."""
    folder = resources.files(__package__ or "salesgym.envs.workflows").joinpath(DOCS)
    found = {}
    for item in sorted(folder.iterdir(), key=lambda f: f.name):
        if item.name.endswith(".md"):
            text = item.read_text(encoding="utf-8")
            found[item.name[:-3]] = Policy(item.name[:-3], text.splitlines()[0].lstrip("# ").strip(), text)
    return MappingProxyType(found)


def check_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is a policy document."""
    if name not in library():
        raise ValueError(f"unknown policy {name!r}; the policies are: {', '.join(library())}")
