"""Programs a caller supplies (the verifier API's jq) run here: in a small pool of worker processes that hold no
secret and cannot stall the service, never in the service's own process.

A worker is a fresh interpreter started with an **empty environment**, in ``/``: it was given no secret and
inherits no memory of the service (``jq``'s ``$ENV`` and ``env`` find nothing). It imports its target (a
``module:function``; the module's ``warm_up()``, if it has one, loads what jobs need), then limits itself
before its first job: it can open no file (``RLIMIT_NOFILE``, so no module or key file can be read), write none
(``RLIMIT_FSIZE``), dump no core, use at most ``memory_mib`` of address space (``RLIMIT_AS``), and runs at the
lowest CPU priority (nice 19: the event loop and other sessions' steps come first). Each job runs under a
CPU-time timer (``ITIMER_PROF``) whose signal ends the process, inside C code too: a job that needs more than
``cpu_s`` seconds of CPU is stopped there (408). Running out of memory ends the job (422). Its stderr goes
nowhere, so nothing it prints reaches the service's log.

The service waits for an answer in a thread, never on its event loop, with a wall-clock backstop (a worker
starved of CPU on a loaded machine); workers are reused from job to job, and one that died or was killed is
replaced at once, in the thread of the job that killed it. Jobs beyond ``workers`` wait their turn; beyond
``max_waiting`` more they are refused (503). Frames on the worker's stdin and stdout are a 4-byte length and
JSON.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

START_TIMEOUT_S = 120.0  # importing the target on a loaded machine
_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class SandboxLimits:
    cpu_s: float = 2.0  # CPU seconds a job may use
    memory_mib: int = 512  # a worker's address space
    workers: int = 2  # jobs that run at once
    max_waiting: int = 64  # jobs that may wait for a worker; more are refused
    max_answer_bytes: int = 8 << 20

    def __post_init__(self) -> None:
        if not 0 < self.cpu_s <= 600 or self.memory_mib < 64 or self.workers < 1 or self.max_waiting < 0:
            raise ValueError("sandbox limits: cpu_s in (0, 600], memory_mib >= 64, workers >= 1, max_waiting >= 0")

    @property
    def wall_s(self) -> float:
        """The backstop: a job still running after this long is killed, whatever CPU it got."""
        return max(30.0, 20 * self.cpu_s)


class SandboxError(Exception):
    """A job that did not give an answer: the service's ``status``, ``error`` code and one-line ``detail``."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


class _Died(Exception):
    """The worker ended (or was killed) before answering."""

    def __init__(self, returncode: int | None, wall: bool = False) -> None:
        super().__init__(returncode)
        self.returncode, self.wall = returncode, wall


