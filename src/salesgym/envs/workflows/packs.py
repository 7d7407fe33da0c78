"""Template packs: workflow templates as data files in a directory the operator holds, loaded by path.

A pack is a directory::

    pack.json                {"format": "salesgym-workflows-pack/1", "name": "acme-private", "description": "...",
                              "order": [ids, optional]}
    fixtures.py              the scenes, Python (optional): fix(builder, rng) -> the instance's parameters
    templates/<id>.json      one template: the blueprint's fields as JSON (``TemplateFile``), or
    templates/<motion>.json  the templates of one sales motion: {"motion": "inbound", "templates": [...]}
                             (``MotionFile``)

The templates' order (a seed draws among them by position) is ``order`` when the manifest gives it (every id
once), else by file name, then as listed in the file. The package's own catalogue is such a directory
(``tasks/catalogue/``, one file per motion, fixtures named ``module:function``; ``package()``), and so is the
pack it ships by name (``tasks/counterparty/``, ``shipped()``).

A template file holds what ``tasks.model.Template`` holds, with the same names: ``id``, ``motion``, ``title``,
``goal``, ``prompt``, ``apps``, ``read_only``, ``requester_role``, ``mechanisms``, ``fixture`` (a function of
the pack's ``fixtures.py`` by name, or ``module:function`` of an importable module), ``steps`` (app, objective,
actions, assertions), ``changes``, ``forbidden``, ``facts``, ``replies``, ``turns``, ``rubrics`` and the reference
``solution``; markers are the model's own plain JSON (``{"$p": "name"}``, ``{"$f": "text {name}"}``,
``{"$out": [i, ".jq"]}``). Every file is validated (unknown or missing fields, wrong types, unknown apps, tools,
operators or fixtures are refused with the file and the field named) and every template is checked like the
package's own (``Template.check``).

A pack's ``fingerprint`` is the sha256 of its files (``pack.json``, ``fixtures.py``, ``templates/*.json``: their
relative paths and contents); a private split over a pack seals the fingerprint into its manifest, so the
benchmark runs it only with the very pack it was cut from. ``fixtures.py`` is executed from the bytes that were
hashed (no bytecode is written into the pack). The public package carries none of a pack's templates, fixtures or
reference solutions.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from salesgym.envs.workflows.tasks.model import (
    CHANGE_KINDS,
    OPERATORS,
    A,
    Act,
    Change,
    FactSpec,
    Fixture,
    Forbidden,
    Reply,
    Rubric,
    Step,
    Template,
    Turn,
)
from salesgym.envs.workflows.tools import TOOLS

FORMAT = "salesgym-workflows-pack/1"
MANIFEST = "pack.json"
FIXTURES = "fixtures.py"
TEMPLATE_DIR = "templates"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_FILE_BYTES = 2_000_000
HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "tasks" / "catalogue"  # the package's own templates, one file per sales motion
COUNTERPARTY = HERE / "tasks" / "counterparty"  # the ``workflows-counterparty`` pack the package ships by name


class PackError(ValueError):
    """A pack that cannot be used; the message names the file and what is wrong (one line)."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path, self.problem = Path(path), problem
        super().__init__(f"{path}: {problem}")


# --- the file format ------------------------------------------------------------------------------------------
class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssertionData(_Data):
    name: str = Field(min_length=1)
    expr: str = Field(min_length=1)
    op: Literal[OPERATORS] = "equals"  # type: ignore[valid-type]
    expected: Any = True


class StepData(_Data):
    app: str
    objective: str
    actions: list[str]
    assertions: list[AssertionData] = Field(min_length=1)


class ChangeData(_Data):
    table: str
    kinds: list[Literal[CHANGE_KINDS]] = ["create"]  # type: ignore[valid-type]
    ids: Any = None
    fields: list[str] | None = None
    most: Any = None


class ForbiddenData(_Data):
    name: str
    tools: list[str] = Field(min_length=1)
    args: str | None = None
    attempted: bool = False


class FactData(_Data):
    key: str
    keywords: list[str] = Field(min_length=1)
    param: str
    requires: list[dict[str, Any]] = []
    hint: str = ""
    holder: str = "requester"
    uses: str | None = None


class ReplyData(_Data):
    keywords: list[str] = Field(min_length=1)
    text: str
    holder: str = "requester"


class TurnData(_Data):
    key: str
    after: list[str] = Field(min_length=1)
    sender: str
    text: str
    sender_key: str = "contact"
    when: str | None = None


