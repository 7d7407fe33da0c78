"""Per-turn overhead of the LLM policy over the environment step, against the scripted loopback server.

Run from the repository root (needs the test extra: openai, fastapi, uvicorn):

    python benchmarks/bench_llm_overhead.py              # 10x30 and 100x90 territories, every strategy
    python benchmarks/bench_llm_overhead.py --quick      # 10x30 only
    python benchmarks/bench_llm_overhead.py --json out.json

The scripted model plays expected-value's moves, so each episode is the baseline's, turn for turn. Every turn is
split into what it costs, each as a median in microseconds and as a multiple of ``env.step`` measured in the
same run (the same calls replayed on a fresh environment, no policy in between):

* ``policy``: the policy's own work: context strategy and prompt building, token estimate, reply parsing,
  accounting (``act`` + ``observe_result`` minus the request);
* ``request``: one chat completion through the ``openai`` SDK over loopback HTTP, minus the server's work;
* ``server``: the scripted server's handler (its token counting dominates; a real endpoint's time is the
  model's, not this).

The server's counts give the largest prompt of each episode and the share of prompt tokens served from the
prefix cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Episode
from salesgym.agents.llm import LLMPolicy, sampling_seed
from salesgym.testing.scripted_openai import ScriptedOpenAI, moves_from_actions

SEED = 1
WORLDS = {"10x30": ("territory-v0", {"n_opportunities": 10, "horizon_days": 30}),
          "100x90": ("territory-100-v0", {})}  # fmt: skip
STRATEGIES = ("full", "window", "summary")
KEY_ENV = "SALESGYM_BENCH_LLM_KEY"


def step_times(env_id: str, kwargs: dict[str, Any], actions: list[Any]) -> list[float]:
    env = salesgym.make(env_id, **kwargs)
    env.reset(seed=SEED)
    out = []
    for action in actions:
        t = time.perf_counter()
        env.step(action)
        out.append(time.perf_counter() - t)
    return out


def timed(fn: Callable[..., Any], sink: list[float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            sink.append(time.perf_counter() - t)

    return wrapper


def run_llm(
    server: ScriptedOpenAI, env_id: str, kwargs: dict[str, Any], actions: list[Any], strategy: str
) -> dict[str, Any]:
    server.script(sampling_seed(SEED), moves_from_actions(actions))
    policy = LLMPolicy(SEED, model="scripted", base_url=server.base_url, api_key_env=KEY_ENV, context=strategy)
    acts: list[float] = []
    observes: list[float] = []
    requests: list[float] = []
    handler: list[float] = []
    policy.act = timed(policy.act, acts)  # type: ignore[method-assign]
    policy.observe_result = timed(policy.observe_result, observes)  # type: ignore[method-assign]
    server._answer = timed(server._answer, handler)  # type: ignore[method-assign]
    env = salesgym.make(env_id, **kwargs)
    episode = Episode(env, policy, SEED)
    first = True
    for _ in episode:
        if first:  # the client exists after reset: time its requests from here on
            assert policy._client is not None
            policy._client.complete = timed(policy._client.complete, requests)  # type: ignore[method-assign]
            first = False
    del server._answer  # type: ignore[attr-defined]
    served = server.requests_for(sampling_seed(SEED))
    prompt = [r["usage"]["prompt_tokens"] for r in served if r["usage"]]
    cached = [r["usage"]["prompt_tokens_details"]["cached_tokens"] for r in served if r["usage"]]
    # the first turn's request is not timed (the client was wrapped after it): align on the later turns
    n = len(requests)
    own = [a + o - r for a, o, r in zip(acts[-n:], observes[-n:], requests, strict=True)]
    return {
        "turns": len(acts),
        "end": episode.end,
        "policy_s": statistics.median(own),
        "request_s": statistics.median(r - h for r, h in zip(requests, handler[-n:], strict=True)),
        "server_s": statistics.median(handler[-n:]),
        "max_prompt_tokens": max(prompt),
        "median_prompt_tokens": statistics.median(prompt),
        "cached_share": sum(cached) / sum(prompt),
        "log_hash": env.event_log_hash(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the 10x30 territory only")
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault(KEY_ENV, "scripted")
    worlds = {"10x30": WORLDS["10x30"]} if args.quick else WORLDS
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    out: dict[str, Any] = {}
    with ScriptedOpenAI() as server:
        for label, (env_id, kwargs) in worlds.items():
            env = salesgym.make(env_id, **kwargs)
            baseline = Episode(env, make_policy("expected-value", SEED), SEED)
            actions = [s.action for s in baseline]
            want = env.event_log_hash()
            steps = step_times(env_id, kwargs, actions)
            step = statistics.median(steps)
            out[label] = {"turns": len(actions), "step_s": step}
            print(f"\n{label}: {len(actions)} turns of expected-value; env.step median {step * 1e6:.0f} µs")
            print("| strategy | policy µs (× step) | request µs (× step) | server µs (× step) "
                  "| max / median prompt tokens | cached |")  # fmt: skip
            print("|---|---|---|---|---|---|")
            for strategy in STRATEGIES:
                r = run_llm(server, env_id, kwargs, actions, strategy)
                assert r["log_hash"] == want, f"{label} {strategy}: the episode differs from the baseline's"
                out[label][strategy] = r
                print(
                    f"| {strategy} | {r['policy_s'] * 1e6:.0f} ({r['policy_s'] / step:.1f}×) "
                    f"| {r['request_s'] * 1e6:.0f} ({r['request_s'] / step:.0f}×) "
                    f"| {r['server_s'] * 1e6:.0f} ({r['server_s'] / step:.0f}×) "
                    f"| {r['max_prompt_tokens']:,} / {r['median_prompt_tokens']:,.0f} | {r['cached_share']:.0%} |"
                )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
