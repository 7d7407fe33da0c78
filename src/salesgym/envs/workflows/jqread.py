"""Which tables of the state document a jq program reads, proven from its text: a template's batch program
(``jqlib.run_many``) is then handed only those tables, and jq parses a fraction of the document.

The program is parsed as jq parses it (the part of jq the templates, the prelude and the batch use) and run
abstractly on its input ``{"doc", "params"}``. An abstract value is that input, the document, one app of the
document, a constant, one parameter, or *plain*: any other value, which neither is nor holds any of the first
three. The input,
the document and an app may only be looked into by a constant key (``.crm.contacts``, ``.crm[$kind]`` with
``$kind`` bound to a constant), bound to a variable, piped on, or handed to a function the program defines: an
app looked into by a constant key is a table the program reads. Everything else done with them (iterating,
comparing, a builtin over them, a key known only at run time, putting them into a value, printing them in an
error), and every construct this parser does not know (``..``, ``reduce``, string interpolation, formats,
destructuring, ``$__loc__``, ``input``, ``getpath``, ``keys``, comments, ...) gives ``None``: the whole document.
Such a program never sees the document or an app as a value, only the tables it names, so on a document that
holds just those tables it computes the same values and raises the same errors (differential tests,
``tests/workflows/test_workflows_jqread.py``).

The same run finds the calls several assertions make alike: a helper defined where ``$doc`` is bound, called on
the document itself with constants or parameters, gives the same outputs and error wherever it is written, so
:func:`share` makes it once there and replays it in each place."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Node = tuple[Any, ...]  # ("kind", ...): see _Parser
# ("input",) ("doc",) ("app", name) ("const", value) ("params",) ("param", name) ("plain",)
Value = tuple[Any, ...]
INPUT, DOC, PARAMS, PLAIN = ("input",), ("doc",), ("params",), ("plain",)
WHOLE = frozenset({"input", "doc", "app"})  # values that hold (part of) the document beyond one table

# builtins whose result is not a function of their input and arguments, or that walk a value's keys or paths:
# never needed by the templates, so never reasoned about
DYNAMIC = frozenset({"input", "inputs", "input_filename", "input_line_number", "debug", "stderr", "halt",
                     "halt_error", "env", "getpath", "paths", "leaf_paths", "path", "pick", "recurse", "keys",
                     "keys_unsorted", "to_entries", "tostream", "del", "delpaths", "setpath",
                     "modulemeta", "get_search_list", "get_prog_origin", "get_jq_origin", "splits"})  # fmt: skip


class Unproven(Exception):
    """The program does something this analysis cannot prove reads only named tables."""


class Reading(NamedTuple):
    """What a program reads: ``tables``, every ``(app, table)`` (None: it may read more of the document than tables
    named by constants); ``shared``, the ``(start, end)`` of each call that may be computed once where ``$doc`` is
    bound (``$__in.doc as $doc | HERE``) and its outputs and error replayed where it was written: a call of a
    function defined there, on the document itself, whose arguments are constants or the same parameters there."""

    tables: frozenset[tuple[str, str]] | None
    shared: tuple[tuple[int, int], ...] = ()


def read(program: str) -> Reading:
    """What ``program``, run on ``{"doc": document, "params": {...}}``, reads."""
    try:
        reader = _Reader()
        reader.plain(reader.ev(_Parser(program).program(), INPUT, {}))
    except (Unproven, RecursionError):
        return Reading(None)
    return Reading(frozenset(reader.tables), tuple(sorted(span for span, ok in reader.shared.items() if ok)))


def only(document: Any, tables: frozenset[tuple[str, str]]) -> Any:
    """``document`` with just ``tables`` (those it has) under their apps."""
    if not isinstance(document, dict):
        return document
    out: dict[str, Any] = {}
    for app, name in tables:
        if app in document:
            part = document[app]
            if not isinstance(part, dict):
                out[app] = part
            elif name in part:
                out.setdefault(app, {})[name] = part[name]
            else:
                out.setdefault(app, {})
    return out


def share(text: str, spans: tuple[tuple[int, int], ...], start: int) -> str:
    """``text`` with every call at ``spans`` after ``start`` whose text is written twice or more (``Reading.shared``)
    computed once at ``start``, on ``$doc``, and replayed where it was written: its outputs, then its error if it
    raised one (jq's ``try`` keeps a generator's outputs before its error), so each place sees what it saw."""
    if "__shared" in text:  # a program's own variable of that name would be shadowed
        return text
    sites = [(a, b) for a, b in spans if a >= start]
    counts = Counter(text[a:b] for a, b in sites)
    names = {call: f"$__shared{i}" for i, call in enumerate(c for c, n in counts.items() if n > 1)}
    out = [text[:start]] + [f'($doc | [try ({call} | [.]) catch ["error", .]]) as {name} | '
                            for call, name in names.items()]  # fmt: skip
    last = start
    for a, b in sites:
        if text[a:b] in names:
            out += [text[last:a], f"({names[text[a:b]]}[] | if length == 1 then .[0] else error(.[1]) end)"]
            last = b
    return "".join(out) + text[last:]


# --- the parser -------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
      (?P<space>\s+)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
    | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>\?//|\.\.|[!=<>]=|[|+\-*/%]=|//=?|[.\[\](){}|,:;=<>+\-*/%?])
""", re.VERBOSE | re.DOTALL)
_KEYWORDS = frozenset({"as", "def", "if", "then", "elif", "else", "end", "and", "or", "reduce", "foreach", "try",
                       "catch", "label", "import", "include", "__loc__"})  # fmt: skip
