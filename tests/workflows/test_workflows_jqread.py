"""The tables a template's batch program reads and the calls its assertions share (``jqread.py``): the batch gets
only those tables and makes each shared call once, and gives the same values and errors as the batch as written
on the whole document; anything the analysis cannot prove gets the batch as written and the whole document."""

from __future__ import annotations

import json
import random
from typing import Any

import jq
import pytest
from tests.workflows.wf_helpers import play_reference, workflow

from salesgym.envs.workflows import jqlib, jqread
from salesgym.envs.workflows.state import document
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.envs.workflows.tools import OWNER_OF_TABLE


def _batch(template: str) -> tuple[tuple[str, ...], dict[str, Any], frozenset[tuple[str, str]] | None]:
    secret = workflow(template, seed=1)._world.secret
    exprs = tuple(a["expr"] for s in secret.steps for a in s["assertions"])
    return exprs, dict(secret.params), jqlib._compiled_many(exprs, tuple(sorted(secret.params)))[1]


def _texts(exprs: tuple[str, ...], names: tuple[str, ...]) -> tuple[Any, Any, frozenset[tuple[str, str]] | None]:
    """The batch as written and as run (its shared calls made once), each with the errors' messages, and the
    tables it reads."""
    text = jqlib.batch_text(exprs, names).replace('catch {"error": true}', 'catch {"error": .}')
    reading = jqread.read(text)
    shared = jqread.share(text, reading.shared, len(jqlib._batch_head(names)))
    return jq.compile(text), jq.compile(shared), reading.tables


