"""The Gymnasium adapter: registration, gymnasium's own environment checker, and a text rollout."""

from __future__ import annotations

import json
import random
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from salesgym_testkit import territory_random_action

from salesgym.adapters import gymnasium_env
from salesgym.adapters.gymnasium_env import OBS_CHARSET, SalesgymGymEnv, register_envs, to_charset


def test_module_colon_id_syntax_makes_the_environment() -> None:
    env = gymnasium.make("salesgym.adapters.gymnasium_env:salesgym/TerritoryDebug-v0")
    assert isinstance(env.unwrapped, SalesgymGymEnv)
    assert env.unwrapped.env_id == "territory-debug-v0"


def test_plain_id_works_after_importing_the_adapter() -> None:
    assert "salesgym/Territory-v0" in gymnasium.registry
    env = gymnasium.make("salesgym/Territory-v0", n_opportunities=10, horizon_days=30)
    text, info = env.reset(seed=4)
    assert len(info["data"]["portfolio"]["rows"]) == 10
    assert text.startswith("Mon 2027-01-04")


def test_register_envs_is_idempotent(recwarn: pytest.WarningsRecorder) -> None:
    spec = gymnasium.spec("salesgym/Territory-v0")
    register_envs()
    register_envs()
    assert gymnasium.spec("salesgym/Territory-v0") is spec
    assert not [w for w in recwarn if "Overriding" in str(w.message)]


def test_gymnasium_does_not_load_entry_point_plugins() -> None:
    """Gymnasium 1.x dropped the plugin loader; if it ever returns, the pyproject entry point takes over."""
    import gymnasium.envs.registration as registration

    assert not hasattr(registration, "load_plugin_envs")


@pytest.mark.filterwarnings("error::UserWarning")
def test_gymnasium_env_checker_passes() -> None:
    env = gymnasium.make("salesgym/TerritoryDebug-v0")
    check_env(env.unwrapped, skip_render_check=True)


def test_seeded_resets_are_reproducible_and_unseeded_ones_follow_the_seed() -> None:
    env = SalesgymGymEnv("territory-debug-v0")
    a, info_a = env.reset(seed=123)
    b, info_b = env.reset()
    c, info_c = env.reset(seed=123)
    d, info_d = env.reset()
    assert (a, info_a["world_seed"]) == (c, info_c["world_seed"]) and info_a["world_seed"] == 123
    assert b == d and info_b["world_seed"] == info_d["world_seed"] != 123


def test_text_rollout_matches_the_native_environment() -> None:
    env = SalesgymGymEnv("territory-debug-v0")
    text, info = env.reset(seed=9)
    assert text in env.observation_space and info["state_version"] == 1
    rng = random.Random(0)
    native = gymnasium_env.salesgym.make("territory-debug-v0")
    native.reset(seed=9)
    statuses = set()
    total = 0.0
    for _ in range(200):
        action = json.dumps(territory_random_action(env.env, rng))
        assert action in env.action_space
        text, reward, terminated, truncated, info = env.step(action)
        n_text, n_reward, *_ = native.step(action)
        assert text == n_text["text"] and reward == n_reward
        assert text in env.observation_space
        assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
        assert {"tool_result", "data", "state_version"} <= set(info)
        assert info["tool_result"]["state_version"] == info["state_version"]
        statuses.add(info["tool_result"]["status"])
        total += reward
        if terminated or truncated:
            break
    assert statuses == {"ok", "error"}
    assert env.env.event_log_hash() == native.event_log_hash()


def test_malformed_and_non_ascii_actions_are_errors_in_the_space() -> None:
    env = SalesgymGymEnv("territory-debug-v0", render_mode="ansi")
    env.reset(seed=0)
    for action in ("not json", '{"tool": "wäit☃", "args": {}}', {"tool": "\x00\u200b"}, "x" * 30_000):
        text, _reward, _terminated, _truncated, info = env.step(action)  # type: ignore[arg-type]
        assert info["tool_result"]["status"] == "error"
        assert text in env.observation_space
        assert "Last: error" in text
        assert env.render() == text


def test_to_charset_escapes_and_caps() -> None:
    assert to_charset("plain text\n") == "plain text\n"
    escaped = to_charset("caf\u00e9 \u2603 \x00 \U0001f600")
    assert set(escaped) <= set(OBS_CHARSET)
    assert escaped == "caf\\xe9 \\u2603 \\x00 \\U0001f600"
    capped = to_charset("a" * 100, max_length=50)
    assert len(capped) == 50 and capped.endswith("(observation truncated)")


def test_bad_render_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        SalesgymGymEnv("territory-debug-v0", render_mode="human")


def test_every_registered_id_is_a_gymnasium_id() -> None:
    from salesgym.adapters.gymnasium_env import gym_id, gym_ids

    assert set(gym_ids().values()) == set(gymnasium_env.salesgym.registry())
    assert gym_id("territory-100-v0") == "salesgym/Territory100-v0"
    env = gymnasium.make("salesgym/Territory100-v0")
    text, _ = env.reset(seed=1)
    assert "Identified 100" in text


@pytest.mark.parametrize("options", [{"ablation": "no_resource_limits"}, {"reward": 1}, {"nonsense": True}, [1, 2]])
def test_bad_reset_options_are_a_clear_error_and_change_nothing(options: Any) -> None:
    env = SalesgymGymEnv("territory-debug-v0")
    env.reset(seed=3)
    before = env.env.event_log_hash()
    with pytest.raises(ValueError, match=r"reset option|mapping"):
        env.reset(seed=4, options=options)
    assert env.env.event_log_hash() == before


def test_an_ablation_made_into_the_environment_changes_world_and_reward_together() -> None:
    plain = SalesgymGymEnv("territory-debug-v0")
    sparse = SalesgymGymEnv("territory-debug-v0", ablation="sparse_reward")
    assert sparse.env.family.reward_config.weights[:7] == (0.0,) * 7
    assert plain.env.family.reward_config.weights != sparse.env.family.reward_config.weights
    unlimited = SalesgymGymEnv("territory-debug-v0", ablation="no_resource_limits")
    unlimited.reset(seed=1)
    assert unlimited.env._world.capacity["se"] == 1000.0
