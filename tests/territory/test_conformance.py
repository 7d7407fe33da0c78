"""The conformance suite every registered environment gets for free (STYLE.md habit 6).

Each ``check_*`` function takes an :class:`EnvCase` (a registered id, its arguments and a random driver) and
asserts one promise of DESIGN.md section 3; the tests below run every check on every case in
``conftest.ENV_CASES``. A new environment or scenario is one line there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from salesgym_testkit import TOOL_NAMES, DiligentSeller, EnvCase, Rollout, play, play_random

from salesgym.envs.territory.env import TerritoryEnv

# --- same seed, same actions ------------------------------------------------------------------------------


def check_same_seed_rollout_equality(case: EnvCase, seed: int = 11, policy_seed: int = 5) -> None:
    env_a, first = play_random(case, seed, policy_seed)
    env_b = case.make()
    second = play(env_b, first.actions, seed=seed)
    assert len(first.steps) > 10
    assert env_a.event_log_hash() == env_b.event_log_hash()
    assert first.rewards == second.rewards
    assert [s.obs for s in first.steps] == [s.obs for s in second.steps]
    assert env_a.score() == env_b.score()
    assert json.dumps(env_a.score(), sort_keys=True)  # operator-side data is plain JSON


def check_different_seeds_differ(case: EnvCase) -> None:
    a, b = case.make(), case.make()
    obs_a, _ = a.reset(seed=1)
    obs_b, _ = b.reset(seed=2)
    assert a.hidden_truth() != b.hidden_truth()
    assert obs_a["data"]["portfolio"] != obs_b["data"]["portfolio"]
    again = case.make()
    again.reset(seed=1)
    assert again.hidden_truth() == a.hidden_truth()


_SUBPROCESS = """
import json, sys
import salesgym
spec = json.load(sys.stdin)
env = salesgym.make(spec["env_id"], **spec["kwargs"])
env.reset(seed=spec["seed"])
rewards = []
for action in spec["actions"]:
    obs, reward, terminated, truncated, info = env.step(action)
    rewards.append(reward)
    if terminated or truncated:
        break
print(json.dumps({"hash": env.event_log_hash(), "rewards": rewards, "primary": env.score()["primary"]}))
"""


def check_determinism_across_processes(case: EnvCase, seed: int = 4, policy_seed: int = 9) -> None:
    env, rollout = play_random(case, seed, policy_seed, max_steps=150)
    spec = {"env_id": case.env_id, "kwargs": dict(case.kwargs), "seed": seed, "actions": rollout.actions}
    done = subprocess.run([sys.executable, "-c", _SUBPROCESS], input=json.dumps(spec), capture_output=True,
                          text=True, check=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": "12345"})
    other = json.loads(done.stdout)
    assert other["hash"] == env.event_log_hash()
    assert other["rewards"] == pytest.approx(rollout.rewards, abs=0, rel=0)
    assert other["primary"] == env.score()["primary"]


# --- replay and clone ---------------------------------------------------------------------------------------


def check_replay_equality(case: EnvCase, seeds: tuple[int, ...] = (0, 1, 2)) -> None:
    for seed in seeds:
        env, rollout = play_random(case, seed, policy_seed=100 + seed)
        assert len(env.event_log()) > len(rollout.steps)
        assert env.replay().digest() == env._state.digest()
        # a log with the last event dropped rebuilds a different state: the comparison can fail
        assert env.replay(env.event_log()[:-1]).digest() != env._state.digest()


def check_clone_independence(case: EnvCase, seed: int = 3) -> None:
    env, _ = play_random(case, seed, policy_seed=7, max_steps=25)
    if env._state.terminated or env._state.truncated:
        pytest.skip("episode ended before the clone point")
    log_hash, digest, n_events = env.event_log_hash(), env._state.digest(), len(env.event_log())
    twin = env.clone()
    # step the clone differently: the original must not move
    play(twin, [{"tool": "wait", "args": {"hours": 8, "until": None}}] * 3
         + [{"tool": "find_stakeholders", "args": {"opportunity_id": "o000"}}], reset=False)
    assert twin.event_log_hash() != log_hash
    assert (env.event_log_hash(), env._state.digest(), len(env.event_log())) == (log_hash, digest, n_events)
    # step a fresh clone and the original identically: both end identical
    twin2 = env.clone()
    actions = list(_driver_actions(case, env, 30, 77))
    first = play(env, actions, reset=False)
    second = play(twin2, actions, reset=False)
    assert env.event_log_hash() == twin2.event_log_hash()
    assert env._state.digest() == twin2._state.digest()
    assert first.rewards == second.rewards
    assert twin.event_log_hash() != env.event_log_hash()


def _driver_actions(case: EnvCase, env: Any, n: int, seed: int) -> Iterator[Any]:
    """``n`` random calls picked against a throwaway clone, so they can be replayed on others."""
    import random

    probe = env.clone()
    rng = random.Random(seed)
    for _ in range(n):
        action = case.policy(probe, rng)
        _, _, terminated, truncated, _ = probe.step(action)
        yield action
        if terminated or truncated:
            return


# --- schemas --------------------------------------------------------------------------------------------------


def check_schema_validity(case: EnvCase) -> None:
    env = case.make()
    tools = env.tool_schemas()
    assert [t["function"]["name"] for t in tools] == list(TOOL_NAMES)
    for tool in tools:
        assert tool["type"] == "function"
        fn = tool["function"]
        assert fn["strict"] is True
        assert isinstance(fn["description"], str) and len(fn["description"]) > 20
        schema = fn["parameters"]
        jsonschema.Draft202012Validator.check_schema(schema)
        _check_strict_object(schema, fn["name"])
    mcp = env.mcp_tools()
    assert [t["name"] for t in mcp] == list(TOOL_NAMES)
    assert [t["inputSchema"] for t in mcp] == [t["function"]["parameters"] for t in tools]


def _check_strict_object(node: Any, where: str) -> None:
    """OpenAI strict mode: every object lists all its properties as required and forbids others."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            assert "properties" in node, where
            assert sorted(node["required"]) == sorted(node["properties"]), where
            assert node["additionalProperties"] is False, where
        assert "$ref" not in node and "$defs" not in node, where
        for key, value in node.items():
            _check_strict_object(value, f"{where}.{key}")
    elif isinstance(node, list):
        for value in node:
            _check_strict_object(value, where)


