"""CLI commands of the benchmark (bench, report, export, runs, splits); registered on the main app by ``register``.

Every expected failure (bad argument, tampered or unbuildable split, missing key, damaged or read-only
database, unwritable output path, unknown run, missing environment) ends with one clear ``error:`` line on
stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from salesgym.bench import analysis as an
from salesgym.bench import llm_options as lo
from salesgym.bench import progress as bar
from salesgym.bench import remote, tiers
from salesgym.bench import splits as sp
from salesgym.bench import vocabulary as vc
from salesgym.bench.policyspec import LLM_NAME, PolicySpec, PolicySpecError, resolve_agent, resolve_llm
from salesgym.bench.runner import DEFAULT_MAX_STEPS, BenchError
from salesgym.bench.store import EpisodeRecord, Store, StoreError
from salesgym.cli_options import COUNT_MAX, STEPS_MAX, finite, one_line
from salesgym.core.env import KEY_FILE_ENV, resolve_verifier_key

DEFAULT_DB = Path("runs") / "salesgym.sqlite"
WORKERS_MAX = 1024

# Into a file or a pipe rich assumes 80 columns and cuts the leaderboard's figures ("0.…"); a terminal keeps its width.
out = Console() if sys.stdout.isatty() else Console(width=200)
err = Console(stderr=True)


class BackendName(StrEnum):
    local = "local"
    ray = "ray"


class ExportFormat(StrEnum):
    json = "json"
    csv = "csv"


class ToolArguments(StrEnum):
    object = "object"
    string = "string"


def _fail(message: str, code: int = 1) -> NoReturn:
    # escaped: a message quotes user input (a policy name, a path), which must not be read as rich markup
    err.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _write_error(path: Path, what: str, e: OSError) -> str:
    where = e.filename if isinstance(e.filename, str) else str(path)
    return f"{where}: cannot write {what}: {e.strerror or e}"


def _check_parents(path: Path) -> None:
    """The nearest existing ancestor of an output path must be a directory (else nothing can be created)."""
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                _fail(f"{parent}: is not a directory, so {path} cannot be created")
            return


def _check_out_dir(path: Path, what: str) -> None:
    """An output directory that exists as something else is refused before any work is done."""
    if path.exists() and not path.is_dir():
        _fail(f"{path}: exists and is not a directory (--out takes a directory for {what})")
    _check_parents(path)


SplitsDir = Annotated[
    Path | None,
    typer.Option("--splits-dir", help=f"directory of split manifests (default: ${sp.ENV_VAR} or <repo>/splits)"),
]
DbPath = Annotated[Path, typer.Option("--db", help="SQLite run database", dir_okay=False)]
KeyFile = Annotated[
    Path | None,
    typer.Option(
        "--key-file", help=f"key of a private split (default: ${sp.KEY_ENV_VAR}); see `salesgym splits keygen`"
    ),
]
TemplatesDir = Annotated[
    Path | None,
    typer.Option(
        "--templates-dir",
        help=f"a workflows template pack's directory: the split cut over it (default: ${sp.PACK_ENV_VAR}); "
        "see docs/workflows.md, 'Template packs'",
    ),
]


PassThreshold = Annotated[
    float,
    typer.Option(
        "--pass-threshold",
        min=0,
        max=1,
        callback=finite,
        help="pass^k: a territory passes when every trial's normalised score is at least this",
    ),
]
PriceIn = Annotated[
    float | None, typer.Option("--price-in", min=0, callback=finite, help="$ per million prompt tokens")
]
PriceOut = Annotated[
    float | None, typer.Option("--price-out", min=0, callback=finite, help="$ per million completion tokens")
]
PriceCached = Annotated[
    float | None,
    typer.Option(
        "--price-cached", min=0, callback=finite, help="$ per million cached prompt tokens (default: --price-in)"
    ),
]
PricesFile = Annotated[
    Path | None,
    typer.Option(
        "--prices", dir_okay=False, help="TOML or JSON file with input, output, cached ($/Mtok); flags override it"
    ),
]
PRICE_KEYS = ("input", "output", "cached")


def load_prices(
    price_in: float | None, price_out: float | None, price_cached: float | None, path: Path | None
) -> an.Prices | None:
    """Prices from a file (``input``, ``output``, ``cached`` in $/Mtok) overridden by the flags; None if neither."""
    found: dict[str, float] = {}
    if path is not None:
        found = _price_file(path)
    for key, flag in zip(PRICE_KEYS, (price_in, price_out, price_cached), strict=True):
        if flag is not None:
            found[key] = flag
    if not found:
        return None
    return an.Prices(found.get("input", 0.0), found.get("output", 0.0), found.get("cached"))


def _price_file(path: Path) -> dict[str, float]:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except OSError as e:
        raise BenchError(f"{path}: cannot read the prices file: {e.strerror or e}") from None
    except (ValueError, UnicodeDecodeError) as e:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise BenchError(f"{path}: the prices file is not valid {kind}: {e}") from None
    if not isinstance(data, dict):
        raise BenchError(f"{path}: the prices file must hold a table/object with {', '.join(PRICE_KEYS)}")
    unknown = sorted(set(data) - set(PRICE_KEYS))
    if unknown:
        raise BenchError(f"{path}: unknown price(s) {', '.join(unknown)}; known: {', '.join(PRICE_KEYS)} ($/Mtok)")
    out: dict[str, float] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != value:
            raise BenchError(f"{path}: price {key} must be a number >= 0 ($ per million tokens), got {value!r}")
        out[key] = float(value)
    return out


def _open_store(db: Path, *, readonly: bool = False) -> Store:
    """The run database; readers open it read-only and need it to exist."""
    if readonly and not db.exists():
        _fail(f"{db}: no run database here (run `salesgym bench` first or pass --db)")
    try:
        return Store(db, readonly=readonly)
    except StoreError as e:
        _fail(str(e))


def _unlock(manifest: sp.Manifest, key_file: Path | None) -> sp.Manifest:
    """A private split with its seeds derived from the operator's key; a public one as it is."""
    if not manifest.private:
        if key_file is not None:
            raise BenchError(f"--key-file applies to private splits only; {manifest.name!r} lists its seeds")
        return manifest
    key = sp.resolve_key(key_file)
    if key is None:
        raise sp.SplitError(manifest.path or manifest.name, sp.locked_message(manifest.name))
    return manifest.unlock(key)


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


