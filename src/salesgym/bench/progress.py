"""Progress of a benchmark run: rich's live bar on a terminal; elsewhere (a log file, a pipe, CI) one plain line
at most every :data:`EVERY_S` seconds, since a live bar only draws on a terminal and a log would show nothing
until the end.

Both kinds answer the same calls the commands make (``add_task``, ``update``, ``advance``, and ``with``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

EVERY_S = 30.0


class RunProgress(Protocol):
    def add_task(self, description: str, total: float | None = None) -> int: ...
    def update(self, task: int, *, total: float | None = None) -> None: ...
    def advance(self, task: int, advance: float = 1) -> None: ...
    def __enter__(self) -> RunProgress: ...
    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None: ...


def make(console: Console, every: float | None = None) -> RunProgress:
    """The live bar when ``console`` is a terminal, else :class:`PlainProgress` (a line every ``every`` s)."""
    if console.is_terminal:
        return Progress(  # type: ignore[return-value]
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("episodes"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
    return PlainProgress(console, EVERY_S if every is None else every)


def duration(seconds: float) -> str:
    """``1h02m``, ``3m05s``, ``42s``.

    >>> duration(42.4), duration(185), duration(3720)
    ('42s', '3m05s', '1h02m')
    """
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class PlainProgress:
    """One plain line (``eval: 12/48 episodes, 1m05s elapsed, ETA 3m15s``) when ``every`` seconds have passed
    since the last one, checked as each episode ends and by a timer thread (an episode may take minutes); a
    last line when the run ends. Nothing else: no colour, no cursor movement."""

    def __init__(self, console: Console, every: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console, self.every, self.clock = console, every, clock
        self.description, self.done = "", 0.0  # one task: a run has one
        self.total: float | None = None
        self.started = self.last = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def add_task(self, description: str, total: float | None = None) -> int:
        self.description, self.total = description, total
        return 0

    def update(self, task: int, *, total: float | None = None) -> None:
        self.total = total

    def advance(self, task: int, advance: float = 1) -> None:
        self.done += advance
        self.poll()

    def line(self) -> str:
        elapsed = self.clock() - self.started
        total = f"/{self.total:g}" if self.total is not None else ""
        text = f"{self.description}: {self.done:g}{total} episodes, {duration(elapsed)} elapsed"
        if self.total is not None and self.done >= self.total:
            return text + ", done"
        if self.total is not None and self.done > 0:
            return text + f", ETA {duration(elapsed / self.done * (self.total - self.done))}"
        return text + ", ETA unknown"

    def poll(self) -> None:
        """Print a line if ``every`` seconds have passed since the last (or since the start)."""
        with self._lock:
            now = self.clock()
            if now - self.last < self.every:
                return
            self.last = now
            text = self.line()
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _tick(self) -> None:
        while not self._stop.wait(max(self.every, 0.05)):
            self.poll()

    def __enter__(self) -> PlainProgress:
        self.started = self.last = self.clock()
        self._timer = threading.Thread(target=self._tick, name="salesgym-progress", daemon=True)
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        if kind is None:
            self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)
