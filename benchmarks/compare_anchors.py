"""salesgym's per-step costs beside the systems users would pick instead (the anchors), measured side by side in
one sitting: the same operations on both, interleaved round by round, best of N, printed as a ratio table.

Each anchor is a section: its public repository checked out somewhere outside this repository and an
interpreter that has it installed (nothing of the anchor's is copied here). The anchor's side runs in a worker
process under that interpreter (this same file with ``--worker``), which answers one timing request per line;
salesgym's side runs in this process. Rounds alternate which side goes first, so drifting load on a shared
machine hits both; only the ratios inside one sitting count.

    python benchmarks/compare_anchors.py                         # says what it needs, exits 0
    python benchmarks/compare_anchors.py --salesbench ../anchors/salesbench-prime \\
        --salesbench-python ../anchors/sb-venv/bin/python [--rounds 7] [--json out.json]

SalesBench (github.com/Hamza-Mos/salesbench-prime; its environment needs the ``verifiers`` version its lock
file pins, 0.1.x): install with ``python -m venv sb-venv && sb-venv/bin/pip install 'verifiers==0.1.11.dev0'
-e salesbench-prime/environments/salesbench``. It is timed at its tool-function level (the runtime and the
tools' JSON answers, without verifiers' per-turn message handling, and with a rule stub in place of its
language-model buyer), so its figures are a lower bound; salesgym's are whole ``env.step`` calls (parsing,
validation, events, the rule-based buyer, reward and the rendered observation).

Adding an anchor: write a ``Section`` (its options, its rows, salesgym's side of each row) and a worker
function (the anchor's side, imported only under the anchor's interpreter), and register both in ``SECTIONS``
and ``WORKERS``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Batch = Callable[[int], float]  # run n operations (set-up untimed), return seconds per operation
HERE = Path(__file__).resolve()


# --- what both sides share ------------------------------------------------------------------------------------
def timed(setup: Callable[[], Any], op: Callable[[Any, int], None],
          refused: Callable[[Any], int] = lambda _: 0) -> Batch:  # fmt: skip
    """A batch: ``setup()`` untimed, then ``op(thing, i)`` for i in range(n) timed, collector off; afterwards
    (untimed) ``refused(thing)`` must be 0, so no side is timed on its error path or after its episode ended."""

    def batch(n: int) -> float:
        thing = setup()
        gc.collect()
        gc.disable()
        try:
            t = time.perf_counter()
            for i in range(n):
                op(thing, i)
            elapsed = (time.perf_counter() - t) / max(n, 1)
        finally:
            gc.enable()
        if refused(thing):
            raise SystemExit(f"a timed batch had {refused(thing)} refused calls or ended its episode: not comparable")
        return elapsed

    return batch


def memory_per(make: Callable[[int], Any], n: int = 20) -> float:
    """Bytes allocated and still held per live object built by ``make(i)`` (``tracemalloc``; warmed first)."""
    keep = [make(10_000 + i) for i in range(2)]  # module caches, interned strings: not per object
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        keep = [make(i) for i in range(n)]
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del keep
    return held / n


@dataclass(frozen=True)
class Row:
    key: str  # what both sides call the operation
    label: str
    number: int  # operations per batch
    goal: str  # the "must reach", as printed
    steps: int = 1  # steps per operation (a call cycle is four)
    memory: bool = False  # a size in bytes, not a time


@dataclass
class Section:
    """One anchor: its rows, and salesgym's side of each (``ours(key)``)."""

    name: str
    anchor: str
    rows: tuple[Row, ...]
    ours: Callable[[str], Batch | float]
    needs: str  # what to pass to run it
    extra: dict[str, Any] = field(default_factory=dict)


# --- the SalesBench section: desk-v0 against SalesBench's runtime -------------------------------------------
N_LEADS = 100
SALESBENCH_ROWS = (
    Row("reset", "desk reset, 100 leads", 20, "<= 1x"),
    Row("search", "desk search step (`crm_search_leads`, 10 rows)", 200, "<= 1x (keep)"),
    Row("quote", "desk quote step (`products_quote_plan`)", 200, "<= 1x"),
    # 80 cycles on 80 of the 100 leads: SalesBench ends its episode once no lead is left
    Row("cycle", "desk call cycle (start call, quote, propose, end call), per step", 80, "<= 1x", steps=4),
    Row("memory", "desk memory per live env (after reset, 100 leads)", 20, "<= 1x", memory=True),
)