class _Terminated(Exception):
    """SIGTERM during a benchmark: stop like Ctrl-C (finished episodes are already saved)."""


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _preflight(manifest: sp.Manifest) -> None:
    """Fail early, in this process, if the environment or the scenario catalogue is missing or disagrees."""
    try:
        import salesgym

        if not hasattr(salesgym, "make"):
            raise ImportError("salesgym.make is missing")
        from salesgym.agents import make_policy  # noqa: F401
    except ImportError as e:
        raise BenchError(f"the environment or the policies are not installed: {e}") from e
    where = manifest.path or manifest.name
    catalogue = salesgym.family(manifest.env_id).catalogue()
    problems = [] if manifest.pack is not None else sp.check_catalogue(manifest, catalogue)  # a pack: checked below
    if problems:
        raise BenchError(f"{where}: split does not match the scenario catalogue: {'; '.join(problems[:5])}")
    problems = sp.environment_problems(manifest)
    if problems:
        raise BenchError(f"{where}: the environment cannot build this split: {'; '.join(problems[:5])}")
    _first_world(manifest)


def _first_world(manifest: sp.Manifest) -> None:
    """Build, reset and score the split's first world here, before any episode: whatever a family imports
    only when it plays or scores (a verifier's library) is missing now, once, not in every episode's record."""
    from salesgym.bench import runner

    if not manifest.territories:
        return
    first = manifest.territories[0]
    try:
        env = runner.make_env(first, None, manifest.env_id, manifest.pack_dir)
        env.reset(seed=first.seed)
        env.score()
    except ImportError as e:
        raise BenchError(f"{manifest.name}: a library this family needs is missing: {e}") from e
    except Exception as e:  # every episode would fail the same way
        raise BenchError(f"{manifest.name}: cannot build and score {first.id}: {type(e).__name__}: {e}") from e


def _buyer_options(family: str, buyer: str | None, model: str | None, base_url: str | None,
                   key_env: str | None) -> dict[str, str | None]:  # fmt: skip
    """``--buyer`` and its options as the environment's arguments (the desk says what they mean)."""
    if buyer is None and model is None and base_url is None and key_env is None:
        return {}
    from salesgym.envs.desk.llm_buyer import bench_options

    try:
        return dict(bench_options(family, buyer, model, base_url, key_env))
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


def _n(x: float) -> str:
    """Compact number: 2 decimals below 10, 1 below 1000, none above."""
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:,.0f}"


