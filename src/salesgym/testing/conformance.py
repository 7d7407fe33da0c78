"""The conformance checks: each takes a :class:`Case` and asserts one promise of docs/architecture.md.

Checks use only the public API plus operator-side calls (``event_log``, ``hidden_truth``, ``clone``,
``replay``, ``start_world``) and the engine's state digest; family knowledge comes from the family's
``conformance`` module (see the package docstring).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import salesgym
from salesgym.core.events import strings_in
from salesgym.core.tools import ErrorOutput, json_problem
from salesgym.testing.hostile import Boom, RaisingDict, RaisingMapping

Action = Any
Driver = Callable[[Any, random.Random], Action]
REASON_MAX = 500  # a refusal quotes at most a short excerpt of the input
CONTROL = frozenset(chr(c) for c in range(32)) - {"\n", "\t"}


# --- cases ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One environment configuration: a registered id and the keyword arguments ``make`` gets."""

    env_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in sorted(self.kwargs.items()))
        return f"{self.env_id}[{extra}]" if extra else self.env_id

    def make(self, **overrides: Any) -> Any:
        return salesgym.make(self.env_id, **{**self.kwargs, **overrides})

    def hooks(self, env: Any) -> ModuleType | None:
        """The family's conformance module, if it has one."""
        name = salesgym.family(self.env_id).conformance
        return importlib.import_module(name) if name else None

    def driver(self, env: Any) -> Driver:
        hooks = self.hooks(env)
        found: Driver | None = getattr(hooks, "random_call", None)
        return found if found is not None else schema_call


def registered_cases() -> tuple[Case, ...]:
    """Every registered environment id with its registered defaults; a family whose episodes are costly (a real
    browser) names the ids the kit runs in its spec's ``kit_ids`` (its debug id), and its others are left out."""
    out = []
    for env_id in salesgym.registry():
        only = salesgym.family(env_id).kit_ids
        if only is None or env_id in only:
            out.append(Case(env_id))
    return tuple(out)


# --- drivers ----------------------------------------------------------------------------------------------------
def schema_call(env: Any, rng: random.Random) -> Action:
    """A random call built from the exported schemas, with ids picked from strings the observation showed:
    works for any family, without knowing its tools."""
    seen = [s for s in strings_in(env.observe().get("data", {})) if 0 < len(s) <= 40 and " " not in s]
    tool = rng.choice(env.tool_schemas())["function"]
    return {"tool": tool["name"], "args": _value(tool["parameters"], rng, seen)}


