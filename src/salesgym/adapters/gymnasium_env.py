"""Gymnasium adapter: a salesgym environment behind ``gymnasium.Env`` with text actions and observations.

The action is a JSON tool call (``'{"tool": "wait", "args": {"hours": 4, "until": null}}'``); the
observation is the environment's compact observation text. The structured observation (``data``), the
tool result and the state version travel in ``info``.

Every id in ``salesgym.registry()`` is registered under ``salesgym/<CamelCase>`` (``territory-v0`` ->
``salesgym/Territory-v0``, ``territory-100-v0`` -> ``salesgym/Territory100-v0``). Gymnasium 1.x no longer loads
the ``gymnasium.envs`` entry-point group (plugins were removed in 1.0), so registration happens when this module
is imported. Either of these works::

    import gymnasium
    import salesgym.adapters.gymnasium_env  # registers every salesgym id
    env = gymnasium.make("salesgym/Territory-v0")

    env = gymnasium.make("salesgym.adapters.gymnasium_env:salesgym/Territory-v0")  # gymnasium imports it

>>> import gymnasium
>>> env = gymnasium.make("salesgym.adapters.gymnasium_env:salesgym/TerritoryDebug-v0")
>>> text, info = env.reset(seed=3)
>>> text, reward, terminated, truncated, info = env.step('{"tool": "view_opportunity", "args": {}}')
>>> info["tool_result"]["status"]
'ok'
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
from gymnasium import spaces

import salesgym
from salesgym.core.tools import MAX_CALL_CHARS

__all__ = ["ACTION_CHARSET", "OBS_CHARSET", "OBS_MAX_CHARS", "SalesgymGymEnv", "gym_id", "gym_ids", "register_envs",
           "to_charset"]

# Printable ASCII plus tab and newline. Every JSON call can be written in it (JSON escapes any other
# character as \uXXXX), and the environment writes its own text in it; characters outside it (an agent's
# own non-ASCII input echoed back in an error) are shown as Python-style backslash escapes.
OBS_CHARSET: str = string.printable
ACTION_CHARSET: str = string.printable
OBS_MAX_CHARS = 65_536  # a full 100-opportunity portfolio listing is under 10 KB
_TRUNCATED = "\n... (observation truncated)"
_CHARSET_SET = frozenset(OBS_CHARSET)



def gym_id(env_id: str) -> str:
    """``territory-debug-v0`` -> ``salesgym/TerritoryDebug-v0``."""
    *words, version = env_id.split("-")
    return "salesgym/" + "".join(w.capitalize() for w in words) + "-" + version


def gym_ids() -> dict[str, str]:
    """Gymnasium id -> salesgym id, for every registered environment."""
    return {gym_id(env_id): env_id for env_id in salesgym.registry()}


def to_charset(text: str, max_length: int = OBS_MAX_CHARS) -> str:
    """``text`` with characters outside :data:`OBS_CHARSET` escaped and the length capped."""
    if not _CHARSET_SET.issuperset(text):
        text = "".join(c if c in _CHARSET_SET else c.encode("unicode_escape").decode("ascii") for c in text)
    if len(text) > max_length:
        text = text[: max_length - len(_TRUNCATED)] + _TRUNCATED
    return text


class SalesgymGymEnv(gymnasium.Env[str, str]):
    """A registered salesgym environment (default ``territory-v0``) as a Gymnasium text environment.

    Arguments are those of ``salesgym.make(env_id, **kwargs)``. ``reset(seed=...)`` seeds the world;
    ``reset()`` without a seed draws the world seed from the Gymnasium generator, so a seeded reset followed
    by unseeded resets is reproducible. ``step`` accepts the JSON text of a call (a dict is passed through
    too); malformed calls are errors reported in the observation, never exceptions.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium API)

    def __init__(self, env_id: str = "territory-v0", render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.env_id = env_id
        self.env = salesgym.make(env_id, **kwargs)
        self.observation_space = spaces.Text(max_length=OBS_MAX_CHARS, min_length=0, charset=OBS_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_CALL_CHARS, min_length=0, charset=ACTION_CHARSET)
        self._text = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        world_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        obs, info = self.env.reset(seed=world_seed, options=options)
        self._text = to_charset(obs["text"])
        return self._text, {**info, "data": obs["data"], "world_seed": world_seed}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._text = to_charset(obs["text"])
        return self._text, float(reward), bool(terminated), bool(truncated), {**info, "data": obs["data"]}

    def render(self) -> str | None:
        return self._text if self.render_mode == "ansi" else None

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools in OpenAI function-calling format (what a policy needs to write actions)."""
        schemas: list[dict[str, Any]] = self.env.tool_schemas()
        return schemas


def register_envs() -> None:
    """Register every salesgym environment with Gymnasium (idempotent)."""
    for name, env_id in gym_ids().items():
        if name not in gymnasium.registry:
            gymnasium.register(id=name, entry_point=f"{__name__}:SalesgymGymEnv", kwargs={"env_id": env_id})


register_envs()
