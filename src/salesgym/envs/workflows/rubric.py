"""Message rubrics: what the agent writes (a note, an InMail, an email or task text, its reply to a prospect, the
``finish_task`` summary) checked deterministically, each check one assertion of the verdict.

A rubric's ``target`` (jq) selects the text: over the end-state document (plus ``.task.summary``), or over the
arguments of every successful call of its ``tools``; every string it outputs is part of the text. Checks:

- ``mentions``: one of an item's alternatives appears (case-insensitive, at a word start: "demo" finds "demos",
  "ai" does not find "maintain");
- ``states``: a fact (a parameter's value, hidden) appears correctly: a number is compared with every number in
  the text, digits only ("$48,213.00" states 48213), anything else as a case-insensitive substring;
- ``no_claim``: a forbidden claim's pattern (regular expression, case-insensitive) does not match;
- ``max_len``: the text is at most that many characters.

With no text at all every check fails ("nothing was written"). The optional judge (``judge.py``, off by
default) decides ``mentions`` and ``no_claim`` instead of the rules; it is shown the text and the rubric's public
wording only, never a fact's value, and ``states`` and ``max_len`` stay deterministic. A judge that fails leaves
the rules' decision, and the assertion says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from salesgym.envs.workflows import jqlib

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
EXCERPT_CHARS = 80


class Judge(Protocol):
    """Decides the wording checks of one text: ``{"mentions": [bool per item], "claims": [bool per claim: the text
    makes it]}``. Shown ``public`` (``must_mention``, ``forbidden_claims``, ``criteria``) and the text only."""

    def judge(self, public: Mapping[str, Any], text: str) -> Mapping[str, Any]: ...


def text_of(rubric: Mapping[str, Any], doc: Any, calls: Sequence[Mapping[str, Any]], params: dict[str, Any]) -> str:
    """The text ``rubric`` reads: every string its target outputs, joined by blank lines (a jq error: none)."""
    out: list[Any] = []
    try:
        if rubric["tools"]:
            for c in calls:
                if not c["refused"] and c["tool"] in rubric["tools"]:
                    out.extend(jqlib.run(rubric["target"], c["args"], params))
        else:
            out = jqlib.run(rubric["target"], doc, params)
    except ValueError:
        return ""
    return "\n\n".join(v for v in out if isinstance(v, str) and v.strip())


def public_view(rubric: Mapping[str, Any]) -> dict[str, Any]:
    """What a judge may be shown: the wording checks, never a fact's value."""
    return {"must_mention": rubric["must_mention"], "forbidden_claims": rubric["forbidden_claims"],
            "criteria": rubric["criteria"]}  # fmt: skip


def mentions(text: str, alternatives: Sequence[str]) -> str | None:
    low = text.lower()
    return next((a for a in alternatives if re.search(r"(?<!\w)" + re.escape(a.lower()), low)), None)


def states(text: str, value: Any) -> bool:
    wanted = str(value).strip()
    digits = wanted.lstrip("$€£").replace(",", "")
    try:
        number = float(digits)
    except ValueError:
        return wanted.lower() in text.lower()
    return any(float(n.replace(",", "")) == number for n in NUMBER.findall(text))


def _excerpt(text: str, start: int = 0) -> str:
    piece = text[max(0, start - 20):start + EXCERPT_CHARS]
    return piece if len(piece) < len(text) else text


def check(rubric: Mapping[str, Any], doc: Any, calls: Sequence[Mapping[str, Any]], params: dict[str, Any],
          judge: Judge | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every check of ``rubric`` as an assertion ``{step, name, expr, op, expected, actual, passed, reason, rubric,
    judged_by}``."""
    text = text_of(rubric, doc, calls, params)
    by, decided, why_judge = "rules", None, ""
    if judge is not None and text and (rubric["must_mention"] or rubric["forbidden_claims"]):
        try:
            decided = _checked_verdict(judge.judge(public_view(rubric), text), rubric)
            by = "llm"
        except Exception as err:  # any failure of the optional judge: the rules decide, and the record says so
            why_judge = f"the judge failed ({type(err).__name__}: {str(err)[:120]}); the rules decided"
    base = {"step": rubric["step"], "expr": rubric["target"], "rubric": rubric["name"]}
    out: list[dict[str, Any]] = []

    def add(name: str, op: str, expected: Any, actual: Any, passed: bool, reason: str, judged: str = "rules") -> None:
        if not text:
            passed, reason = False, "nothing was written"
        out.append({**base, "name": f"{rubric['name']}: {name}", "op": op, "expected": expected, "actual": actual,
                    "passed": passed, "reason": reason or why_judge, "judged_by": judged})  # fmt: skip

    for i, alternatives in enumerate(rubric["must_mention"]):
        found = mentions(text, alternatives)
        ok = decided["mentions"][i] if decided is not None else found is not None
        add(f"mentions {' / '.join(alternatives)}", "mentions", alternatives, found, ok,
            "" if ok else "not mentioned", by)
    for label, value in rubric["facts"]:
        ok = states(text, value)
        add(f"states the {label}", "states", value, None if ok else _excerpt(text), ok,
            "" if ok else f"the {label} is missing or wrong")
    for i, (label, pattern) in enumerate(rubric["forbidden_claims"]):
        hit = re.search(pattern, text, re.IGNORECASE)
        made = decided["claims"][i] if decided is not None else hit is not None
        add(f"no claim of {label}", "no_claim", pattern, _excerpt(text, hit.start()) if hit else None, not made,
            f"claims {label}" if made else "", by)
    if rubric["max_len"] is not None:
        ok = len(text) <= rubric["max_len"]
        add(f"at most {rubric['max_len']} characters", "max_len", rubric["max_len"], len(text), ok,
            "" if ok else "too long")
    return out


def _checked_verdict(verdict: Mapping[str, Any], rubric: Mapping[str, Any]) -> dict[str, list[bool]]:
    """The judge's answer, if it has a boolean per item and per claim."""
    out = {}
    for key, items in (("mentions", rubric["must_mention"]), ("claims", rubric["forbidden_claims"])):
        values = verdict.get(key)
        if not isinstance(values, list) or len(values) != len(items) or not all(isinstance(v, bool) for v in values):
            raise ValueError(f"the judge's {key!r} must be {len(items)} booleans, got {values!r}"[:200])
        out[key] = values
    return out
