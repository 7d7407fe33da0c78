"""Cost of the computer-use environment (``workflows-ui-v0``) beside a reference operation measured in the same run
(``timing.reference_s``: a JSON round trip of a small record list), so figures compare across machines as ratios.

Run from the repository root (Debian's Chromium installed; ``pip install -e '.[ui]'``):

    python benchmarks/bench_workflows_ui.py                 # a minute or two
    python benchmarks/bench_workflows_ui.py --json out.json

Figures (targets from issue 22, on two cores):

- ``reset_ms``: a UI episode's reset, a new browser context included, to its first observation (screenshot and
  accessibility tree), median of several; target <= 1000 ms. The first reset of a process also starts Chromium
  and the apps' server (``first_reset_ms``, paid once per worker);
- ``step_ms``: one action with its observation (screenshot + accessibility tree), the median over a fixed mix of
  page visits, form fills, selects and form submissions; target <= 300 ms; ``step_ms_no_screenshot``: the same
  without the PNG (a text agent, the reference agent);
- ``page_ms``: one page rendered by the apps' server alone (reads on a clone, the template, no browser);
- ``episode_mib``: the memory one live UI episode adds (Chromium's renderer and its share of the browser, the
  server's run), measured by opening several episodes at once in one process and dividing the growth of the
  resident memory of this process and its children.

On a shared machine the wall times move with its load; the ratios to the reference operation are the figures to
compare, and the absolute ones must be re-measured on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from timing import reference_s

from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.envs.workflows_ui.env import WorkflowsUIEnv

TARGETS = {"reset_ms": 1000.0, "step_ms": 300.0}
ACTIONS = ["goto('http://crm.salesgym.test/contacts')", keyed("goto('http://crm.salesgym.test/contacts/101/edit')"),
           "#f-jobtitle=Head of Growth", "#f-hs_lead_status>IN_PROGRESS", "#btn-save",
           "goto('http://crm.salesgym.test/deals/board')", "goto('http://sequencer.salesgym.test/sequences')",
           keyed("goto('http://scheduler.salesgym.test/event-types/ET0001')"), "goto('http://prospecting.salesgym.test/leads')",
           "goto('http://task.salesgym.test/')", "#f-question=Why is this needed?", "#btn-ask"]  # fmt: skip


def _action(env: Any, spec: str) -> Any:
    """``#id=text`` fills, ``#id>value`` selects, ``#id`` clicks (the element found by its HTML id); else as is."""
    if not spec.startswith("#"):
        return spec
    html_id, op, value = spec[1:].partition("=") if "=" in spec else spec[1:].partition(">")
    bid = next(e["bid"] for e in env.observe()["data"]["elements"] if e["id"] == html_id)
    if op == "=":
        return {"tool": "fill", "args": {"bid": bid, "value": value}}
    if op == ">":
        return {"tool": "select_option", "args": {"bid": bid, "options": value}}
    return {"tool": "click", "args": {"bid": bid}}


def _steps(screenshot: bool, rounds: int) -> list[float]:
    env = WorkflowsUIEnv(template="outbound-locked-mailbox", screenshot=screenshot)
    times = []
    for _ in range(rounds):
        env.reset(seed=1)
        for spec in ACTIONS:
            action = _action(env, spec)
            t = time.perf_counter()
            env.step(action)
            times.append(time.perf_counter() - t)
    env.close()
    return times


def _rss_kib(root: int) -> int:
    """Resident memory of ``root`` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total


def _episode_mib(live: int) -> float:
    base = WorkflowsUIEnv(template="outbound-locked-mailbox")
    base.reset(seed=1)
    before = _rss_kib(os.getpid())
    envs = []
    for i in range(live):
        env = WorkflowsUIEnv(template="outbound-locked-mailbox")
        env.reset(seed=2 + i)
        env.step("goto('http://crm.salesgym.test/contacts')")
        envs.append(env)
    after = _rss_kib(os.getpid())
    for env in envs:
        env.close()
    base.close()
    return (after - before) / live / 1024


def _page_ms(rounds: int) -> float:
    from starlette.testclient import TestClient

    import salesgym
    from salesgym.webapps.run import Runs
    from salesgym.webapps.server import Options, all_apps

    runs = Runs()
    env = salesgym.make("workflows-v0", template="outbound-locked-mailbox")
    env.reset(seed=1)
    runs.open(env, run_id="bench")
    client = TestClient(all_apps(Options(runs)), base_url="http://crm.salesgym.test", cookies={"sgrun": "bench"})
    times = []
    for _ in range(rounds):
        for path in ("/contacts", keyed("/contacts/101"), "/deals/board", keyed("/contacts/101/meeting")):
            t = time.perf_counter()
            assert client.get(path).status_code == 200
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--live", type=int, default=4, help="episodes open at once for the memory figure")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    ref_before = reference_s()
    t = time.perf_counter()
    first = WorkflowsUIEnv(template="outbound-locked-mailbox")
    first.reset(seed=1)
    first_reset = time.perf_counter() - t
    resets = []
    for seed in range(2, 2 + 3 * args.rounds):
        t = time.perf_counter()
        first.reset(seed=seed)
        resets.append(time.perf_counter() - t)
    first.close()
    steps = _steps(True, args.rounds)
    text_steps = _steps(False, args.rounds)
    figures = {
        "first_reset_ms": first_reset * 1000,
        "reset_ms": statistics.median(resets) * 1000,
        "step_ms": statistics.median(steps) * 1000,
        "step_ms_p90": sorted(steps)[int(0.9 * (len(steps) - 1))] * 1000,
        "step_ms_no_screenshot": statistics.median(text_steps) * 1000,
        "page_ms": _page_ms(args.rounds * 5),
        "episode_mib": _episode_mib(args.live),
    }
    ref = min(ref_before, reference_s())
    out: dict[str, Any] = {"reference_us": ref * 1e6, "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    for name, value in figures.items():
        out[name] = round(value, 2)
        if name.endswith("_ms") or "_ms_" in name:
            out[name.replace("_ms", "_ratio")] = round(value / 1000 / ref)
    for name, target in TARGETS.items():
        out[f"{name}_target"] = target
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
