"""The parts of an observation's text every family writes the same way: the last tool result's line, the
episode's end, the JSON of an output; and what a model reads of an observation (its text). A family's
``observe.render_text`` writes its own lines (clock, pipeline, inbox...) and ends with these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

TRUNCATED = "... (truncated; the full output is in info['tool_result'])"
_compact_fallback = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def json_text(value: Any, *, escaped_fallback: bool = False) -> str:
    """Compact JSON of a tool's output. orjson is several times faster than the standard library (a deal's full
    view is encoded on a third of all territory steps). Text orjson refuses (a lone surrogate in agent text) takes
    the standard library's path, so encoding never raises: compact and unescaped, or with ``escaped_fallback``
    the library's default spacing with every non-ASCII character escaped (what the desk and workflows show,
    pinned by their golden episodes)."""
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, UnicodeDecodeError):
        return json.dumps(value, ensure_ascii=True) if escaped_fallback else _compact_fallback(value)


def result_line(last: Mapping[str, Any], limit: int, cost: str | None = None, *, whole: bool = False,
                escaped_fallback: bool = False) -> str:
    """``Last: <status> (<cost>) <body>``: the body is the refusal's reason or the output's JSON, cut at ``limit``
    characters unless ``whole``; without ``cost`` (a family whose calls all cost the same) it is left out."""
    output = last["output"]
    if last["status"] == "error":
        body = str(output.get("error"))
    else:
        body = json_text(output, escaped_fallback=escaped_fallback)
    if len(body) > limit and not whole:
        body = body[:limit] + TRUNCATED
    said = f" ({cost})" if cost is not None else ""
    return f"Last: {last['status']}{said} {body}"


def episode_line(episode: Mapping[str, Any]) -> str | None:
    """``Episode over.`` once the episode ended (with its verdict where the family gives one), else None."""
    if not (episode["terminated"] or episode["truncated"]):
        return None
    return f"Episode over. Verdict: {episode['verdict']}." if "verdict" in episode else "Episode over."


def observation_text(observation: Mapping[str, Any]) -> str:
    """What a model reads of an observation: the family's text, or the observation's JSON when it has none."""
    text = observation.get("text")
    return text if isinstance(text, str) else json.dumps(observation, default=str)
