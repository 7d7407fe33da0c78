"""SIGTERM stops a run like Ctrl-C, so a killed benchmark ends with its finished episodes saved."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(Exception):
    """SIGTERM during a benchmark: stop like Ctrl-C (finished episodes are already saved)."""


@contextmanager
def sigterm_stops() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
