"""A long hostile-input campaign against the running service and MCP server, from outside, as an attacker sees
them: ``salesgym serve`` (its environment and key files holding canary secrets), ``salesgym mcp`` over stdio and
over streamable HTTP, each in its own process on loopback.

Every round sends every item of ``salesgym.testing.hostile_input.WIRE`` to every HTTP endpoint that reads a
body (with an agent token, the operator's, a wrong one or none) and to both MCP transports, then ``--variants``
random variants of them (an item nested inside more containers, cut short, a byte flipped, another content
type), then every jq program of the corpus (escapes, endless and greedy ones, a backtracking ``matches``)
through the verifier API with both tokens. Finally ``/healthz`` is timed idle and while ten endless programs run.

Promises checked, each broken one counted: no HTTP answer is a 5xx or not JSON; every corpus item gets a 4xx (a
variant may be valid, so a 2xx is allowed for those); every MCP request gets an answer (a JSON-RPC error, or a
tool result refusing it) within 30 s; a jq escape gets 400, an endless or greedy program 408 or 422; no canary in
any answer, header or log line; no traceback in any log; every server still answers at the end.

    python benchmarks/hostile_campaign.py --rounds 20 --variants 200 --seed 1 --json runs/hostile_campaign.json

Exits 1 if any promise was broken. The latency figure is a ratio within the run (p99 of ``/healthz`` during the
hostile programs over its idle p99); re-measure it on an idle machine before quoting it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from salesgym.testing.hostile_input import JQ_ESCAPES, JQ_GREEDY, JQ_SLOW, SLOW_MATCH, WIRE, Hostile

AGENT, OPERATOR = "campaign-agent-token-a1b2c3d4", "campaign-operator-token-e5f6a7b8"
CANARIES = {"SALESGYM_CANARY": "canary-campaign-env-0d9e", "SALESGYM_VERIFIER_KEY": "canary-campaign-key-env-71c2"}
CANARY_FILE_KEY = "canary-campaign-key-file-33aa"
CANARY_SPLIT_KEY = "c0ffee" * 11
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "campaign", "version": "1"}}}
CONTENT_TYPES = ("application/json", "text/plain", None, "application/json; charset=latin-1", "application/xml")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Tally:
    sent: Counter[str] = field(default_factory=Counter)  # by surface
    answers: Counter[str] = field(default_factory=Counter)  # by surface and status class
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text[:400])


def secrets_seen(text: str) -> list[str]:
    every = [*CANARIES.values(), CANARY_FILE_KEY, CANARY_SPLIT_KEY, OPERATOR]
    return [c for c in every if c in text]


# -- the servers -------------------------------------------------------------------------------------------------
def start(cmd: list[str], log: Path, env: dict[str, str], url: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "salesgym.cli", *cmd], stdout=out, stderr=subprocess.STDOUT,
                                env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{cmd[0]} did not come up: {log.read_text()[-2000:]}")


class Stdio:
    """``salesgym mcp`` over stdio, in raw JSON lines."""

    def __init__(self, env: dict[str, str], err: Path) -> None:
        self.err = err.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "salesgym.cli", "mcp", "territory-debug-v0"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env)
        self.buffer = b""
        self.send(json.dumps(INITIALIZE).encode())
        self.receive(120)
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.err.close()


# -- variants ------------------------------------------------------------------------------------------------------
def variant(rng: random.Random, item: Hostile) -> Hostile:
    """The item made otherwise: nested deeper, cut short, one byte flipped, or declared as another content type."""
    how = rng.randrange(4)
    value = item.value
    if how == 0:
        k = rng.randint(1, 80)
        value = b'{"k": ' * k + value + b"}" * k if rng.random() < 0.5 else b"[" * k + value + b"]" * k
    elif how == 1 and len(value) > 1:
        value = value[: rng.randrange(1, len(value))]
    elif how == 2 and value:
        i = rng.randrange(len(value))
        value = value[:i] + bytes([rng.randrange(256) or 1]) + value[i + 1:]
    else:
        return replace(item, name=item.name + " (content type)", content_type=rng.choice(CONTENT_TYPES))
    value = value.replace(b"\n", b" ")  # one stdio message stays one line
    return replace(item, name=f"{item.name} (variant {how})", value=value)


# -- the campaign ---------------------------------------------------------------------------------------------------
def http_round(base: str, items: list[tuple[Hostile, bool]], ids: dict[str, str], tally: Tally,
               rng: random.Random) -> None:
    endpoints = [
        ("POST", "/sessions", b'{"env_id": "territory-debug-v0", "seed": 1, "kwargs": {"x": ', b"}}"),
        ("POST", f"/sessions/{ids['sid']}/step", b'{"state_version": 1, "action": ', b"}"),
        ("POST", "/runs", b'{"seed": 1, "kwargs": {"template": ', b"}}"),
        ("PUT", f"/runs/{ids['run']}/state", b'{"app": "crm", "tables": {"deals": {"1": {"x": ', b"}}}}"),
        ("POST", f"/runs/{ids['run']}/calls", b'{"calls": [{"tool": "finish_task", "args": {"summary": ', b"}}]}"),
        ("POST", f"/runs/{ids['run']}/assertions", b'{"assertions": [{"expr": ".", "op": "equals", "expected": ',
         b"}]}"),
        ("POST", f"/runs/{ids['run']}/verdict", b"", b""),
    ]
    tokens = (AGENT, OPERATOR, "campaign-wrong-token-00000000", None)
    with httpx.Client(base_url=base, timeout=60) as client:
        for item, must_refuse in items:
            for method, path, before, after in endpoints:
                token = rng.choice(tokens)
                headers = {} if token is None else {"Authorization": f"Bearer {token}"}
                if item.content_type is not None:
                    headers["Content-Type"] = item.content_type
                where = f"HTTP {method} {path.split('/')[1]} {item.name}"
                tally.sent["http"] += 1
                try:
                    r = client.request(method, path, content=item.inside(before, after), headers=headers)
                except httpx.HTTPError as err:
                    tally.problem(f"{where}: no answer ({type(err).__name__})")
                    continue
                tally.answers[f"http {r.status_code // 100}xx"] += 1
                if r.status_code >= 500 or (must_refuse and r.status_code < 400):
                    tally.problem(f"{where}: {r.status_code} {r.text[:200]}")
                try:
                    body = r.json()
                except ValueError:
                    tally.problem(f"{where}: the answer is not JSON")
                    continue
                if r.status_code >= 400 and not (isinstance(body, dict) and body.get("detail")):
                    tally.problem(f"{where}: a refusal without a reason")
                if secrets_seen(r.text + json.dumps(dict(r.headers))):
                    tally.problem(f"{where}: a secret in the answer")


def mcp_call(item: Hostile, n: int) -> bytes:
    before = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "wait", "arguments": ' % n
    return item.inside(before, b"}}")


def mcp_round(stdio: Stdio, mcp_url: str, items: list[tuple[Hostile, bool]], tally: Tally, start: int) -> None:
    headers = {"Authorization": f"Bearer {AGENT}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=60) as http:
        init = http.post(mcp_url, json=INITIALIZE)
        session = {"mcp-session-id": init.headers.get("mcp-session-id", ""), "mcp-protocol-version": "2025-06-18"}
        http.post(mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        for n, (item, must_refuse) in enumerate(items, start):
            if not item.over_http_only:
                tally.sent["mcp stdio"] += 1
                stdio.send(mcp_call(item, n))
                answer = stdio.receive()
                if answer is None:
                    tally.problem(f"MCP stdio {item.name}: no answer in 30 s")
                    return
                kind = "error" if "error" in answer else "refused" if answer.get("result", {}).get("isError") else "ok"
                tally.answers[f"mcp stdio {kind}"] += 1
                if must_refuse and kind == "ok":
                    tally.problem(f"MCP stdio {item.name}: accepted")
            tally.sent["mcp http"] += 1
            extra = {**session, **({"Content-Type": item.content_type} if item.content_type else {})}
            try:
                r = http.post(mcp_url, content=mcp_call(item, n), headers=extra)
            except httpx.HTTPError as err:
                tally.problem(f"MCP HTTP {item.name}: no answer ({type(err).__name__})")
                continue
            tally.answers[f"mcp http {r.status_code // 100}xx"] += 1
            if r.status_code >= 500:
                tally.problem(f"MCP HTTP {item.name}: {r.status_code}")
            if secrets_seen(r.text):
                tally.problem(f"MCP HTTP {item.name}: a secret in the answer")


def jq_round(base: str, run_id: str, tally: Tally) -> None:
    programs = [(p, (400,)) for p in JQ_ESCAPES] + [(p, (408,)) for p in JQ_SLOW] + [(p, (408, 422)) for p in JQ_GREEDY]
    with httpx.Client(base_url=base, timeout=300) as client:
        for token in (AGENT, OPERATOR):
            for program, allowed in [*programs, (SLOW_MATCH, (408,))]:
                spec = program if isinstance(program, dict) else {"expr": program, "op": "exists"}
                tally.sent["jq"] += 1
                r = client.post(f"/runs/{run_id}/assertions", json={"assertions": [spec]},
                                headers={"Authorization": f"Bearer {token}"})
                tally.answers[f"jq {r.status_code}"] += 1
                if r.status_code not in allowed:
                    tally.problem(f"jq {spec['expr'][:60]!r}: {r.status_code} {r.text[:200]}")
                if secrets_seen(r.text + json.dumps(dict(r.headers))):
                    tally.problem(f"jq {spec['expr'][:60]!r}: a secret in the answer")


def latency(base: str, run_id: str) -> dict[str, float]:
    """p99 of /healthz idle and while ten endless programs run."""
    def sample(client: httpx.Client) -> float:
        t = time.perf_counter()
        client.get("/healthz")
        return time.perf_counter() - t

    with httpx.Client(base_url=base, timeout=60) as client:
        for _ in range(30):
            sample(client)
        idle = [sample(client) for _ in range(500)]

        def hostile() -> None:
            with httpx.Client(base_url=base, timeout=300) as c:
                c.post(f"/runs/{run_id}/assertions", json={"assertions": [{"expr": JQ_SLOW[1], "op": "exists"}]},
                       headers={"Authorization": f"Bearer {AGENT}"})

        threads = [threading.Thread(target=hostile) for _ in range(10)]
        for t in threads:
            t.start()
        busy: list[float] = []
        while any(t.is_alive() for t in threads) or len(busy) < 500:
            busy.append(sample(client))
    p99 = [statistics.quantiles(s, n=100)[98] for s in (idle, busy)]
    return {"healthz_idle_p99_ms": round(p99[0] * 1000, 2), "healthz_hostile_p99_ms": round(p99[1] * 1000, 2),
            "healthz_p99_ratio": round(p99[1] / p99[0], 2), "samples_hostile": len(busy)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the whole corpus (default 5)")
    parser.add_argument("--variants", type=int, default=100, help="random variants a round (default 100)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures as JSON to this path")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    tally = Tally()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hostile-campaign-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "verifier.key").write_text(CANARY_FILE_KEY)
        (tmp / "split.key").write_text(CANARY_SPLIT_KEY)
        env = {**os.environ, **CANARIES, "SALESGYM_AGENT_TOKENS": AGENT, "SALESGYM_OPERATOR_TOKEN": OPERATOR,
               "SALESGYM_VERIFIER_KEY_FILE": str(tmp / "verifier.key"),
               "SALESGYM_SPLIT_KEY_FILE": str(tmp / "split.key")}
        port, mcp_port = free_port(), free_port()
        base, mcp_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{mcp_port}/mcp"
        logs = {"serve": tmp / "serve.log", "mcp http": tmp / "mcp.log", "mcp stdio": tmp / "stdio.log"}
        serve = start(["serve", "--port", str(port), "--db", str(tmp / "s.sqlite")], logs["serve"], env,
                      base + "/healthz")
        mcp_http = start(["mcp", "territory-debug-v0", "--transport", "http", "--port", str(mcp_port)],
                         logs["mcp http"], env, mcp_url)
        stdio = Stdio(env, logs["mcp stdio"])
        try:
            auth = {"Authorization": f"Bearer {AGENT}"}
            sid = httpx.post(base + "/sessions", json={"env_id": "territory-debug-v0", "seed": 1}, headers=auth,
                             timeout=60).json()["session_id"]
            run = httpx.post(base + "/runs", json={"kwargs": {"template": "crm-closed-won"}, "seed": 4}, headers=auth,
                             timeout=60).json()["run_id"]
            for r in range(args.rounds):
                items = [(h, True) for h in WIRE] + [(variant(rng, rng.choice(WIRE)), False)
                                                     for _ in range(args.variants)]
                http_round(base, items, {"sid": sid, "run": run}, tally, rng)
                mcp_round(stdio, mcp_url, items, tally, 1 + r * len(items))
                print(f"[round {r + 1}/{args.rounds}] {sum(tally.sent.values()):,} sent, {len(tally.problems)} "
                      f"problems, {time.perf_counter() - t0:,.0f} s", flush=True)
            jq_round(base, run, tally)
            figures = latency(base, run)
            if figures["healthz_p99_ratio"] > 10:
                tally.problem(f"/healthz p99 grew {figures['healthz_p99_ratio']}x under hostile programs (at most 10x)")
            for name, url in (("serve", base + "/healthz"), ("mcp http", mcp_url)):
                try:
                    httpx.get(url, timeout=30)
                except httpx.HTTPError:
                    tally.problem(f"{name} stopped answering")
            if stdio.proc.poll() is not None:
                tally.problem("the stdio MCP server ended")
        finally:
            stdio.close()
            for proc in (serve, mcp_http):
                proc.terminate()
                proc.wait(30)
        for name, path in logs.items():
            text = path.read_text(errors="replace")
            if "Traceback" in text:
                tally.problem(f"a traceback in the {name} log")
            if secrets_seen(text):
                tally.problem(f"a secret in the {name} log")
    summary = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "python": platform.python_version(),
               "seed": args.seed, "rounds": args.rounds, "variants": args.variants,
               "wall_seconds": round(time.perf_counter() - t0, 1), "sent": dict(tally.sent),
               "answers": dict(sorted(tally.answers.items())), **figures, "problem_count": len(tally.problems),
               "problems": tally.problems[:50]}
    print(json.dumps({k: v for k, v in summary.items() if k != "problems"}, indent=2))
    for p in tally.problems[:20]:
        print("PROBLEM", p)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return 1 if tally.problems else 0


if __name__ == "__main__":
    sys.exit(main())
