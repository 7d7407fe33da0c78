"""What every app's views share: dates in the sandbox's words, option lists, paging, a refusal as a notice."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from salesgym.webapps.page import Field, Form, Notice, Pager
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused

PAGE_SIZE = 25
BLANK = ("", "—")


def when(text: Any) -> str:
    """An ISO time as the pages show it (the sandbox is UTC): ``2026-07-20 09:30 UTC``; a date stays a date."""
    if not text:
        return ""
    s = str(text)
    found = re.match(r"^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::\d{2})?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$", s)
    if not found:
        return s
    day, clock, zone = found.groups()
    if clock is None:
        return day
    return f"{day} {clock} UTC" if zone in (None, "Z", "+00:00", "+0000") else f"{day} {clock} ({zone})"


def options(pairs: Iterable[tuple[Any, Any]], blank: bool = True) -> list[tuple[str, str]]:
    return ([BLANK] if blank else []) + [(str(v), str(label)) for v, label in pairs]


# lifecycle stages as the CRM's pages name them (the option values stay the internal ids)
WORDS = {"subscriber": "Subscriber", "lead": "Lead", "marketingqualifiedlead": "Marketing qualified lead",
         "salesqualifiedlead": "Sales qualified lead", "opportunity": "Opportunity", "customer": "Customer",
         "evangelist": "Evangelist", "other": "Other"}  # fmt: skip


def titled(value: str) -> str:
    """An internal value in words: ``IN_PROGRESS`` -> ``In progress``, ``salesqualifiedlead`` -> ``Sales qualified
    lead``; anything else as it is."""
    if value in WORDS:
        return WORDS[value]
    return value.replace("_", " ").capitalize() if value.isupper() else value


def page_of(q: Q) -> int:
    raw = q.query.get("page", "1")
    return max(1, min(int(raw), 400)) if raw.isdigit() else 1


def pager(q: Q, path: str, total: int, page: int, size: int = PAGE_SIZE) -> Pager:
    last = max(1, -(-total // size))
    first, end = (page - 1) * size + 1, min(page * size, total)
    text = f"{first}-{end} of {total}" if total else "0 results"
    previous = q.href(path, page=page - 1) if page > 1 else ""
    return Pager(text, previous, q.href(path, page=page + 1) if page < last else "")


def status_of(blocks: Sequence[Any]) -> int:
    """The HTTP status of a page showing ``blocks``: the first refusal's code, else 200."""
    for b in blocks:
        if isinstance(b, Notice) and b.kind == "error":
            found = re.match(r"^(\d{3}) ", b.text)
            return int(found.group(1)) if found else 400
    return 200


def refusal(err: Refused) -> Notice:
    return Notice(err.reason, "error", "error")


def read_only_note(q: Q) -> str:
    """Why a write form of this app cannot be used in this task (empty: it can)."""
    if q.run.read_only(q.app):
        return "This app is read only for this task: changes are refused."
    return ""


def write_form(q: Q, action: str, fields: list[Field], submit_key: str, title: str = "", form_id: str = "") -> Form:
    return Form(action, fields, q.word(submit_key), f"btn-{submit_key}", title=title, disabled=read_only_note(q),
                id=form_id)  # fmt: skip


def keep(q: Q, name: str, current: Any) -> Any:
    """A field's value: what was posted (a refused form keeps what the person typed), else ``current``."""
    return q.form.get(name) if q.posted and name in q.form else ("" if current is None else current)


def as_int(text: str) -> int | str:
    """A number the form sent, or the text as it came (the tool's schema refuses it, as for a tool call)."""
    return int(text) if re.fullmatch(r"-?\d{1,12}", text.strip()) else text


def first(items: Sequence[Any], default: Any = None) -> Any:
    return items[0] if items else default
