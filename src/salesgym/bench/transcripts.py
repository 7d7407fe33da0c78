"""Stored trajectories as chat transcripts with tools, the supervised fine-tuning format HF/TRL read
(``salesgym export RUN --trajectories``).

One JSON object per episode::

    {"messages": [
        {"role": "system", "content": the task card (env.instructions())},
        {"role": "user", "content": the first observation's text},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_0000", "type": "function",
            "function": {"name": "view_opportunity", "arguments": {"opportunity_id": "o007", "page": 0}}}]},
        {"role": "tool", "tool_call_id": "call_0000", "name": "view_opportunity",
         "content": the observation after the call (its "Last:" line is the call's result)},
        ...],
     "tools": the OpenAI function schemas the agent was given,
     "metadata": {"run_id", "env_id", "policy", "territory", "trial", "seed", "status", "end", "turns",
                  "score": {...}, "usage": {...}}}

TRL's ``SFTTrainer`` reads ``messages`` (role, content, ``tool_calls``, the tool messages) and ``tools``
(passed to the tokenizer's chat template); other columns are left alone. Its documented tool-calling format
gives a call's ``arguments`` as a JSON object, which every tool-capable chat template renders; the OpenAI
fine-tuning format wants JSON text instead: ``arguments="string"`` writes that.

Each turn's assistant message is the policy's own when its turn record has them (``turn_record()["messages"]``:
the chat messages its model produced, or was sent, while choosing the call, in OpenAI format: they are kept as
they are, arguments re-encoded as above), else it is made from the action. An action that is not a call (a
malformed one the environment refused) becomes assistant text, and the environment's answer a user message.
The turn a policy stopped in (replies without a tool call, then its stop) made no step; its messages come
last, from the policy's episode record. A private split's seed is ``null``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from salesgym.bench.store import EpisodeRecord, Store, StoreError

ARGUMENT_MODES = ("object", "string")
SCORE_KEYS = ("primary", "closed_value", "win_rate", "return", "invalid_actions", "truncated")


def _call_of(action: Any) -> tuple[str, Any, str | None] | None:
    """(tool name, arguments, call id) of an action the environment reads as a call; None for anything else."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError:
            return None
    if not isinstance(action, dict):
        return None
    name = action.get("tool", action.get("name"))
    args = action.get("args", action.get("arguments"))
    if not isinstance(name, str):
        return None
    if isinstance(args, str):
        args = _arguments(args, "object") if args.strip() else {}  # a malformed text stays as the agent wrote it
    call_id = action.get("id")
    return name, {} if args is None else args, call_id if isinstance(call_id, str) else None


def _arguments(args: Any, mode: str) -> Any:
    """Arguments as a JSON object (``object``) or its text (``string``); text that is not JSON stays text."""
    if mode == "string":
        return args if isinstance(args, str) else json.dumps(args, separators=(",", ":"))
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def _policy_messages(model: Any, mode: str) -> list[dict[str, Any]] | None:
    messages = model.get("messages") if isinstance(model, Mapping) else None
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) and "role" in m for m in messages):
        return None
    out: list[dict[str, Any]] = []
    for m in messages:
        msg = dict(m)
        if isinstance(msg.get("tool_calls"), list):
            msg["tool_calls"] = [_recode_call(c, mode) for c in msg["tool_calls"]]
        out.append(msg)
    return out


def _recode_call(call: Any, mode: str) -> Any:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call
    fn = dict(call["function"])
    fn["arguments"] = _arguments(fn.get("arguments"), mode)
    return {**call, "function": fn}


def _last_call_id(messages: list[dict[str, Any]]) -> str | None:
    for m in reversed(messages):
        calls = m.get("tool_calls")
        if m.get("role") == "assistant" and isinstance(calls, list) and calls and isinstance(calls[0], Mapping):
            call_id = calls[0].get("id")
            return call_id if isinstance(call_id, str) else None
    return None


