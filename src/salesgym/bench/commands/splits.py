"""``salesgym splits verify|audit|generate|keygen``: check, audit or (re)generate the split manifests; make split
keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from salesgym.bench import splits as sp
from salesgym.bench.commands.console import check_out_dir, err, fail, out, write_error
from salesgym.bench.commands.options import KeyFile, SplitsDir
from salesgym.cli_options import one_line

splits_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help text, as on the main app
    help="Check, audit or (re)generate the split manifests; make split keys.",
)


@splits_app.command("verify")
def splits_verify(splits_dir: SplitsDir = None) -> None:
    """Re-check every manifest's hash and structure, that the environment can build every territory, and the
    family/template rules between splits. Private manifests are checked without their key."""
    try:
        dirs = sp.family_dirs(sp.resolve_splits_dir(splits_dir))
        groups = [(d, sp.verify_all(d)) for d in dirs]
    except sp.SplitError as e:
        fail(str(e))
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
        fail(f"{bad} manifest(s) failed, {len(problems)} rule violation(s); first: {first}")
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


@splits_app.command("audit")
def splits_audit(
    split: Annotated[str | None, typer.Option("--split", help="audit this split only (default: every split)")] = None,
    splits_dir: SplitsDir = None,
) -> None:
    """The contamination audit's structure axis: how many of each split's world structures (a territory's deal
    graph, each deal's committee graph; name-free) also occur in its family's train split. Computed here, not
    stored in the manifests (their hashes stay frozen); a family without structure prints is named and skipped."""
    import salesgym
    from salesgym.bench.structure_audit import Overlap, audit

    try:
        groups: dict[str, dict[str, sp.Manifest]] = {}
        for d in sp.family_dirs(sp.resolve_splits_dir(splits_dir)):
            for c in sp.verify_all(d):
                if c.manifest is not None:
                    groups.setdefault(c.manifest.env_id, {})[c.manifest.name] = c.manifest
    except sp.SplitError as e:
        fail(str(e))
    names = sorted(n for group in groups.values() for n in group)
    if split is not None and split not in names:
        fail(f"no split named {split!r} (available: {', '.join(names) or 'none'})")
    for env_id, manifests in groups.items():
        if split is not None and split not in manifests:
            continue
        try:  # an unregistered id, a missing train split or a territory the family cannot build: one line
            spec = salesgym.family(env_id)
            if spec.structure is None:
                out.print(f"{spec.name}: no structure prints for this family; not audited", markup=False)
                continue
            found = audit(manifests, f"{spec.split_prefix}train", spec.structure, split)
        except ValueError as e:
            fail(f"{env_id}: {e}")
        for row in found:
            out.print(row.line() if isinstance(row, Overlap) else row, markup=False, highlight=False)


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
        fail(str(e))
    if private is None and key_file is not None:
        fail("--key-file applies to --private only (public splits are not keyed)")
    if private is None and templates_dir is not None:
        fail("--templates-dir applies to --private (a private split cut over a template pack)")
    target = out_dir or sp.default_splits_dir() / spec.splits_folder
    check_out_dir(target, "the manifests")
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
        fail(str(e))
    except ImportError as e:
        fail(f"the scenario catalogue is not available: {e}")
    changed = [n for n, m in manifests.items() if _frozen_differs(sp.manifest_path(target, n), m["sha256"])]
    if changed and not force:
        fail(f"{target}: would change frozen split(s) {', '.join(changed)}; pass --force to overwrite")
    try:
        if spec.splits_folder:
            written = [sp.write_manifest(m, target / f"{name}.json") for name, m in manifests.items()]
        else:  # the splits folder itself: its README lists every split there
            written = splitgen.write_all(manifests, target, order=list(spec.split_plan(None)))
    except OSError as e:
        fail(write_error(target, "the manifests", e))
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
        fail(str(e))
    out.print(
        f"wrote {out_file} (key id {key.key_id}); keep it secret and out of the repository",
        markup=False,
        highlight=False,
    )