def _value(schema: Mapping[str, Any], rng: random.Random, seen: list[str]) -> Any:
    if "anyOf" in schema:
        return _value(rng.choice(schema["anyOf"]), rng, seen)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        return {k: _value(v, rng, seen) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = rng.randint(schema.get("minItems", 0), min(schema.get("maxItems", 3), 3))
        return [_value(schema["items"], rng, seen) for _ in range(n)]
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 10))
        return rng.randint(math.ceil(lo), math.floor(hi)) if kind == "integer" else round(rng.uniform(lo, hi), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    text = rng.choice(seen) if seen and rng.random() < 0.8 else "hello"
    return text[: schema.get("maxLength", len(text))] or "x"


@dataclass
class Played:
    actions: list[Action] = field(default_factory=list)
    steps: list[tuple[Any, float, bool, bool, dict[str, Any]]] = field(default_factory=list)

    @property
    def rewards(self) -> list[float]:
        return [s[1] for s in self.steps]

    @property
    def observations(self) -> list[Any]:
        return [s[0] for s in self.steps]


def play(env: Any, actions: Iterator[Action] | list[Action], max_steps: int = 10_000) -> Played:
    out = Played()
    for i, action in enumerate(actions):
        if i >= max_steps:
            break
        step = env.step(action)
        out.actions.append(action)
        out.steps.append(step)
        if step[2] or step[3]:
            break
    return out


def driven(case: Case, env: Any, policy_seed: int) -> Iterator[Action]:
    rng, drive = random.Random(policy_seed), case.driver(env)
    while True:
        yield drive(env, rng)


def play_random(case: Case, seed: int, policy_seed: int, max_steps: int = 300) -> tuple[Any, Played]:
    env = case.make()
    env.reset(seed=seed)
    return env, play(env, driven(case, env, policy_seed), max_steps)


def _jsonable(value: Any) -> None:
    json.dumps(value, allow_nan=False)


# --- the checks -------------------------------------------------------------------------------------------------
def check_api(case: Case) -> None:
    """reset/step return the documented shapes; everything returned is plain JSON data; state versions agree."""
    env = case.make()
    try:
        env.step({"tool": "x", "args": {}})
    except RuntimeError:
        pass
    else:
        raise AssertionError("step before reset must raise RuntimeError")
    obs, info = env.reset(seed=1)
    assert set(obs) == {"text", "data"} and isinstance(obs["text"], str) and isinstance(obs["data"], dict)
    assert isinstance(info["state_version"], int) and info["state_version"] == env.state_version
    card = env.instructions()  # the task card: the same text reset hands over (the side-channel check compares
    assert isinstance(card, str) and len(card) > 200 and info["instructions"] == card  # it across hidden twins)
    _jsonable(obs["data"])
    _jsonable(info)
    rng, drive = random.Random(0), case.driver(env)
    for _ in range(40):
        obs, reward, terminated, truncated, info = env.step(drive(env, rng))
        result = info["tool_result"]
        assert set(result) == {"status", "state_version", "time_cost", "resource_cost", "event_ids", "output"}
        assert result["status"] in ("ok", "error")
        assert info["state_version"] == result["state_version"] == env.state_version
        assert isinstance(reward, float) and math.isfinite(reward)
        assert isinstance(terminated, bool) and isinstance(truncated, bool)
        assert env.observe() == obs
        _jsonable(obs["data"])
        _jsonable(info)
        if terminated or truncated:
            break
    for operator_side in (env.score(), env.event_log(), env.hidden_truth()):
        _jsonable(operator_side)


def check_typed_outputs(case: Case, seeds: tuple[int, ...] = (0, 1), max_steps: int = 200) -> None:
    """What the agent receives fits the exported models: every observation's data (``observation_model``) and
    every tool output (the tool's ``output`` model; a refused call's is ``{"error": reason}``), read as JSON."""
    for seed in seeds:
        env = case.make()
        obs, _ = env.reset(seed=seed)
        box, model = env.toolbox, env.observation_model
        problem = json_problem(model, obs["data"])
        assert problem is None, f"{case} seed {seed}: the first observation's data: {problem}"
        rng, drive = random.Random(seed), case.driver(env)
        for step in range(max_steps):
            action = drive(env, rng)
            obs, _, terminated, truncated, info = env.step(action)
            result = info["tool_result"]
            where = f"{case} seed {seed} step {step}"
            if result["status"] == "ok":
                spec, _ = box.parse(action)  # the call as the environment read it (parsing changes nothing)
                problem = spec.output_problem(result["output"])
                assert problem is None, f"{where}: the output of {spec.name}: {problem}"
            else:
                problem = json_problem(ErrorOutput, result["output"])
                assert problem is None, f"{where}: a refusal's output: {problem}"
            problem = json_problem(model, obs["data"])
            assert problem is None, f"{where}: the observation's data: {problem}"
            if terminated or truncated:
                break


def check_same_seed_equality(case: Case, seed: int = 11, policy_seed: int = 5) -> None:
    """Same seed and same actions: the same event log (by hash), rewards, observations and score."""
    env_a, first = play_random(case, seed, policy_seed)
    env_b = case.make()
    env_b.reset(seed=seed)
    second = play(env_b, first.actions)
    assert len(first.steps) > 10
    assert env_a.event_log_hash() == env_b.event_log_hash()
    assert first.rewards == second.rewards
    assert alike(case.hooks(env_a), first.observations, second.observations)
    assert env_a.score() == env_b.score()
    other = case.make()
    other.reset(seed=seed + 1)
    assert other.hidden_truth() != env_a.hidden_truth(), "different seeds must give different worlds"


_SUBPROCESS = """
import json, sys
spec = json.load(sys.stdin)
sys.path[:0] = [p for p in spec["path"] if p not in sys.path]
import salesgym
if spec["env_id"] not in salesgym.registry():  # a family registered at run time (a plugin): the same here
    entry_point, family, defaults = spec["registration"]
    salesgym.register(spec["env_id"], entry_point, spec=family, **defaults)
env = salesgym.make(spec["env_id"], **spec["kwargs"])
env.reset(seed=spec["seed"])
rewards = []
for action in spec["actions"]:
    obs, reward, terminated, truncated, info = env.step(action)
    rewards.append(reward)
    if terminated or truncated:
        break
print(json.dumps({"hash": env.event_log_hash(), "rewards": rewards, "score": env.score()}))
"""


def check_determinism_across_processes(case: Case, seed: int = 4, policy_seed: int = 9) -> None:
    """Another interpreter (another hash seed) replays the same calls to the same log, rewards and score."""
    env, played = play_random(case, seed, policy_seed, max_steps=150)
    spec = {"env_id": case.env_id, "kwargs": dict(case.kwargs), "seed": seed, "actions": played.actions,
            "registration": salesgym.registration(case.env_id), "path": sys.path}
    done = subprocess.run([sys.executable, "-c", _SUBPROCESS], input=json.dumps(spec), capture_output=True,
                          text=True, check=True, timeout=300, env={**os.environ, "PYTHONHASHSEED": "12345"})
    other = json.loads(done.stdout)
    assert other["hash"] == env.event_log_hash()
    assert other["rewards"] == played.rewards
    assert other["score"] == json.loads(json.dumps(env.score()))


def check_replay_equals_live(case: Case, seeds: tuple[int, ...] = (0, 1)) -> None:
    """Folding the event log into a fresh world rebuilds the live state exactly (and the check can fail)."""
    for seed in seeds:
        env, played = play_random(case, seed, policy_seed=100 + seed)
        assert len(env.event_log()) > len(played.steps)
        assert env.replay().digest() == env._state.digest()
        assert env.replay(env.event_log()[:-1]).digest() != env._state.digest()


def check_clone_independence(case: Case, seed: int = 3) -> None:
    """A clone is exact (same calls, same results) and independent (stepping it moves nothing in the original)."""
    env, _ = play_random(case, seed, policy_seed=7, max_steps=25)
    assert not (env._state.terminated or env._state.truncated), "the episode ended before the clone point"
    before = (env.event_log_hash(), env._state.digest(), len(env.event_log()))
    twin = env.clone()
    play(twin, driven(case, twin, 99), max_steps=10)
    assert twin.event_log_hash() != before[0]
    assert (env.event_log_hash(), env._state.digest(), len(env.event_log())) == before
    twin2 = env.clone()
    probe = env.clone()
    actions = play(probe, driven(case, probe, 77), max_steps=30).actions
    first, second = play(env, actions), play(twin2, actions)
    assert env.event_log_hash() == twin2.event_log_hash() and env._state.digest() == twin2._state.digest()
    assert first.rewards == second.rewards and alike(case.hooks(env), first.observations, second.observations)


def check_schemas(case: Case, seed: int = 2) -> None:
    """Strict OpenAI function schemas in the keyword subset strict mode accepts; MCP tools with the same
    schemas (plus the limits strict mode cannot say and the defaults) except that only the arguments without
    a default are required; every accepted call conforms to both."""
    import jsonschema

    from salesgym.core.tools import OPENAI_STRICT_KEYWORDS, openai_strict

    env = case.make()
    tools, mcp = env.tool_schemas(), env.mcp_tools()
    assert tools and [t["name"] for t in mcp] == [t["function"]["name"] for t in tools]
    for tool, other in zip(tools, mcp, strict=True):
        fn = tool["function"]
        assert tool["type"] == "function" and fn["strict"] is True
        assert isinstance(fn["description"], str) and len(fn["description"]) > 20
        jsonschema.Draft202012Validator.check_schema(fn["parameters"])
        _check_strict_object(fn["parameters"], fn["name"], OPENAI_STRICT_KEYWORDS)
        jsonschema.Draft202012Validator.check_schema(other["inputSchema"])
        assert openai_strict(_all_required(other["inputSchema"])) == fn["parameters"]
        assert other["description"] == fn["description"]
        _check_optional_means_default(env, other)
    env, played = play_random(case, seed, policy_seed=3, max_steps=200)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    full = {t["name"]: t["inputSchema"] for t in mcp}
    accepted = [a for a, s in zip(played.actions, played.steps, strict=True) if s[4]["tool_result"]["status"] == "ok"]
    assert len(accepted) > 5
    for action in accepted:
        jsonschema.validate(action["args"], schemas[action["tool"]])
        jsonschema.validate(action["args"], full[action["tool"]])


def _all_required(node: Any, names: bool = False) -> Any:
    """An MCP schema in the strict form: every property required, no defaults."""
    if isinstance(node, list):
        return [_all_required(v) for v in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {k: _all_required(v) for k, v in node.items()}
    out = {k: _all_required(v, k == "properties") for k, v in node.items() if k != "default"}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
    return out


def _check_optional_means_default(env: Any, tool: dict[str, Any]) -> None:
    """The MCP schema requires exactly what the parser requires (the argument model's fields without a
    default): a client may leave every other argument out."""
    spec = env.toolbox.specs[tool["name"]]
    expected = [n for n, f in spec.args.model_fields.items() if f.is_required()]
    assert tool["inputSchema"].get("required", []) == expected, tool["name"]


def _check_strict_object(node: Any, where: str, keywords: frozenset[str], names: bool = False) -> None:
    """OpenAI strict mode: every object lists all its properties as required and forbids others, and only
    the documented keywords appear (``names``: the node maps property names to schemas)."""
    if isinstance(node, dict):
        if not names:
            assert set(node) <= keywords, f"{where}: not in strict mode's subset: {sorted(set(node) - keywords)}"
            if node.get("type") == "object":
                assert "properties" in node, where
                assert sorted(node["required"]) == sorted(node["properties"]), where
                assert node["additionalProperties"] is False, where
            assert "$ref" not in node and "$defs" not in node, where
        for key, value in node.items():
            _check_strict_object(value, f"{where}.{key}", keywords, names=not names and key == "properties")
    elif isinstance(node, list):
        for value in node:
            _check_strict_object(value, where, keywords)


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n):
        value = [value]
    return value


def bad_calls(env: Any) -> dict[str, Any]:
    """Inputs every environment must refuse as data: not calls, malformed JSON, unknown tools and fields,
    deep nesting, huge numbers and keys, objects that cannot even be printed."""
    name = env.tool_schemas()[0]["function"]["name"]
    return {
        "none": None,
        "int": 7,
        "float": 2.5,
        "list": [],
        "empty_object": {},
        "empty_text": "",
        "not_json": "{not json",
        "json_array": "[1, 2]",
        "bytes_not_utf8": b"\xff\xfe",
        "unknown_tool": {"tool": "no_such_tool", "args": {}},
        "tool_not_a_string": {"tool": [name], "args": {}},
        "unknown_field": {"tool": name, "args": {"__unknown__": 1}},
        "args_not_an_object": {"tool": name, "args": [1]},
        "deep_json_text": "[" * 1000 + "]" * 1000,
        "deep_list_argument": {"tool": name, "args": {"x": _deep(2000)}},
        "huge_int_argument": {"tool": name, "args": {"x": 10**5000}},
        "huge_key": {"tool": name, "args": {"k" * 100_000: 1}},
        "unprintable_argument": {"tool": name, "args": {"x": Boom()}},
        "raising_mapping": RaisingMapping(),
        "raising_dict_arguments": {"tool": name, "args": RaisingDict(x=1)},
        "control_characters": {"tool": "\x1b[2J\x00" * 20, "args": {}},
    }


def _counters_removed(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snapshot.items() if k not in ("seq", "public_seq", "invalid_actions")}


def check_bad_input(case: Case) -> None:
    """Every bad input: status error, a short printable reason, one invalid_action event, reward 0, and
    nothing else in the state changes."""
    env = case.make()
    env.reset(seed=1)
    for label, action in bad_calls(env).items():
        twin = env.clone()
        n0, before = len(twin.event_log()), _counters_removed(twin._state.snapshot())
        _, reward, terminated, truncated, info = twin.step(action)
        result = info["tool_result"]
        assert result["status"] == "error", label
        reason = json.dumps(result["output"])
        assert len(reason) <= REASON_MAX, f"{label}: a {len(reason)}-character reason"
        assert CONTROL.isdisjoint(result["output"]["error"]), f"{label}: the reason echoes control characters"
        assert [e["kind"] for e in twin.event_log()[n0:]] == ["invalid_action"], label
        assert reward == 0.0 and not terminated and not truncated, label
        assert _counters_removed(twin._state.snapshot()) == before, label
        assert twin._state.invalid_actions == env._state.invalid_actions + 1, label
        assert result["state_version"] == info["state_version"] == twin.state_version, label


def check_end_of_episode(case: Case) -> None:
    """At the invalid-action ceiling the episode is truncated with consistent versions; a step after the end
    changes nothing and the observation shows its refusal."""
    env = case.make(invalid_action_limit=3)
    env.reset(seed=1)
    for _ in range(3):
        obs, _, terminated, truncated, info = env.step("junk")
    assert truncated and not terminated
    assert info["tool_result"]["state_version"] == info["state_version"] == env.state_version
    n = len(env.event_log())
    obs, reward, terminated, truncated, info = env.step(case.driver(env)(env, random.Random(0)))
    assert info["tool_result"]["status"] == "error" and reward == 0.0 and truncated
    assert len(env.event_log()) == n
    assert info["tool_result"]["output"]["error"] in obs["text"], "the observation must show the refusal"
    assert env.observe() == obs


def check_confidentiality(case: Case, seeds: tuple[int, ...] = (0, 1, 2)) -> None:
    """No hidden truth in observations, tool outputs or ``info`` (the family's scanner), and rewards are
    public: a twin world whose hidden values no buyer reads pays the same rewards for the same calls."""
    for seed in seeds:
        env = case.make()
        obs, info = env.reset(seed=seed)
        hooks = case.hooks(env)
        scanner = hooks.LeakScanner(env) if hooks is not None and hasattr(hooks, "LeakScanner") else None
        seen = 0
        rng, drive = random.Random(seed), case.driver(env)
        for _ in range(300):
            if scanner is not None:
                log = env.event_log()
                scanner.learn(log[seen:])
                seen = len(log)
                scanner.scan(obs, {"info": info})
            obs, _, terminated, truncated, info = env.step(drive(env, rng))
            if terminated or truncated:
                break
        if hooks is not None and hasattr(hooks, "neutral_variant"):
            _same_rewards(case, env, hooks.neutral_variant(env._world))


def _same_rewards(case: Case, env: Any, twin_world: Any) -> None:
    original = case.make()
    original.start_world(env._world)
    twin = case.make()
    twin.start_world(twin_world)
    assert original.hidden_truth() != twin.hidden_truth()
    probe = case.make()
    probe.start_world(env._world)
    actions = play(probe, driven(case, probe, 5), max_steps=300).actions
    a, b = play(original, actions), play(twin, actions)
    assert len(a.steps) == len(b.steps) > 20
    assert a.rewards == b.rewards, "rewards depend on a hidden value no buyer reads"


def alike(hooks: ModuleType | None, a: Any, b: Any) -> bool:
    """Two observations, steps or lists of either look the same to the agent: equal, or, where the family's hooks
    have ``same_observation`` (a browser's screenshots up to its rasteriser's noise), the same by it."""
    if a == b:
        return True
    same: Callable[[Any, Any], bool] | None = getattr(hooks, "same_observation", None)
    if same is None:
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and type(a) is type(b) and len(a) == len(b):
        return all(alike(hooks, x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping) and set(a) == set(b) == {"text", "data"}:
        return bool(same(a, b))
    return False


def first_difference(a: Any, b: Any, path: str = "step") -> str:
    """Where two nested values first differ (a path of keys and indexes) and what stands there on each side,
    cut short: what a failed equality of two steps says, so the cause is found without re-running."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}[{key!r}] is on one side only"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and type(a) is type(b):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f"{path} has {len(a)} items on one side, {len(b)} on the other"
    return f"{path}: {_short(a)} != {_short(b)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else f"{text[:160]}... ({len(text)} characters)"


def check_no_side_channel(case: Case, seed: int = 5, twins: int = 3) -> None:
    """A twin world with the same public facts and other hidden truth looks exactly the same to the agent
    (results, ids, counts, timing, text, rewards, ``info``) for as long as what it has been *told* is the same:
    the family's ``told(observation)`` (the news and results, without ids, versions, clocks or costs). A
    difference anywhere else is a side channel."""
    env = case.make()
    env.reset(seed=seed)
    hooks = case.hooks(env)
    if hooks is None or not hasattr(hooks, "hidden_variant"):
        return  # nothing to vary without the family's knowledge of what is hidden
    compared = 0
    for k in range(twins):
        a, b = case.make(), case.make()
        view_a, view_b = a.start_world(env._world), b.start_world(hooks.hidden_variant(env._world, k))
        assert a.hidden_truth() != b.hidden_truth()
        assert alike(hooks, view_a, view_b), "the twins must start looking the same (observation, task card, info)"
        rng, drive = random.Random(k), case.driver(a)
        for _ in range(400):
            action = drive(a, rng)
            step_a, step_b = a.step(action), b.step(action)
            if hooks.told(step_a[0]) != hooks.told(step_b[0]):
                break  # the agent was told something different: from here on they may differ
            assert alike(hooks, step_a, step_b), (
                f"the agent can tell the twins apart after {action!r}: {first_difference(step_a, step_b)}"
            )
            compared += 1
            if step_a[2] or step_a[3]:
                break
    assert compared > 20, "the twins diverged too early for the check to mean anything"


BLIND_SEEDS = tuple(range(7001, 7021))  # the twenty other instances a fixed call list is replayed on


def blind_replay(case: Case, seed: int = 1, others: tuple[int, ...] = BLIND_SEEDS) -> list[int]:
    """The seeds among ``others`` whose instance the calls that solved seed ``seed``'s instance (the family's
    ``reference_calls``) also solve, replayed blind; empty without the family's hooks."""
    env = case.make()
    env.reset(seed=seed)
    hooks = case.hooks(env)
    if hooks is None or not hasattr(hooks, "reference_calls"):
        return []
    calls = hooks.reference_calls(env)
    assert hooks.solved(env), f"{case}: the reference calls must solve their own instance (seed {seed})"
    solved = []
    for other in others:
        replay = case.make()
        replay.reset(seed=other)
        play(replay, list(calls))
        if hooks.solved(replay):
            solved.append(other)
    return solved


def check_blind_replay(case: Case, seed: int = 1, most: int = 1) -> None:
    """A fixed call list solves no task: seed ``seed``'s reference calls, replayed blind on twenty other seeds,
    solve at most ``most`` of them, so every id, position and ordering an agent could hard-code varies with the
    instance. Families without ``reference_calls`` and ``solved`` hooks (no pass/fail tasks) are not checked."""
    solved = blind_replay(case, seed)
    assert len(solved) <= most, (f"{case}: seed {seed}'s reference calls, replayed blind, solved {len(solved)} of "
                                 f"{len(BLIND_SEEDS)} other instances (seeds {solved})")  # fmt: skip


def check_gymnasium(case: Case) -> None:
    """The Gymnasium adapter passes Gymnasium's own environment checker for this case."""
    from gymnasium.utils.env_checker import check_env

    from salesgym.adapters.gymnasium_env import SalesgymGymEnv

    check_env(SalesgymGymEnv(case.env_id, **case.kwargs), skip_render_check=True)


CHECKS: dict[str, Callable[[Case], None]] = {
    "api": check_api,
    "same_seed_equality": check_same_seed_equality,
    "determinism_across_processes": check_determinism_across_processes,
    "replay_equals_live": check_replay_equals_live,
    "clone_independence": check_clone_independence,
    "schemas": check_schemas,
    "typed_outputs": check_typed_outputs,
    "bad_input": check_bad_input,
    "end_of_episode": check_end_of_episode,
    "confidentiality": check_confidentiality,
    "no_side_channel": check_no_side_channel,
    "gymnasium": check_gymnasium,
    "blind_replay": check_blind_replay,
}