def _leaderboard(a: an.Analysis, title: str, words: vc.Vocabulary = vc.NEUTRAL) -> Table:
    t = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False
    )
    t.add_column("#", justify="right", min_width=5, no_wrap=True)
    t.add_column("policy", no_wrap=True, min_width=17)
    columns = ["norm", "primary", "95% CI", words.closed.short, "Δ anchor"]
    columns += ["spread", f"pass^{a.trials}"] if a.trials > 1 else []
    columns += ["tokens/ep p/c/cached"] + (["$/ep"] if a.prices else []) if a.has_usage else []
    stops = any(a.stops.values())
    columns += ["ended by"] if stops else []
    for col in columns:
        t.add_column(col, justify="right", no_wrap=True)
    for label, r in an.ranked(a.rows, "ref"):
        p, n, diff = r.primary, r.normalised, r.vs_anchor
        dim = r.reference or r.probe
        cells = [
            label,
            f"[dim]{escape(r.policy)}[/]" if dim else escape(r.policy),
            f"{n.mean:.2f}" if n else "—",
            _n(p.mean) if p else "—",
            f"{_n(p.ci_low)}–{_n(p.ci_high)}" if p else "—",
            f"{r.closed_value.mean:,.0f}" if r.closed_value else "—",
            (("+" if diff.mean >= 0 else "") + _n(diff.mean) + ("*" if diff.significant else "")) if diff else "—",
        ]
        if a.trials > 1:
            cells += [_n(r.spread) if r.spread is not None else "—", f"{r.pass_k:.2f}" if r.pass_k is not None else "—"]
        if a.has_usage:
            c = a.costs[r.policy]
            cells += [an.tokens_text(c.tokens_mean)] + ([an.dollars(c.cost_mean)] if a.prices else [])
        if stops:
            cells.append(an.stops_text(a.stops.get(r.policy, {})))
        t.add_row(*cells)
    return t


def _explain(a: an.Analysis, words: vc.Vocabulary = vc.NEUTRAL) -> str:
    """The legend under the leaderboard, in the family's words (``envs/<family>/report_words.py``)."""
    w = words
    return (
        f"[dim]Ranked by norm, the normalised score: {w.speak(a.normalisation)} (0 = no better than doing nothing or "
        f"random, 1 = the reference), so every {w.unit} counts alike. primary = {escape(w.primary)} (mean; 95% "
        f"bootstrap CI over {w.units}). {escape(w.closed.short)} = {escape(w.closed_means)}. Δ anchor = paired "
        f"difference with {a.anchor} on the same {w.units} (* = CI excludes 0). probe = an exploit probe, checked "
        "below, never ranked. ref = reads hidden truth: headroom, never ranked."
        + (
            f" Each {w.unit} played {a.trials} times: figures are means over its trials; spread = mean std of norm "
            f"across trials; pass^{a.trials} = share of {w.units} where every trial reached norm >= "
            f"{a.pass_threshold:g}."
            if a.trials > 1
            else ""
        )
        + (
            " tokens/ep = prompt/completion/cached tokens per episode, as the policy's endpoint reported them."
            if a.has_usage
            else ""
        )
        + (
            " ended by = share of episodes that ended early and why: no call (replies without a tool call), invalid "
            "calls (the environment's invalid-action ceiling), budget, context, step cap, error, endpoint (stopped by "
            "the endpoint: invalid, not scored; a row of mostly invalid episodes is not ranked)."
            if any(a.stops.values())
            else ""
        )
        + "[/]"
    )


def _exploit_lines(a: an.Analysis) -> list[str]:
    lines = [an.exploit_line(a)]
    for r in a.exploits:
        d = r.difference
        vs = f"{r.policy} − {r.twin}: {d.mean:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]" if d else f"{r.policy}: —"
        lines.append(f"  {'ok  ' if r.passed else 'FAIL'} {vs}" + ("" if r.paired else " (pure probe)"))
    return lines


