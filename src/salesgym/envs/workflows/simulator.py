"""The rule-based simulated people of a task: the requester (``ask_requester``) and the senders of scripted
mid-episode messages (``reply_message``).

**Facts.** Each hidden fact (``tasks.model.FactSpec``) has a holder, keywords and conditions. A question to its
holder that names one of its keywords (case-insensitive substring) gets the fact when every condition holds,
and the first telling is one ``fact_revealed`` event; while a condition does not hold the answer is the fact's
hint (or a generic "not yet"), and nothing is told. Conditions (``tasks.model.Needs``), plain JSON data:

- ``{"told": key}``: that fact has been told already;
- ``{"called": {"tool": name, "args": jq | None}}``: an earlier successful call of the tool (whose arguments
  make the jq program output ``true``), e.g. the agent has booked or proposed a time;
- ``{"says": regex}``: the question itself matches (case-insensitive);
- ``{"holds": jq}``: a jq program over the live state document outputs ``true``.

A question that names no fact's keyword may match a canned reply (``Reply``: tells nothing), else the holder
says it cannot help. Facts are tried in the template's order; the first whose keywords and conditions hold wins.

**Turns.** A scripted message (``tasks.model.Turn``) is delivered after the first successful call of one of its
trigger tools whose end state satisfies its ``when`` program (jq over the state document of the trigger tool's
app; the other apps' parts are empty): one ``message_received`` event, emitted by that
call (so it is in that step's observation, and replay and clones are exact). Each turn is delivered once.

**Voice.** An optional language-model voice (``llm.OpenAIVoice``, off by default) answers as the person, from
what they know (their hidden facts), the question and the rules' words; the rules have already decided what is
told. The check (``voiced``) refuses an answer that drops the told value, and flags and refuses one that shows
the value of a fact not told (revealed unasked) or the persona, verbatim or disguised (``shows``: case,
separators, invisible or full-width characters, reversal): the rule's words stand and the output says why.
Every reply is on the event tape (``voice_spoke``: the request's hash, the reply, the flags), so a replay or a
clone never asks the model again, and the score counts the flags (``verifier.score``'s ``voice``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Protocol

from salesgym.core.tools import ToolOutcome
from salesgym.envs.workflows import jqlib
from salesgym.envs.workflows.apps import REPLICAS
from salesgym.envs.workflows.apps.common import Ctx, done, now_iso
from salesgym.envs.workflows.llm import request_hash
from salesgym.envs.workflows.state import document
from salesgym.envs.workflows.world import Fact

APP_OF_TABLE = {table: name for name, app in REPLICAS.items() for table in app.TABLES}
APP_OF_TOOL = {t.name: name for name, app in REPLICAS.items() for t in app.TOOLS}
CANNOT_HELP = "Sorry, I can't help with that; it should all be in the apps or in the request."
NOT_YET = "I can't tell you that yet."
REQUESTER = "requester"


class Voice(Protocol):
    """Answers as a simulated person: ``request`` holds ``who``, ``persona``, ``knows`` (their hidden facts),
    ``rules`` (the rules' words) and ``question``."""

    def answer(self, request: Mapping[str, Any]) -> str: ...


def _who(ctx: Ctx, holder: str) -> str:
    if holder == REQUESTER:
        return ctx.world.task.requester
    return next((m["from"] for m in ctx.state.inbox if m["sender_key"] == holder), holder)


def condition_holds(ctx: Ctx, cond: Mapping[str, Any], question: str) -> bool:
    (kind, value), = cond.items()
    if kind == "told":
        return value in ctx.state.revealed
    if kind == "says":
        return re.search(value, question, re.IGNORECASE) is not None
    params = dict(ctx.world.secret.params)
    if kind == "holds":
        return _true(value, document(ctx.state.tables, APP_OF_TABLE), params)
    if kind == "called":
        return any(e.kind == "tool_completed" and e.payload["tool"] == value["tool"]
                   and (value["args"] is None or _true(value["args"], e.payload["args"], params))
                   for e in ctx.log)  # fmt: skip
    raise ValueError(f"unknown condition {cond!r}")


def app_document(ctx: Ctx, app: str) -> dict[str, Any]:
    """The state document with ``app``'s tables only (the others empty): jq reads its input as JSON text, so a
    turn's condition costs what its own app's tables weigh, not the whole sandbox."""
    tables = {t: rows for t, rows in ctx.state.tables.items() if APP_OF_TABLE.get(t) == app}
    return document(tables, (t for t, a in APP_OF_TABLE.items() if a == app))


def _true(expr: str, doc: Any, params: dict[str, Any]) -> bool:
    try:
        return jqlib.run(expr, doc, params) == [True]
    except ValueError:
        return False


def decide(ctx: Ctx, holder: str, question: str) -> tuple[Fact | None, str]:
    """The fact ``holder`` tells in answer to ``question`` (or None) and the rule's words."""
    secret, q = ctx.world.secret, question.lower()
    hint = None
    for fact in secret.facts:
        if fact.holder != holder or not any(word in q for word in fact.keywords):
            continue
        if all(condition_holds(ctx, c, question) for c in fact.requires):
            return fact, fact.value
        hint = hint or fact.hint or NOT_YET
    if hint is not None:
        return None, hint
    for reply in secret.replies:
        if reply["holder"] == holder and any(word in q for word in reply["keywords"]):
            return None, str(reply["text"])
    return None, CANNOT_HELP


def answer(ctx: Ctx, holder: str, question: str) -> ToolOutcome:
    """``holder``'s answer to ``question``: the rules decide, the optional voice words it."""
    fact, words = decide(ctx, holder, question)
    if fact is not None and fact.key not in ctx.state.revealed:
        ctx.emit("fact_revealed", holder, {"fact": fact.key, "value": fact.value})
    out: dict[str, Any] = {"from": _who(ctx, holder), "answer": words}
    voice: Voice | None = getattr(ctx.family, "voice", None)
    if voice is not None:
        spoken, problem = voiced(ctx, voice, holder, question, words, fact)
        out["answer"] = spoken
        if problem:
            out["voice_error"] = problem
    return done(out)


SHOWN_MIN = 4  # a value this short in letters and digits is looked for verbatim only (a shorter one is everywhere)


def _plain(text: str) -> str:
    """Letters and digits only, case-folded, compatibility forms (full-width...) folded."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def shows(text: str, value: str) -> bool:
    """Whether ``text`` shows ``value``: verbatim, or disguised as a persuaded voice may spell it (other case,
    characters apart, other punctuation, invisible or full-width characters, reversed)."""
    if value in text:
        return True
    plain = _plain(value)
    if len(plain) < SHOWN_MIN:
        return False
    seen = _plain(text)
    return plain in seen or plain[::-1] in seen


def voiced(ctx: Ctx, voice: Voice, holder: str, question: str, words: str, fact: Fact | None) -> tuple[str, str]:
    """The voice's answer, or the rule's words and why the voice's were refused. The reply comes from the tape
    when this very request was answered before (a replay, a clone, a repeated question), else from the voice, and
    is recorded on the tape (``voice_spoke``, hidden from the agent) with its request hash and the check's
    flags: a fact the rules did not tell now and nobody told before is ``unasked``."""
    secret = ctx.world.secret
    request = {"who": _who(ctx, holder), "persona": secret.persona, "question": question, "rules": words,
               "knows": {f.key: f.value for f in secret.facts if f.holder == holder}}  # fmt: skip
    key = request_hash(request)
    text = ctx.state.spoken.get(key)
    if text is None:
        try:
            text = voice.answer(request)
        except Exception as err:  # any failure of the optional voice: the rule's words stand, and the output says so
            return words, f"the voice failed ({type(err).__name__}); these are the rule's words"
        if not isinstance(text, str):
            return words, "the voice answered no text; these are the rule's words"
    told = {*ctx.state.revealed, *([fact.key] if fact is not None else [])}
    unasked = [f.key for f in secret.facts if f.key not in told and shows(text, f.value)]
    problem = ""
    if unasked or shows(text, secret.persona):
        problem = "the voice revealed something not asked for; these are the rule's words"
    elif not text.strip() or (fact is not None and fact.value not in text):
        problem = "the voice dropped what was told; these are the rule's words"
    ctx.emit("voice_spoke", holder, {"request": key, "reply": text, "unasked": unasked,
                                     "refused": problem})  # fmt: skip
    return (words, problem) if problem else (text.strip(), "")


def deliver(ctx: Ctx, tool: str) -> None:
    """Deliver every scripted message that ``tool``'s successful call triggers (see the module docstring)."""
    turns = ctx.world.secret.turns
    if not turns:
        return
    sent = {m["turn"] for m in ctx.state.inbox}
    doc: Any = None
    for turn in turns:
        if turn["key"] in sent or tool not in turn["after"]:
            continue
        if turn["when"] is not None:
            doc = doc if doc is not None else app_document(ctx, APP_OF_TOOL[tool])
            if not _true(turn["when"], doc, dict(ctx.world.secret.params)):
                continue
        ctx.emit("message_received", turn["sender_key"], {
            "id": f"MSG{len(ctx.state.inbox) + 1}", "turn": turn["key"], "from": turn["sender"],
            "sender_key": turn["sender_key"], "text": turn["text"], "at": now_iso(ctx)})  # fmt: skip