class _Worker:
    def __init__(self, target: str, limits: SandboxLimits) -> None:
        root = str(Path(__file__).resolve().parents[2])  # where ``salesgym`` is imported from, installed or not
        boot = f"import sys; sys.path.insert(0, {root!r}); from salesgym.serve.sandbox import main; main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", boot, target, json.dumps(asdict(limits))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={}, cwd="/",
            close_fds=True, start_new_session=True)
        self.answer(START_TIMEOUT_S, 1 << 10)  # the worker's first frame: imported and limited, ready

    def call(self, data: bytes, wall_s: float, max_bytes: int) -> bytes:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_LENGTH.pack(len(data)) + data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Died(self._ended()) from None
        return self.answer(wall_s, max_bytes)

    def answer(self, wall_s: float, max_bytes: int) -> bytes:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + wall_s
        head = self._read(self.proc.stdout, _LENGTH.size, deadline)
        (size,) = _LENGTH.unpack(head)
        if size > max_bytes:
            self.kill()
            raise SandboxError(422, "jq_answer_too_large", f"the answer is larger than {max_bytes} bytes")
        return self._read(self.proc.stdout, size, deadline)

    def _read(self, stream: IO[bytes], n: int, deadline: float) -> bytes:
        out = b""
        while len(out) < n:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([stream], [], [], max(0.0, left))
            if not ready:
                self.kill()
                raise _Died(None, wall=True)
            chunk = os.read(stream.fileno(), n - len(out))
            if not chunk:
                raise _Died(self._ended())
            out += chunk
        return out

    def _ended(self) -> int | None:
        try:
            return self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class Sandbox:
    """A pool of workers running ``target`` (``"module:function"``, called with one JSON value, answering one)."""

    def __init__(self, target: str, limits: SandboxLimits | None = None) -> None:
        self.target, self.limits = target, limits or SandboxLimits()
        self.started = 0  # workers started so far
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._slots: asyncio.Semaphore | None = None
        self._waiting = 0

    async def run(self, payload: Any) -> Any:
        """``target(payload)`` in a worker; :class:`SandboxError` when the job was refused or stopped."""
        if self._waiting >= self.limits.workers + self.limits.max_waiting:
            raise SandboxError(503, "sandbox_busy", "too many programs are waiting to run; try again shortly")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.workers)
        self._waiting += 1
        try:
            async with self._slots:
                return await asyncio.to_thread(self._job, payload)
        finally:
            self._waiting -= 1

    def _job(self, payload: Any) -> Any:
        data = json.dumps(payload).encode()
        worker = self._take()
        try:
            frame = worker.call(data, self.limits.wall_s, self.limits.max_answer_bytes)
        except _Died as died:
            worker.kill()
            self._replace()
            raise self._stopped(died) from None
        except SandboxError:
            self._replace()
            raise
        answer = json.loads(frame)
        if answer.get("retire"):  # the worker ran out of memory: its heap is not worth keeping
            worker.kill()
            self._replace()
        else:
            with self._lock:
                self._idle.append(worker)
        if "error" in answer:
            raise SandboxError(int(answer["status"]), str(answer["error"]), str(answer["detail"]))
        return answer["ok"]

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._start()

    def _start(self) -> _Worker:
        try:
            worker = _Worker(self.target, self.limits)
        except _Died:
            raise SandboxError(503, "sandbox_unavailable", "a sandbox worker could not be started") from None
        self.started += 1
        return worker

    def _replace(self) -> None:
        """Start the worker that takes a dead one's place now, so the next job finds one ready."""
        worker = self._start()
        with self._lock:
            self._idle.append(worker)

    def _stopped(self, died: _Died) -> SandboxError:
        cpu, mib = f"{self.limits.cpu_s:g}", self.limits.memory_mib
        if died.wall:
            return SandboxError(408, "jq_time_limit", f"the program ran longer than {self.limits.wall_s:g} s "
                                f"(and is limited to {cpu} s of CPU)")
        if died.returncode == -signal.SIGPROF:
            return SandboxError(408, "jq_time_limit", f"the program used more than {cpu} s of CPU")
        if died.returncode in (-signal.SIGABRT, -signal.SIGKILL):  # jq aborts when an allocation fails
            return SandboxError(422, "jq_memory_limit", f"the program needed more than {mib} MiB of memory")
        name = signal.Signals(-died.returncode).name if died.returncode and died.returncode < 0 else died.returncode
        return SandboxError(422, "jq_failed", f"the program stopped its sandbox worker ({name})")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


# -- the worker's side --------------------------------------------------------------------------------------------
def _limit_self(limits: SandboxLimits) -> None:
    import resource

    os.environ.clear()  # the interpreter may have set a locale variable of its own: nothing at all is left
    os.nice(19)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    memory = limits.memory_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))  # stdin, stdout, stderr: nothing more can be opened
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the CPU timer's signal ends the process


def _frame(stream: BinaryIO) -> bytes | None:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    return stream.read(_LENGTH.unpack(head)[0])


def _send(stream: BinaryIO, answer: dict[str, Any]) -> None:
    data = json.dumps(answer).encode()
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _answer(function: Any, frame: bytes, limits: SandboxLimits) -> dict[str, Any]:
    try:
        return {"ok": function(json.loads(frame))}
    except MemoryError:
        return {"status": 422, "error": "jq_memory_limit", "retire": True,
                "detail": f"the program needed more than {limits.memory_mib} MiB of memory"}
    except RecursionError:
        return {"status": 422, "error": "jq_failed", "detail": "the program's output is nested too deeply"}
    except ValueError as err:  # the target refuses its input: its own status and code, or 422
        return {"status": getattr(err, "status", 422), "error": getattr(err, "code", "invalid_input"),
                "detail": " ".join(str(err).split())[:500]}
    except Exception as err:  # never a traceback: the job failed, the worker carries on
        return {"status": 422, "error": "jq_failed", "detail": f"the program failed ({type(err).__name__})"}


def main() -> None:
    """``python -c ... TARGET LIMITS``: serve jobs on stdin until it closes."""
    target, limits = sys.argv[1], SandboxLimits(**json.loads(sys.argv[2]))
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    function = getattr(module, name)
    if hasattr(module, "warm_up"):  # load what its jobs need now: afterwards no file can be opened
        module.warm_up()
    _limit_self(limits)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _send(stdout, {"ready": True})
    while (frame := _frame(stdin)) is not None:
        signal.setitimer(signal.ITIMER_PROF, limits.cpu_s)
        answer = _answer(function, frame, limits)
        try:
            data = json.dumps(answer, allow_nan=False).encode()
        except (ValueError, RecursionError):
            data = json.dumps({"status": 422, "error": "jq_failed", "detail": "the answer is not JSON"}).encode()
        signal.setitimer(signal.ITIMER_PROF, 0)
        stdout.write(_LENGTH.pack(len(data)) + data)
        stdout.flush()
