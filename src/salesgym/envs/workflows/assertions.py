"""One assertion of the workflows verifier: a jq program's outputs compared with ``expected`` by an operator
(the list is in ``verifier.py``), reported with its metadata. Also what the service's sandbox worker runs for a
caller's ad-hoc assertions (:func:`evaluate_for_caller`, ``serve/sandbox.py``): this module and ``jqlib.py``
import nothing else of the family, so a worker starts in a fraction of the time the whole family takes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from salesgym.envs.workflows import jqlib

ACTUAL_CHARS = 300  # an assertion's actual value, as reported, is cut to this much JSON text
Runner = Callable[[str, Any, dict[str, Any]], list[Any]]


def compare(op: str, values: Sequence[Any], expected: Any) -> tuple[bool, str]:
    """Whether the program's outputs satisfy ``op`` against ``expected``, and why not."""
    if op == "count":
        return len(values) == expected, f"{len(values)} values"
    if op == "exists":
        ok = any(v is not None for v in values)
        return ok == bool(expected), "" if ok else "no value"
    if len(values) != 1:
        return False, f"expected one value, the expression gave {len(values)}"
    v = values[0]
    if op == "equals":
        return v == expected, ""
    if op == "not_equals":
        return v != expected, ""
    if op == "contains":
        if isinstance(v, str) and isinstance(expected, str):
            return expected in v, ""
        if isinstance(v, list):
            return expected in v, ""
        if isinstance(v, dict) and isinstance(expected, dict):
            return all(k in v and v[k] == x for k, x in expected.items()), ""
        return False, "contains needs a string, a list or an object"
    if op == "in":
        return isinstance(expected, list) and v in expected, ""
    if op == "matches":
        if not isinstance(v, str) or not isinstance(expected, str):
            return False, "matches needs a string and a pattern"
        return re.search(expected, v) is not None, ""
    if op in ("gt", "gte", "lt", "lte"):
        same = (isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(expected, (int, float))) or (
            isinstance(v, str) and isinstance(expected, str))
        if not same:
            return False, f"{op} compares two numbers or two ISO times"
        return {"gt": v > expected, "gte": v >= expected, "lt": v < expected, "lte": v <= expected}[op], ""
    raise ValueError(f"unknown operator {op!r}")


def _cut(value: Any) -> Any:
    text = json.dumps(value, default=str)
    return value if len(text) <= ACTUAL_CHARS else text[:ACTUAL_CHARS] + "..."


def check_assertion(step: int, spec: Mapping[str, Any], doc: Any, params: dict[str, Any],
                    outputs: list[Any] | None = None, run: Runner = jqlib.run) -> dict[str, Any]:  # fmt: skip
    """One assertion's metadata; ``outputs`` are its program's outputs when a batch already ran it."""
    try:
        values = outputs if outputs is not None else run(spec["expr"], doc, params)
    except ValueError as err:
        values, passed, why = [], False, f"jq error: {str(err)[:200]}"
    else:
        passed, why = compare(spec["op"], values, spec["expected"])
    actual = values[0] if len(values) == 1 else values
    return {"step": step, "name": spec["name"], "expr": spec["expr"], "op": spec["op"],
            "expected": spec["expected"], "actual": _cut(actual), "passed": passed, "reason": why}  # fmt: skip


class Refused(ValueError):
    """A caller's assertion refused before any of the batch runs: ``status`` and ``code`` are the answer's."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.code = status, code


def evaluate_for_caller(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A caller's assertions over ``{"doc", "params", "specs"}`` (``remote.caller_payload``): every program is
    refused if it reaches beyond the document (400) and compiled (422 with jq's reason) before any runs."""
    doc, params, specs = payload["doc"], dict(payload["params"]), payload["specs"]
    for i, spec in enumerate(specs):
        label = f"assertions[{i}] ({spec.get('name') or spec['expr'][:40]!r})"
        try:
            jqlib.compile_for_caller(spec["expr"], params)
        except jqlib.UnsafeProgram as err:
            raise Refused(400, "jq_not_allowed", f"{label}: {err}") from None
        except ValueError as err:
            raise Refused(422, "invalid_assertion", f"{label}: jq cannot compile it ({str(err)[:300]})") from None
    return [check_assertion(spec.get("step") or 0, {"name": spec.get("name") or f"assertion {i}", "expr": spec["expr"],
                                                    "op": spec["op"], "expected": spec["expected"]},
                            doc, params, run=jqlib.run_for_caller)
            for i, spec in enumerate(specs)]  # fmt: skip


def warm_up() -> None:
    """Load jq and compile the prelude once (the sandbox worker calls this before it may open no more files)."""
    jqlib.run_for_caller(".", {}, {})