def turn_messages(turn: Mapping[str, Any], index: int, mode: str = "object") -> list[dict[str, Any]]:
    """The messages of one turn: the assistant's call (the policy's own messages, or made from the action) and
    the environment's answer."""
    call = _call_of(turn.get("action"))
    own = _policy_messages(turn.get("model"), mode)
    answer = str(turn.get("observation", ""))
    if own is not None:  # the policy's own messages; a call queued from an earlier reply has none, but its id
        recorded = turn["model"].get("tool_call_id")
        call_id = recorded if isinstance(recorded, str) else _last_call_id(own)
        if call_id is None:
            return [*own, {"role": "user", "content": answer}]
        name = call[0] if call else ""
        return [*own, {"role": "tool", "tool_call_id": call_id, "name": name, "content": answer}]
    if call is None:
        return [
            {"role": "assistant", "content": json.dumps(turn.get("action"))},
            {"role": "user", "content": answer},
        ]
    name, args, call_id = call
    call_id = call_id or f"call_{index:04d}"
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": _arguments(args, mode)}}
        ],
    }
    return [assistant, {"role": "tool", "tool_call_id": call_id, "name": name, "content": answer}]


def stopped_turn_messages(totals: Any, mode: str = "object") -> list[dict[str, Any]]:
    """The messages of the turn the policy stopped in (``episode_record()["stopped"]["turn"]``: replies
    without a call and the requests for one, before the policy gave up); it made no step, so no turn holds
    them."""
    stopped = totals.get("stopped") if isinstance(totals, Mapping) else None
    turn = stopped.get("turn") if isinstance(stopped, Mapping) else None
    return _policy_messages(turn, mode) or []


def transcript(
    trajectory: Mapping[str, Any], episode: EpisodeRecord, run_id: str, mode: str = "object"
) -> dict[str, Any]:
    """One episode as ``{"messages", "tools", "metadata"}``."""
    if mode not in ARGUMENT_MODES:
        raise ValueError(f"arguments must be one of {', '.join(ARGUMENT_MODES)}, got {mode!r}")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": str(trajectory.get("instructions", ""))},
        {"role": "user", "content": str(trajectory.get("observation", ""))},
    ]
    turns = trajectory.get("turns") or []
    for i, turn in enumerate(turns):
        messages += turn_messages(turn, i, mode)
    totals = trajectory.get("totals")
    messages += stopped_turn_messages(totals, mode)
    metrics = episode.metrics or {}
    return {
        "messages": messages,
        "tools": list(trajectory.get("tools") or []),
        "metadata": {
            "run_id": run_id,
            "env_id": trajectory.get("env_id"),
            "policy": episode.policy,
            "territory": episode.territory_id,
            "trial": episode.trial,
            "seed": trajectory.get("seed"),
            "status": episode.status,
            "end": trajectory.get("end", episode.end),
            "turns": len(turns),
            "score": {k: metrics[k] for k in SCORE_KEYS if k in metrics},
            "usage": totals.get("usage") if isinstance(totals, Mapping) else None,
        },
    }


def iter_transcripts(store: Store, run_id: str, mode: str = "object") -> Iterator[dict[str, Any]]:
    """Every stored trajectory of the run as a transcript, one at a time (a private split's seeds left out);
    a run without trajectories is a StoreError."""
    run = store.get_run(run_id)
    assert run is not None
    n = 0
    for ep, trajectory in store.iter_trajectories(run_id):
        record = transcript(trajectory, ep, run_id, mode)
        if run.private:
            record["metadata"]["seed"] = None
        n += 1
        yield record
    if n == 0:
        why = f"format {store.format}: older salesgym kept none" if store.format < 2 else "no episode finished"
        raise StoreError(f"{store.path}: run {run_id!r} has no stored trajectories ({why})")


def write_jsonl(store: Store, run_id: str, path: Path, mode: str = "object") -> int:
    """Write every stored trajectory of the run as one JSONL line each; returns how many. The file appears
    only once complete (written beside it, then renamed); a run without trajectories is a StoreError."""
    tmp = path.with_name(f".{path.name}.partial")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for record in iter_transcripts(store, run_id, mode):
                fh.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
                n += 1
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return n
