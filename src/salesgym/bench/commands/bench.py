"""``salesgym bench``: run policies on a frozen split (or score a service's or an MCP server's sessions) and
print the leaderboard; ``--dry-run`` plays a sample and projects tokens, cost and time."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from salesgym.bench import analysis as an
from salesgym.bench import counterparty, remote, tiers
from salesgym.bench import llm_options as lo
from salesgym.bench import progress as bar
from salesgym.bench import splits as sp
from salesgym.bench import vocabulary as vc
from salesgym.bench.commands.console import err, fail, open_store, out
from salesgym.bench.commands.interrupts import Terminated, sigterm_stops
from salesgym.bench.commands.leaderboard import explain, exploit_lines, leaderboard, num
from salesgym.bench.commands.options import (
    DEFAULT_DB,
    WORKERS_MAX,
    BuyerPriceIn,
    BuyerPriceOut,
    DbPath,
    KeyFile,
    PassThreshold,
    PriceCached,
    PriceIn,
    PriceOut,
    PricesFile,
    RetryErrors,
    SplitsDir,
    TemplatesDir,
)
from salesgym.bench.commands.prepare import preflight, resolve_policies, unlock
from salesgym.bench.commands.prices import load_prices
from salesgym.bench.policyspec import PolicySpec, PolicySpecError, context_note
from salesgym.bench.runner import DEFAULT_MAX_STEPS, BenchError
from salesgym.bench.store import EpisodeRecord, StoreError
from salesgym.cli_options import COUNT_MAX, STEPS_MAX
from salesgym.core.env import KEY_FILE_ENV, resolve_verifier_key


class BackendName(StrEnum):
    local = "local"
    ray = "ray"



def _verifier_key(path: Path) -> str:
    """Check the verifier's key file (a file, so the key never sits in the source, the shell history or ``ps``)
    and return its absolute path, which the engine reads (``$SALESGYM_VERIFIER_KEY_FILE``)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise BenchError(f"{path}: cannot read the verifier key file: {reason}") from None
    if len(text) < 32 or "\0" in text:
        raise BenchError(f"{path}: the verifier key must be at least 32 characters of text")
    return str(path.resolve())


def _buyer_options(family: str, buyer: str | None, model: str | None, base_url: str | None, key_env: str | None,
                   prices: tuple[float | None, float | None]) -> dict[str, str | float | None]:  # fmt: skip
    """``--buyer`` and its options as the environment's arguments (the desk says what they mean)."""
    if all(v is None for v in (buyer, model, base_url, key_env, *prices)):
        return {}
    from salesgym.envs.desk.llm_buyer import bench_options

    try:
        return dict(bench_options(family, buyer, model, base_url, key_env, *prices))
    except (ValueError, ImportError) as e:
        raise BenchError(str(e)) from None


def _default_split(family: str | None) -> str:
    """The default split of a family (its spec's ``default_split``); without one, the first registered family's."""
    import salesgym

    try:
        spec = salesgym.family_named(family) if family is not None else next(iter(salesgym.families().values()))
    except ValueError as e:
        raise BenchError(str(e)) from e
    return spec.default_split


