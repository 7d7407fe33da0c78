"""The ``--policy llm`` options of ``salesgym bench`` and ``salesgym calibrate``: every ``LLMConfig`` field
(docs/llm.md), the common ones as their own flags, any field by name with ``--llm-set FIELD=VALUE``.

The commands declare the flags with the aliases below and hand what they got to :func:`collect`, which
checks the JSON values (one ``BenchError`` line each) and returns the fields that were given.
``policyspec.resolve_llm`` then builds the configuration and asks the endpoint once, before any episode.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from salesgym.bench.runner import BenchError
from salesgym.cli_options import COUNT_MAX, finite
from salesgym.llm.config import STRATEGIES, LLMConfig

_H = "--policy llm: "
Model = Annotated[str | None, typer.Option(help=_H + "the model name the endpoint serves")]
BaseUrl = Annotated[str | None, typer.Option(help=_H + "OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")]
ApiKeyEnv = Annotated[str | None, typer.Option(help=_H + "environment variable holding the API key")]
Temperature = Annotated[
    float | None, typer.Option(min=0, max=2, callback=finite, help=_H + "sampling temperature (default 0)")
]
TopP = Annotated[float | None, typer.Option(min=0, max=1, callback=finite, help=_H + "nucleus sampling (default 1)")]
MaxTokens = Annotated[
    int | None, typer.Option(min=1, max=COUNT_MAX, help=_H + "completion tokens per reply (default 1024)")
]
Context = Annotated[str | None, typer.Option(
    help=_H + f"context strategy: {', '.join(STRATEGIES)} (default {LLMConfig.context}; docs/llm.md)")]
ContextTokens = Annotated[
    int | None,
    typer.Option(min=1, max=100 * COUNT_MAX,
                 help=_H + "the endpoint's context size (default: what its /v1/models publishes, else 32000)"),
]
ToolChoice = Annotated[
    str | None,
    typer.Option(help=_H + "auto (default), required, none, omit (not sent), or a JSON object naming a function"),
]
ExtraBody = Annotated[
    str | None, typer.Option(help=_H + "JSON object of vendor fields merged into every request body")
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", min=0.001, callback=finite, help=_H + "seconds per request (default 120)")
]
TokenBudget = Annotated[
    int | None,
    typer.Option(min=1, max=1000 * COUNT_MAX,
                 help=_H + "prompt + completion tokens per episode, then it stops (default: none)"),
]
WallBudget = Annotated[
    float | None,
    typer.Option("--wall-budget", min=0.001, callback=finite,
                 help=_H + "seconds per episode, then it stops (default: none)"),
]
SendSeed = Annotated[
    bool | None, typer.Option("--send-seed/--no-send-seed", help=_H + "send a sampling seed (default: yes)")
]
LLMSet = Annotated[
    list[str] | None,
    typer.Option(
        "--llm-set",
        help=_H + "any LLMConfig field, FIELD=VALUE with a JSON value (max_retries=2, window_turns=20); repeatable",
    ),
]

FLAG_FIELDS = {"timeout": "timeout_s", "wall_budget": "wall_budget_s"}  # flag name -> LLMConfig field


def flag_of(field: str) -> str:
    """The command-line flag of an ``LLMConfig`` field (``timeout_s`` -> ``--timeout``)."""
    named = {v: k for k, v in FLAG_FIELDS.items()}.get(field, field)
    return "--" + named.replace("_", "-")


def _json(flag: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise BenchError(f"{flag}: not JSON ({e}): {text[:80]}") from None


def collect(llm_set: list[str] | None = None, **flags: Any) -> dict[str, Any]:
    """The ``LLMConfig`` fields the command line gave (flags left at None are not given)."""
    given: dict[str, Any] = {}
    for name, value in flags.items():
        if value is None:
            continue
        if name == "extra_body":
            value = _json("--extra-body", value)
            if not isinstance(value, dict):
                raise BenchError("--extra-body takes a JSON object, e.g. '{\"top_k\": 20}'")
        elif name == "tool_choice":
            value = None if value == "omit" else _json("--tool-choice", value) if value.startswith("{") else value
            given["tool_choice"] = value
            continue
        given[FLAG_FIELDS.get(name, name)] = value
    for item in llm_set or []:
        field, sep, raw = item.partition("=")
        if not sep or not field.strip():
            raise BenchError(f"--llm-set takes FIELD=VALUE, got {item!r}")
        given[field.strip()] = _json(f"--llm-set {field.strip()}", raw)
    return given
