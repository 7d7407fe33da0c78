"""The all-templates browser sweep: the UI reference agent on every template and seed, each end state judged and
compared with the tool path's for the same instance (the same verdict on every check: ``control.outcome``), and
the leak scan (``conformance.LeakScanner``) over every observation of the episode and everything its browser
loaded or holds (a hidden value found is the episode's problem).

    python -m salesgym.agents.workflows_ui.sweep --seeds 1 2 --workers 2

prints one line per episode and exits 1 when an episode fails or disagrees with the tool path. Each worker is a
process with its own Chromium (``--workers``); the campaign test (``tests/workflows_ui``) runs it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from salesgym.agents.base import Policy


@dataclass(frozen=True)
class Checked:
    template: str
    seed: int
    passed: bool
    same_verdict: bool
    actions: int
    wall_s: float
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.passed and self.same_verdict and not self.problem


def tool_outcome(template: str, seed: int) -> dict[str, Any]:
    import salesgym
    from salesgym.agents import make_policy
    from salesgym.agents.base import rollout
    from salesgym.webapps.control import outcome

    env = salesgym.make("workflows-v0", template=template)
    env.reset(seed=seed)
    policy = make_policy("reference", seed=seed, hidden_truth=env.hidden_truth(), family="workflows")
    for _ in rollout(env, policy, seed=seed):
        pass
    return outcome(env.score())


class Scanned(Policy):
    """The policy ``make`` builds at reset (after the environment's reset, so it may read the instance), with the
    leak scan over each observation it is given and each tool result (the scanner made at reset, on the episode's
    fresh browser context)."""

    def __init__(self, make: Callable[[], Policy], env: Any, seed: int) -> None:
        super().__init__(seed)
        self.make, self.env = make, env
        self.inner: Any = None
        self.scanner: Any = None
        self.result: dict[str, Any] = {}

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        from salesgym.envs.workflows_ui.conformance import LeakScanner

        self.inner = self.make()
        self.inner.reset(observation, tool_schemas, instructions)
        self.scanner, self.result = LeakScanner(self.env), {}
        self.scan(observation)

    def scan(self, observation: dict[str, Any]) -> None:
        self.scanner.learn(self.env.event_log())
        self.scanner.scan(observation, self.result)

    def act(self, observation: dict[str, Any]) -> Any:
        self.scan(observation)
        return self.inner.act(observation)

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.result = {"tool_result": tool_result}
        self.inner.observe_result(tool_result)


def check(template: str, seed: int, variant: str = "default") -> Checked:
    """One episode of the UI reference, and its verdict against the tool path's."""
    from salesgym.agents.base import rollout
    from salesgym.agents.workflows_ui.reference import UIReference
    from salesgym.envs.workflows_ui.env import WorkflowsUIEnv
    from salesgym.webapps.control import outcome

    start = time.perf_counter()
    env = WorkflowsUIEnv(template=template, variant=variant, screenshot=False, axtree=False)
    try:
        scanned = Scanned(lambda: UIReference(seed, env.hidden_truth()), env, seed)  # one reset: the episode's
        problems = []
        episode = rollout(env, scanned, seed=seed)
        for step in episode:
            if step.info["tool_result"]["status"] != "ok":
                problems.append(f"{step.action}: {step.info['tool_result']['output'].get('error')}")
        if episode.end and episode.end.startswith("stopped") and "is played" not in episode.end:
            problems.append(episode.end)
        problems += scanned.inner.mismatches
        try:
            scanned.scan(env.observe())  # the end state's page too
        except AssertionError as leak:
            problems.append(f"leak: {leak}")
        score = env.score()
        same = outcome(score) == tool_outcome(template, seed)
        return Checked(template, seed, bool(score["passed"]), same, len(env.actions), time.perf_counter() - start,
                       "; ".join(problems)[:500])  # fmt: skip
    finally:
        env.close()


def _check(job: tuple[str, int, str]) -> Checked:
    try:
        return check(*job)
    except Exception as err:  # an episode that crashed is a finding, not the end of the sweep
        return Checked(job[0], job[1], False, False, 0, 0.0, f"{type(err).__name__}: {err}"[:500])


def sweep(templates: Sequence[str], seeds: Sequence[int], workers: int = 1, variant: str = "default") -> Iterator[
        Checked]:  # fmt: skip
    from salesgym.envs.workflows_ui.browser import keep_warm, warm

    jobs = [(t, s, variant) for t in templates for s in seeds]
    if workers <= 1:
        with warm():  # one Chromium for every episode (each ``check`` closes its environment)
            yield from map(_check, jobs)
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=keep_warm) as pool:
        yield from pool.map(_check, jobs)


def main(argv: Sequence[str] | None = None) -> int:
    from salesgym.envs.workflows.tasks.templates import TEMPLATES

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--templates", nargs="*", default=None, help="template ids (default: all)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--variant", default="default")
    args = parser.parse_args(argv)
    names = args.templates or list(TEMPLATES)
    unknown = [t for t in names if t not in TEMPLATES]
    if unknown:
        print(f"error: unknown template(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    failed = 0
    for found in sweep(names, args.seeds, args.workers, args.variant):
        failed += not found.ok
        status = "ok  " if found.ok else "FAIL"
        print(f"{status} {found.template} seed {found.seed}: passed={found.passed} same_verdict={found.same_verdict} "
              f"actions={found.actions} {found.wall_s:.1f}s {found.problem}", flush=True)  # fmt: skip
    print(f"{failed} failing of {len(names) * len(args.seeds)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Checked", "asdict", "check", "main", "sweep"]