def resolve_policies(
    names: list[str] | None, agents: list[str] | None, llm_options: Mapping[str, object], suite: object,
    extra: list[PolicySpec] | None = None,
) -> tuple[list[PolicySpec], list[str]]:
    """The run's policies from ``--policy`` (registered names, or ``llm``), ``--agent`` and ``extra`` (a
    service's sessions), checked here; and the floors and reference added so that agents are normalised like
    the baselines (named in the 2nd item)."""
    from salesgym.bench import runner

    names = list(names or [])
    wants_llm = LLM_NAME in names
    given = {k: v for k, v in llm_options.items() if v is not None}
    if given and not wants_llm:
        raise BenchError(f"{', '.join(map(lo.flag_of, given))} apply to --policy llm only")
    builtins = [n for n in names if n != LLM_NAME]
    if not builtins and not agents and not wants_llm and not extra:
        builtins = list(suite.all)  # type: ignore[attr-defined]
    specs = [PolicySpec.builtin(n) for n in runner.validate_policies(builtins, suite)]  # type: ignore[arg-type]
    if wants_llm:
        if "model" not in given:
            raise BenchError("--policy llm needs --model (and --base-url for an endpoint other than OpenAI's)")
        specs.append(resolve_llm(given))
    for target in dict.fromkeys(agents or []):
        spec = resolve_agent(target)
        taken = next((s for s in specs if s.name == spec.name), None)
        if taken is not None:
            what = "a registered policy" if taken.kind == "builtin" else f"--agent {taken.target or taken.name}"
            raise BenchError(f"--agent {target}: its name {spec.name!r} is already {what}; give it another `name`")
        specs.append(spec)
    for spec in extra or []:
        if any(s.name == spec.name for s in specs):
            raise BenchError(f"--name {spec.name!r} is already a policy of this run; choose another")
        specs.append(spec)
    added: list[str] = []
    if any(s.kind != "builtin" for s in specs):
        have = {s.name for s in specs}
        reference = tuple(suite.reference)  # type: ignore[attr-defined]
        wanted = [*suite.floors, *([] if have & set(reference) else reference[:1])]  # type: ignore[attr-defined]
        added = [n for n in wanted if n not in have]
        specs += [PolicySpec.builtin(n) for n in added]
    return specs, added


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
    env_options: dict[str, str | None] | None = None,
) -> None:
    """Play ``sample`` episodes of each policy (trial 0), write nothing, and project the whole run."""
    from salesgym.bench import runner

    n_full = len(manifest.limited(episodes)) * trials
    _, todo = runner.plan(manifest, specs, min(sample, len(manifest.limited(episodes))), ablation, max_steps, 1,
                          env_options)  # fmt: skip
    progress = bar.make(err)
    task = progress.add_task(f"{manifest.name} (dry run)", total=len(todo))
    played: list[EpisodeRecord] = []
    with _sigterm_stops(), progress:
        for rec in chosen.run(todo):  # type: ignore[attr-defined]
            played.append(rec)
            progress.advance(task)
    failed = [r for r in played if r.status == "error" or an.invalid(r)]
    if failed:  # a failed episode says nothing of what the real ones would cost
        first = (failed[0].error or failed[0].end or "unknown").strip().splitlines()[0]
        _fail(f"{len(failed)} of {len(played)} sampled episode(s) failed (first: {failed[0].policy}: {first}); "
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
            _n(r.wall_s),
        )
    out.print(t)
    costs = [r.cost for r in rows if r.cost is not None]
    total_wall = sum(r.wall_s for r in rows)
    out.print(
        f"projected: {an.dollars(sum(costs)) if costs else 'no cost (no prices or no token usage reported)'}, "
        f"{_n(total_wall)} episode-seconds, about {_n(total_wall / max(1, workers))} s of wall time on {workers} "
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
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="re-run episodes that ended in an error")
    ] = False,
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
        manifest = _unlock(sp.load(split if split is not None else _default_split(family), splits_dir), key_file)
        manifest = sp.attach_pack(manifest, templates_dir)
        env_family = runner.family_of(manifest.env_id)
        if family is not None and family != env_family:
            raise BenchError(f"split {manifest.name!r} is a {env_family} split, not {family}")
        if verifier_key_file is not None:
            os.environ[KEY_FILE_ENV] = _verifier_key(verifier_key_file)  # before any worker starts: they inherit it
        abl = runner.validate_ablation(ablation, manifest.env_id)
        env_options = _buyer_options(env_family, buyer, buyer_model, buyer_base_url, buyer_api_key_env)
        if ray_address and backend is not BackendName.ray:
            raise BenchError("--ray-address only applies to --backend ray")
        prices = load_prices(price_in, price_out, price_cached, prices_file)
        _preflight(manifest)
        suite = runner.policy_suite(env_family)
        collected: list[PolicySpec] = []
        notes: list[str] = []
        if from_service is not None and from_record:
            raise BenchError("give --from-service or --from-record, not both")
        if manifest.pack is not None and (from_service is not None or from_record):
            raise BenchError("a split cut over a template pack is scored in process (--templates-dir): a service or "
                             "MCP server builds its tasks from the package's templates")
        if from_service is not None:
            spec, notes = remote.collect(from_service, manifest, trials, name)
            collected.append(spec)
        if from_record:
            spec, notes = remote.from_records(from_record, manifest, trials, name)
            collected.append(spec)
        specs, added = resolve_policies(policy, agent, llm_options, suite, collected)
        n_workers = workers or os.cpu_count() or 1
        chosen = runner.make_backend(backend.value, n_workers, ray_address)
    except PolicySpecError as e:
        _fail(str(e), e.code)
    except (sp.SplitError, BenchError) as e:
        _fail(str(e))
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
        except (KeyboardInterrupt, _Terminated):
            _fail("interrupted; a dry run writes nothing", 130)
        except BenchError as e:
            _fail(str(e))
        return

    store = _open_store(db)
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
        with _sigterm_stops(), progress:
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
        _fail("interrupted; finished episodes are saved: run the same command again to resume", 130)
    except _Terminated:
        store.close()
        _fail("terminated (SIGTERM); finished episodes are saved: run the same command again to resume", 143)
    except (BenchError, StoreError) as e:
        store.close()
        _fail(str(e))

    run_id = outcome.run.id
    try:
        eps = store.episodes(run_id)
    except StoreError as e:
        _fail(str(e))
    finally:
        store.close()
    a = an.analyse(eps, names, suite, pass_threshold=pass_threshold, prices=prices)
    words = vc.for_family(env_family)
    title = f"{manifest.name}: primary score over {n_terr} {words.units} (run {run_id})" + (
        f", ablation {abl}" if abl else ""
    )
    out.print(_leaderboard(a, escape(title), words))
    out.print(_explain(a, words), soft_wrap=True)
    for line in _exploit_lines(a):
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
    out.print(
        f"run {run_id} in {db}; full report: salesgym report {run_id} --db {db}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    stopped = [e for e in eps if an.invalid(e)]
    if stopped:
        _fail(
            f"{len(stopped)} episode(s) were stopped by the endpoint and are not scored (first: {stopped[0].policy} on "
            f"{stopped[0].territory_id}: {(stopped[0].end or '').removeprefix('stopped: ')}); fix the endpoint and "
            "re-run with --retry-errors"
        )
    failed = [e for e in eps if e.status == "error"]
    if failed:
        first = (failed[0].error or "").strip().splitlines()[0] if failed[0].error else "unknown"
        _fail(
            f"{len(failed)} episode(s) ended in an error (first: {failed[0].policy} on {failed[0].territory_id}: "
            f"{first}); fix and re-run with --retry-errors"
        )


def report(
    run_id: Annotated[str, typer.Argument(help="run id printed by `salesgym bench`")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="output directory (default: runs/<RUN_ID>)")] = None,
    db: DbPath = DEFAULT_DB,
    compare: Annotated[
        list[str] | None, typer.Option("--compare", help="another run on the same split (e.g. an ablation); repeatable")
    ] = None,
    pass_threshold: PassThreshold = an.DEFAULT_PASS_THRESHOLD,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    price_cached: PriceCached = None,
    prices_file: PricesFile = None,
) -> None:
    """Write a Markdown and a self-contained HTML report of a run."""
    from salesgym.bench.report import write_report

    target = out_dir or Path("runs") / run_id
    _check_out_dir(target, "the report")
    try:
        prices = load_prices(price_in, price_out, price_cached, prices_file)
    except BenchError as e:
        _fail(str(e))
    store = _open_store(db, readonly=True)
    try:
        run = store.get_run(run_id)
        assert run is not None
        for other in compare or []:
            o = store.get_run(other)
            assert o is not None
            if o.split != run.split:
                raise StoreError(f"--compare {other}: split {o.split!r} differs from {run.split!r}")
        files = write_report(store, run_id, target, compare or [], pass_threshold=pass_threshold, prices=prices)
    except StoreError as e:
        _fail(str(e))
    except OSError as e:
        _fail(_write_error(target, "the report", e))
    finally:
        store.close()
    out.print(f"wrote {files.markdown} and {files.html}", markup=False, highlight=False, soft_wrap=True)


