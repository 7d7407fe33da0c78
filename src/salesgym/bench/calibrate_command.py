"""``salesgym calibrate``: play every task of a family's splits K times with one policy and write each task's
pass rate, pass@k, pass^k, band and pass@3 difficulty class (``calibration.py``) as JSON and Markdown.

Episodes go through the benchmark's runner and run store (``--db``), so a calibration resumes where it stopped
and its episodes are ordinary benchmark episodes (``salesgym report`` and ``view`` read them). Trial ``k``
changes only the policy's seed (``runner.trial_seed``): a stochastic policy samples afresh, a deterministic one
repeats itself (its tasks all land at 0 or 1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from salesgym.bench import calibration as cal
from salesgym.bench import llm_options as lo
from salesgym.bench import splits as sp
from salesgym.bench.commands.console import check_out_dir, err, fail, open_store, out, write_error
from salesgym.bench.commands.interrupts import Terminated, sigterm_stops
from salesgym.bench.commands.options import DEFAULT_DB, WORKERS_MAX, DbPath, KeyFile, RetryErrors, SplitsDir
from salesgym.bench.commands.prepare import preflight, resolve_policies, unlock
from salesgym.bench.policyspec import PolicySpecError
from salesgym.bench.runner import DEFAULT_MAX_STEPS, BenchError
from salesgym.bench.store import StoreError
from salesgym.cli_options import COUNT_MAX, STEPS_MAX, finite

SPLIT_KINDS = ("train", "eval", "held-out")


def default_splits(family: str) -> list[str]:
    """A family's train, eval and held-out splits (its spec's ``split_prefix`` + the kind)."""
    import salesgym

    try:
        prefix = salesgym.family_named(family).split_prefix
    except ValueError as e:
        raise BenchError(str(e)) from e
    return [prefix + k for k in SPLIT_KINDS]


def calibrate(
    family: Annotated[str, typer.Option(help="environment family (workflows, desk, territory)")] = "workflows",
    split: Annotated[
        list[str] | None,
        typer.Option("--split", help="split to calibrate; repeat for several (default: the family's train, eval "
                     "and held-out splits)"),
    ] = None,
    policy: Annotated[
        str | None, typer.Option("--policy", "-p", help="registered policy, or llm (with --model)")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="your own policy, module:Class or factory")] = None,
    model: lo.Model = None,
    base_url: lo.BaseUrl = None,
    api_key_env: lo.ApiKeyEnv = None,
    temperature: lo.Temperature = None,
    context_tokens: lo.ContextTokens = None,
    tool_choice: lo.ToolChoice = None,
    extra_body: lo.ExtraBody = None,
    timeout: lo.Timeout = None,
    llm_set: lo.LLMSet = None,
    trials: Annotated[int, typer.Option(min=1, max=100, help="attempts per task (distinct policy seeds)")] = 8,
    pass_threshold: Annotated[
        float | None,
        typer.Option("--pass-threshold", min=0, callback=finite, help="for a family without a pass/fail verdict: "
                     "an episode passes when its primary score reaches this"),
    ] = None,
    episodes: Annotated[
        int | None, typer.Option(min=1, max=COUNT_MAX, help="only the first N tasks of each split")
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="output directory (default: runs/calibration/<family>-<policy>)")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, max=WORKERS_MAX, help="parallel episodes (default: all cores)")
    ] = None,
    db: DbPath = DEFAULT_DB,
    retry_errors: RetryErrors = False,
    max_steps: Annotated[
        int, typer.Option(min=1, max=STEPS_MAX, help="step cap per episode (a failure)")
    ] = DEFAULT_MAX_STEPS,
    splits_dir: SplitsDir = None,
    key_file: KeyFile = None,
) -> None:
    """Play every task of the splits K times with one policy; write pass rate, pass@k, pass^k, band and
    pass@3 class per task, template and tier (calibration.json, calibration.md)."""
    from salesgym.bench import runner

    if (policy is None) == (agent is None):
        fail("give exactly one of --policy NAME (or --policy llm --model M) and --agent module:Class", 2)
    try:
        llm_options = lo.collect(llm_set, model=model, base_url=base_url, api_key_env=api_key_env,
                                 temperature=temperature, context_tokens=context_tokens, tool_choice=tool_choice,
                                 extra_body=extra_body, timeout=timeout)  # fmt: skip
        names = split or default_splits(family)
        manifests = [unlock(sp.load(n, splits_dir), key_file) for n in names]
        for m in manifests:
            found = runner.family_of(m.env_id)
            if found != family:
                raise BenchError(f"split {m.name!r} is a {found} split, not {family}")
            preflight(m)
        suite = runner.policy_suite(family)
        specs, added = resolve_policies([policy] if policy else None, [agent] if agent else None, llm_options, suite)
        specs = [s for s in specs if s.name not in added]  # calibration plays the one policy; nothing normalises
        backend = runner.make_backend("local", workers or os.cpu_count() or 1)
    except PolicySpecError as e:
        fail(str(e), e.code)
    except (sp.SplitError, BenchError) as e:
        fail(str(e))
    name = specs[0].name
    target = out_dir or Path("runs") / "calibration" / f"{family}-{name.replace(':', '_').replace('/', '_')}"
    check_out_dir(target, "the calibration")
    store = open_store(db)
    tasks: list[cal.TaskCalibration] = []
    runs: dict[str, str] = {}
    try:
        with sigterm_stops():
            for m in manifests:
                layout = m.layout if episodes is None else m.layout[:episodes]
                err.print(f"calibrate: {m.name} ({len(layout)} tasks) x {trials} trials with {name}",
                          markup=False, highlight=False)  # fmt: skip
                outcome = runner.run_benchmark(store, m, specs, backend, episodes=episodes, max_steps=max_steps,
                                               trials=trials, retry_errors=retry_errors)  # fmt: skip
                runs[m.name] = outcome.run.id
                tasks += cal.calibrate_split(m.name, layout, store.episodes(outcome.run.id), name, pass_threshold)
    except KeyboardInterrupt:
        fail("interrupted; finished episodes are saved: run the same command again to resume", 130)
    except Terminated:
        fail("terminated (SIGTERM); finished episodes are saved: run the same command again to resume", 143)
    except (BenchError, StoreError, ValueError) as e:
        fail(str(e))
    finally:
        store.close()
    import salesgym

    words = salesgym.family(manifests[0].env_id).scenario_words
    data = cal.report(name, trials, tasks, {"family": family, "family_word": words.get("family", "family"),
                                            "splits": names, "runs": runs, "policy_spec": specs[0].to_dict()})
    try:
        target.mkdir(parents=True, exist_ok=True)
        (target / "calibration.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        (target / "calibration.md").write_text(cal.markdown(data), encoding="utf-8")
    except OSError as e:
        fail(write_error(target, "the calibration", e))
    s = data["summary"]
    out.print(f"{s['tasks']} tasks, mean pass rate {s.get('rate', 0):.2f}; bands "
              + ", ".join(f"{b} {n}" for b, n in s.get("bands", {}).items())
              + f"; wrote {target / 'calibration.json'} and calibration.md", markup=False, highlight=False)  # fmt: skip
    stopped = sum(t.stopped for t in tasks)
    if stopped:
        err.print(f"warning: the policy stopped {stopped} episode(s) before their end (counted as failed trials; "
                  "an endpoint that is down stops every one: check `salesgym report`)", markup=False,
                  highlight=False, soft_wrap=True)  # fmt: skip
    errors = sum(t.errors for t in tasks)
    if errors:  # written (an error counts as a failed trial), but not a calibration to ship
        fail(f"{errors} episode(s) ended in an error and count as failed trials; see `salesgym report` for the "
              "runs above, fix and re-run with --retry-errors")  # fmt: skip
