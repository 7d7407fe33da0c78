"""Which policy plays an episode, as a small picklable value the workers build the policy from.

A :class:`PolicySpec` is one of three kinds:

- ``builtin``: a registered policy by name (``--policy expected-value``), built with
  ``salesgym.agents.make_policy(name, seed, hidden_truth)``;
- ``agent``: any class or factory with the policy interface (``--agent mypkg.agents:MySeller``);
- ``llm``: the language-model policy with its configuration (``--policy llm --model M --base-url U``), built
  as ``salesgym.agents.llm.LLMPolicy(seed, LLMConfig(**config))``.

The agent contract (docs/benchmark.md, "Your own agent"): ``module:attr`` names a class or a factory that is
called with one positional argument, a seed (an int; :func:`outside_seed` of the episode's policy seed, so
the world's seed never reaches code from outside the package), ``attr(seed)``, and returns an object
with ``reset(observation, tool_schemas, instructions)`` and ``act(observation) -> action``; it may have
``observe_result(tool_result)``, ``observe_reward(reward)``, ``turn_record()`` and ``episode_record()``
(subclassing :class:`salesgym.agents.Policy` gives them all). Its leaderboard name is the built object's
``name`` attribute when it sets one, else ``module:attr``. :func:`resolve_agent` checks all of this in the
main process (it builds the agent once, with seed 0) before any episode runs; workers import the module by
its path, with the directory the benchmark was started from on ``sys.path`` (so an agent in the current
directory works, like ``python -m``).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILTIN, AGENT, LLM, SERVICE = "builtin", "agent", "llm", "service"
LLM_NAME = "llm"
LLM_INSTALL = "pip install 'salesgym[llm]'"
MAX_NAME = 80
_INHERITED_NAME = "policy"  # salesgym.agents.Policy.name: a subclass that did not choose a name


class PolicySpecError(Exception):
    """An ``--agent`` or ``--policy llm`` that cannot be used; the message is one line for the user. ``code``
    is the exit status: 2 for a value that is not ``module:attr`` at all (a bad command line), else 1."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """How to build one policy in a worker. ``name`` is what the leaderboard and the store call it."""

    kind: str
    name: str
    target: str = ""  # module:attr of an agent
    config: str = ""  # an llm policy's configuration, canonical JSON text (hashable, picklable)
    source_sha256: str = ""  # an agent's module source: part of the run id, so editing the agent starts a new run
    path: str = ""  # directory put on sys.path before importing an agent (not part of the run id)

    @classmethod
    def builtin(cls, name: str) -> PolicySpec:
        return cls(BUILTIN, name)

    def to_dict(self) -> dict[str, Any]:
        """What identifies the policy in a run's configuration (and so in its id)."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.target:
            out["target"] = self.target
        if self.config:
            out["config"] = json.loads(self.config)
        if self.source_sha256:
            out["source_sha256"] = self.source_sha256
        return out

    def build(self, seed: int, hidden_truth: dict[str, Any] | None, family: str) -> Any:
        """A fresh policy for one episode (called in the worker); a built-in one from ``family``'s suite."""
        if self.kind == BUILTIN:
            from salesgym.agents import make_policy

            return make_policy(self.name, seed=seed, hidden_truth=hidden_truth, family=family)
        if self.kind == AGENT:
            return with_optional_methods(_import_target(self.target, self.path)(outside_seed(seed)))
        if self.kind == LLM:
            config_cls, policy_cls = _llm_classes()
            return policy_cls(outside_seed(seed), config_cls(**json.loads(self.config)))
        if self.kind == SERVICE:  # an agent's sessions on a service, by policy seed (bench/remote.py)
            from salesgym.agents.base import Replay

            return Replay(json.loads(self.config)["by_seed"].get(str(seed), []))
        raise PolicySpecError(f"unknown policy kind {self.kind!r}")