def export(
    run_id: Annotated[str | None, typer.Argument(help="run id (--sft: or give --from files instead)")] = None,
    fmt: Annotated[
        ExportFormat | None, typer.Option("--format", case_sensitive=False, help="json (default) or csv")
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="output file (default: runs/<RUN_ID>.<format>, runs/<RUN_ID>.trajectories.jsonl); "
            "--sft: a new directory (default: runs/<RUN_ID>.sft)",
        ),
    ] = None,
    db: DbPath = DEFAULT_DB,
    trajectories: Annotated[
        bool,
        typer.Option(
            "--trajectories",
            help="write each episode as a chat transcript with tools (JSONL, the SFT format TRL reads)",
        ),
    ] = False,
    tool_arguments: Annotated[
        ToolArguments,
        typer.Option(
            case_sensitive=False,
            help="--trajectories, --sft: tool-call arguments as a JSON object (TRL, chat templates) or JSON text "
            "(OpenAI)",
        ),
    ] = ToolArguments.object,
    sft: Annotated[
        bool,
        typer.Option(
            "--sft",
            help="write the successful episodes as an SFT chat dataset with tools (JSONL, parquet, datasets on disk)",
        ),
    ] = False,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", callback=finite, help="--sft: keep episodes whose --metric is at least this"),
    ] = None,
    top: Annotated[
        float | None,
        typer.Option("--top", min=0, max=1, callback=finite,
                     help="--sft: keep the best share (0-1] of each territory's episodes by --metric"),
    ] = None,
    metric: Annotated[str, typer.Option("--metric", help="--sft: the score to select by (primary, return, ...)")] = (
        "primary"
    ),
    sft_policy: Annotated[
        list[str] | None,
        typer.Option("--policy", "-p", help="--sft: only these policies (default: all but the exploit probes)"),
    ] = None,
    from_files: Annotated[
        list[Path] | None,
        typer.Option("--from", dir_okay=False, help="--sft: transcript JSONL files (export --trajectories) as source"),
    ] = None,
    sft_format: Annotated[
        list[str] | None,
        typer.Option("--sft-format", help="--sft: jsonl, parquet, dataset (repeatable; default: all three)"),
    ] = None,
    tool_calls: Annotated[
        str, typer.Option("--tool-calls", help="--sft: structured, content (<tool_call> text) or auto (--tokenizer)")
    ] = "auto",
    tokenizer: Annotated[
        str | None,
        typer.Option("--tokenizer", help="--sft: the tokenizer (folder or .gguf) whose chat template --tool-calls auto "
                     "reads"),
    ] = None,
) -> None:
    """Export a run's episodes (with every metric) to JSON or CSV, its trajectories as JSONL chat transcripts,
    or its successful episodes as an SFT dataset (--sft). A private split's seeds are left out."""
    if sft:
        _export_sft(run_id, out_path, db, from_files or [], sft_format, fmt, trajectories,
                    min_score=min_score, top=top, metric=metric, policies=sft_policy or [],
                    tool_arguments=tool_arguments.value, tool_calls=tool_calls, tokenizer=tokenizer)  # fmt: skip
        return
    sft_only = [name for name, v in (("--min-score", min_score), ("--top", top), ("--policy", sft_policy),
                                     ("--from", from_files), ("--sft-format", sft_format), ("--tokenizer", tokenizer),
                                     ("--tool-calls", tool_calls != "auto")) if v]  # fmt: skip
    if sft_only or metric != "primary":
        _fail(f"{', '.join(sft_only) or '--metric'}: only with --sft", 2)
    if run_id is None:
        _fail("missing argument 'RUN_ID' (the run's id: see `salesgym runs`)", 2)
    if trajectories and fmt is not None:
        _fail("--trajectories writes JSONL; --format applies to the episode export only", 2)
    suffix = "trajectories.jsonl" if trajectories else (fmt or ExportFormat.json).value
    target = out_path or Path("runs") / f"{run_id}.{suffix}"
    if target.is_dir():
        _fail(f"{target}: is a directory (--out takes a file name)")
    _check_parents(target)
    store = _open_store(db, readonly=True)
    try:
        if trajectories:
            from salesgym.bench.transcripts import write_jsonl

            target.parent.mkdir(parents=True, exist_ok=True)
            n = write_jsonl(store, run_id, target, tool_arguments.value)
            message = f"wrote {target} ({n} episode transcript(s))"
        elif fmt is ExportFormat.csv:
            message = f"wrote {store.export_csv(run_id, target)}"
        else:
            message = f"wrote {store.export_json(run_id, target)}"
    except StoreError as e:
        _fail(str(e))
    except OSError as e:
        _fail(_write_error(target, "the export", e))
    finally:
        store.close()
    out.print(message, markup=False, highlight=False, soft_wrap=True)


