"""jq over the sandbox's state document (``$doc`` is the whole document), through the ``jq`` library (a
dependency of the base install). Every program gets a small prelude of helpers and the instance's
parameters as ``$name`` variables; compiled programs are cached by their text and parameter names. A template's
assertions also run as one batch program (:func:`run_many`): one compilation per template and process, and the
document handed to jq once instead of once per assertion."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

PRELUDE = """
def contact($email): .crm.contacts[] | select((.properties.email // "" | ascii_downcase) == ($email | ascii_downcase));
def crm($type; $id): .crm[$type][] | select(.id == $id);
def assoc($ft; $fid; $tt): [.crm.associations[] | select(.fromObjectType == $ft and .fromId == $fid
  and .toObjectType == $tt)];
def linked($ft; $fid; $tt; $type): [assoc($ft; $fid; $tt)[] | select(.associationTypeId == $type) | .toId];
def engagements($kind; $cid): [linked("contacts"; $cid; $kind; {"notes": 201, "tasks": 203, "meetings": 199}[$kind])[]
  as $eid | .crm[$kind][] | select(.id == $eid)];
def prospect($email): .sequencer.prospects[] | select(.attributes.emails | map(ascii_downcase)
  | index($email | ascii_downcase) != null);
def rel($name): .relationships[$name].data.id;
def states($pid; $sid): [.sequencer.sequence_states[] | select(rel("prospect") == $pid and rel("sequence") == $sid)];
def events_of($email): . as $d | [$d.scheduler.invitees[] | select((.email | ascii_downcase) == ($email
  | ascii_downcase)) as $i | $d.scheduler.scheduled_events[] | select(.uri == $i.event) | . + {invitee: $i}];
def deal_named($name): .crm.deals[] | select(.properties.dealname == $name);
def deal_linked($name; $tt; $type): . as $doc | [deal_named($name) | .id] | map(. as $d | $doc
  | linked("deals"; $d; $tt; $type)[]);
def every($xs; f): ($xs | length) > 0 and ([$xs[] | f] | length) == ($xs | length) and ([$xs[] | f] | all);
def members($list): [.prospecting.list_members[] | select(.list_id == $list) | .lead_id] | sort;
"""


def _require_jq() -> Any:
    try:
        import jq
    except ImportError as err:  # pragma: no cover - jq is a dependency
        raise ImportError("the workflows verifier needs the jq library, a dependency of salesgym: reinstall "
                          "salesgym, or pip install jq") from err
    return jq


@lru_cache(maxsize=4096)
def _compiled(expr: str, names: tuple[str, ...]) -> Any:
    """``expr`` with each parameter bound to ``$name``: the text depends on the names only, so one compiled
    program serves every instance of a template."""
    binds = "".join(f"($__in.params[{_quote(n)}]) as ${n} | " for n in names)
    return _require_jq().compile(f"{PRELUDE}\n. as $__in | {binds}$__in.doc as $doc | $doc | ({expr})")


def _quote(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"parameter names must be identifiers, got {name!r}")
    return f'"{name}"'


def run(expr: str, document: Any, params: dict[str, Any]) -> list[Any]:
    """Every value ``expr`` outputs on ``document``; a jq compile or runtime error raises ``ValueError``."""
    program = _compiled(expr, tuple(sorted(params)))
    return list(program.input_value({"doc": document, "params": params}).all())


def compile_only(expr: str, params: dict[str, Any]) -> None:
    """Raise ``ValueError`` with jq's reason (without the wrapped program's text) if ``expr`` does not compile
    with ``params`` bound; nothing is run."""
    try:
        _compiled(expr, tuple(sorted(params)))
    except ValueError as err:
        raise ValueError(str(err).split(" at <top-level>")[0]) from None


@lru_cache(maxsize=1024)
def _compiled_many(exprs: tuple[str, ...], names: tuple[str, ...]) -> Any:
    binds = "".join(f"($__in.params[{_quote(n)}]) as ${n} | " for n in names)
    parts = ", ".join(f'(try {{"ok": [$doc | ({e})]}} catch {{"error": true}})' for e in exprs)
    return _require_jq().compile(f"{PRELUDE}\n. as $__in | {binds}$__in.doc as $doc | [{parts}]")


def run_many(exprs: tuple[str, ...], document: Any, params: dict[str, Any]) -> list[list[Any] | None]:
    """Every output of each of ``exprs`` on ``document``, as :func:`run` gives them; None for a program that
    failed (its caller runs it alone for the error's own message). Raises ``ValueError`` when the batch itself
    does not compile (one bad program): then run them one by one."""
    names = tuple(sorted(params))
    program = _compiled_many(exprs, names)
    (out,) = program.input_value({"doc": document, "params": params}).all()
    return [r.get("ok") for r in out]