def _documents(template: str, tables: frozenset[tuple[str, str]]) -> list[dict[str, Any]]:
    """The instance's document at its start, half-way through its reference solution and at its end; and the end
    with each table the batch reads emptied, made a string and made a list of a number (errors with values)."""
    env = workflow(template, seed=1)
    docs = [document(env._state.tables, OWNER_OF_TABLE)]
    play_reference(env, len(env._world.secret.solution) // 2)
    docs.append(document(env._state.tables, OWNER_OF_TABLE))
    env = workflow(template, seed=1)
    play_reference(env)
    end = document(env._state.tables, OWNER_OF_TABLE)
    docs.append(end)
    for app, name in sorted(tables):
        docs += [{**end, app: {**end[app], name: broken}} for broken in ([], "broken", [7])]
    return docs


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_templates_batch_gives_on_the_tables_it_reads_what_it_gives_on_the_whole_document(template: str) -> None:
    exprs, params, tables = _batch(template)
    assert tables is not None  # every template's programs are proven to read named tables only
    written, run, _ = _texts(exprs, tuple(sorted(params)))
    errors = 0
    for doc in _documents(template, tables):
        whole = written.input_text(jqlib._input(doc, params)).first()
        assert run.input_text(jqlib._input(jqread.only(doc, tables), params)).first() == whole
        assert jqlib.run_many(exprs, doc, params) == [r.get("ok") for r in whole]
        errors += sum("error" in r for r in whole)
    assert errors  # the broken tables made some programs fail: their messages were compared too


KINDS = {"id", "field", "index", "iter", "slice", "try", "pipe", "comma", "alt", "lit", "array", "object", "bin", "if",
         "bind", "var", "def", "call"}


def _text(node: Any) -> str:
    """A parsed program written back with every part in parentheses (the parse made explicit)."""
    kind, *rest = node
    t = [_text(part) if isinstance(part, tuple) and part and isinstance(part[0], str) and part[0] in KINDS else part
         for part in rest]
    if kind == "id":
        return "."
    if kind == "field":
        return f"({t[0]})[{json.dumps(t[1])}]"
    if kind == "index":
        return f"({t[0]})[{t[1]}]"
    if kind == "iter":
        return f"({t[0]})[]"
    if kind == "slice":
        return f"({t[0]})[{'' if rest[1] is None else t[1]}:{'' if rest[2] is None else t[2]}]"
    if kind == "try":
        return f"(try ({t[0]})" + ("" if rest[1] is None else f" catch ({t[1]})") + ")"
    if kind in ("pipe", "comma", "alt"):
        return f"(({t[0]}) {dict(pipe='|', comma=',', alt='//')[kind]} ({t[1]}))"
    if kind == "lit":
        return json.dumps(rest[0])
    if kind == "array":
        return "[]" if rest[0] is None else f"[{t[0]}]"
    if kind == "object":
        return "{" + ", ".join(f"({_text(k)}): ({_text(v)})" for k, v in rest[0]) + "}"
    if kind == "bin":
        return f"(({t[1]}) {rest[0]} ({t[2]}))"
    if kind == "if":
        branches = " elif ".join(f"({_text(c)}) then ({_text(b)})" for c, b in rest[0])
        return f"(if {branches} else ({'.' if rest[1] is None else _text(rest[1])}) end)"
    if kind == "bind":
        return f"(({t[0]}) as ${rest[1]} | ({t[2]}))"
    if kind == "var":
        return f"${rest[0]}"
    if kind == "def":
        params = f"({'; '.join(rest[1])})" if rest[1] else ""
        return f"(def {rest[0]}{params}: {t[2]}; {t[3]})"
    assert kind == "call"
    return rest[0] + (f"({'; '.join(f'({_text(a)})' for a in rest[1])})" if rest[1] else "")


@pytest.mark.parametrize("template", sorted(TEMPLATES)[::5])
def test_the_analysis_parses_every_templates_batch_as_jq_does(template: str) -> None:
    exprs, params, tables = _batch(template)
    text = jqlib.batch_text(exprs, tuple(sorted(params))).replace('catch {"error": true}', 'catch {"error": .}')
    explicit = jq.compile(_text(jqread._Parser(text).program()))
    for doc in _documents(template, tables or frozenset())[::3]:
        given = jqlib._input(doc, params)
        assert explicit.input_text(given).all() == jq.compile(text).input_text(given).all()


def _read(expr: str) -> frozenset[tuple[str, str]] | None:
    return jqread.read(jqlib.batch_text((expr,), ("e", "t"))).tables


@pytest.mark.parametrize(("expr", "tables"), [
    (".crm.contacts | length", {("crm", "contacts")}),
    ('.crm["contacts"][0], $doc.sequencer.prospects', {("crm", "contacts"), ("sequencer", "prospects")}),
    ('. as $d | "deals" as $k | $d.crm[$k] | map(.id)', {("crm", "deals")}),
    ("$__in.doc.scheduler.invitees", {("scheduler", "invitees")}),
    ("contact($e) | .id", {("crm", "contacts")}),
    ('engagements("notes"; $e)', {("crm", "associations"), ("crm", "notes")}),
    ('def f($k): .crm[$k]; f("tasks") | length', {("crm", "tasks")}),
    ("def f(g): g | length; f(.crm.deals)", {("crm", "deals")}),
    ("every($t; . as $x | $doc | contact($x))", {("crm", "contacts")}),
    (".crm.nothing, .nowhere.at_all", {("crm", "nothing"), ("nowhere", "at_all")}),
    ('try (.crm.deals | error) catch ., (.crm.contacts[]? | .properties.email) // "x"', {("crm", "deals"),
                                                                                       ("crm", "contacts")}),
    ("[.crm.contacts[:2][] | {id, e: .properties.email}]", {("crm", "contacts")}),
    ("1", set()),
])  # fmt: skip
def test_tables_read_by_constant_keys_are_found(expr: str, tables: set[tuple[str, str]]) -> None:
    assert _read(expr) == frozenset(tables)


@pytest.mark.parametrize("expr", [
    ".", "$doc", "$__in", "keys", ".crm | keys", "to_entries", "..", "[paths]", 'getpath(["crm", "contacts"])',
    "$__loc__", "input", "[inputs]", ".[$t]", ".crm[$t]", '.crm["con" + "tacts"]', '.crm[("deals", "tasks")]',
    '"\\(.crm)"', "@json", ".crm # a comment", ".crm[]", "[.crm]", "{a: .crm}", "{crm}", ".crm + {}", "tojson",
    ".crm == {}", ". as [$a] | $a", ". as {crm: $c} | $c.contacts", "reduce .crm.contacts[] as $c (.; .)",
    "def f: .; f | keys", "def f(g): g; f(.) | length", "def f: f; f", "try error($doc) catch .", "error(.)",
    ".crm // 1", "if . then 1 else 2 end", "if .crm.x then .crm else 1 end", "path(.crm.contacts)", "del(.crm)",
    ".crm |= .", "first(.)", 'ltrimstr("x")', "$ENV", "env", "label $out | .crm", ".crm[0]", "-.crm",
    "[.[]?]", "(.crm, .crm) | length", ".crm as $c | $c | length", "def contact($x): $doc; contact(1)",
    "$t as $k | .crm[$k]", "[limit(1; .)]", "splits(.)", "{(.crm.contacts[0].id): .}", "not", "length",
])  # fmt: skip
def test_anything_else_falls_back_to_the_whole_document(expr: str) -> None:
    assert _read(expr) is None


def test_a_program_that_falls_back_sees_the_whole_document() -> None:
    doc = {"crm": {"contacts": [], "deals": []}, "scheduler": {"invitees": []}}
    assert jqlib.run_many(("keys", ".crm | keys", ".crm.deals"), doc, {}) == [
        [["crm", "scheduler"]], [["contacts", "deals"]], [[]]]  # fmt: skip
    assert jqlib.run_many((".crm.deals", "[.crm.contacts, .scheduler.nothing]"), doc, {}) == [[[]], [[[], None]]]


def test_the_batch_is_handed_only_the_tables_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    real = jqlib._input
    monkeypatch.setattr(jqlib, "_input", lambda document, params: seen.append(document) or real(document, params))
    doc = {"crm": {"contacts": [{"id": "1"}], "deals": [{"id": "2"}]}, "scheduler": {"invitees": [3]}}
    assert jqlib.run_many((".crm.deals | length", "$doc.scheduler.invitees"), doc, {}) == [[1], [[3]]]
    assert seen == [{"crm": {"deals": [{"id": "2"}]}, "scheduler": {"invitees": [3]}}]


def _program(rnd: random.Random, depth: int = 0) -> str:
    """A random jq program over a small document: table reads, the document used as a value, bindings,
    definitions, generators, errors, the prelude's helpers (shared calls among them)."""
    provable = [".crm.contacts", '.crm["deals"]', ".sequencer.prospects", "$doc.crm.notes", "$x", '"contacts"', "1",
                "null", ".nowhere.at_all", ".crm.contacts[0].id", "empty", 'error("e")', ".crm.deals[]", "contact($e)",
                'crm("deals"; $e)', 'crm("deals"; "2")', "[contact($e)]", "$doc | contact($e)", "$e",
                'engagements("notes"; $e)', '.crm.contacts[0].properties.email as $e | contact($e)',
                "contact($e) | .id", 'crm("deals"; $e) | .id', '"contacts" as $k | .crm[$k]']  # fmt: skip
    unproven = [".", ".crm", "$doc", "keys", "length", "tojson", "error", ".[]?", ".crm[]", "$__loc__", "..", "$k",
                ".crm[$k]", "f", "g(.)"]  # fmt: skip
    if depth > 2 or rnd.random() < 0.3:
        return rnd.choice(unproven if rnd.random() < 0.1 else provable)
    a, b = _program(rnd, depth + 1), _program(rnd, depth + 1)
    return rnd.choice([
        f"{a} | {b}", f"{a}, {b}", f"[{a}]", f"{{k: {a}}}", f"({a}) == ({b})", f"({a}) // ({b})", f"{a} as $x | {b}",
        f". as $x | {a}", f"$doc as $x | {a}", f". as $x | $x | {a}",
        f"try ({a}) catch ({b})", f"({a})?", f"if {a} then {b} else . end", f"def f: {a}; {b}", f"({a})[{b}]",
        f"def g(h): h | {a}; {b}", f'"contacts" as $k | {a}', f"({a})[]", f".crm.deals[] | select({a})",
        f".crm.contacts | map({a})", f".crm.deals | first({a})",
        f"({a}) + ({b})", f"({a}) and ({b})", f"def f($y): $y | {a}; f({b})", f".crm | [limit(2; {a})]",
    ])  # fmt: skip


def test_random_programs_read_only_what_they_are_proven_to_read() -> None:
    rnd = random.Random(11)
    doc = {"crm": {"contacts": [{"id": "1", "properties": {"email": "A@x.io"}}, {"id": "5", "properties": 7}],
                   "deals": [{"id": "2"}, 3], "notes": [], "associations": []},
           "sequencer": {"prospects": [], "accounts": [{"id": 4}]}, "scheduler": {}}  # fmt: skip
    proven = shared = 0
    for _ in range(600):
        exprs = (_program(rnd), _program(rnd))
        if jqread.read(jqlib.batch_text(exprs, ("e",))).tables is None:
            continue
        try:
            written, run, tables = _texts(exprs, ("e",))
        except ValueError:
            continue  # jq does not compile it
        proven += 1
        shared += "__shared" in run.program_string
        for e in ("a@x.io", "2", [1]):
            given = {"e": e}
            assert run.input_text(jqlib._input(jqread.only(doc, tables), given)).all() == written.input_text(
                jqlib._input(doc, given)).all(), exprs
    assert proven > 150 and shared > 8


def test_a_call_several_assertions_make_is_made_once_and_each_sees_its_outputs_and_error() -> None:
    doc = {"crm": {"contacts": [{"id": "1", "properties": {"email": "a@x.io"}}, 5,
                                {"id": "2", "properties": {"email": "a@x.io"}}]}}  # fmt: skip
    exprs = ("[contact($e) | .id]", 'try (contact($e) | .id) catch "caught"', ". as $d | $d | contact($e) | .id",
             'crm("contacts"; "2") | .id', "contact($f) | .id")  # fmt: skip
    params = {"e": "a@x.io", "f": "b@x.io"}
    program = jqlib._compiled_many(exprs, ("e", "f"))[0].program_string
    assert program.count("as $__shared") == 1 and program.count("$__shared0[]") == 3  # contact($e) once
    assert jqlib.run_many(exprs, doc, params) == [None, ["1", "caught"], None, None, None]
    doc["crm"]["contacts"].pop(1)
    assert jqlib.run_many(exprs, doc, params) == [[["1", "2"]], ["1", "2"], ["1", "2"], ["2"], []]


def test_a_program_that_names_the_shared_variables_is_run_as_written() -> None:
    exprs = ("contact($e) | .id", "contact($e) | .id", "1 as $__shared0 | $__shared0")
    assert "__shared0[]" not in jqlib._compiled_many(exprs, ("e",))[0].program_string
    doc = {"crm": {"contacts": [{"id": "1", "properties": {"email": "a@x.io"}}]}}
    assert jqlib.run_many(exprs, doc, {"e": "a@x.io"}) == [["1"], ["1"], [1]]


def test_the_pruned_document_keeps_what_the_whole_one_has_under_the_names_read() -> None:
    doc = {"crm": {"contacts": [1], "deals": [2]}, "odd": "text", "empty": {}}
    tables = frozenset({("crm", "deals"), ("crm", "nothing"), ("odd", "x"), ("empty", "y"), ("absent", "z")})
    assert jqread.only(doc, tables) == {"crm": {"deals": [2]}, "odd": "text", "empty": {}}
    exprs = (".crm.deals, .crm.nothing", "try .odd.x catch .", ".empty.y, .absent.z")
    assert jqlib._compiled_many(exprs, ())[1] == tables
    assert jqlib.run_many(exprs, doc, {}) == [jqlib.run(e, doc, {}) for e in exprs]  # run: the whole document
    assert jqlib.run_many(exprs, doc, {})[0] == [[2], None]