def desk_side(key: str) -> Batch | float:
    """salesgym's side of a SalesBench row: whole ``env.step`` calls on ``desk-v0`` at 100 leads."""
    import salesgym

    def fresh() -> Any:
        env = salesgym.make("desk-v0", n_leads=N_LEADS, shift_days=2)
        env.reset(seed=1)
        return env

    def search(env: Any, i: int) -> None:
        env.step({"tool": "crm_search_leads", "args": {"limit": 10}})

    def quote(env: Any, i: int) -> None:
        env.step({"tool": "products_quote_plan", "args": {"lead_id": f"L{i % N_LEADS:03d}", "plan_type": "TERM",
                                                          "coverage_amount": 100_000 + 1000 * i, "term_years": 20}})

    def cycle(env: Any, i: int) -> None:
        lead, cover = f"L{i % N_LEADS:03d}", 100_000 + 1000 * i
        env.step({"tool": "calling_start_call", "args": {"lead_id": lead}})
        _, _, _, _, info = env.step({"tool": "products_quote_plan", "args": {
            "lead_id": lead, "plan_type": "TERM", "coverage_amount": cover, "term_years": 20}})
        premium = info["tool_result"]["output"]["monthly_premium"]
        env.step({"tool": "calling_propose_offer", "args": {
            "plan_type": "TERM", "coverage_amount": cover, "term_years": 20, "monthly_premium": premium,
            "discount_pct": 0, "next_step": "follow_up"}})
        env.step({"tool": "calling_end_call", "args": {"disposition": "other"}})

    if key == "reset":
        seeds = iter(range(1, 10**9))
        return timed(lambda: salesgym.make("desk-v0", n_leads=N_LEADS, shift_days=2),
                     lambda env, i: env.reset(seed=next(seeds)))
    if key == "memory":

        def made(seed: int) -> Any:
            env = salesgym.make("desk-v0", n_leads=N_LEADS, shift_days=2)
            env.reset(seed=seed)
            return env

        return memory_per(made)
    def refused(env: Any) -> int:
        score = env.score()
        return int(score["invalid_actions"] + score["terminated"] + score["truncated"])

    return timed(fresh, {"search": search, "quote": quote, "cycle": cycle}[key], refused)


def salesbench_worker(checkout: Path) -> Callable[[str], Batch | float]:
    """SalesBench's side, under its own interpreter: its runtime and tool functions, a rule stub as buyer."""
    import asyncio  # noqa: F401  (the tools are coroutines; they are stepped by hand below)
    import logging

    sys.path.insert(0, str(checkout / "environments" / "salesbench"))
    logging.getLogger("verifiers.salesbench").setLevel(logging.ERROR)  # no log output, as in salesgym
    import tools as sb_tools
    from config import EpisodeConfig
    from models import BuyerDecision, DecisionResult
    from runtime import SalesEpisodeRuntime

    class RuleBuyer:
        """No language model: accept a premium within budget, else refuse (the cheapest honest stand-in)."""

        def evaluate_offer(self, lead: Any, offer: Any, messages: Any = None) -> Any:
            if offer.monthly_premium <= lead.budget_monthly:
                return DecisionResult(BuyerDecision.ACCEPT, "fits my budget", 0.8)
            return DecisionResult(BuyerDecision.REJECT, "too expensive", 0.3)

    buyer = RuleBuyer()

    def run(coro: Any) -> Any:  # a tool coroutine that awaits nothing: one send runs it to the end
        try:
            coro.send(None)
        except StopIteration as done:
            return done.value
        raise RuntimeError("the tool awaited something")

    def fresh() -> Any:
        return SalesEpisodeRuntime(EpisodeConfig(seed=1, num_leads=N_LEADS))

    def lead(i: int) -> str:
        return f"lead_{i % N_LEADS + 1:04d}"

    def search(rt: Any, i: int) -> None:
        run(sb_tools.crm_search_leads(rt, limit=10))

    def quote(rt: Any, i: int) -> None:
        run(sb_tools.products_quote_plan(rt, lead_id=lead(i), plan_type="TERM", coverage_amount=100_000 + 1000 * i,
                                         term_years=20))

    def cycle(rt: Any, i: int) -> None:
        cover = 100_000 + 1000 * i
        run(sb_tools.calling_start_call(rt, lead_id=lead(i)))
        premium = json.loads(run(sb_tools.products_quote_plan(rt, lead_id=lead(i), plan_type="TERM",
                                                              coverage_amount=cover, term_years=20)))["premium"]
        run(sb_tools.calling_propose_offer(rt, plan_type="TERM", coverage_amount=cover, monthly_premium=premium,
                                           next_step="follow_up", term_years=20, messages=[], buyer_llm=buyer))
        run(sb_tools.calling_end_call(rt, disposition="other"))

    def side(key: str) -> Batch | float:
        if key == "reset":
            seeds = iter(range(1, 10**9))
            return timed(lambda: None, lambda _, i: SalesEpisodeRuntime(EpisodeConfig(seed=next(seeds),
                                                                                      num_leads=N_LEADS)))
        if key == "memory":
            return memory_per(lambda seed: SalesEpisodeRuntime(EpisodeConfig(seed=seed, num_leads=N_LEADS)))
        return timed(fresh, {"search": search, "quote": quote, "cycle": cycle}[key],
                     lambda rt: rt.stats.invalid_actions + rt.done)

    return side


