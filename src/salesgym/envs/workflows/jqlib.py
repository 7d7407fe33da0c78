"""jq over the sandbox's state document (``$doc`` is the whole document), through the ``jq`` library (a
dependency of the base install). Every program gets a small prelude of helpers and the instance's
parameters as ``$name`` variables; compiled programs are cached by their text and parameter names. A template's
assertions also run as one batch program (:func:`run_many`): one compilation per template and process, and the
document handed to jq once instead of once per assertion, holding only the tables the batch is proven to read,
and a call that several assertions make on the document computed once (``jqread.py``; where nothing is proven,
the batch as written on the whole document).

A *caller's* program (the HTTP verifier API's ad-hoc assertions) may only read the document and its declared
variables: :func:`refuse_unsafe` refuses, before anything is compiled, every builtin that reaches beyond them
(the environment, files and modules, the program's location, further inputs, the process's streams, its end).
The service also runs such programs in a sandbox worker with an empty environment that can open no file
(``serve/sandbox.py``), so a builtin missed here still finds nothing. This module imports nothing of the family
but ``jqread.py`` (which imports nothing), so that worker starts fast."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from salesgym.envs.workflows import jqread

# The helpers give what their plain definitions give, value for value and error for error (differential tests);
# they are written for jq's interpreter, whose every step counts in a verdict: a probe is downcased once, not
# once per record, and every() runs its filter once per element, not twice.
PRELUDE = """
def ascii_downcase: if type == "string" and (test("[A-Z]") | not) then . else explode
  | map(if 65 <= . and . <= 90 then . + 32 else . end) | implode end;
