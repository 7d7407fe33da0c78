"""``salesgym play``: a person plays an episode in the terminal.

The first screen shows the tools, the observation and its tables (the territory's portfolio: ids, accounts,
milestones). Each turn shows the observation; the player picks a tool by number or name and answers one prompt
per argument (built from the tool's exported MCP schema, so every family works; an optional argument left
empty takes its default), or types a whole call as JSON. ``h`` shows the history, ``i`` the task card, ``p``
the tables again, ``t`` the tools, ``q`` ends. At the end, the verifier's score:
the player at a local terminal is also the operator of their own episode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

NULL_WORDS = frozenset({"", "null", "none", "-"})
HELP = "number or name of a tool, a JSON call {...}, h history, i instructions, p tables, t tools, q quit"


class Quit(Exception):
    pass


def _kind(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null branch of a schema and whether null is allowed."""
    options = schema.get("anyOf")
    if options:
        real = [o for o in options if o.get("type") != "null"]
        return (real[0] if real else {}), len(real) < len(options)
    return schema, False


def _parse(text: str, schema: dict[str, Any]) -> Any:
    kind, nullable = _kind(schema)
    if nullable and text.strip().lower() in NULL_WORDS:
        return None
    t = kind.get("type")
    if t == "integer":
        return int(text)
    if t == "number":
        return float(text)
    if t == "boolean":
        return text.strip().lower() in ("y", "yes", "true", "1")
    if t in ("array", "object"):
        if t == "array" and not text.strip().startswith("["):  # a comma-separated list of strings
            return [s.strip() for s in text.split(",") if s.strip()]
        return json.loads(text)
    if "enum" in kind and text.isdigit() and int(text) < len(kind["enum"]):
        return kind["enum"][int(text)]
    return text


def _hint(name: str, schema: dict[str, Any], optional: bool) -> str:
    kind, nullable = _kind(schema)
    what = kind.get("type", "value")
    if "enum" in kind:
        what = " | ".join(f"{i}={v}" for i, v in enumerate(kind["enum"]))
    elif what == "array":
        what = "comma-separated, or a JSON list"
    if optional:
        default = schema.get("default")
        extra = ", empty for the default" + (f": {json.dumps(default)}" if default is not None else "")
    else:
        extra = ", empty for none" if nullable else ""
    return f"  {name} ({what}{extra}) - {schema.get('description', '')}\n  {name}> "


def tables(data: Any) -> list[str]:
    """The observation's tables (``{"columns": [...], "rows": [[...], ...]}`` under a key), as aligned text."""
    out: list[str] = []
    items = data.items() if isinstance(data, dict) else ()
    for key, value in items:
        if not (isinstance(value, dict) and isinstance(value.get("columns"), list | tuple)
                and isinstance(value.get("rows"), list | tuple)):
            continue
        grid = [[str(c) for c in value["columns"]]] + [["-" if v is None else f"{v:g}" if isinstance(v, float)
                                                       else str(v) for v in row] for row in value["rows"]]
        widths = [max(len(r[i]) for r in grid if i < len(r)) for i in range(len(grid[0]))]
        out.append(f"{key}:")
        out += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)).rstrip() for r in grid]
    return out


class Player:
    def __init__(self, env: Any, read: Callable[[str], str], out: TextIO) -> None:
        self.env, self.read, self.out = env, read, out
        self.tools = {t["name"]: t for t in env.mcp_tools()}
        self.names = list(self.tools)
        self.history: list[tuple[Any, str]] = []

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def show_tools(self) -> None:
        for i, name in enumerate(self.names, 1):
            self.say(f"  {i:2d}. {name}: {self.tools[name]['description'].splitlines()[0][:90]}")

    def ask_call(self) -> Any:
        while True:
            line = self.read("\ncall> ").strip()
            if not line:
                continue
            if line in ("q", "quit", "exit"):
                raise Quit
            if line == "h":
                for i, (action, status) in enumerate(self.history, 1):
                    self.say(f"  {i:3d}. {status:5s} {json.dumps(action)[:150]}")
                continue
            if line == "i":
                self.say(self.env.instructions())
                continue
            if line == "p":
                for row in tables(self.env.observe()["data"]) or ["(no tables in this observation)"]:
                    self.say(row)
                continue
            if line in ("t", "?", "help"):
                self.show_tools()
                self.say(HELP)
                continue
            if line.startswith("{"):
                return line  # the environment parses the text (and refuses it as data if it is bad)
            name = self.names[int(line) - 1] if line.isdigit() and 0 < int(line) <= len(self.names) else line
            if name not in self.tools:
                self.say(f"no tool {line!r}; {HELP}")
                continue
            return {"tool": name, "args": self.ask_args(self.tools[name]["inputSchema"])}

    def ask_args(self, schema: dict[str, Any]) -> dict[str, Any]:
        args: dict[str, Any] = {}
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            optional = name not in required
            while True:
                text = self.read(_hint(name, prop, optional))
                if optional and not text.strip():
                    break  # left out: the environment takes its default
                try:
                    args[name] = _parse(text, prop)
                    break
                except ValueError as err:
                    self.say(f"  not a valid {name}: {err}; try again")
        return args

    def play(self, seed: int) -> dict[str, Any]:
        obs, _ = self.env.reset(seed=seed)
        self.say(f"salesgym play: {type(self.env).__name__}, seed {seed}. {HELP}.")
        self.show_tools()
        self.say("\n" + obs["text"])
        for row in tables(obs["data"]):
            self.say(row)
        try:
            while True:
                action = self.ask_call()
                obs, reward, terminated, truncated, info = self.env.step(action)
                result = info["tool_result"]
                self.history.append((action, result["status"]))
                self.say(f"\n[{result['status']}] reward {reward:+.3f}, state_version {result['state_version']}")
                self.say(obs["text"])
                if terminated or truncated:
                    self.say(f"\nepisode over ({'terminated' if terminated else 'truncated'})")
                    break
        except (Quit, EOFError, KeyboardInterrupt):
            self.say("\nstopped by the player")
        score: dict[str, Any] = self.env.score()
        self.say(f"\nverifier score after {len(self.history)} calls:")
        self.say(json.dumps(score, indent=2, sort_keys=True))
        return score