def salesbench_versions(checkout: Path) -> dict[str, str]:
    from importlib.metadata import version

    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    return {"salesbench-prime": commit, "verifiers": version("verifiers"), "python": platform.python_version()}


SECTIONS = {
    "salesbench": Section("salesbench", "SalesBench", SALESBENCH_ROWS, desk_side,
                          "--salesbench PATH (a checkout of github.com/Hamza-Mos/salesbench-prime) and "
                          "--salesbench-python PY (an interpreter with its environment and verifiers 0.1.x)"),
}
WORKERS: dict[str, tuple[Callable[[Path], Callable[[str], Batch | float]], Callable[[Path], dict[str, str]]]] = {
    "salesbench": (salesbench_worker, salesbench_versions),
}


# --- the worker (the anchor's interpreter) ----------------------------------------------------------------------
def worker(name: str, checkout: Path) -> None:
    """Answer one JSON request a line: {"key", "number"} -> {"value"}; {"versions": true} -> versions."""
    make_side, versions = WORKERS[name]
    side = make_side(checkout)
    batches: dict[str, Batch | float] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("versions"):
            answer: dict[str, Any] = {"versions": versions(checkout)}
        else:
            key = request["key"]
            if key not in batches:
                batches[key] = side(key)
            b = batches[key]
            answer = {"value": b(request["number"]) if callable(b) else b}
        print(json.dumps(answer), flush=True)


def count_child(make_side: Callable[[str], Batch | float], key: str, n: int) -> None:
    """What ``--count KEY:N`` runs under valgrind: one warm-up batch (imports, caches), then a batch of ``n``."""
    b = make_side(key)
    assert callable(b), key
    b(2)
    b(n)


def instructions_per_step(argv: list[str], row: Row, n: int) -> float:
    """Instructions per step of ``row`` in the process ``argv + --count``: a run of ``n`` operations less a run of
    none (start-up, imports, warm-up and set-up cancel), per operation and step. Machine load moves it not."""
    from timing import instructions_of

    none, some = (instructions_of([*argv, "--count", f"{row.key}:{k}"]) for k in (0, n))
    return (some - none) / n / row.steps