class ActData(_Data):
    key: str
    actor: str
    verb: str
    args: dict[str, Any]
    after: list[str] = []
    at: float | None = None
    when: str | None = None
    says: str = ""
    actor_key: str = "contact"


class RubricData(_Data):
    name: str
    target: str
    step: int
    must_mention: list[str | list[str]] = []
    facts: list[tuple[str, Any]] = []
    forbidden_claims: list[tuple[str, str]] = []
    max_len: int | None = None
    tools: list[str] = []
    criteria: str = ""


class CallData(_Data):
    tool: str
    args: dict[str, Any] = {}


class TemplateFile(_Data):
    """One template file (``templates/<id>.json``): the JSON schema of a pack's template is this model's."""

    id: str = Field(pattern=NAME.pattern)
    motion: str
    title: str
    goal: str
    prompt: str
    apps: list[str] = Field(min_length=1)
    fixture: str
    steps: list[StepData] = Field(min_length=1)
    changes: list[ChangeData]
    solution: list[CallData] = Field(min_length=1)
    read_only: list[str] = []
    forbidden: list[ForbiddenData] = []
    facts: list[FactData] = []
    requester_role: str = "your sales manager"
    mechanisms: list[str] = []
    rubrics: list[RubricData] = []
    turns: list[TurnData] = []
    replies: list[ReplyData] = []
    policies: list[str] = []
    actions: list[ActData] = []


class MotionFile(_Data):
    """A file of the templates of one sales motion (``templates/<motion>.json``): each template's ``motion`` is
    the file's."""

    motion: str = Field(pattern=NAME.pattern)
    templates: list[TemplateFile] = Field(min_length=1)


class PackFile(_Data):
    format: Literal["salesgym-workflows-pack/1"]
    name: str = Field(pattern=NAME.pattern)
    description: str = ""
    order: list[str] | None = None  # the templates' order (each id once); default: by file, then within it


def schema() -> dict[str, Any]:
    """The JSON schema of a file of ``templates/``: one template (``TemplateFile``) or one motion's
    (``MotionFile``); ``salesgym templates schema`` prints it for editors."""
    found: dict[str, Any] = TypeAdapter(TemplateFile | MotionFile).json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "salesgym workflow templates file",
            **found}  # fmt: skip


def _t(items: list[Any]) -> tuple[Any, ...]:
    return tuple(items)


def to_template(data: TemplateFile, fixture: Fixture) -> Template:
    """The ``Template`` a validated template file describes."""
    return Template(
        data.id, data.motion, data.title, data.goal, data.prompt, _t(data.apps), fixture,
        tuple(Step(s.app, s.objective, _t(s.actions), tuple(A(a.name, a.expr, a.op, a.expected) for a in s.assertions))
              for s in data.steps),
        tuple(Change(c.table, _t(c.kinds), c.ids, None if c.fields is None else _t(c.fields), c.most)
              for c in data.changes),
        tuple({"tool": c.tool, "args": c.args} for c in data.solution),
        read_only=_t(data.read_only),
        forbidden=tuple(Forbidden(f.name, _t(f.tools), f.args, f.attempted) for f in data.forbidden),
        facts=tuple(FactSpec(f.key, _t(f.keywords), f.param, _t(f.requires), f.hint, f.holder, f.uses)
                    for f in data.facts),
        requester_role=data.requester_role, mechanisms=_t(data.mechanisms),
        rubrics=tuple(Rubric(r.name, r.target, r.step, tuple(m if isinstance(m, str) else tuple(m)
                                                                for m in r.must_mention),
                             tuple((label, v) for label, v in r.facts),
                             tuple((label, v) for label, v in r.forbidden_claims),
                             r.max_len, _t(r.tools), r.criteria) for r in data.rubrics),
        turns=tuple(Turn(t.key, _t(t.after), t.sender, t.text, t.sender_key, t.when) for t in data.turns),
        replies=tuple(Reply(_t(r.keywords), r.text, r.holder) for r in data.replies),
        policies=_t(data.policies),
        actions=tuple(Act(a.key, a.actor, a.verb, a.args, _t(a.after), a.at, a.when, a.says, a.actor_key)
                      for a in data.actions),
    )  # fmt: skip


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):  # (tuples become lists: JSON has no tuple)
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def to_data(template: Template, fixture: str) -> dict[str, Any]:
    """A template as the data a template file holds (``fixture``: how the file names its fixture)."""
    out: dict[str, Any] = {}
    for f in fields(Template):
        value = getattr(template, f.name)
        if f.name == "fixture":
            out["fixture"] = fixture
        elif f.name in ("steps", "changes", "forbidden", "facts", "rubrics", "turns", "replies", "actions"):
            out[f.name] = [{g.name: _plain(getattr(item, g.name)) for g in fields(item)} for item in value]
        else:
            out[f.name] = _plain(value)
    for step in out["steps"]:
        step["assertions"] = [{g.name: _plain(getattr(a, g.name)) for g in fields(A)} for a in step["assertions"]]
    return out


