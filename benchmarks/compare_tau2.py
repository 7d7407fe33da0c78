"""The workflows family beside tau2-bench (sierra-research/tau2-bench), its telecom domain, in one sitting: reset
and verifying a finished task, interleaved, best of N, as ratios salesgym / tau2-bench.

    python benchmarks/compare_tau2.py --tau2 PATH/tau2-bench --python PATH/venv/bin/python [--rounds 7]
    python benchmarks/compare_tau2.py                      # says what it needs and exits 0 (CI never runs it)

tau2-bench needs Python >= 3.12 and its own virtual environment (``pip install -e PATH/tau2-bench``); nothing of
it is part of this repository. Its side runs as a child process of that interpreter (this file, ``--child``),
driven over stdin/stdout, so both sides are timed in the same minutes, batch by batch, alternately.

What is timed (seconds per operation; each batch is timed whole with the collector off, the best batch counts):

- reset: salesgym ``env.reset(seed)`` of the template below (population, fixture, task) with a fresh seed every
  time; tau2 its environment built for a telecom task and set to the task's initial state (``set_state`` with
  the initialization data and actions), what its orchestrator does before the first turn.
- verify: salesgym the ``finish_task`` step of an episode that played the reference solution (the step judges
  the task: assertions, invariant, audit, forbidden actions, its reward and observation), then ``score()``
  (which takes the step's report); tau2 ``evaluate_simulation`` with ``EvaluationType.ALL`` on a simulation
  whose messages are the task's gold actions as tool calls with their real responses (it replays them into a
  fresh environment, runs the gold actions into another, compares database hashes, runs the environment
  assertions and the action and communication checks), for the telecom task with the most gold actions.

The salesgym template is the four-app template with the most assertions (``--template`` to choose another).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

NEEDS = ("compare_tau2.py needs a tau2-bench checkout and a Python (>= 3.12) with it installed:\n"
         "  git clone https://github.com/sierra-research/tau2-bench && python3.12 -m venv tau2-venv && "
         "tau2-venv/bin/pip install -e tau2-bench\n"
         "  python benchmarks/compare_tau2.py --tau2 tau2-bench --python tau2-venv/bin/python\n"
         "Nothing measured.")  # fmt: skip


def timed_batch(fn: Callable[..., Any], number: int, prepare: Callable[[int], list[Any]] | None = None) -> float:
    """Seconds per call of one batch of ``number`` calls (``prepare`` builds each call's argument untimed)."""
    items = prepare(number) if prepare is not None else [None] * number
    gc.collect()
    gc.disable()
    try:
        t = time.perf_counter()
        for item in items:
            fn() if prepare is None else fn(item)
        return (time.perf_counter() - t) / number
    finally:
        gc.enable()


# -- the tau2-bench side (runs under tau2's interpreter: imports nothing of salesgym) --------------------------
def child(checkout: str) -> None:  # pragma: no cover - runs only beside a tau2-bench checkout
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    from loguru import logger

    logger.remove()
    import tau2
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    tasks_file = os.path.join(checkout, "data", "tau2", "domains", "telecom", "tasks_small.json")
    with open(tasks_file) as fh:
        tasks = [Task.model_validate(t) for t in json.load(fh)]
    with_actions = [t for t in tasks if t.evaluation_criteria and t.evaluation_criteria.actions]
    most = max(with_actions, key=lambda t: len(t.evaluation_criteria.actions))
    fewest = min(with_actions, key=lambda t: len(t.evaluation_criteria.actions))
    make = registry.get_env_constructor("telecom")

    def reset(task: Task = most) -> Any:
        init = task.initial_state
        env = make()
        env.set_state(initialization_data=init.initialization_data if init else None,
                      initialization_actions=init.initialization_actions if init else None,
                      message_history=[])  # fmt: skip
        return env

    def judge(task: Task) -> Callable[[], float]:
        env = reset(task)
        messages: list[Any] = []
        for i, action in enumerate(task.evaluation_criteria.actions or []):
            call = ToolCall(id=f"call_{i}", name=action.name, arguments=action.arguments, requestor=action.requestor)
            who = UserMessage if action.requestor == "user" else AssistantMessage
            messages.append(who(role="user" if action.requestor == "user" else "assistant", content=None,
                                tool_calls=[call]))  # fmt: skip
            messages.append(env.get_response(call))
        sim = SimulationRun(id="bench", task_id=task.id, timestamp="", start_time="", end_time="", duration=0.0,
                            termination_reason=TerminationReason.AGENT_STOP, messages=messages)  # fmt: skip

        def verify() -> float:
            return float(evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain="telecom").reward)

        assert verify() == 1.0, f"the gold trajectory of {task.id} does not pass tau2's evaluator"
        return verify

    version = getattr(tau2, "__version__", None) or _dist_version("tau2")
    print(json.dumps({"ready": True, "version": version, "python": sys.version.split()[0],
                      "tasks": {t.id: len(t.evaluation_criteria.actions) for t in (most, fewest)}}),
          flush=True)  # fmt: skip
    ops = {"reset": reset, "verify": judge(most), "verify_fewest": judge(fewest)}
    for line in sys.stdin:
        op, number = line.split()
        print(json.dumps({"s": timed_batch(ops[op], int(number))}), flush=True)


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