def _export_sft(
    run_id: str | None,
    out_path: Path | None,
    db: Path,
    files: list[Path],
    formats: list[str] | None,
    fmt: ExportFormat | None,
    trajectories: bool,
    *,
    min_score: float | None,
    top: float | None,
    metric: str,
    policies: list[str],
    tool_arguments: str,
    tool_calls: str = "auto",
    tokenizer: str | None = None,
) -> None:
    """``export --sft``: every check before any work, then one directory written whole."""
    from salesgym.bench import sft as sf

    if fmt is not None or trajectories:
        _fail("--sft writes its own formats (--sft-format); not with --format or --trajectories", 2)
    if (run_id is None) == (not files):
        _fail("--sft takes a run id or --from transcript files (one of the two)", 2)
    try:
        selection = sf.Selection(metric=metric, min_score=min_score, top=top, policies=tuple(policies))
        chosen = tuple(dict.fromkeys(formats or sf.FORMATS))
        sf.require_datasets(chosen)
        calls = sf.calls_mode(tool_calls, sf.load_tokenizer(tokenizer) if tokenizer and tool_calls == "auto" else None)
    except sf.SFTError as e:
        _fail(str(e), 2)
    target = out_path or Path("runs") / f"{run_id or files[0].stem}.sft"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        _fail(f"{target}: exists and is not an empty directory (--out takes a new directory)")
    _check_parents(target)
    try:
        if run_id is not None:
            store = _open_store(db, readonly=True)
            try:
                rows = sf.rows_from_store(store, run_id, tool_arguments)
            finally:
                store.close()
            source: dict[str, object] = {"run_id": run_id, "db": str(db)}
        else:
            rows = sf.rows_from_files(files)
            source = {"files": [str(f) for f in files]}
        kept = sf.select(rows, selection)
        kept = sf.with_content_calls(kept) if calls == "content" else kept
        record = sf.write(kept, target, formats=chosen, source=source, selection=selection, candidates=len(rows),
                          tool_calls=calls)  # fmt: skip
    except (StoreError, sf.SFTError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(_write_error(target, "the SFT dataset", e))
    out.print(
        f"wrote {target} ({record['episodes']} of {record['candidates']} episode(s), "
        f"{record['territories']} territor{'y' if record['territories'] == 1 else 'ies'}: "
        f"{', '.join(record['files'])})",
        markup=False, highlight=False, soft_wrap=True,
    )  # fmt: skip


def runs(db: DbPath = DEFAULT_DB) -> None:
    """List the runs in the database."""
    store = _open_store(db, readonly=True)
    try:
        found = store.runs()
        # run ids and split names are copied from here: never cut or wrapped, whatever the terminal's width
        widest = {k: max((len(getattr(r, k)) for r in found), default=3) for k in ("id", "split")}
        t = Table(Column("run", no_wrap=True, min_width=widest["id"]), Column("created", overflow="fold"),
                  Column("split", no_wrap=True, min_width=widest["split"]), "ablation", "policies", "episodes")
        for r in found:
            eps = store.episodes(r.id)
            cells = (
                r.id,
                r.created,
                r.split,
                str(r.config.get("ablation") or "—"),
                str(len(r.policies)),
                str(len(eps)),
            )
            t.add_row(*(escape(c) for c in cells))  # stored text is data, not markup
    except StoreError as e:
        _fail(str(e))
    finally:
        store.close()
    out.print(t)


splits_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help text, as on the main app
    help="Check or (re)generate the split manifests; make split keys.",
)


