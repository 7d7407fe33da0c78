"""What the real-model tests share besides the server fixture (conftest.py)."""

from __future__ import annotations

import os
import socket

KEY_ENV = "SALESGYM_TEST_REAL_MODEL_KEY"  # a local server ignores the key; the client wants one
os.environ[KEY_ENV] = "not-needed-by-a-local-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
