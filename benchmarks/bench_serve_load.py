"""Load on the HTTP service: concurrent sessions stepping on loopback for a bounded time.

    python benchmarks/bench_serve_load.py                         # 64 sessions, 20 s, territory-debug-v0
    python benchmarks/bench_serve_load.py --sessions 16 --seconds 10 --durability full --json runs/load.json

Starts ``salesgym serve`` in a subprocess (a fresh SQLite file, agent and operator tokens), opens the sessions,
then every session steps as fast as its answers come back (a closed loop: each has one call in flight) with a
mix of short waits, reads and refused calls; a session whose episode ends is replaced. Reports throughput,
p50/p99/max step latency and errors, next to the in-process cost of the same calls measured in the same run.
Exits 1 on any error. The load generator (raw HTTP/1.1 on one asyncio loop) shares the machine with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

import salesgym

AGENT, OPERATOR = "bench-agent-token-0123456789", "bench-operator-token-0123456789"
CALLS: list[Any] = [
    {"tool": "wait", "args": {"hours": 1, "until": None}},
    {"tool": "wait", "args": {"hours": 2, "until": None}},
    {"tool": "view_opportunity", "args": {"opportunity_id": None, "page": 0}},
    "junk",
]


def in_process_cost(env_id: str, steps: int) -> float:
    """Mean seconds per ``env.step`` for the same call mix, in this process."""
    rng, env = random.Random(0), salesgym.make(env_id)
    env.reset(seed=0)
    total, n = 0.0, 0
    while n < steps:
        action = rng.choice(CALLS)
        t = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        total += time.perf_counter() - t
        n += 1
        if terminated or truncated:
            env.reset(seed=n)
    return total / n


class Connection:
    """One keep-alive HTTP/1.1 connection on raw asyncio streams: the load generator's own cost stays far
    below the server's (httpx's async pool cost more per request than the server did)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body).encode() if body is not None else b""
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {AGENT}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        self.writer.write(head.encode() + data)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        return int(status_line.split()[1]), json.loads(payload) if payload else None


async def session_loop(conn: Connection, env_id: str, seed: int, until: float, latencies: list[float],
                       errors: list[str]) -> None:
    rng = random.Random(seed)
    _, created = await conn.request("POST", "/sessions", {"env_id": env_id, "seed": seed})
    sid, version = created["session_id"], created["state_version"]
    while time.perf_counter() < until:
        body = {"state_version": version, "action": rng.choice(CALLS)}
        t = time.perf_counter()
        try:
            status, result = await conn.request("POST", f"/sessions/{sid}/step", body)
        except (OSError, asyncio.IncompleteReadError) as err:
            errors.append(type(err).__name__)
            return
        latencies.append(time.perf_counter() - t)
        if status != 200:
            errors.append(f"{status} {str(result)[:100]}")
            return
        version = result["state_version"]
        if result["terminated"] or result["truncated"]:
            await conn.request("DELETE", f"/sessions/{sid}")
            seed += 1000
            _, created = await conn.request("POST", "/sessions", {"env_id": env_id, "seed": seed})
            sid, version = created["session_id"], created["state_version"]


async def load(port: int, env_id: str, sessions: int, seconds: float) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    start = time.perf_counter()
    await asyncio.gather(*(session_loop(Connection("127.0.0.1", port), env_id, i, start + seconds, latencies,
                                        errors) for i in range(sessions)))
    return latencies, errors, time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="territory-debug-v0")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--durability", choices=("normal", "full"), default="normal")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    step_s = in_process_cost(args.env, 3000)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SALESGYM_AGENT_TOKENS": AGENT, "SALESGYM_OPERATOR_TOKEN": OPERATOR}
        server = subprocess.Popen(
            [sys.executable, "-m", "salesgym.cli", "serve", "--port", str(port), "--db", f"{tmp}/load.sqlite",
             "--durability", args.durability, "--no-access-log"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    httpx.get(url + "/healthz", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            latencies, errors, wall = asyncio.run(load(port, args.env, args.sessions, args.seconds))
        finally:
            server.terminate()
            server.wait(10)
    ms = sorted(x * 1e3 for x in latencies)
    figures = {
        "env": args.env, "sessions": args.sessions, "seconds": round(wall, 1), "durability": args.durability,
        "cpus": os.cpu_count(), "steps": len(ms), "steps_per_s": round(len(ms) / wall, 1),
        "p50_ms": round(statistics.median(ms), 2), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 2),
        "max_ms": round(ms[-1], 2), "errors": len(errors), "in_process_step_ms": round(step_s * 1e3, 4),
    }
    print(json.dumps(figures, indent=2))
    if errors:
        print("first errors:", errors[:5], file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