@splits_app.command("verify")
def splits_verify(splits_dir: SplitsDir = None) -> None:
    """Re-check every manifest's hash and structure, that the environment can build every territory, and the
    family/template rules between splits. Private manifests are checked without their key."""
    try:
        dirs = sp.family_dirs(sp.resolve_splits_dir(splits_dir))
        groups = [(d, sp.verify_all(d)) for d in dirs]
    except sp.SplitError as e:
        _fail(str(e))
    bad = 0
    problems: list[str] = []
    checks = [c for _, group in groups for c in group]
    for _, group in groups:
        manifests = {c.manifest.name: c.manifest for c in group if c.manifest is not None}
        problems += _rule_problems(manifests)
    first = ""  # the first failure, repeated on the final error line
    for c in checks:
        unbuildable = sp.environment_problems(c.manifest) if c.manifest is not None else []
        if c.ok and not unbuildable:
            out.print(f"[green]ok[/]    {escape(f'{c.path}  {c.message[4:]}')}", highlight=False, soft_wrap=True)
        elif c.ok:
            bad += 1
            more = f" (and {len(unbuildable) - 3} more)" if len(unbuildable) > 3 else ""
            reason = f"the environment cannot build it: {'; '.join(unbuildable[:3])}{more}"
            first = first or f"{c.path.name}: {reason}"
            err.print(f"[bold red]FAIL[/]  {escape(f'{c.path}: {one_line(reason)}')}", highlight=False, soft_wrap=True)
        else:
            bad += 1
            first = first or f"{c.path.name}: {c.message}"
            err.print(
                f"[bold red]FAIL[/]  {escape(f'{c.path}: {one_line(c.message)}')}", highlight=False, soft_wrap=True
            )
    for p in problems:
        err.print(f"[bold red]FAIL[/]  rule: {escape(p)}", highlight=False, soft_wrap=True)
    if bad or problems:
        first = first or f"rule: {problems[0]}"
        _fail(f"{bad} manifest(s) failed, {len(problems)} rule violation(s); first: {first}")
    out.print(f"{len(checks)} manifest(s) verified; split rules hold")


