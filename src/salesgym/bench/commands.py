"""CLI commands of the benchmark (bench, report, export, runs, splits); registered on the main app by ``register``.

Every expected failure (bad argument, tampered or unbuildable split, missing key, damaged or read-only
database, unwritable output path, unknown run, missing environment) ends with one clear ``error:`` line on
stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from salesgym.bench import analysis as an
from salesgym.bench import splits as sp
from salesgym.bench.runner import DEFAULT_MAX_STEPS, BenchError, ablations
from salesgym.bench.store import EpisodeRecord, Store, StoreError
from salesgym.core.env import KEY_FILE_ENV, resolve_verifier_key

DEFAULT_DB = Path("runs") / "salesgym.sqlite"

out = Console()
err = Console(stderr=True)


class BackendName(StrEnum):
    local = "local"
    ray = "ray"


class ExportFormat(StrEnum):
    json = "json"
    csv = "csv"


def one_line(message: str) -> str:
    """``message`` on one printable line (SQLite and OS messages may quote raw file content)."""
    return " ".join("".join(c if c.isprintable() else " " for c in message).split())


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
    problems = sp.check_catalogue(manifest, salesgym.env_class(sp.ENV_ID).scenario_catalogue())
    if problems:
        raise BenchError(f"{where}: split does not match the scenario catalogue: {'; '.join(problems[:5])}")
    problems = sp.environment_problems(manifest)
    if problems:
        raise BenchError(f"{where}: the environment cannot build this split: {'; '.join(problems[:5])}")


def _n(x: float) -> str:
    """Compact number: 2 decimals below 10, 1 below 1000, none above."""
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:,.0f}"


def _leaderboard(a: an.Analysis, title: str) -> Table:
    t = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False
    )
    t.add_column("#", justify="right", min_width=5, no_wrap=True)
    t.add_column("policy", no_wrap=True, min_width=17)
    for col in ("norm", "primary", "95% CI", "closed", "Δ anchor"):
        t.add_column(col, justify="right", no_wrap=True)
    for label, r in an.ranked(a.rows, "ref"):
        p, n, diff = r.primary, r.normalised, r.vs_anchor
        dim = r.reference or r.probe
        t.add_row(
            label,
            f"[dim]{r.policy}[/]" if dim else r.policy,
            f"{n.mean:.2f}" if n else "—",
            _n(p.mean) if p else "—",
            f"{_n(p.ci_low)}–{_n(p.ci_high)}" if p else "—",
            f"{r.closed_value.mean:,.0f}" if r.closed_value else "—",
            (("+" if diff.mean >= 0 else "") + _n(diff.mean) + ("*" if diff.significant else "")) if diff else "—",
        )
    return t


def _explain(a: an.Analysis) -> str:
    return (
        f"[dim]Ranked by norm, the normalised score: {a.normalisation} (0 = no better than doing nothing or "
        "random, 1 = the reference), so every territory counts alike whatever its size. primary = the raw "
        "verified value-weighted advances per 100 constrained seller hours (mean; 95% bootstrap CI over "
        f"territories). closed = mean closed value ($k, after discount). Δ anchor = paired difference with {a.anchor} "
        "on the same territories (* = CI excludes 0). probe = an exploit probe, checked below, never ranked. "
        "ref = reads hidden truth: headroom, never ranked.[/]"
    )


def _exploit_lines(a: an.Analysis) -> list[str]:
    lines = [an.exploit_line(a)]
    for r in a.exploits:
        d = r.difference
        vs = f"{r.policy} − {r.twin}: {d.mean:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]" if d else f"{r.policy}: —"
        lines.append(f"  {'ok  ' if r.passed else 'FAIL'} {vs}" + ("" if r.paired else " (pure probe)"))
    return lines


def bench(
    split: Annotated[str, typer.Option(help="split to run (train, eval, held-out, debug)")] = "eval",
    policy: Annotated[
        list[str] | None,
        typer.Option(
            "--policy", "-p", help="policy to run; repeat for several (default: baselines + exploit probes + oracle)"
        ),
    ] = None,
    episodes: Annotated[int | None, typer.Option(min=1, help="only the first N territories of the split")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="parallel episodes (default: all cores)")] = None,
    backend: Annotated[BackendName, typer.Option(case_sensitive=False, help="where episodes run")] = BackendName.local,
    ray_address: Annotated[str | None, typer.Option(help="existing Ray cluster (default: start a local one)")] = None,
    ablation: Annotated[
        str | None, typer.Option(help=f"a world ablation: {', '.join(ablations()[0])} (training ablations are refused)")
    ] = None,
    db: DbPath = DEFAULT_DB,
    force: Annotated[bool, typer.Option("--force", help="re-run episodes already in the database")] = False,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="re-run episodes that ended in an error")
    ] = False,
    max_steps: Annotated[
        int, typer.Option(min=1, help="step cap per episode (counted as a failure)")
    ] = DEFAULT_MAX_STEPS,
    splits_dir: SplitsDir = None,
    key_file: KeyFile = None,
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
        manifest = _unlock(sp.load(split, splits_dir), key_file)
        if verifier_key_file is not None:
            os.environ[KEY_FILE_ENV] = _verifier_key(verifier_key_file)  # before any worker starts: they inherit it
        abl = runner.validate_ablation(ablation)
        if ray_address and backend is not BackendName.ray:
            raise BenchError("--ray-address only applies to --backend ray")
        _preflight(manifest)
        suite = runner.policy_suite()
        names = runner.validate_policies(policy or list(suite.all), suite)
        n_workers = workers or os.cpu_count() or 1
        chosen = runner.make_backend(backend.value, n_workers, ray_address)
    except (sp.SplitError, BenchError) as e:
        _fail(str(e))
    if manifest.private and resolve_verifier_key()[1] == "development":
        err.print(
            "warning: no verifier key is set: the verifier signs with the public development key "
            f"(pass --verifier-key-file or set ${KEY_FILE_ENV} for a private benchmark)",
            highlight=False,
            soft_wrap=True,
        )

    store = _open_store(db)
    errors: list[EpisodeRecord] = []
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("episodes"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
    )
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
        f"salesgym bench: split {manifest.name} ({len(manifest.limited(episodes))} territories, "
        f"sha256 {manifest.sha256[:12]}), {len(names)} policies, backend {where}"
        + (f", ablation {abl}" if abl else ""),
        highlight=False,
    )
    try:
        with _sigterm_stops(), progress:
            outcome = runner.run_benchmark(
                store,
                manifest,
                names,
                chosen,
                episodes=episodes,
                ablation=abl,
                max_steps=max_steps,
                force=force,
                retry_errors=retry_errors,
                on_plan=on_plan,
                on_result=on_result,
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
    a = an.analyse(eps, list(names), suite)
    n_terr = len(manifest.limited(episodes))
    title = f"{manifest.name}: primary score over {n_terr} territories (run {run_id})" + (
        f", ablation {abl}" if abl else ""
    )
    out.print(_leaderboard(a, title))
    out.print(_explain(a), soft_wrap=True)
    for line in _exploit_lines(a):
        out.print(line, highlight=False, soft_wrap=True)
    for note in a.notes:
        out.print(f"[dim]note: {note}[/]")
    out.print(
        f"run {run_id} in {db}; full report: salesgym report {run_id} --db {db}",
        markup=False,
        highlight=False,
        soft_wrap=True,
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
) -> None:
    """Write a Markdown and a self-contained HTML report of a run."""
    from salesgym.bench.report import write_report

    target = out_dir or Path("runs") / run_id
    _check_out_dir(target, "the report")
    store = _open_store(db, readonly=True)
    try:
        run = store.get_run(run_id)
        assert run is not None
        for other in compare or []:
            o = store.get_run(other)
            assert o is not None
            if o.split != run.split:
                raise StoreError(f"--compare {other}: split {o.split!r} differs from {run.split!r}")
        files = write_report(store, run_id, target, compare or [])
    except StoreError as e:
        _fail(str(e))
    except OSError as e:
        _fail(_write_error(target, "the report", e))
    finally:
        store.close()
    out.print(f"wrote {files.markdown} and {files.html}", markup=False, highlight=False, soft_wrap=True)


def export(
    run_id: Annotated[str, typer.Argument(help="run id")],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", case_sensitive=False, help="json or csv")
    ] = ExportFormat.json,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="output file (default: runs/<RUN_ID>.<format>)")
    ] = None,
    db: DbPath = DEFAULT_DB,
) -> None:
    """Export a run's episodes (with every metric) to JSON or CSV. A private split's seeds are left out."""
    target = out_path or Path("runs") / f"{run_id}.{fmt.value}"
    if target.is_dir():
        _fail(f"{target}: is a directory (--out takes a file name)")
    _check_parents(target)
    store = _open_store(db, readonly=True)
    try:
        path = store.export_json(run_id, target) if fmt is ExportFormat.json else store.export_csv(run_id, target)
    except StoreError as e:
        _fail(str(e))
    except OSError as e:
        _fail(_write_error(target, "the export", e))
    finally:
        store.close()
    out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)


def runs(db: DbPath = DEFAULT_DB) -> None:
    """List the runs in the database."""
    store = _open_store(db, readonly=True)
    try:
        t = Table("run", "created", "split", "ablation", "policies", "episodes")
        for r in store.runs():
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


splits_app = typer.Typer(no_args_is_help=True, help="Check or (re)generate the split manifests; make split keys.")


@splits_app.command("verify")
def splits_verify(splits_dir: SplitsDir = None) -> None:
    """Re-check every manifest's hash and structure, that the environment can build every territory, and the
    family/template rules between splits. Private manifests are checked without their key."""
    try:
        checks = sp.verify_all(splits_dir)
    except sp.SplitError as e:
        _fail(str(e))
    bad = 0
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
    manifests = {c.manifest.name: c.manifest for c in checks if c.manifest is not None}
    problems = sp.rule_violations(manifests)
    for p in problems:
        err.print(f"[bold red]FAIL[/]  rule: {escape(p)}", highlight=False, soft_wrap=True)
    if bad or problems:
        first = first or f"rule: {problems[0]}"
        _fail(f"{bad} manifest(s) failed, {len(problems)} rule violation(s); first: {first}")
    out.print(f"{len(checks)} manifest(s) verified; split rules hold")


@splits_app.command("generate")
def splits_generate(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="where to write (default: the splits directory)")
    ] = None,
    held_out_family: Annotated[
        str | None, typer.Option(help="family held out of train (default: public_sector)")
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
) -> None:
    """Generate the manifests from the scenario catalogue. Refuses to change a frozen split without --force.

    With ``--private NAME --key-file F`` it writes one private manifest (held-out's templates, no seeds in the
    file: they are derived from the key) and leaves the public ones alone."""
    from salesgym.bench import splitgen

    target = out_dir or sp.default_splits_dir()
    _check_out_dir(target, "the manifests")
    try:
        catalogue = splitgen.load_catalogue()
    except ImportError as e:
        _fail(f"the scenario catalogue is not available: {e}")
    try:
        if private is not None:
            key = sp.resolve_key(key_file)
            if key is None:
                raise ValueError(f"--private needs the split's key: pass --key-file FILE or set ${sp.KEY_ENV_VAR}")
            manifests = {private: splitgen.generate_private(catalogue, private, key, held_out_family)}
        elif key_file is not None:
            raise ValueError("--key-file applies to --private only (public splits are not keyed)")
        else:
            manifests = splitgen.generate(catalogue, held_out_family)
    except (ValueError, sp.SplitError) as e:
        _fail(str(e))
    changed = []
    for name, m in manifests.items():
        path = sp.manifest_path(target, name)
        if path.is_file():
            try:
                old = sp.load_file(path)
                if old.sha256 != m["sha256"]:
                    changed.append(name)
            except sp.SplitError:
                changed.append(name)
    if changed and not force:
        _fail(f"{target}: would change frozen split(s) {', '.join(changed)}; pass --force to overwrite")
    try:
        written = splitgen.write_all(manifests, target)
    except OSError as e:
        _fail(_write_error(target, "the manifests", e))
    for path in written:
        out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)


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


def register(app: typer.Typer) -> None:
    """Add the benchmark's commands to ``app``."""
    app.command()(bench)
    app.command()(report)
    app.command()(export)
    app.command()(runs)
    app.add_typer(splits_app, name="splits")
