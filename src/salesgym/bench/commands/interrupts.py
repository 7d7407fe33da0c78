"""SIGTERM stops a run like Ctrl-C, so a killed benchmark ends with its finished episodes saved."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """SIGTERM during a benchmark: stop like Ctrl-C (finished episodes are already saved). A BaseException, as
    KeyboardInterrupt is, so the handlers that record an episode's own failure let it through: with one worker
    the episode runs in this process, and SIGTERM lands inside it."""


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