# -- the salesgym side ------------------------------------------------------------------------------------------
class Salesgym:
    def __init__(self, template: str | None) -> None:
        import salesgym
        from salesgym.envs.workflows.packs import catalogue
        from salesgym.envs.workflows.tasks.model import resolve

        self.salesgym, self.resolve = salesgym, resolve
        four = {k: t for k, t in catalogue(None).items() if t.tier == 4}
        self.template = template or max(four, key=lambda k: (self._assertions(k), k))
        self.env = salesgym.make("workflows-v0", template=self.template)
        self.seed = 10_000
        self.played(1)[0].step({"tool": "finish_task", "args": {}})  # jq compiles once per template and process

    def _assertions(self, template: str) -> int:
        import salesgym

        env = salesgym.make("workflows-v0", template=template)
        env.reset(seed=1)
        return sum(len(s["assertions"]) for s in env._world.secret.steps) + len(env._world.secret.rubrics)

    def next_seed(self) -> int:
        self.seed += 1
        return self.seed

    def reset(self) -> None:
        self.env.reset(seed=self.next_seed())

    def played(self, n: int) -> list[Any]:
        """``n`` episodes that played the reference solution, not yet finished."""
        out = []
        for _ in range(n):
            env = self.salesgym.make("workflows-v0", template=self.template)
            env.reset(seed=self.next_seed())
            secret, outputs = env._world.secret, list[Any]()
            for action in secret.solution:
                outputs.append(env.step(self.resolve(action, secret.params, outputs))[4]["tool_result"]["output"])
            out.append(env)
        return out

    @staticmethod
    def finish(env: Any) -> None:
        assert env.step({"tool": "finish_task", "args": {}})[1] == 1.0

    @staticmethod
    def finish_and_score(env: Any) -> None:
        assert env.step({"tool": "finish_task", "args": {}})[1] == 1.0 and env.score()["passed"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2", help="a tau2-bench checkout")
    parser.add_argument("--python", help="an interpreter with that checkout installed")
    parser.add_argument("--rounds", type=int, default=7, help="batches per operation and side (best counts)")
    parser.add_argument("--template", help="the salesgym workflows template (default: the largest four-app one)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    if not args.tau2 or not args.python:
        print(NEEDS)
        return 0
    if not os.path.isdir(os.path.join(args.tau2, "src", "tau2")) or not os.access(args.python, os.X_OK):
        print(f"compare_tau2.py: {args.tau2!r} is not a tau2-bench checkout or {args.python!r} is not an "
              f"interpreter.\n{NEEDS}")  # fmt: skip
        return 0
    proc = subprocess.Popen([args.python, os.path.abspath(__file__), "--child", os.path.abspath(args.tau2)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    to_child, from_child = proc.stdin, proc.stdout
    info = json.loads(from_child.readline() or "{}")
    if not info.get("ready"):
        print("compare_tau2.py: the tau2-bench side did not start (its error is above).")
        return 1

    def tau2(op: str, number: int) -> float:
        to_child.write(f"{op} {number}\n")
        to_child.flush()
        return float(json.loads(from_child.readline())["s"])

    sg = Salesgym(args.template)
    best: dict[str, float] = {}
    plan: list[tuple[str, Callable[[], float]]] = [
        ("tau2 reset", lambda: tau2("reset", 20)),
        ("salesgym reset", lambda: timed_batch(sg.reset, 20)),
        ("tau2 verify", lambda: tau2("verify", 10)),
        ("tau2 verify (fewest actions)", lambda: tau2("verify_fewest", 10)),
        ("salesgym finish_task step", lambda: timed_batch(sg.finish, 10, sg.played)),
        ("salesgym finish_task + score()", lambda: timed_batch(sg.finish_and_score, 10, sg.played)),
    ]  # fmt: skip
    for _ in range(args.rounds):
        for name, run in plan:
            best[name] = min(best.get(name, float("inf")), run())
    proc.stdin.close()
    proc.wait(timeout=60)
    from timing import reference_s

    figures = {
        "tau2": {k: info[k] for k in ("version", "python", "tasks")},
        "salesgym_template": sg.template,
        "rounds": args.rounds,
        "ms": {k: round(v * 1e3, 3) for k, v in best.items()},
        "ratios": {
            "reset": round(best["salesgym reset"] / best["tau2 reset"], 3),
            "verify (finish_task step)": round(best["salesgym finish_task step"] / best["tau2 verify"], 3),
            "verify (finish_task + score())": round(best["salesgym finish_task + score()"] / best["tau2 verify"], 3),
            "verify (finish_task + score()) / tau2's task with the fewest actions":
                round(best["salesgym finish_task + score()"] / best["tau2 verify (fewest actions)"], 3),
        },
        "reference_us": round(reference_s() * 1e6, 2),
    }
    tasks = ", ".join(f"{k!r} ({n} gold actions)" for k, n in info["tasks"].items())
    print(f"tau2-bench {info['version']} (Python {info['python']}), telecom tasks {tasks}; "
          f"salesgym workflows template {sg.template!r}; best of {args.rounds}")
    print(f"{'operation':34} {'salesgym ms':>12} {'tau2 ms':>10} {'ratio':>7}")
    for op, ours, theirs in (("reset", "salesgym reset", "tau2 reset"),
                             ("verify (finish_task step)", "salesgym finish_task step", "tau2 verify"),
                             ("verify (finish_task + score())", "salesgym finish_task + score()", "tau2 verify"),
                             ("verify (finish_task + score()) / tau2's task with the fewest actions",
                              "salesgym finish_task + score()", "tau2 verify (fewest actions)")):
        print(f"{op[:34]:34} {best[ours] * 1e3:12.3f} {best[theirs] * 1e3:10.3f} {figures['ratios'][op]:7.3f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
