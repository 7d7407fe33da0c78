"""The whole command line, generated from its own command tree (a new command or option is covered the day it
is added): every ``--help`` prints and exits 0 with its help texts shown verbatim (never read as markup), and
every numeric option refuses values outside its range and non-finite numbers with one ``error:`` line naming
the option and a non-zero exit.

The option checks replace each command's body by a stub that exits with :data:`RAN`, so a value that slips
through parsing is seen as "the command ran" instead of actually starting a benchmark or a server.
"""

from __future__ import annotations

import functools
import inspect
import re
import subprocess
import sys
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any

import pytest
import typer
from typer.models import ArgumentInfo, OptionInfo, ParameterInfo
from typer.testing import CliRunner

from salesgym.cli import app

HUGE = 10**30  # beyond any sensible count, seed or port; an int option without a maximum takes it


@dataclass(frozen=True)
class Param:
    name: str  # the Python name
    flag: str | None  # "--max-steps"; None for a positional argument
    kind: type  # int, float, str, bool, Path, an enum ...
    info: ParameterInfo
    default: Any


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]
    info: typer.models.CommandInfo
    params: tuple[Param, ...]


def _base(annotation: Any) -> tuple[type, ParameterInfo | None]:
    """The value type under ``Annotated``, ``X | None`` and ``list[X]``, and the typer info in its metadata."""
    info = None
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *meta = typing.get_args(annotation)
        info = next((m for m in meta if isinstance(m, ParameterInfo)), None)
    while typing.get_origin(annotation) in (UnionType, typing.Union, list):
        annotation = next(a for a in typing.get_args(annotation) if a is not NoneType)
    return annotation, info


def _params(callback: Callable[..., Any]) -> tuple[Param, ...]:
    hints = typing.get_type_hints(callback, include_extras=True)
    out = []
    for name, p in inspect.signature(callback).parameters.items():
        kind, info = _base(hints[name])
        default = p.default
        if isinstance(default, ParameterInfo):  # the older spelling: x: int = typer.Option(7, ...)
            info, default = default, default.default
        assert info is not None, f"{callback.__name__}({name}): not a typer option or argument"
        flag = None
        if isinstance(info, OptionInfo):
            decls = [d for d in (info.param_decls or ()) if d.startswith("--")]
            flag = decls[0] if decls else "--" + name.replace("_", "-")
        out.append(Param(name, flag, kind, info, default))
    return tuple(out)