def _dry_run(
    manifest: sp.Manifest,
    specs: list[PolicySpec],
    chosen: object,
    *,
    sample: int,
    episodes: int | None,
    trials: int,
    ablation: str | None,
    max_steps: int,
    prices: an.Prices | None,
    workers: int,
    env_options: dict[str, str | float | None] | None = None,
) -> None:
    """Play ``sample`` episodes of each policy (trial 0), write nothing, and project the whole run."""
    from salesgym.bench import runner

    n_full = len(manifest.limited(episodes)) * trials
    _, todo = runner.plan(manifest, specs, min(sample, len(manifest.limited(episodes))), ablation, max_steps, 1,
                          env_options)  # fmt: skip
    progress = bar.make(err)
    task = progress.add_task(f"{manifest.name} (dry run)", total=len(todo))
    played: list[EpisodeRecord] = []
    with sigterm_stops(), progress:
        for rec in chosen.run(todo):  # type: ignore[attr-defined]
            played.append(rec)
            progress.advance(task)
    failed = [r for r in played if r.status == "error" or an.invalid(r)]
    if failed:  # a failed episode says nothing of what the real ones would cost
        first = (failed[0].error or failed[0].end or "unknown").strip().splitlines()[0]
        fail(f"{len(failed)} of {len(played)} sampled episode(s) failed (first: {failed[0].policy}: {first}); "
              "nothing is projected from them: fix that and run the dry run again")  # fmt: skip
    rows = an.projection(played, [s.name for s in specs], n_full, prices)
    t = Table(
        title=f"{manifest.name}: dry run, projected for {n_full} episode(s) per policy "
        f"({n_full // trials} territories x {trials} trial(s)); nothing was written",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    # the policy names never shrink; on a narrow terminal the figures wrap instead
    t.add_column("policy", no_wrap=True, min_width=max([6, *(len(r.policy) for r in rows)]))
    for col in ("sampled", "tokens/ep p/c/cached", "$/ep", "tokens", "$", "wall s"):
        t.add_column(col, justify="right", overflow="fold")
    for r in rows:
        t.add_row(
            escape(r.policy),
            f"{r.sampled}" + (f" ({r.errors} errors)" if r.errors else ""),
            an.tokens_text(r.tokens_mean),
            an.dollars(r.cost_mean),
            an.tokens_text(r.tokens),
            an.dollars(r.cost),
            num(r.wall_s),
        )
    out.print(t)
    costs = [r.cost for r in rows if r.cost is not None]
    total_wall = sum(r.wall_s for r in rows)
    out.print(
        f"projected: {an.dollars(sum(costs)) if costs else 'no cost (no prices or no token usage reported)'}, "
        f"{num(total_wall)} episode-seconds, about {num(total_wall / max(1, workers))} s of wall time on {workers} "
        "worker(s)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def bench(
    split: Annotated[
        str | None,
        typer.Option(help="split to run (eval, held-out, train, debug, eval-quick, ...; desk-eval, ...); default: "
                     "eval-quick for the territory (the scored split is eval), the family's eval split otherwise"),
    ] = None,
    family: Annotated[
        str | None,
        typer.Option(help="environment family (territory, desk): its eval split unless --split names another"),
    ] = None,
    policy: Annotated[
        list[str] | None,
        typer.Option(
            "--policy",
            "-p",
            help="registered policy, or llm (with --model); repeat for several (default: baselines + exploit "
            "probes + oracle, or none when --agent is given)",
        ),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="your own policy, module:Class or module:factory, called with the seed; repeatable "
            "(the floors and the oracle are added to normalise it)",
        ),
    ] = None,
    model: lo.Model = None,
    base_url: lo.BaseUrl = None,
    api_key_env: lo.ApiKeyEnv = None,
    temperature: lo.Temperature = None,
    top_p: lo.TopP = None,
    max_tokens: lo.MaxTokens = None,
    context: lo.Context = None,
    context_tokens: lo.ContextTokens = None,
    tool_choice: lo.ToolChoice = None,
    extra_body: lo.ExtraBody = None,
    timeout: lo.Timeout = None,
    token_budget: lo.TokenBudget = None,
    wall_budget: lo.WallBudget = None,
    send_seed: lo.SendSeed = None,
    llm_set: lo.LLMSet = None,
    buyer: Annotated[str | None, typer.Option(help="desk: who plays the buyers: rules (default) or llm")] = None,
    buyer_model: Annotated[str | None, typer.Option(help="--buyer llm: the buyer's model name")] = None,
    buyer_base_url: Annotated[
        str | None, typer.Option(help="--buyer llm: the buyer's OpenAI-compatible endpoint")
    ] = None,
    buyer_api_key_env: Annotated[
        str | None, typer.Option(help="--buyer llm: environment variable holding its key (default OPENAI_API_KEY)")
    ] = None,
    buyer_price_in: BuyerPriceIn = None,
    buyer_price_out: BuyerPriceOut = None,
    from_service: Annotated[
        str | None,
        typer.Option(help="score an agent's sessions of this split's tasks on a salesgym service at this URL "
                     f"(operator token in ${remote.TOKEN_ENV}; docs/serve.md)"),
    ] = None,
    from_record: Annotated[
        list[Path] | None,
        typer.Option(help="score the task episodes an MCP server recorded (salesgym mcp --task SPLIT/ID --record "
                     "FILE); repeatable"),
    ] = None,
    name: Annotated[
        str, typer.Option(help="--from-service / --from-record: the agent's name on the leaderboard")
    ] = "remote-agent",
    trials: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="play each territory K times (policy seeds differ)")
    ] = 1,
    pass_threshold: PassThreshold = an.DEFAULT_PASS_THRESHOLD,
    episodes: Annotated[
        int | None, typer.Option(min=1, max=COUNT_MAX, help="only the first N territories of the split")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, max=WORKERS_MAX, help="parallel episodes (default: all cores)")
    ] = None,
    backend: Annotated[BackendName, typer.Option(case_sensitive=False, help="where episodes run")] = BackendName.local,
    ray_address: Annotated[str | None, typer.Option(help="existing Ray cluster (default: start a local one)")] = None,
    ablation: Annotated[
        str | None, typer.Option(help="a world ablation of the split's family (an unknown name lists them; training "
                                 "ablations are refused)")
    ] = None,
    db: DbPath = DEFAULT_DB,
    force: Annotated[bool, typer.Option("--force", help="re-run episodes already in the database")] = False,
    retry_errors: RetryErrors = False,
    max_steps: Annotated[
        int, typer.Option(min=1, max=STEPS_MAX, help="step cap per episode (counted as a failure)")
    ] = DEFAULT_MAX_STEPS,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    price_cached: PriceCached = None,
    prices_file: PricesFile = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="play a few episodes, write nothing, project tokens, cost and time")
    ] = False,
    dry_run_episodes: Annotated[
        int, typer.Option(min=1, max=COUNT_MAX, help="--dry-run: territories sampled per policy")
    ] = 2,
    splits_dir: SplitsDir = None,
    key_file: KeyFile = None,
    templates_dir: TemplatesDir = None,
    verifier_key_file: Annotated[
        Path | None,
        typer.Option(
            "--verifier-key-file", help=f"file holding the verifier's proof key (sets ${KEY_FILE_ENV})"
        ),
    ] = None,
) -> None:
    """Run policies on a frozen split and print the leaderboard with bootstrap CIs and the exploit check."""
    from salesgym.bench import runner

    try:
        llm_options = lo.collect(
            llm_set, model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature, top_p=top_p,
            max_tokens=max_tokens, context=context, context_tokens=context_tokens, tool_choice=tool_choice,
            extra_body=extra_body, timeout=timeout, token_budget=token_budget, wall_budget=wall_budget,
            send_seed=send_seed,
        )  # fmt: skip
        # an empty --split is a name that exists nowhere, not "the default"
        manifest = unlock(sp.load(split if split is not None else _default_split(family), splits_dir), key_file)
        manifest = sp.attach_pack(manifest, templates_dir)
        env_family = runner.family_of(manifest.env_id)
        if family is not None and family != env_family:
            raise BenchError(f"split {manifest.name!r} is a {env_family} split, not {family}")
        if verifier_key_file is not None:
            os.environ[KEY_FILE_ENV] = _verifier_key(verifier_key_file)  # before any worker starts: they inherit it
        abl = runner.validate_ablation(ablation, manifest.env_id)
        env_options = _buyer_options(env_family, buyer, buyer_model, buyer_base_url, buyer_api_key_env,
                                     (buyer_price_in, buyer_price_out))  # fmt: skip
        if ray_address and backend is not BackendName.ray:
            raise BenchError("--ray-address only applies to --backend ray")
        prices = load_prices(price_in, price_out, price_cached, prices_file)
        preflight(manifest)
        suite = runner.policy_suite(env_family)
        collected: list[PolicySpec] = []
        notes: list[str] = []
        if from_service is not None and from_record:
            raise BenchError("give --from-service or --from-record, not both")
        served = manifest.pack is None or sp.shipped_pack(manifest) is not None  # a service has the shipped packs
        if not served and (from_service is not None or from_record):
            raise BenchError("a split cut over an operator's template pack is scored in process (--templates-dir): a "
                             "service or MCP server builds its tasks from the package's templates and shipped packs")
        if from_service is not None:
            spec, notes = remote.collect(from_service, manifest, trials, name)
            collected.append(spec)
        if from_record:
            spec, notes = remote.from_records(from_record, manifest, trials, name)
            collected.append(spec)
        specs, added = resolve_policies(policy, agent, llm_options, suite, collected)
        notes = notes + [n for n in map(context_note, specs) if n]
        n_workers = workers or os.cpu_count() or 1
        chosen = runner.make_backend(backend.value, n_workers, ray_address)
    except PolicySpecError as e:
        fail(str(e), e.code)
    except (sp.SplitError, BenchError) as e:
        fail(str(e))
    names = [s.name for s in specs]
    for note in notes:
        err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    if added:
        err.print(
            f"note: added {', '.join(added)} to the run: an agent's score is normalised against the floors and "
            "the reference on the same territories (choose them with -p)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if manifest.private and resolve_verifier_key()[1] == "development":
        err.print(
            "warning: no verifier key is set: the verifier signs with the public development key "
            f"(pass --verifier-key-file or set ${KEY_FILE_ENV} for a private benchmark)",
            highlight=False,
            soft_wrap=True,
        )
    n_terr = len(manifest.limited(episodes))
    if dry_run:
        try:
            _dry_run(
                manifest, specs, chosen, sample=dry_run_episodes, episodes=episodes, trials=trials, ablation=abl,
                max_steps=max_steps, prices=prices, workers=n_workers if chosen.name == "local" else 1,
                env_options=env_options,
            )
        except (KeyboardInterrupt, Terminated):
            fail("interrupted; a dry run writes nothing", 130)
        except BenchError as e:
            fail(str(e))
        return

    store = open_store(db)
    if store.upgraded_from is not None:
        err.print(
            f"upgraded {db} from run database format {store.upgraded_from} to {store.format} (old episodes are "
            "trial 0, without trajectories)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    errors: list[EpisodeRecord] = []
    progress = bar.make(err)
    task = progress.add_task(f"{manifest.name}", total=None)

    def on_plan(todo: int, done: int) -> None:
        progress.update(task, total=todo)
        if done:
            err.print(
                f"resuming: {done} episode(s) already in {db}, {todo} to play",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    def on_result(rec: EpisodeRecord) -> None:
        if rec.status == "error":
            errors.append(rec)
        progress.advance(task)

    where = f"{chosen.name}" + (f" ({n_workers} workers)" if chosen.name == "local" else "")
    err.print(
        f"salesgym bench: split {manifest.name} ({n_terr} {vc.for_family(env_family).units}, "
        f"sha256 {manifest.sha256[:12]}), {len(names)} policies"
        + (f" x {trials} trials" if trials > 1 else "")
        + f", backend {where}"
        + (f", ablation {abl}" if abl else ""),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    try:
        with sigterm_stops(), progress:
            outcome = runner.run_benchmark(
                store,
                manifest,
                specs,
                chosen,
                episodes=episodes,
                ablation=abl,
                max_steps=max_steps,
                trials=trials,
                force=force,
                retry_errors=retry_errors,
                on_plan=on_plan,
                on_result=on_result,
                env_options=env_options,
            )
    except KeyboardInterrupt:
        store.close()
        fail("interrupted; finished episodes are saved: run the same command again to resume", 130)
    except Terminated:
        store.close()
        fail("terminated (SIGTERM); finished episodes are saved: run the same command again to resume", 143)
    except (BenchError, StoreError) as e:
        store.close()
        fail(str(e))

    run_id = outcome.run.id
    try:
        eps = store.episodes(run_id)
    except StoreError as e:
        fail(str(e))
    finally:
        store.close()
    a = an.analyse(eps, names, suite, pass_threshold=pass_threshold, prices=prices)
    words = vc.for_family(env_family)
    title = f"{manifest.name}: primary score over {n_terr} {words.units} (run {run_id})" + (
        f", ablation {abl}" if abl else ""
    )
    out.print(leaderboard(a, escape(title), words))
    out.print(explain(a, words), soft_wrap=True)
    for line in exploit_lines(a):
        out.print(line, highlight=False, soft_wrap=True)
    by_tier = tiers.by_tier(eps, {t.id: t.horizon_days for t in manifest.layout}, names, suite)
    if by_tier:  # a split with several horizons: each tier alone
        out.print(tiers.console_table(by_tier))
        for line in tiers.exploit_lines(by_tier):
            out.print(line, highlight=False, soft_wrap=True)
    for note in a.notes:
        out.print(f"[dim]note: {escape(words.speak(note))}[/]")
    if a.has_usage:
        total = an.run_cost(a)
        out.print(
            f"run cost: {an.dollars(total)}" if total is not None else "run cost: give --price-in/--price-out",
            markup=False,
            highlight=False,
        )
    for line in counterparty.leaderboard_lines(eps, names, words.counterparty):  # only a model counterparty's
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(
        f"run {run_id} in {db}; full report: salesgym report {run_id} --db {db}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    stopped = [e for e in eps if an.invalid(e)]
    if stopped:
        fail(
            f"{len(stopped)} episode(s) were stopped by the endpoint and are not scored (first: {stopped[0].policy} on "
            f"{stopped[0].territory_id}: {(stopped[0].end or '').removeprefix('stopped: ')}); fix the endpoint and "
            "re-run with --retry-errors"
        )
    failed = [e for e in eps if e.status == "error"]
    if failed:
        first = (failed[0].error or "").strip().splitlines()[0] if failed[0].error else "unknown"
        fail(
            f"{len(failed)} episode(s) ended in an error (first: {failed[0].policy} on {failed[0].territory_id}: "
            f"{first}); fix and re-run with --retry-errors"
        )
