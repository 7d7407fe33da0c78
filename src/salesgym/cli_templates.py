"""``salesgym templates``: the workflows family's templates (the package's catalogue, a pack it ships, or a pack
directory) by id, motion, tier, apps and split, one template's blueprint (goal, prompt, steps and their
assertions, the changes it may make, forbidden actions, hidden facts), and the JSON schema of a template file.

Bad input is one ``error:`` line: an unknown id or motion (exit 2, with the close matches), a pack that does not
load (exit 1, ``packs.PackError``'s line). The family is imported only when a command runs (``salesgym --help``
stays cheap)."""

from __future__ import annotations

import difflib
import json
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from salesgym.cli_options import one_line

if TYPE_CHECKING:
    from salesgym.envs.workflows.tasks.model import Template

WIDTH = 100
templates_cli = typer.Typer(help="The workflow templates: list them, show one's blueprint (docs/workflows.md).",
                            no_args_is_help=True)  # fmt: skip
PackOption = Annotated[str | None, typer.Option(
    "--pack", help="a template pack: the name of one the package ships (workflows-counterparty) or a directory; "
    "default: the package's catalogue")]  # fmt: skip
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of text")]


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def _unknown(what: str, value: str, known: list[str], otherwise: str) -> NoReturn:
    """No such ``what``: one line naming the close matches (else ``otherwise``), exit 2."""
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else otherwise
    _fail(f"no {what} {value!r} ({hint})", 2)


def _catalogue(pack: str | None) -> tuple[Mapping[str, Template], dict[str, str]]:
    """The templates and, for the package's catalogue, each one's split (a pack's are in none of them)."""
    from salesgym.envs.workflows import packs, splits

    try:
        templates = packs.catalogue(pack)
    except packs.PackError as err:
        _fail(str(err))
    if pack is not None:
        return templates, {}
    placed = {t: name.removeprefix("workflows-") for name, ids in splits.assign().items() for t in ids}
    return templates, placed


def _row(template: Template, split: str | None) -> dict[str, Any]:
    return {"id": template.id, "motion": template.motion, "tier": template.tier, "title": template.title,
            "apps": list(template.apps), "read_only": list(template.read_only), "split": split,
            "held_out": split == "held-out"}  # fmt: skip


def _apps(template: Template) -> str:
    return ",".join(f"{a}*" if a in template.read_only else a for a in template.apps)


@templates_cli.command("list")
def list_templates(
    motion: Annotated[str | None, typer.Option(help="only the templates of this sales motion (inbound, ...)")] = None,
    as_json: JsonOption = False,
    pack: PackOption = None,
) -> None:
    """List the templates in the catalogue's order: id, motion, tier (its number of apps), apps, split."""
    templates, placed = _catalogue(pack)
    chosen = list(templates.values())
    if motion is not None:
        motions = sorted({t.motion for t in chosen})
        if motion not in motions:
            _unknown("motion", motion, motions, f"one of {', '.join(motions)}")
        chosen = [t for t in chosen if t.motion == motion]
    rows = [_row(t, placed.get(t.id)) for t in chosen]
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    head = ("id", "motion", "tier", "apps", "split")
    table = [head, *((r["id"], r["motion"], str(r["tier"]), _apps(t), r["split"] or "-")
                      for r, t in zip(rows, chosen, strict=True))]
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for line in table:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    typer.echo(f"{len(rows)} templates; * read only; held-out: {sum(r['held_out'] for r in rows)}")


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _para(label: str, text: str) -> list[str]:
    return [f"{label}:", *textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="  ")]


def _fixture_name(template: Template) -> str:
    module = template.fixture.__module__
    return template.fixture.__name__ if module.startswith("salesgym_pack_") else f"{module}:{template.fixture.__name__}"


def blueprint(template: Template, split: str | None) -> list[str]:
    """The blueprint as text lines: what ``salesgym templates show`` prints."""
    t = template
    out = [f"{t.id}: {t.title}",
           f"motion: {t.motion}  tier: {t.tier}  apps: {_apps(t)}  split: {split or '-'}",
           f"requester: {t.requester_role}  fixture: {_fixture_name(t)}"]  # fmt: skip
    if t.mechanisms:
        out.append(f"mechanisms: {', '.join(t.mechanisms)}")
    if t.policies:
        out.append(f"policies: {', '.join(t.policies)}")
    out += ["", *_para("goal", t.goal), *_para("prompt", t.prompt), "", "steps:"]
    for i, step in enumerate(t.steps, 1):
        out += [f"  {i}. [{step.app}] {step.objective}", f"     actions: {', '.join(step.actions)}"]
        out += [f"     - {a.name}: {a.expr}  {a.op} {_value(a.expected)}" for a in step.assertions]
    out += ["", "changes allowed:"]
    for c in t.changes:
        extra = "".join(f"  {name}: {_value(v)}" for name, v in (("ids", c.ids), ("fields", c.fields), ("most", c.most))
                        if v is not None)  # fmt: skip
        out.append(f"  - {c.table} ({', '.join(c.kinds)}){extra}")
    if t.forbidden:
        out += ["", "forbidden:"]
        out += [f"  - {f.name}: {', '.join(f.tools)}{'' if f.args is None else f' where {f.args}'}"
                f"{' (even attempted)' if f.attempted else ''}" for f in t.forbidden]  # fmt: skip
    if t.facts:
        out += ["", "hidden facts:"]
        out += [f"  - {f.key} (held by {f.holder}, value ${f.param}): asked with {', '.join(f.keywords)}"
                for f in t.facts]  # fmt: skip
    extras = [f"{len(v)} {name}" for name, v in (("rubrics", t.rubrics), ("turns", t.turns), ("replies", t.replies),
                                                 ("actions of simulated people", t.actions)) if v]  # fmt: skip
    calls = f"{len(t.solution)} call{'' if len(t.solution) == 1 else 's'}"
    out += ["", f"reference solution: {calls} ({', '.join(c['tool'] for c in t.solution)})"]
    if extras:
        out.append(f"also: {', '.join(extras)} (--json shows every field)")
    return out


@templates_cli.command("show")
def show(
    template_id: Annotated[str, typer.Argument(metavar="ID", help="a template id (see `salesgym templates list`)")],
    as_json: JsonOption = False,
    pack: PackOption = None,
) -> None:
    """Show one template's blueprint: goal, prompt, steps with their assertions, changes, forbidden actions."""
    from salesgym.envs.workflows.packs import to_data

    templates, placed = _catalogue(pack)
    if template_id not in templates:
        _unknown("template", template_id, list(templates), "see `salesgym templates list`")
    template = templates[template_id]
    if as_json:
        typer.echo(json.dumps({**to_data(template, _fixture_name(template)), "split": placed.get(template_id)},
                              indent=1, ensure_ascii=False))  # fmt: skip
        return
    typer.echo("\n".join(blueprint(template, placed.get(template_id))))


@templates_cli.command("schema")
def schema() -> None:
    """Print the JSON schema of a template file (one template, or one motion's): for an editor writing a pack."""
    from salesgym.envs.workflows import packs

    typer.echo(json.dumps(packs.schema(), indent=1))


def register(app: typer.Typer) -> None:
    app.add_typer(templates_cli, name="templates")