def commands(t: typer.Typer = app, path: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every command of the CLI, from typer's own registry."""
    for info in t.registered_commands:
        assert info.callback is not None
        name = info.name or info.callback.__name__.lower().replace("_", "-")
        yield Command((*path, name), info, _params(info.callback))
    for group in t.registered_groups:
        assert group.typer_instance is not None and group.name is not None
        yield from commands(group.typer_instance, (*path, group.name))


def groups(t: typer.Typer = app, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for group in t.registered_groups:
        assert group.typer_instance is not None and group.name is not None
        yield from groups(group.typer_instance, (*path, group.name))


COMMANDS = list(commands())
runner = CliRunner()


def _flat(text: str) -> str:
    """Whitespace-insensitive, and insensitive to a line wrapped after a hyphen ("held-\\nout")."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


def _help_texts(c: Command) -> list[str]:
    texts = [p.info.help for p in c.params if p.info.help and not p.info.hidden]
    doc = inspect.getdoc(c.info.callback) or ""
    return [*texts, doc.split("\n\n")[0]]


def test_the_tree_is_found() -> None:
    names = {" ".join(c.path) for c in COMMANDS}
    assert {"bench", "view", "report", "serve", "mcp", "play", "demo", "splits verify", "splits generate"} <= names


@pytest.mark.parametrize("path", list(groups()), ids=lambda p: " ".join(p) or "salesgym")
def test_group_help(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and "error" not in result.output.lower()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.path))
def test_command_help_prints_every_text_verbatim(command: Command) -> None:
    result = runner.invoke(app, [*command.path, "--help"])
    assert result.exit_code == 0, result.output
    assert "MarkupError" not in result.output and "internal error" not in result.output
    shown = _flat(result.output)
    for text in _help_texts(command):  # markup would eat "[/TRIAL]", "[bold]"; escaping would show a backslash
        assert _flat(text) in shown, f"{text!r} is not shown as written"


def test_view_help_as_a_user_runs_it() -> None:
    """The reported crash, through the installed entry point: ``salesgym view --help``."""
    done = subprocess.run([sys.executable, "-m", "salesgym.cli", "view", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "POLICY/TERRITORY[/TRIAL]" in _flat(done.stdout)


# -- numeric options ---------------------------------------------------------------------------------
RAN = 99  # the exit status of a stubbed command: its body was reached, every option value passed its checks


def _stub(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)  # typer reads the parameters through __wrapped__
    def ran(*args: Any, **kwargs: Any) -> None:
        raise typer.Exit(RAN)

    return ran


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    for c in COMMANDS:
        monkeypatch.setattr(c.info, "callback", _stub(c.info.callback))


def _required_args(c: Command) -> list[str]:
    """A placeholder for each required argument, and for each required option its flag and a placeholder."""
    out: list[str] = []
    for p in c.params:
        if p.default not in (..., inspect.Parameter.empty):
            continue
        out += ["x"] if isinstance(p.info, ArgumentInfo) else [p.flag, "x"] if p.flag else []
    return out


# float options with no lower bound, and why; each is still refused when not finite
UNBOUNDED_BELOW = {("export", "--min-score"): "a --metric such as the return may be negative"}
NUMERIC = [(c, p) for c in COMMANDS for p in c.params if p.flag and p.kind in (int, float)]


def _bad_values(p: Param) -> list[str]:
    bad = ["nan", "inf", "-inf", "1e309", "-1e309"] if p.kind is float else [str(HUGE), str(-HUGE)]
    if p.info.min is not None:
        bad.append(str(p.info.min - 1))
    if p.info.max is not None:
        bad.append(str(p.info.max + 1))
    return bad


def _good_value(p: Param) -> str:
    if p.default not in (None, ..., inspect.Parameter.empty):
        return str(p.default)
    return str(p.info.min if p.info.min is not None else 1)


def test_every_numeric_option_is_found() -> None:
    flags = {(" ".join(c.path), p.flag) for c, p in NUMERIC}
    assert {("demo", "--max-steps"), ("bench", "--pass-threshold"), ("serve", "--idle-s")} <= flags


@pytest.mark.parametrize(("command", "param"), NUMERIC, ids=lambda x: x.flag if isinstance(x, Param) else
                         " ".join(x.path))
def test_numeric_option_has_a_range(command: Command, param: Param) -> None:
    """Every count, seed, port, duration, price or threshold states its bounds (they show in --help)."""
    if (*command.path, param.flag) not in UNBOUNDED_BELOW:
        assert param.info.min is not None, f"{' '.join(command.path)} {param.flag}: no minimum"
    if param.kind is int:
        assert param.info.max is not None, f"{' '.join(command.path)} {param.flag}: no maximum"


@pytest.mark.parametrize(("command", "param"), NUMERIC, ids=lambda x: x.flag if isinstance(x, Param) else
                         " ".join(x.path))
def test_numeric_option_refuses_nonsense(stubbed: None, command: Command, param: Param) -> None:
    assert param.flag is not None
    args = [*command.path, *_required_args(command)]
    ok = runner.invoke(app, [*args, param.flag, _good_value(param)])
    assert ok.exit_code == RAN, f"a sensible value is refused: {ok.output}"  # the harness works
    for value in _bad_values(param):
        result = runner.invoke(app, [*args, f"{param.flag}={value}"])
        where = f"{' '.join(command.path)} {param.flag}={value}"
        assert result.exit_code != RAN, f"{where}: accepted"
        assert result.exit_code == 2, f"{where}: exit {result.exit_code}"
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:"), f"{where}: {result.stderr!r}"
        assert param.flag in lines[0], f"{where}: the error does not name the option: {lines[0]}"


# -- nonsense that only the command itself can see ---------------------------------------------------------
def _one_error(result: Any, pattern: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code not in (0, None), result.output
    assert lines and lines[-1].startswith("error:") and re.search(pattern, lines[-1]), result.stderr
    assert "Traceback" not in result.output


def test_bench_refuses_an_empty_split_name(tmp_path: Any) -> None:
    _one_error(runner.invoke(app, ["bench", "--split", "", "--db", str(tmp_path / "r.sqlite")]), "no split named ''")


def test_bench_refuses_an_empty_record_file(tmp_path: Any) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(app, ["bench", "--split", "debug", "--from-record", str(empty), "-p", "idle",
                                 "--db", str(tmp_path / "r.sqlite")])
    _one_error(result, "empty.jsonl: the record is empty: no episode")
    assert not (tmp_path / "r.sqlite").exists()
