"""Turns and tokens per episode of a language model on a split: expected-value's trajectory replayed through the
LLM policy's prompt format, as ``salesgym bench --policy llm`` plays it.

Run from the repository root (needs the test extra: openai, fastapi, uvicorn):

    python benchmarks/llm_split_tokens.py                    # eval-lite, the default context strategy
    python benchmarks/llm_split_tokens.py --split eval-quick # every horizon tier (30, 90, 180 days)
    python benchmarks/llm_split_tokens.py --split held-out-lite --context window --json out.json

A scripted model on a loopback OpenAI-compatible server plays expected-value's moves on every territory of the
split, through the real benchmark runner (workers, the SDK, HTTP, the run store), with expected-value itself in
the same run as the check that the replay is exact. Token counts are the scripted server's: a regex tokenizer
(words, numbers and punctuation marks; about 0.46 tokens a character on these prompts). Real tokenizers count
English prose at roughly 0.25-0.3 tokens a character, so read the figures as an upper bound; ``chars/4`` is
printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import salesgym
from salesgym.agents.llm import sampling_seed
from salesgym.bench import splits as sp
from salesgym.bench.policyspec import outside_seed, resolve_llm
from salesgym.bench.runner import LocalBackend, run_benchmark
from salesgym.bench.store import Store
from salesgym.llm.config import STRATEGIES, LLMConfig
from salesgym.testing.scripted_openai import ScriptedOpenAI, script_of

KEY_ENV = "SALESGYM_BENCH_LLM_KEY"


def _env(t: sp.Territory) -> Any:
    return salesgym.make(sp.unnamed_env_id(), family=t.family, template=t.template,
                         n_opportunities=t.n_opportunities, horizon_days=t.horizon_days)


def measure(split: str, context: str, workers: int) -> dict[str, Any]:
    manifest = sp.load(split)
    os.environ[KEY_ENV] = "sk-scripted"
    with ScriptedOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        for t in manifest.territories:
            server.script(sampling_seed(outside_seed(t.seed)), script_of(lambda t=t: _env(t), "expected-value", t.seed))
        llm = resolve_llm({"model": "scripted", "base_url": server.base_url, "api_key_env": KEY_ENV,
                           "context": context})  # fmt: skip
        start = time.perf_counter()
        with Store(Path(tmp) / "runs.sqlite") as store:
            run = run_benchmark(store, manifest, [llm, "expected-value"], LocalBackend(workers)).run
            episodes = store.episodes(run.id)
        wall = time.perf_counter() - start
        prompts: dict[int, list[int]] = {}
        chars: dict[int, list[int]] = {}
        for r in server.requests:
            if r.get("usage"):
                prompts.setdefault(r["seed"], []).append(r["usage"]["prompt_tokens"])
                text = json.dumps(r["body"]["messages"]) + json.dumps(r["body"]["tools"])
                chars.setdefault(r["seed"], []).append(len(text))
    by = {(e.policy, e.territory_id): e for e in episodes}
    rows = []
    for t in manifest.territories:
        llm_ep, ev = by[("llm", t.id)], by[("expected-value", t.id)]
        usage = (llm_ep.policy_record or {}).get("usage", {})
        key = sampling_seed(outside_seed(t.seed))
        rows.append({
            "territory": t.id, "opportunities": t.n_opportunities, "horizon_days": t.horizon_days,
            "turns": llm_ep.steps,
            "same_as_expected_value": llm_ep.metrics == ev.metrics,
            "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
            "cached_tokens": usage.get("cached_tokens"), "max_prompt_tokens": max(prompts.get(key, [0])),
            "max_prompt_chars_over_4": max(chars.get(key, [0])) // 4,
        })  # fmt: skip
    return {"split": split, "context": context, "episodes": rows, "wall_s": round(wall, 1)}


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="eval-lite")
    parser.add_argument("--context", default=LLMConfig.context, choices=STRATEGIES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out = measure(args.split, args.context, args.workers)
    rows = out["episodes"]
    print(f"{args.split}, context {args.context}: {len(rows)} episodes, {out['wall_s']} s")
    print(f"{'territory':<20}{'opps':>5}{'days':>5}{'turns':>7}{'prompt tok':>12}{'compl.':>8}{'cached':>6}"
          f"{'max prompt':>12}{'chars/4':>9}  exact")
    for r in rows:
        cached = r["cached_tokens"] / r["prompt_tokens"] if r["prompt_tokens"] else 0.0
        print(f"{r['territory']:<20}{r['opportunities']:>5}{r['horizon_days']:>5}{r['turns']:>7}{r['prompt_tokens']:>12,}"
              f"{r['completion_tokens']:>8,}{cached:>6.0%}{r['max_prompt_tokens']:>12,}"
              f"{r['max_prompt_chars_over_4']:>9,}  {r['same_as_expected_value']}")
    print(f"median: {_median(rows, 'turns'):.0f} turns, {_median(rows, 'prompt_tokens'):,.0f} prompt tokens, "
          f"{_median(rows, 'completion_tokens'):,.0f} completion tokens per episode; largest prompt "
          f"{max(r['max_prompt_tokens'] for r in rows):,} tokens")
    for days in sorted({r["horizon_days"] for r in rows}):
        tier = [r for r in rows if r["horizon_days"] == days]
        print(f"  {days} days ({len(tier)}): median {_median(tier, 'turns'):.0f} turns, "
              f"{_median(tier, 'prompt_tokens'):,.0f} prompt tokens per episode; largest prompt "
              f"{max(r['max_prompt_tokens'] for r in tier):,} tokens")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["same_as_expected_value"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