def check_valid_calls_validate_against_schema(case: EnvCase, seed: int = 2) -> None:
    """Every call the environment accepted is valid under the exported schema (and nothing else is needed)."""
    env, rollout = play_random(case, seed, policy_seed=3, max_steps=200)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in env.tool_schemas()}
    accepted = [s.action for s in rollout.steps if s.info["tool_result"]["status"] == "ok"]
    assert len(accepted) > 5
    for action in accepted:
        jsonschema.validate({k: action["args"].get(k) for k in schemas[action["tool"]]["properties"]},
                            schemas[action["tool"]])


# --- confidentiality ------------------------------------------------------------------------------------------

FORBIDDEN_KEYS = frozenset({"true_value", "required_discount", "viable", "authority", "disposition", "persona",
                            "proof_ref", "deadline_day", "budget_day", "nonviable_reason", "competitor",
                            "competitor_aggression", "fit", "responsiveness_h", "pains_hidden", "mechanisms",
                            "tape"})
ROLE_WORDS = ("economic_buyer", "technical_evaluator", "champion", "blocker")
NUMERIC_WHITELIST = frozenset({"now_hours", "time_cost", "waited_hours", "hours", "se_hours", "state_version",
                               "day", "week", "days_left", "authority_pct", "invalid_actions", "last_activity_day",
                               "capacity_left", "resource_cost"})  # public clock, cost and capacity figures


def _number(value: float) -> re.Pattern[str]:
    return re.compile(rf"(?<![\d.]){re.escape(repr(value))}(?!\d)")


def _distinctive(value: float) -> bool:
    """Numbers with enough digits that seeing one by chance is implausible."""
    text = repr(value)
    return "." in text and not text.endswith(".0") and len(text.lstrip("-").replace(".", "")) >= 3