def _lower($s): if ($s | type) == "string" then $s | ascii_downcase else null end;
def contact($email): ($email | type == "string") as $s | _lower($email) as $le | ($email | if $s then length
  else null end) as $n | .crm.contacts[] | select((.properties.email // "") as $a | if $s and ($a | type) == "string"
  then $a == $email or (($a | length) == $n and ($a | ascii_downcase) == $le)
  else ($a | ascii_downcase) == ($email | ascii_downcase) end);
def crm($type; $id): .crm[$type][] | select(.id == $id);
def assoc($ft; $fid; $tt): [.crm.associations[] | select(.fromObjectType == $ft and .fromId == $fid
  and .toObjectType == $tt)];
def linked($ft; $fid; $tt; $type): [assoc($ft; $fid; $tt)[] | select(.associationTypeId == $type) | .toId];
def engagements($kind; $cid): [linked("contacts"; $cid; $kind; {"notes": 201, "tasks": 203, "meetings": 199}[$kind])[]
  as $eid | .crm[$kind][] | select(.id == $eid)];
def prospect($email): _lower($email) as $le | .sequencer.prospects[] | select(.attributes.emails
  | map(ascii_downcase) | index($le // ($email | ascii_downcase)) != null);
def rel($name): .relationships[$name].data.id;
def states($pid; $sid): [.sequencer.sequence_states[] | select(rel("prospect") == $pid and rel("sequence") == $sid)];
def events_of($email): . as $d | _lower($email) as $le | [$d.scheduler.invitees[] | select((.email
  | ascii_downcase) == ($le // ($email | ascii_downcase))) as $i | $d.scheduler.scheduled_events[]
  | select(.uri == $i.event) | . + {invitee: $i}];
def deal_named($name): .crm.deals[] | select(.properties.dealname == $name);
def deal_linked($name; $tt; $type): . as $doc | [deal_named($name) | .id] | map(. as $d | $doc
  | linked("deals"; $d; $tt; $type)[]);
def every($xs; f): ($xs | length) > 0 and ([$xs[] | f] as $r | ($r | length) == ($xs | length) and ($r | all));
def members($list): [.prospecting.list_members[] | select(.list_id == $list) | .lead_id] | sort;
"""


def _require_jq() -> Any:
    try:
        import jq
    except ImportError as err:  # pragma: no cover - jq is a dependency
        raise ImportError("the workflows verifier needs the jq library, a dependency of salesgym: reinstall "
                          "salesgym, or pip install jq") from err
    return jq


def _program(expr: str, names: tuple[str, ...]) -> Any:
    """``expr`` with each parameter bound to ``$name``: the text depends on the names only, so one compiled
    program serves every instance of a template."""
    binds = "".join(f"($__in.params[{_quote(n)}]) as ${n} | " for n in names)
    return _require_jq().compile(f"{PRELUDE}\n. as $__in | {binds}$__in.doc as $doc | $doc | ({expr})")


_compiled = lru_cache(maxsize=4096)(_program)  # the templates' programs: few, run again and again
_compiled_for_caller = lru_cache(maxsize=64)(_program)  # callers' programs: many, each seldom run twice


def _quote(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"parameter names must be identifiers, got {name!r}")
    return f'"{name}"'


def _input(document: Any, params: dict[str, Any]) -> str:
    """The program's input as JSON text: what ``input_value`` sends, without the spaces after separators (jq's
    parser reads every character: a verdict's state document is most of its cost)."""
    return json.dumps({"doc": document, "params": params}, separators=(",", ":"))


def run(expr: str, document: Any, params: dict[str, Any]) -> list[Any]:
    """Every value ``expr`` outputs on ``document``; a jq compile or runtime error raises ``ValueError``."""
    program = _compiled(expr, tuple(sorted(params)))
    return list(program.input_text(_input(document, params)).all())


def compile_only(expr: str, params: dict[str, Any]) -> None:
    """Raise ``ValueError`` with jq's reason (without the wrapped program's text) if ``expr`` does not compile
    with ``params`` bound; nothing is run."""
    try:
        _compiled(expr, tuple(sorted(params)))
    except ValueError as err:
        raise ValueError(str(err).split(" at <top-level>")[0]) from None


def _batch_head(names: tuple[str, ...]) -> str:
    binds = "".join(f"($__in.params[{_quote(n)}]) as ${n} | " for n in names)
    return f"{PRELUDE}\n. as $__in | {binds}$__in.doc as $doc | "


def batch_text(exprs: tuple[str, ...], names: tuple[str, ...]) -> str:
    """One program for all of ``exprs``: ``[{"ok": [outputs]} or {"error": true}, ...]``."""
    parts = ", ".join(f'(try {{"ok": [$doc | ({e})]}} catch {{"error": true}})' for e in exprs)
    return f"{_batch_head(names)}[{parts}]"


@lru_cache(maxsize=1024)
def _compiled_many(exprs: tuple[str, ...], names: tuple[str, ...]) -> tuple[Any, frozenset[tuple[str, str]] | None]:
    """The batch program with the calls its assertions share computed once (``jqread.share``), and the tables it
    reads (None: it may read more of the document)."""
    text = batch_text(exprs, names)
    reading = jqread.read(text)
    try:
        program = _require_jq().compile(jqread.share(text, reading.shared, len(_batch_head(names))))
    except ValueError:
        program = _require_jq().compile(text)  # jq's own error for the batch as written
    return program, reading.tables


def run_many(exprs: tuple[str, ...], document: Any, params: dict[str, Any]) -> list[list[Any] | None]:
    """Every output of each of ``exprs`` on ``document``, as :func:`run` gives them; None for a program that
    failed (its caller runs it alone for the error's own message). Raises ``ValueError`` when the batch itself
    does not compile (one bad program): then run them one by one."""
    program, tables = _compiled_many(exprs, tuple(sorted(params)))
    if tables is not None:  # the same values and errors, from the tables it reads (jq parses all it is given)
        document = jqread.only(document, tables)
    (out,) = program.input_text(_input(document, params)).all()
    return [r.get("ok") for r in out]


# -- a caller's program: the document and its variables, nothing else ------------------------------------------
UNSAFE = frozenset({
    "ENV", "env",  # the process's environment
    "input", "inputs", "input_filename", "input_line_number",  # further inputs and where they come from
    "import", "include", "modulemeta", "get_search_list", "get_prog_origin", "get_jq_origin",  # files, modules
    "__loc__", "__prog_args",  # the program's own place
    "debug", "stderr",  # the server's streams
    "halt", "halt_error",  # the end of the process
})
_CODE = re.compile(r"""
      (?P<comment>\#[^\r\n]*)
    | (?P<string>")
    | (?P<recurse>\.\.)
    | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
    | (?P<name>\$?[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
    | (?P<open>\()
    | (?P<close>\))
    | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_STRING_BODY = re.compile(r'(?:[^"\\]|\\[^(])*', re.DOTALL)  # up to the closing quote or an interpolation


class UnsafeProgram(ValueError):
    """A caller's jq program that names a builtin reaching beyond the document."""


def code_names(program: str) -> Iterator[str]:
    """Every name a jq program uses as code (functions, variables, keywords), read as jq's lexer reads it:
    comments and string text skipped, string interpolations (``"\\(...)"``) read as code, ``.name`` a field."""
    i, n, depth = 0, len(program), 0
    interpolations: list[int] = []  # the paren depth at which each open interpolation returns to its string
    in_string = False
    while i < n:
        if in_string:
            i = _STRING_BODY.match(program, i).end()  # type: ignore[union-attr]
            if i >= n:
                return
            if program[i] == '"':
                in_string, i = False, i + 1
            else:  # "\(": code until its closing parenthesis
                interpolations.append(depth)
                depth, i, in_string = depth + 1, i + 2, False
            continue
        token = _CODE.match(program, i)
        assert token is not None  # "other" matches any character
        kind, i = token.lastgroup, token.end()
        if kind == "string":
            in_string = True
        elif kind == "name":
            yield from token.group().lstrip("$").split("::")
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if interpolations and depth == interpolations[-1]:
                interpolations.pop()
                in_string = True


def refuse_unsafe(program: str) -> None:
    """Raise :class:`UnsafeProgram` if ``program`` names a builtin of :data:`UNSAFE` anywhere it could run
    (a definition, a binding or an object key of that name too: quote a key, ``{"env": 1}``)."""
    bad = next((name for name in code_names(program) if name in UNSAFE), None)
    if bad is not None:
        shown = {"ENV": "$ENV", "__loc__": "$__loc__", "__prog_args": "$__prog_args"}.get(bad, bad)
        raise UnsafeProgram(f"{shown} is not allowed: a caller's jq only reads the state document and its "
                            f"variables (no {', '.join(sorted({'$ENV', 'env', 'input', 'inputs', '$__loc__'}))}, "
                            "import, include, debug, stderr, halt)")


def run_for_caller(expr: str, document: Any, params: dict[str, Any]) -> list[Any]:
    """:func:`run` for a caller's program, refused first if unsafe (compiled programs cached apart)."""
    refuse_unsafe(expr)
    program = _compiled_for_caller(expr, tuple(sorted(params)))
    return list(program.input_text(_input(document, params)).all())


def compile_for_caller(expr: str, params: dict[str, Any]) -> None:
    """:func:`compile_only` for a caller's program: :class:`UnsafeProgram`, or ``ValueError`` with jq's reason."""
    refuse_unsafe(expr)
    try:
        _compiled_for_caller(expr, tuple(sorted(params)))
    except ValueError as err:
        raise ValueError(str(err).split(" at <top-level>")[0]) from None