def outside_seed(seed: int) -> int:
    """The seed an agent from outside the package (``--agent``, ``llm``) gets: a one-way hash of the policy
    seed. On a private split the policy seed of trial 0 is the world's secret-derived seed, and with it an
    agent could build the world itself and read its hidden truth; built-in policies are the package's own."""
    digest = hashlib.sha256(f"salesgym/agent-seed/v1:{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # 63 bits


# -- agents ----------------------------------------------------------------------------------------
OPTIONAL = ("observe_result", "observe_reward", "turn_record", "episode_record")


class _Completed:
    """An agent that lacks some optional method of the interface, with the default (do nothing, no record)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def reset(self, observation: Any, tool_schemas: Any, instructions: str = "") -> None:
        self.agent.reset(observation, tool_schemas, instructions)

    def act(self, observation: Any) -> Any:
        return self.agent.act(observation)

    def observe_result(self, tool_result: Any) -> None:
        method = getattr(self.agent, "observe_result", None)
        if callable(method):
            method(tool_result)

    def observe_reward(self, reward: float) -> None:
        method = getattr(self.agent, "observe_reward", None)
        if callable(method):
            method(reward)

    def turn_record(self) -> Any:
        method = getattr(self.agent, "turn_record", None)
        return method() if callable(method) else None

    def episode_record(self) -> Any:
        method = getattr(self.agent, "episode_record", None)
        return method() if callable(method) else {}


def with_optional_methods(agent: Any) -> Any:
    """The agent itself when it has the whole interface, else wrapped so the episode loop can call every hook."""
    return agent if all(callable(getattr(agent, m, None)) for m in OPTIONAL) else _Completed(agent)


def _split_target(target: str) -> tuple[str, str]:
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr or ":" in attr:
        raise PolicySpecError(
            f"--agent {target!r}: expected module:Class or module:factory (e.g. mypkg.agents:MySeller)", 2
        )
    return module, attr


def _import_target(target: str, path: str = "") -> Any:
    module_name, attr = _split_target(target)
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        missing = f" ({err})" if err.name != module_name else ""
        raise PolicySpecError(f"--agent {target}: cannot import module {module_name!r}{missing}") from err
    except Exception as err:  # the agent's own module failed while importing
        reason = f"{type(err).__name__}: {err}"
        raise PolicySpecError(f"--agent {target}: importing {module_name!r} failed: {reason}") from err
    try:
        return getattr(module, attr)
    except AttributeError:
        raise PolicySpecError(f"--agent {target}: module {module_name!r} has no attribute {attr!r}") from None


def _source_sha256(target: str) -> str:
    module = sys.modules.get(_split_target(target)[0])
    try:
        source = inspect.getsourcefile(module) if module is not None else None
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16] if source else ""
    except (OSError, TypeError):
        return ""


def _check_name(name: str, target: str) -> str:
    if not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise PolicySpecError(
            f"--agent {target}: its name {name[:MAX_NAME]!r} must be 1-{MAX_NAME} printable characters"
        )
    return name


def resolve_agent(target: str, path: str | None = None) -> PolicySpec:
    """Import, build once (seed 0) and check an ``--agent module:attr``; a :class:`PolicySpecError` otherwise."""
    where = os.getcwd() if path is None else path
    obj = _import_target(target, where)
    if not callable(obj):
        raise PolicySpecError(
            f"--agent {target}: is a {type(obj).__name__}, not a class or a factory (called as {target}(seed))"
        )
    try:
        built = obj(0)
    except Exception as err:
        raise PolicySpecError(f"--agent {target}: {target}(seed) raised {type(err).__name__}: {err}") from err
    missing = [m for m in ("reset", "act") if not callable(getattr(built, m, None))]
    if missing:
        raise PolicySpecError(
            f"--agent {target}: built a {type(built).__name__} without {' and '.join(f'{m}()' for m in missing)}; an "
            "agent needs reset(observation, tool_schemas, instructions) and act(observation)"
        )
    name = getattr(built, "name", None)
    if not isinstance(name, str) or name == _INHERITED_NAME:
        name = target
    return PolicySpec(AGENT, _check_name(name, target), target=target, source_sha256=_source_sha256(target), path=where)


# -- the language-model policy ---------------------------------------------------------------------
def _llm_classes() -> tuple[Any, Any]:
    try:
        from salesgym.agents.llm import LLMConfig, LLMPolicy, ensure_sdk

        ensure_sdk()  # the policy imports the SDK only when it plays: check here, before any episode
    except ImportError as err:
        raise PolicySpecError(f"--policy llm needs the language-model policy: {LLM_INSTALL} ({err})") from err
    return LLMConfig, LLMPolicy


def resolve_llm(options: dict[str, Any], probe: bool = True) -> PolicySpec:
    """``--policy llm``: build ``LLMConfig(**options)`` here, so a bad option fails before any episode; with
    ``probe``, ask the endpoint too (:func:`check_endpoint`)."""
    config_cls, _ = _llm_classes()
    try:
        config = config_cls.from_dict(options)  # an unknown field names the valid ones
    except (TypeError, ValueError) as err:
        raise PolicySpecError(f"--policy llm: {err}") from err
    key_env = getattr(config, "api_key_env", None)
    if key_env and not os.environ.get(key_env):  # every episode would stop at its first request: say it now
        raise PolicySpecError(
            f"--policy llm: set the environment variable {key_env} to the endpoint's API key (any value for a "
            "local server that ignores it), or name another with --api-key-env"
        )
    config = config.replace(**check_endpoint(config)) if probe else config
    data = config.to_dict() if hasattr(config, "to_dict") else dict(options)
    return PolicySpec(LLM, LLM_NAME, config=json.dumps(data, sort_keys=True, default=str))


def _endpoint(base_url: str | None) -> str:
    return base_url or "the OpenAI API"


def context_note(spec: PolicySpec) -> str | None:
    """A note for a model whose context length neither the configuration nor the endpoint gave: the policy
    then assumes the default, and a model that reads fewer tokens would get requests it cannot take."""
    if spec.kind != LLM or not spec.config:
        return None
    config = json.loads(spec.config)
    if config.get("context_tokens") is not None:
        return None
    from salesgym.llm.config import DEFAULT_CONTEXT_TOKENS

    return (f"the endpoint at {_endpoint(config.get('base_url'))} publishes no context length for "
            f"{config.get('model')}: the policy assumes {DEFAULT_CONTEXT_TOKENS:,} tokens; give --context-tokens "
            "if the model reads fewer")  # fmt: skip


def check_endpoint(config: Any) -> dict[str, Any]:
    """``/v1/models`` of ``config``'s endpoint, asked once: one error line when it does not answer or refuses
    the key (rather than a run of stopped episodes); the fields to add to the configuration: the context
    length it publishes, when the configuration gives none (so the run records the value its episodes use)."""
    from salesgym.llm.client import ChatClient

    info = ChatClient(config).probe()
    where = _endpoint(config.base_url)
    if info.unreachable is not None:
        raise PolicySpecError(
            f"--policy llm: the endpoint at {where} does not answer ({info.unreachable}); start it or check --base-url"
        )
    if info.refused is not None:
        raise PolicySpecError(f"--policy llm: the endpoint at {where} refused the API key ({info.refused})")
    if config.context_tokens is None and info.context_tokens is not None:
        return {"context_tokens": info.context_tokens}
    return {}