class Secrets:
    """What the agent must never see, built operator-side from ``hidden_truth()`` and the event log."""

    def __init__(self, env: TerritoryEnv) -> None:
        hidden = env.hidden_truth()
        self.stakeholders = hidden["stakeholders"]
        self.numbers: list[float] = []
        self.strings: list[str] = []
        self.competitors: set[str] = set()
        public_vocab = " ".join(_public_vocabulary(env)).lower()
        for opp in hidden["opportunities"].values():
            self.numbers += [opp["true_value"], opp["required_discount"]]
            if opp["nonviable_reason"]:
                self.strings.append(opp["nonviable_reason"])
            if opp["competitor"]:
                self.competitors.add(opp["competitor"])
        for person in self.stakeholders.values():
            self.numbers += [person["authority"], person["disposition"], person["responsiveness_h"]]
            if person["persona"].lower() not in public_vocab:
                self.strings.append(person["persona"])
        self.numbers = [n for n in self.numbers if _distinctive(n)]
        self.patterns = [_number(n) for n in self.numbers]
        self.strings.append(env._secret.decode())
        self.revealed_roles: set[str] = set()
        self.competitor_noticed: set[str] = set()
        self.proofs: set[str] = set()

    def learn(self, events: list[dict[str, Any]]) -> None:
        """Update what the agent has legitimately learnt (discovery, competitor notices) and the proofs."""
        for e in events:
            p = e["payload"]
            if e["kind"] == "discovery_held":
                self.revealed_roles.update(p["roles"])
                if p.get("eb_hint"):
                    self.revealed_roles.add(p["eb_hint"])
            elif e["kind"] == "inbox_received" and p["kind"] == "competitor":
                self.competitor_noticed.update(c for c in self.competitors if c in p["text"])
            elif e["kind"] == "evidence_recorded":
                self.proofs.add(p["evidence"]["proof_ref"])

    def scan(self, obs: dict[str, Any], output: dict[str, Any]) -> None:
        for where, tree in (("data", obs["data"]), ("output", output)):
            self._scan_tree(tree, where)
        text = obs["text"]
        blob = text + "\n" + json.dumps(obs["data"]) + "\n" + json.dumps(output)
        for secret in self.strings:
            assert secret not in blob, f"hidden string {secret!r} leaked"
        for proof in self.proofs:
            assert proof not in blob, "an evidence proof leaked"
        assert "proof_ref" not in blob
        for competitor in self.competitors - self.competitor_noticed:
            assert competitor not in blob, f"competitor {competitor!r} named before any notice"
        for line in text.splitlines():
            if line.startswith(("Last:", "Mon ", "Tue ", "Wed ", "Thu ", "Fri ")):
                continue  # the result line is checked structurally; the first line is the clock and capacity
            for pattern in self.patterns:
                assert not pattern.search(line), f"hidden number {pattern.pattern} in {line!r}"

    def _scan_tree(self, node: Any, where: str, key: str = "") -> None:
        if isinstance(node, dict) and isinstance(node.get("columns"), (list, tuple)) and "rows" in node:
            node = {"rows": [dict(zip(node["columns"], row, strict=True)) for row in node["rows"]]}
        if isinstance(node, dict):
            for k, v in node.items():
                assert k not in FORBIDDEN_KEYS, f"hidden key {k!r} at {where}"
                if k in self.stakeholders and isinstance(v, str) and v in ROLE_WORDS:
                    assert k in self.revealed_roles, f"role of {k} shown before discovery at {where}"
                if k in ROLE_WORDS and isinstance(v, str) and v in self.stakeholders:
                    assert v in self.revealed_roles, f"{v} named {k} before discovery at {where}"
                self._scan_tree(v, f"{where}.{k}", k if key not in NUMERIC_WHITELIST else key)
            if node.get("role") is not None and node.get("id") in self.stakeholders:
                assert node["id"] in self.revealed_roles, f"role of {node['id']} shown at {where}"
        elif isinstance(node, (list, tuple)):
            for v in node:
                self._scan_tree(v, where, key)
        elif isinstance(node, float) and key not in NUMERIC_WHITELIST:
            assert node not in self.numbers, f"hidden number {node} at {where}"
        elif isinstance(node, str):
            for pattern in self.patterns:
                assert not pattern.search(node), f"hidden number {pattern.pattern} in {node!r} at {where}"


def _public_vocabulary(env: TerritoryEnv) -> list[str]:
    spec = env._world.spec
    words = [*spec.industries, *spec.product_lines, *spec.stacks, *spec.company_words]
    words += [t for titles in spec.titles.values() for t in titles]
    for pain in spec.pains:
        words += [pain.label, *pain.keywords, *pain.headlines]
    return words


def check_confidentiality(case: EnvCase, seeds: tuple[int, ...] = (0, 1, 2, 3)) -> None:
    steps = 0
    for seed in seeds:
        env = case.make()
        obs, _ = env.reset(seed=seed)
        secrets = Secrets(env)
        secrets.learn(env.event_log())
        secrets.scan(obs, {})
        rollout: Rollout = play(env, _scanning_policy(case, env, secrets, seed), seed=None, reset=False,
                                max_steps=400)
        steps += len(rollout.steps)
    assert steps > 200
    if case.family == "territory":
        _scan_diligent_episode(case)


