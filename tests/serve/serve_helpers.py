"""A real service for the tests: ``salesgym serve`` in a subprocess on a free loopback port, its own SQLite
file and tokens, its log captured to a file (to check that no token reaches it)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

import salesgym
from salesgym.serve.client import Client

AGENT_A = "agent-token-aaaaaaaaaaaaaaaa"
AGENT_B = "agent-token-bbbbbbbbbbbbbbbb"
OPERATOR = "operator-token-oooooooooooooo"
VERIFIER_KEY = "serve-test-verifier-key-0123456789"
DEBUG = "territory-debug-v0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    db: Path
    log: Path
    port: int = field(default_factory=free_port)
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # added to (or, with "", removed from) the default environment
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> Server:
        env = {**os.environ, "SALESGYM_AGENT_TOKENS": f"{AGENT_A},{AGENT_B}", "SALESGYM_OPERATOR_TOKEN": OPERATOR,
               "SALESGYM_VERIFIER_KEY": VERIFIER_KEY, **self.env}
        env = {k: v for k, v in env.items() if v}
        cmd = [sys.executable, "-m", "salesgym.cli", "serve", "--port", str(self.port), "--db", str(self.db),
               *self.args]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the server did not come up")

    def kill(self) -> None:
        """``kill -9``: no shutdown handler runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def client(self, token: str | None = AGENT_A) -> Client:
        return Client(self.url, token=token)


@contextmanager
def running(tmp: Path, *args: str, name: str = "serve", env: dict[str, str] | None = None) -> Iterator[Server]:
    server = Server(tmp / f"{name}.sqlite", tmp / f"{name}.log", args=args, env=env or {}).start()
    try:
        yield server
    finally:
        server.stop()


def in_process(env_id: str, seed: int, actions: list[Any], **kwargs: Any) -> Any:
    """The same calls made in-process, with the service's verifier key: the reference for every comparison."""
    env = salesgym.make(env_id, verifier_key=VERIFIER_KEY.encode(), **kwargs)
    env.reset(seed=seed)
    for action in actions:
        env.step(action)
    return env
