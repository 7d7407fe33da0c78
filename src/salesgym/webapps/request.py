"""What a view sees of a request (:class:`Q`, its :class:`Form` data) and what an app's views are
(:class:`AppRoutes`): shared by the server and the views, which therefore import each other not at all."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from salesgym.webapps.page import Page, Redirect
from salesgym.webapps.run import Run


class Form:
    """A submitted form: the last value of a name, or all of them."""

    def __init__(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.pairs = list(pairs)

    def get(self, name: str, default: str = "") -> str:
        found = [v for k, v in self.pairs if k == name]
        return found[-1].strip() if found else default

    def getlist(self, name: str) -> list[str]:
        return [v.strip() for k, v in self.pairs if k == name and v.strip()]

    def __contains__(self, name: str) -> bool:
        return any(k == name for k, _ in self.pairs)


@dataclass
class Q:
    """One request as a view sees it."""

    run: Run
    app: str
    method: str
    path: dict[str, str]
    query: Form
    form: Form
    origins: Mapping[str, str]

    @property
    def posted(self) -> bool:
        return self.method == "POST"

    def word(self, key: str) -> str:
        return self.run.variant.word(key)

    def read(self, tool: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.run.read(tool, args)

    def write(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.run.write(self.app, tool, args)

    def say(self, text: str) -> None:
        self.run.say(self.app, text)

    def href(self, path: str, **params: Any) -> str:
        """``path`` with the current query changed by ``params`` (a None value drops the parameter)."""
        merged = {k: v for k, v in self.query.pairs}
        merged.update({k: str(v) for k, v in params.items() if v is not None})
        for k, v in params.items():
            if v is None:
                merged.pop(k, None)
        kept = {k: v for k, v in merged.items() if v != ""}
        return path + ("?" + urlencode(kept) if kept else "")


View = Callable[[Q], Page | Redirect]


@dataclass
class AppRoutes:
    """One app's pages: ``routes`` (path, view, methods) and its navigation (label key, href, id)."""

    name: str
    routes: Sequence[tuple[str, View, tuple[str, ...]]]
    nav: list[tuple[str, str]]  # (label key, href); the link's id is the key
    home: str