def _scan_diligent_episode(case: EnvCase, seed: int = 1) -> None:
    """A scripted seller that holds discovery meetings, so revealed roles and budget bands are exercised."""
    env = case.make()
    obs, _ = env.reset(seed=seed)
    secrets = Secrets(env)
    secrets.learn(env.event_log())
    seller = DiligentSeller()
    seen = len(env.event_log())
    for i in range(300):
        action = seller.act(env)
        if i % 5 == 4:
            action = {"tool": "view_opportunity", "args": {"opportunity_id": f"o{(i // 5) % 4:03d}"}}
        obs, _, terminated, truncated, info = env.step(action)
        log = env.event_log()
        secrets.learn(log[seen:])
        seen = len(log)
        secrets.scan(obs, info["tool_result"]["output"])
        if terminated or truncated:
            break
    assert secrets.revealed_roles, "the scripted seller never held discovery: the role check did not run"


def _scanning_policy(case: EnvCase, env: Any, secrets: Secrets, seed: int) -> Iterator[Any]:
    """Random calls, scanning each observation and tool output as it arrives (view_opportunity often)."""
    import random

    rng = random.Random(seed)
    seen = len(env.event_log())
    while True:
        action = case.policy(env, rng)
        if rng.random() < 0.25:
            oid = rng.choice(sorted(env._world.opportunities))
            action = {"tool": "view_opportunity", "args": {"opportunity_id": oid}}
        yield action
        log = env.event_log()
        secrets.learn(log[seen:])
        seen = len(log)
        secrets.scan(env.observe(), env.observe()["data"]["last_result"]["output"])


# --- the tests: every check on every case -------------------------------------------------------------------


def test_same_seed_same_actions_give_identical_log_rewards_and_observations(env_case: EnvCase) -> None:
    check_same_seed_rollout_equality(env_case)


def test_different_seeds_give_different_territories(env_case: EnvCase) -> None:
    check_different_seeds_differ(env_case)


def test_replayed_log_rebuilds_the_live_state(env_case: EnvCase) -> None:
    check_replay_equality(env_case)


def test_clone_is_independent_and_exact(env_case: EnvCase) -> None:
    check_clone_independence(env_case)


def test_tool_schemas_are_valid_strict_json_schema(env_case: EnvCase) -> None:
    check_schema_validity(env_case)


def test_accepted_calls_conform_to_exported_schemas(env_case: EnvCase) -> None:
    check_valid_calls_validate_against_schema(env_case)


def test_no_hidden_truth_in_observations_or_tool_outputs(env_case: EnvCase) -> None:
    check_confidentiality(env_case)


@pytest.mark.parametrize("index", [0, 2])
def test_determinism_across_processes(index: int) -> None:
    from salesgym_testkit import ENV_CASES

    check_determinism_across_processes(ENV_CASES[index])


def test_the_confidentiality_scanner_catches_planted_leaks() -> None:
    """The scan above can fail: planted hidden values in an observation or output are caught."""
    env = TerritoryEnv(n_opportunities=10, horizon_days=30, family="public_sector", template="zombie_pipeline")
    obs, _ = env.reset(seed=5)
    secrets = Secrets(env)
    secrets.scan(obs, {})
    hidden = env.hidden_truth()
    opp = next(o for o in hidden["opportunities"].values() if _distinctive(o["true_value"]))
    sid, person = next(iter(hidden["stakeholders"].items()))
    nonviable = next(o for o in hidden["opportunities"].values() if o["nonviable_reason"])
    competitor = next(o["competitor"] for o in hidden["opportunities"].values() if o["competitor"])
    plants: list[dict[str, Any]] = [
        {"value": opp["true_value"]},
        {"note": f"worth {opp['true_value']}k"},
        {"viable": True},
        {"stakeholders": [{"id": sid, "role": person["role"] if person["role"] in ROLE_WORDS else "champion"}]},
        {"roles": {sid: "economic_buyer"}},
        {"reason": nonviable["nonviable_reason"]},
        {"text": f"{competitor} is here"},
        {"secret": env._secret.decode()},
    ]
    for plant in plants:
        with pytest.raises(AssertionError):
            secrets.scan(obs, plant)
