"""The pages' model and its rendering: a view builds a :class:`Page` of blocks (headings, property lists, tables,
forms, a pipeline board, a week of slots, a timeline); one set of Jinja2 templates renders every app.

Everything a page shows comes from a tool's output (``run.Run.read``) or from the request itself; labels go
through the run's appearance variant (``variants.py``). Rendering is deterministic: no wall clock, no random
ids, every date the sandbox's (UTC), no animation (``static/app.css``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2

from salesgym.webapps.variants import Variant

APP_NAMES: dict[str, str] = {"crm": "CRM", "sequencer": "Sequencer", "scheduler": "Scheduler",
                             "prospecting": "Prospector", "task": "Task desk"}  # fmt: skip


@dataclass
class Link:
    label: str
    href: str
    id: str = ""


@dataclass
class Field:
    """A form control. ``kind``: text, textarea, select, checkbox (one box), checkboxes (several, one name)."""

    name: str
    label: str
    kind: str = "text"
    value: Any = ""
    options: list[tuple[str, str]] = field(default_factory=list)  # (value, label)
    required: bool = False
    placeholder: str = ""
    help: str = ""
    html_id: str = ""  # when one page has several forms with the same field names

    @property
    def id(self) -> str:
        return self.html_id or f"f-{self.name}"


@dataclass
class Form:
    action: str
    fields: list[Field]
    submit: str  # the button's label
    submit_id: str
    method: str = "post"
    title: str = ""
    inline: bool = False
    disabled: str = ""  # why the form cannot be used (a read-only app): shown, and the server refuses anyway
    id: str = ""


@dataclass
class Cell:
    text: str
    href: str = ""
    id: str = ""
    form: Form | None = None  # a small form in the cell (a Finish or a Cancel button)


@dataclass
class Table:
    columns: list[str]  # labels
    rows: list[list[Cell]]
    empty: str = "Nothing to show."
    caption: str = ""
    select: str = ""  # the name of a checkbox per row; the boxes belong to the form ``select_form`` (by id)
    select_values: list[str] = field(default_factory=list)
    select_form: str = ""
    id: str = ""


@dataclass
class Props:
    rows: list[tuple[str, str]]
    title: str = ""


@dataclass
class Heading:
    text: str
    actions: list[Link] = field(default_factory=list)
    level: int = 1


@dataclass
class Notice:
    text: str
    kind: str = "info"  # info, error, success, warning
    id: str = ""


@dataclass
class Pager:
    text: str
    previous: str = ""
    next: str = ""


@dataclass
class Card:
    title: str
    href: str
    lines: list[str]
    id: str
    move: Form | None = None


@dataclass
class Board:
    columns: list[tuple[str, str, list[Card]]]  # (label, stage id, cards)


@dataclass
class Slot:
    label: str
    href: str = ""  # empty: not bookable
    note: str = ""
    id: str = ""


@dataclass
class Week:
    days: list[tuple[str, list[Slot]]]
    previous: str = ""
    next: str = ""
    title: str = ""


@dataclass
class Timeline:
    items: list[tuple[str, str, str, str]]  # (date, kind, title, body)
    title: str = ""


@dataclass
class Text:
    text: str
    copy_id: str = ""  # a value shown to be copied (a booking link): in a read-only text box


Block = Heading | Props | Table | Form | Notice | Pager | Board | Week | Timeline | Text


@dataclass
class Page:
    app: str
    title: str
    blocks: list[Block]
    status: int = 200
    wrap: Form | None = None  # a form after the blocks that a table's checkboxes belong to (``Table.select_form``)
    crumbs: list[Link] = field(default_factory=list)


@dataclass
class Redirect:
    href: str


@dataclass
class Frame:
    """What every page of an app shows around its blocks: navigation, the clock, the task, the flash message."""

    app: str
    nav: list[Link]
    active: str
    clock: str
    task_title: str
    task_href: str
    flash: str = ""
    over: str = ""  # the run has ended: why


@lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("salesgym.webapps", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["APP_NAMES"] = APP_NAMES
    env.filters["slug"] = slug
    return env


def slug(value: Any) -> str:
    """A value as a piece of an element id: letters, digits and dashes (a checkbox's id is its field and value)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(value)).strip("-")


def render(page: Page, frame: Frame, variant: Variant) -> str:
    template = _templates().get_template("page.html")
    return template.render(page=page, frame=frame, v=variant, kind=lambda b: type(b).__name__.lower())