class Worker:
    def __init__(self, python: str, name: str, checkout: Path) -> None:
        self.proc = subprocess.Popen([python, str(HERE), "--worker", name, "--checkout", str(checkout)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the anchor's worker stopped (exit {self.proc.wait()}); see its error above")
        return dict(json.loads(line))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


# --- the driver -----------------------------------------------------------------------------------------------
def sitting(section: Section, anchor: Worker, rounds: int) -> list[dict[str, Any]]:
    """Every row, both sides, interleaved round by round (alternating which side goes first); best of ``rounds``."""
    ours: dict[str, list[float]] = {r.key: [] for r in section.rows}
    theirs: dict[str, list[float]] = {r.key: [] for r in section.rows}
    batches = {r.key: section.ours(r.key) for r in section.rows}
    for k in range(rounds):
        for row in section.rows:
            for side in ("ours", "theirs") if k % 2 == 0 else ("theirs", "ours"):
                if side == "ours":
                    b = batches[row.key]
                    ours[row.key].append(b(row.number) if callable(b) else b)
                else:
                    theirs[row.key].append(anchor.ask({"key": row.key, "number": row.number})["value"])
    table = []
    for row in section.rows:
        a, b = min(ours[row.key]), min(theirs[row.key])
        a, b = (a, b) if row.memory else (a / row.steps, b / row.steps)
        table.append({"key": row.key, "label": row.label, "salesgym": a, "anchor": b, "ratio": a / b,
                      "goal": row.goal, "memory": row.memory})
    return table


def count_rows(section: Section, table: list[dict[str, Any]], python: str, checkout: Path) -> None:
    """Add each timed row's instructions per step, both sides, and their ratio to ``table``."""
    rows = {r.key: r for r in section.rows}
    for entry in table:
        row = rows[entry["key"]]
        if row.memory:
            continue
        n = max(2, row.number // 4)  # a quarter batch: enough to swamp noise, valgrind is slow
        ours = instructions_per_step([sys.executable, str(HERE), "--worker", section.name], row, n)
        theirs = instructions_per_step([python, str(HERE), "--worker", section.name, "--checkout", str(checkout)],
                                       row, n)  # fmt: skip
        entry["instructions"] = {"salesgym": ours, "anchor": theirs, "ratio": ours / theirs}


def show(value: float, memory: bool) -> str:
    if memory:
        return f"{value / 1024:.1f} KiB"
    return f"{value * 1e3:.3f} ms" if value >= 1e-3 else f"{value * 1e6:.1f} us"


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in load] if load else None,
            "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def salesgym_version() -> str:
    from importlib.metadata import version

    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return f"{version('salesgym')} ({commit or 'no git'})"


def lines(name: str, section: Section, table: list[dict[str, Any]], versions: dict[str, str]) -> Iterator[str]:
    yield f"## salesgym against {section.anchor}"
    yield ""
    yield "anchor: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + f"; salesgym {salesgym_version()}"
    yield ""
    counted = any("instructions" in r for r in table)
    yield f"| figure | salesgym | {section.anchor} | ratio | must reach |" + " instructions per step |" * counted
    yield "|---|---|---|---|---|" + "---|" * counted
    for r in table:
        ok = "" if r["ratio"] <= 1.0 else " (over)"
        line = (f"| {r['label']} | {show(r['salesgym'], r['memory'])} | {show(r['anchor'], r['memory'])} | "
                f"{r['ratio']:.2f}x{ok} | {r['goal']} |")
        if counted:
            c = r.get("instructions")
            line += f" {c['salesgym'] / 1e3:,.0f}k / {c['anchor'] / 1e3:,.0f}k = {c['ratio']:.2f}x |" if c else " |"
        yield line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--salesbench", type=Path, help="a checkout of github.com/Hamza-Mos/salesbench-prime")
    parser.add_argument("--salesbench-python", help="an interpreter with SalesBench's environment installed")
    parser.add_argument("--rounds", type=int, default=7, help="batches per side and row; the best counts")
    parser.add_argument("--json", type=Path, help="also write the tables to this file")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per step of each timed row under valgrind (load-independent; "
                             "two valgrind runs per row and side, minutes)")  # fmt: skip
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count:
        key, n = args.count.split(":")
        section = SECTIONS[args.worker]
        count_child(WORKERS[args.worker][0](args.checkout) if args.checkout else section.ours, key, int(n))
        return 0
    if args.worker:
        worker(args.worker, args.checkout)
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    given = {"salesbench": (args.salesbench, args.salesbench_python)}
    chosen = {n: g for n, g in given.items() if g[0] is not None or g[1] is not None}
    if not chosen:
        print("compare_anchors: nothing to compare. Each anchor needs its checkout and an interpreter that has it:")
        for s in SECTIONS.values():
            print(f"  {s.anchor}: {s.needs}")
        return 0
    report: dict[str, Any] = {"machine": machine(), "sections": {}}
    print(f"machine: {report['machine']}")
    for name, (checkout, python) in chosen.items():
        if checkout is None or python is None or not Path(checkout).is_dir():
            parser.error(f"{SECTIONS[name].anchor}: {SECTIONS[name].needs}")
        anchor = Worker(python, name, Path(checkout).resolve())
        try:
            versions = anchor.ask({"versions": True})["versions"]
            table = sitting(SECTIONS[name], anchor, args.rounds)
        finally:
            anchor.close()
        if args.instructions:
            count_rows(SECTIONS[name], table, python, Path(checkout).resolve())
        report["sections"][name] = {"versions": versions, "rows": table}
        print("\n".join(lines(name, SECTIONS[name], table, versions)))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