def _rule_problems(manifests: dict[str, sp.Manifest]) -> list[str]:
    """The rules between one family's splits (its spec's ``split_rules``), and for every family, no seed in two
    splits."""
    if not manifests:
        return []
    import salesgym

    env_ids = sorted({m.env_id for m in manifests.values()})
    problems: list[str] = []
    for env_id in env_ids:
        try:
            rules = salesgym.family(env_id).split_rules
        except ValueError as e:  # an id not registered here: the manifest checks name it too
            problems.append(str(e))
            continue
        problems += rules({n: m for n, m in manifests.items() if m.env_id == env_id})
    return problems + sp.shared_seeds(manifests)


@splits_app.command("generate")
def splits_generate(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="where to write (default: the splits directory)")
    ] = None,
    held_out_family: Annotated[
        str | None, typer.Option(help="the territory's scenario family held out of train (default: public_sector)")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="overwrite manifests that differ (splits are frozen!)")
    ] = False,
    private: Annotated[
        str | None,
        typer.Option(
            "--private", metavar="NAME", help="generate only the private split NAME, sealed with --key-file's id"
        ),
    ] = None,
    key_file: KeyFile = None,
    family: Annotated[
        str | None, typer.Option(help="the environment family whose splits to write (default: the first registered, "
                                 "the territory; another family's go into splits/<family>/)")
    ] = None,
    templates_dir: Annotated[
        Path | None,
        typer.Option("--templates-dir", help="--family workflows --private: cut the split over this template pack"),
    ] = None,
) -> None:
    """Generate the manifests from the scenario catalogue. Refuses to change a frozen split without --force.

    With ``--private NAME --key-file F`` it writes one private manifest (the family's generalisation split's shape,
    no seeds in the file: they are derived from the key) and leaves the public ones alone; with ``--family
    workflows --templates-dir PACK`` too, the private split is cut over that template pack."""
    import salesgym
    from salesgym.bench import splitgen

    try:
        spec = salesgym.family_named(family) if family is not None else next(iter(salesgym.families().values()))
    except ValueError as e:
        _fail(str(e))
    if private is None and key_file is not None:
        _fail("--key-file applies to --private only (public splits are not keyed)")
    if private is None and templates_dir is not None:
        _fail("--templates-dir applies to --private (a private split cut over a template pack)")
    target = out_dir or sp.default_splits_dir() / spec.splits_folder
    _check_out_dir(target, "the manifests")
    try:
        if private is not None:
            key = sp.resolve_key(key_file)
            if key is None:
                raise ValueError(f"--private needs the split's key: pass --key-file FILE or set ${sp.KEY_ENV_VAR}")
            manifests = {private: splitgen.generate_family_private(spec.name, private, key, templates_dir,
                                                                   held_out_family)}  # fmt: skip
        else:
            manifests = splitgen.generate_family(spec.name, held_out_family)
    except (ValueError, sp.SplitError) as e:
        _fail(str(e))
    except ImportError as e:
        _fail(f"the scenario catalogue is not available: {e}")
    changed = [n for n, m in manifests.items() if _frozen_differs(sp.manifest_path(target, n), m["sha256"])]
    if changed and not force:
        _fail(f"{target}: would change frozen split(s) {', '.join(changed)}; pass --force to overwrite")
    try:
        if spec.splits_folder:
            written = [sp.write_manifest(m, target / f"{name}.json") for name, m in manifests.items()]
        else:  # the splits folder itself: its README lists every split there
            written = splitgen.write_all(manifests, target, order=list(spec.split_plan(None)))
    except OSError as e:
        _fail(_write_error(target, "the manifests", e))
    for path in written:
        out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)


def _frozen_differs(path: Path, sha256: str) -> bool:
    """Whether a manifest is already at ``path`` with another hash (or unreadable: regenerating would change it)."""
    if not path.is_file():
        return False
    try:
        return sp.load_file(path).sha256 != sha256
    except sp.SplitError:
        return True


@splits_app.command("keygen")
def splits_keygen(
    out_file: Annotated[Path, typer.Option("--out", help="where to write the new key (must not exist)")],
) -> None:
    """Write a new random split key (hex, readable by its owner only) and print its public key id.

    Keep the file out of the repository: whoever holds it can rebuild the private split's worlds."""
    try:
        key = sp.write_key(out_file)
    except sp.SplitError as e:
        _fail(str(e))
    out.print(
        f"wrote {out_file} (key id {key.key_id}); keep it secret and out of the repository",
        markup=False,
        highlight=False,
    )