_BINDING = {"or": 1, "and": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "*": 5, "/": 5,
            "%": 5}  # how tightly each operator binds: all to the left, the comparisons not chained  # fmt: skip


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise Unproven(f"unknown character {text[i]!r}")  # comments, formats, ...
        i = m.end()
        if m.lastgroup != "space":
            yield m.lastgroup or "", m.group(), m.start()


class _Parser:
    """Nodes: ("id",) ("field", of, name) ("index", of, key) ("iter", of) ("slice", of, lo | None, hi | None)
    ("try", body, catch | None)
    ("pipe", a, b) ("comma", a, b) ("lit", value) ("array", body | None) ("object", [(key, value)])
    ("bin", op, a, b) ("alt", a, b) ("if", [(cond, then)], else | None) ("bind", source, name, body)
    ("var", name) ("def", name, params, body, rest) ("call", name, args, (start, end) in the text)."""

    def __init__(self, text: str) -> None:
        tokens = list(_tokens(text))
        self.toks = [(kind, text) for kind, text, _ in tokens]
        self.ends = [start + len(text) for _, text, start in tokens]
        self.starts = [start for _, _, start in tokens]
        self.i = 0

    def program(self) -> Node:
        node = self.pipe()
        if self.i != len(self.toks):
            raise Unproven(f"unexpected {self.peek()[1]!r}")
        return node

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else ("end", "")

    def at(self, *texts: str) -> bool:
        kind, text = self.peek()
        return kind in ("op", "ident") and text in texts

    def take(self, text: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok[0] == "end" or (text is not None and (tok[0] not in ("op", "ident") or tok[1] != text)):
            raise Unproven(f"expected {text!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def pipe(self) -> Node:  # '|' binds loosest, to the right
        left = self.comma()
        return ("pipe", left, self.pipe()) if self.at("|") and self.take() else left

    def comma(self) -> Node:
        node = self.alt()
        while self.at(","):
            self.take()
            node = ("comma", node, self.alt())
        return node

    def alt(self) -> Node:  # '//' to the right; the assignments (same level) are not read
        left = self.binary()
        return ("alt", left, self.alt()) if self.at("//") and self.take() else left

    def binary(self, least: int = 1) -> Node:  # operators binding at least as tightly as ``least``
        node = self.postfix()
        while True:
            kind, op = self.peek()
            binding = _BINDING.get(op, 0) if kind in ("op", "ident") else 0
            if binding < least:
                return node
            self.take()
            node = ("bin", op, node, self.binary(binding + 1))
            if binding == 3 and _BINDING.get(self.peek()[1]) == 3 and self.peek()[0] == "op":
                raise Unproven("comparisons do not chain")

    def postfix(self, binding: bool = True) -> Node:
        node = self.primary()
        while True:
            kind, text = self.peek()
            if kind == "field":
                self.take()
                node = ("field", node, text[1:])
            elif self.at(".") and self.peek(1)[0] == "string":
                self.take()
                node = ("field", node, self.string(self.take()[1]))
            elif self.at(".") and self.peek(1) == ("op", "["):
                self.take()
            elif self.at("["):
                self.take()
                if self.at("]"):
                    node = ("iter", node)
                else:
                    key = None if self.at(":") else self.pipe()
                    if self.at(":"):  # a slice
                        self.take()
                        node = ("slice", node, key, None if self.at("]") else self.pipe())
                    else:
                        node = ("index", node, key)
                self.take("]")
            elif self.at("?"):
                self.take()
                node = ("try", node, None)
            else:
                break
        if binding and self.at("as"):
            self.take()
            kind, name = self.take()
            if kind != "var":
                raise Unproven("destructuring")
            self.take("|")
            node = ("bind", node, name[1:], self.pipe())
        return node

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "string":
            return ("lit", self.string(text))
        if kind == "number":
            return ("lit", float(text) if set(text) & set(".eE") else int(text))
        if kind == "field":
            return ("field", ("id",), text[1:])
        if kind == "var":
            return ("var", text[1:])
        if kind == "ident":
            return self.word(text)
        if text == ".":
            return ("field", ("id",), self.string(self.take()[1])) if self.peek()[0] == "string" else ("id",)
        if text == "(":
            node = self.pipe()
            self.take(")")
            return node
        if text == "[":
            body = None if self.at("]") else self.pipe()
            self.take("]")
            return ("array", body)
        if text == "{":
            return self.object()
        raise Unproven(f"unexpected {text!r}")  # '..', unary minus, ...

    def word(self, text: str) -> Node:
        if text == "if":
            branches = []
            while True:
                cond = self.pipe()
                self.take("then")
                branches.append((cond, self.pipe()))
                if not self.at("elif"):
                    break
                self.take()
            otherwise = self.pipe() if self.at("else") and self.take() else None
            self.take("end")
            return ("if", branches, otherwise)
        if text == "try":
            body = self.postfix(binding=False)
            node = ("try", body, self.postfix(binding=False) if self.at("catch") and self.take() else None)
            if self.at("as"):
                raise Unproven("try ... as")  # jq reads the binding into the body
            return node
        if text == "def":
            name_kind, name = self.take()
            params: list[str] = []
            if self.at("("):
                self.take()
                while True:
                    kind, param = self.take()
                    if kind not in ("var", "ident"):
                        raise Unproven("a parameter")
                    params.append(param)
                    if not self.at(";"):
                        break
                    self.take()
                self.take(")")
            self.take(":")
            body = self.pipe()
            self.take(";")
            if name_kind != "ident" or name in _KEYWORDS:
                raise Unproven("a definition's name")
            return ("def", name, tuple(params), body, self.pipe())
        if text in _KEYWORDS:
            raise Unproven(f"{text!r}")
        start = self.starts[self.i - 1]
        args: list[Node] = []
        if self.at("("):
            self.take()
            args.append(self.pipe())
            while self.at(";"):
                self.take()
                args.append(self.pipe())
            self.take(")")
        return ("call", text, tuple(args), (start, self.ends[self.i - 1]))

    def object(self) -> Node:
        pairs: list[tuple[Node, Node]] = []
        while not self.at("}"):
            kind, text = self.take()
            if kind == "var":  # {$x}: {"x": $x}; {$x: v} keys by $x's value: not read
                pairs.append((("lit", text[1:]), ("var", text[1:])))
                if self.at(":"):
                    raise Unproven("a key from a variable")
            elif kind in ("ident", "string") or (kind, text) == ("op", "("):
                if text == "(":
                    key = self.pipe()
                    self.take(")")
                else:
                    key = ("lit", text if kind == "ident" else self.string(text))
                if self.at(":"):
                    self.take()
                    value = self.postfix(binding=False)
                    while self.at("|"):
                        self.take()
                        value = ("pipe", value, self.postfix(binding=False))
                elif key[0] == "lit":
                    value = ("field", ("id",), key[1])  # {a}: {"a": .a}
                else:
                    raise Unproven("a computed key without a value")
                pairs.append((key, value))
            else:
                raise Unproven(f"unexpected {text!r} in an object")
            if not self.at("}"):
                self.take(",")
        self.take("}")
        return ("object", pairs)

    @staticmethod
    def string(text: str) -> str:
        try:
            value = json.loads(text)  # jq's escapes are JSON's, but for "\(...)" (interpolation: refused here)
        except ValueError:
            raise Unproven("a string with interpolation") from None
        if not isinstance(value, str):
            raise Unproven("a string")
        return value


# --- the abstract run -------------------------------------------------------------------------------------------
@dataclass
class _Def:
    params: tuple[str, ...]
    body: Node
    env: dict[Any, Any] = field(default_factory=dict)


@dataclass
class _Arg:  # a filter argument: its text and the place where it was written
    node: Node
    env: dict[Any, Any]


class _Reader:
    CALLS = 10_000  # calls inlined before giving up (recursion)

    def __init__(self) -> None:
        self.tables: set[tuple[str, str]] = set()
        self.calls = 0
        self.top: dict[Any, Any] | None = None  # the scope where $doc is bound to the document
        self.shared: dict[tuple[int, int], bool] = {}  # each call's place: shareable wherever it ran

    def plain(self, value: Value) -> Value:
        if value[0] in WHOLE:
            raise Unproven("the document used as a value")
        return PLAIN

    def join(self, a: Value, b: Value) -> Value:
        """What either of two places may output."""
        if a == b:
            return a
        self.plain(a)
        return self.plain(b)

    def look(self, of: Value, key: Value) -> Value:
        """``of[key]``."""
        if of[0] not in WHOLE:
            self.plain(key)
            return ("param", key[1]) if of == PARAMS and key[0] == "const" else PLAIN
        if key[0] != "const" or not isinstance(key[1], str):
            raise Unproven("a key known only at run time")
        if of == INPUT:
            if key[1] not in ("doc", "params"):
                raise Unproven("the input's other keys")
            return DOC if key[1] == "doc" else PARAMS
        if of == DOC:
            return ("app", key[1])
        self.tables.add((of[1], key[1]))
        return PLAIN

    def ev(self, node: Node, inp: Value, env: dict[Any, Any]) -> Value:
        kind = node[0]
        if kind == "id":
            return inp
        if kind == "field":
            return self.look(self.ev(node[1], inp, env), ("const", node[2]))
        if kind == "index":  # the key is computed from the same input as the value indexed
            return self.look(self.ev(node[1], inp, env), self.ev(node[2], inp, env))
        if kind in ("iter", "slice"):  # the bounds are computed from the same input as the value sliced
            for part in node[1:]:
                if part is not None:
                    self.plain(self.ev(part, inp, env))
            return PLAIN
        if kind == "try":  # the error caught is plain: an error made of the document was refused where it was made
            body = self.ev(node[1], inp, env)
            return body if node[2] is None else self.join(body, self.ev(node[2], PLAIN, env))
        if kind == "pipe":
            return self.ev(node[2], self.ev(node[1], inp, env), env)
        if kind == "comma":
            return self.join(self.ev(node[1], inp, env), self.ev(node[2], inp, env))
        if kind == "lit":
            return ("const", node[1])
        if kind == "array":
            return PLAIN if node[1] is None else self.plain(self.ev(node[1], inp, env))
        if kind == "object":
            for key, value in node[1]:
                self.plain(self.ev(key, inp, env))
                self.plain(self.ev(value, inp, env))
            return PLAIN
        if kind in ("bin", "alt"):
            for part in node[-2:]:
                self.plain(self.ev(part, inp, env))
            return PLAIN
        if kind == "if":
            out: Value | None = None
            for cond, then in node[1]:
                self.plain(self.ev(cond, inp, env))
                value = self.ev(then, inp, env)
                out = value if out is None else self.join(out, value)
            assert out is not None
            return self.join(out, inp if node[2] is None else self.ev(node[2], inp, env))
        if kind == "bind":
            value = self.ev(node[1], inp, env)
            inner = {**env, "$" + node[2]: value}
            if self.top is None and (node[2], value) == ("doc", DOC):
                self.top = inner
            return self.ev(node[3], inp, inner)
        if kind == "var":
            if "$" + node[1] not in env:
                raise Unproven(f"${node[1]}")  # $__loc__, $ENV, ...
            return env["$" + node[1]]  # type: ignore[no-any-return]
        if kind == "def":
            d = _Def(node[2], node[3])
            d.env = {**env, (node[1], len(node[2])): d}  # it sees itself
            return self.ev(node[4], inp, d.env)
        return self.call(node, inp, env)

    def call(self, node: Node, inp: Value, env: dict[Any, Any]) -> Value:
        _, name, args, span = node
        f = env.get((name, len(args)))
        if f is not None:
            self.calls += 1
            if self.calls > self.CALLS:
                raise Unproven("too many calls")
        if isinstance(f, _Arg):
            return self.ev(f.node, inp, f.env)
        if isinstance(f, _Def):
            self.shared[span] = self.shared.get(span, True) and self.shareable(f, node, inp, env)
            local = dict(f.env)
            for param, arg in zip(f.params, args, strict=True):
                if param.startswith("$"):  # def f($a): a value, and a filter of the same name
                    local["$" + param[1:]] = self.ev(arg, inp, env)
                    local[(param[1:], 0)] = _Arg(arg, env)
                else:
                    local[(param, 0)] = _Arg(arg, env)
            return self.ev(f.body, inp, local)
        if name in ("true", "false", "null") and not args:
            return ("const", {"true": True, "false": False, "null": None}[name])
        if name in DYNAMIC:
            raise Unproven(name)
        # a builtin: a function of its input and its arguments, which run on the input or values made from it
        self.plain(inp)
        for arg in args:
            self.plain(self.ev(arg, PLAIN, env))
        return PLAIN

    def shareable(self, f: _Def, node: Node, inp: Value, env: dict[Any, Any]) -> bool:
        """Whether the call gives what the same text gives at the top scope: on the document, the same function,
        and each argument a constant or a parameter there too."""
        if inp != DOC or self.top is None or self.top.get((node[1], len(node[2]))) is not f:
            return False
        return all(arg[0] == "lit" or (arg[0] == "var" and env.get("$" + arg[1], PLAIN)[0] == "param"
                                       and env.get("$" + arg[1]) == self.top.get("$" + arg[1]))
                   for arg in node[2])  # fmt: skip