# --- loading --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pack:
    """A loaded pack: its directory, name, fingerprint and templates by id."""

    path: Path
    name: str
    fingerprint: str
    description: str
    templates: Mapping[str, Template]


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise PackError(path, f"larger than {MAX_FILE_BYTES:,} bytes")
        return path.read_bytes()
    except OSError as err:
        raise PackError(path, f"cannot read: {err.strerror or err}") from None


def _json(path: Path, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise PackError(path, f"not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise PackError(path, f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise PackError(path, "invalid JSON: nested too deeply") from None


def _invalid(path: Path, err: ValidationError) -> PackError:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the file"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return PackError(path, f"{where}: {first['msg']}{more}")


def files(directory: Path) -> dict[str, bytes]:
    """The pack's files by relative path (what its fingerprint covers), read once."""
    if not directory.is_dir():
        raise PackError(directory, "no such template pack directory" if not directory.exists()
                        else "a template pack is a directory (pack.json, fixtures.py, templates/*.json)")  # fmt: skip
    if not (directory / MANIFEST).is_file():
        raise PackError(directory, f"not a template pack: no {MANIFEST} (see docs/workflows.md, 'Template packs')")
    out = {MANIFEST: _read(directory / MANIFEST)}
    if (directory / FIXTURES).is_file():
        out[FIXTURES] = _read(directory / FIXTURES)
    for path in sorted((directory / TEMPLATE_DIR).glob("*.json")):
        out[f"{TEMPLATE_DIR}/{path.name}"] = _read(path)
    return out


def fingerprint(found: Mapping[str, bytes]) -> str:
    digest = hashlib.sha256(b"salesgym-workflows-pack/1\0")
    for name in sorted(found):
        digest.update(name.encode() + b"\0" + hashlib.sha256(found[name]).digest())
    return digest.hexdigest()


def _fixtures_module(directory: Path, source: bytes | None, tag: str) -> types.ModuleType | None:
    if source is None:
        return None
    name = f"salesgym_pack_{tag}"
    module = types.ModuleType(name)
    module.__file__ = str(directory / FIXTURES)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        exec(compile(source, str(directory / FIXTURES), "exec"), module.__dict__)  # the operator's own code
    except Exception as err:  # any failure of the pack's code is the pack's problem, reported in one line
        del sys.modules[name]
        raise PackError(directory / FIXTURES, f"cannot load: {type(err).__name__}: {err}") from None
    return module


def _fixture(path: Path, ref: str, module: types.ModuleType | None) -> Fixture:
    if ":" in ref:
        mod_name, _, attr = ref.partition(":")
        try:
            found = getattr(importlib.import_module(mod_name), attr, None)
        except ImportError:
            found = None
    else:
        found = getattr(module, ref, None) if module is not None else None
    if not callable(found):
        where = f"module {ref.partition(':')[0]}" if ":" in ref else f"the pack's {FIXTURES}"
        raise PackError(path, f"fixture: no function {ref.rpartition(':')[2]!r} in {where}")
    fixture: Fixture = found
    return fixture


def _check_template(path: Path, data: TemplateFile, template: Template, own: bool) -> None:
    if not own and data.id in package():
        raise PackError(path, f"id {data.id!r} is a template of the package: a pack's templates need their own ids")
    tools = [c.tool for c in data.solution] + [t for f in data.forbidden for t in f.tools]
    tools += [t for s in data.steps for t in s.actions] + [t for r in data.rubrics for t in r.tools]
    unknown = sorted({t for t in tools if t not in TOOLS.specs})
    if unknown:
        raise PackError(path, f"unknown tool(s) {', '.join(unknown)}")
    try:
        template.check()
    except ValueError as err:
        raise PackError(path, str(err)) from None


def _templates_of(file: Path, content: bytes) -> list[TemplateFile]:
    """The templates a file holds: one (``<id>.json``) or those of one motion (``<motion>.json``)."""
    raw = _json(file, content)
    try:
        if isinstance(raw, dict) and "templates" in raw:
            motion = MotionFile.model_validate(raw)
            if file.stem != motion.motion:
                raise PackError(file, f"motion {motion.motion!r} must match the file name ({file.stem}.json)")
            for i, data in enumerate(motion.templates):
                if data.motion != motion.motion:
                    raise PackError(file, f"templates.{i}.motion: {data.id} is {data.motion!r} in the "
                                    f"{motion.motion!r} file")  # fmt: skip
            return motion.templates
        data = TemplateFile.model_validate(raw)
    except ValidationError as err:
        raise _invalid(file, err) from None
    if file.stem != data.id:
        raise PackError(file, f"id {data.id!r} must match the file name ({file.stem}.json)")
    return [data]


def _ordered(path: Path, templates: dict[str, Template], order: list[str] | None) -> dict[str, Template]:
    if order is None:
        return templates
    if len(set(order)) != len(order) or set(order) != set(templates):
        twice = sorted({t for t in order if order.count(t) > 1})
        unknown, missing = sorted(set(order) - set(templates)), sorted(set(templates) - set(order))
        problem = (f"lists {', '.join(twice)} twice" if twice else f"names no template {', '.join(unknown)}"
                   if unknown else f"misses {', '.join(missing)}")  # fmt: skip
        raise PackError(path / MANIFEST, f"order: {problem} (it lists every template id once)")
    return {t: templates[t] for t in order}


def load(directory: Path | str) -> Pack:
    """The pack in ``directory``, validated (``PackError`` says what is wrong); cached by its fingerprint."""
    return _read_pack(Path(directory).resolve(), own=False)


def _read_pack(path: Path, own: bool) -> Pack:
    """The pack at ``path`` (``own``: the package's catalogue itself, whose ids are the package's)."""
    found = files(path)
    return _load(path, fingerprint(found), tuple(sorted(found.items())), own=own)


@lru_cache(maxsize=16)
def _load(path: Path, print_: str, found: tuple[tuple[str, bytes], ...], own: bool) -> Pack:
    raw = dict(found)
    try:
        head = PackFile.model_validate(_json(path / MANIFEST, raw[MANIFEST]))
    except ValidationError as err:
        raise _invalid(path / MANIFEST, err) from None
    module = _fixtures_module(path, raw.get(FIXTURES), print_[:16])
    templates: dict[str, Template] = {}
    for name, content in raw.items():
        if not name.startswith(f"{TEMPLATE_DIR}/"):
            continue
        file = path / name
        for data in _templates_of(file, content):
            if data.id in templates:
                raise PackError(file, f"id {data.id!r} is defined twice in the pack")
            template = to_template(data, _fixture(file, data.fixture, module))
            _check_template(file, data, template, own)
            templates[data.id] = template
    if not templates:
        raise PackError(path / TEMPLATE_DIR, "the pack has no template (templates/<id>.json)")
    return Pack(path, head.name, print_, head.description, _ordered(path, templates, head.order))


@lru_cache(maxsize=1)
def package() -> Mapping[str, Template]:
    """The package's templates by id, in the catalogue's order (the seed's draw, the splits): the data files of
    ``tasks/catalogue/``, read and validated once per process."""
    return _read_pack(PACKAGE, own=True).templates


@lru_cache(maxsize=1)
def shipped() -> Mapping[str, Pack]:
    """The packs the package ships by name (not in the catalogue the seed draws from): ``workflows-counterparty``,
    templates with policy documents and simulated people who act (``tasks/counterparty/``). A caller names them,
    never a directory, so a service may offer them (a directory's pack runs its own fixtures.py)."""
    pack = _read_pack(COUNTERPARTY, own=False)
    return {pack.name: pack}


def builtin() -> Mapping[str, Mapping[str, Template]]:
    """The templates of each shipped pack (:func:`shipped`), by pack name."""
    return {name: pack.templates for name, pack in shipped().items()}


def shipped_with(template: str) -> str | None:
    """The name of the shipped pack holding ``template`` (None: none does; a package id is never in one)."""
    return next((name for name, pack in shipped().items() if template in pack.templates), None)


def catalogue(pack: str | None) -> Mapping[str, Template]:
    """The templates an environment draws from: the package's, a pack it ships (by name), or the pack at
    ``pack`` (a directory)."""
    if pack is None:
        return package()
    return builtin().get(pack) or load(pack).templates
