"""The SkyRL-gym adapter: made through ``skyrl_gym.make``, full episodes played with tool calls written as
model text, the way SkyRL's generator drives a ``BaseTextEnv`` (runs in its own venv: ``.ci/run``)."""

from __future__ import annotations

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from env_episodes import hermes, reference  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402

import salesgym  # noqa: E402
from salesgym.adapters import skyrl  # noqa: E402
from salesgym.adapters.tool_episode import split_tasks  # noqa: E402


def play(env: BaseTextEnv, replies: list[str]) -> tuple[list[float], list[dict], str]:
    """SkyRL's loop: init on the row's prompt, then each reply as text until ``done``."""
    chat, _ = env.init([{"role": "user", "content": "placeholder"}])
    assert [m["role"] for m in chat] == ["system", "user"]
    rewards, outputs = [], []
    for reply in replies:
        out = env.step(reply)
        rewards.append(out["reward"])
        outputs.append(out)
        if out["done"]:
            break
    return rewards, outputs, chat[0]["content"]


@pytest.mark.parametrize(
    ("env_id", "family", "seed"),
    [("territory-debug-v0", "territory", 3), ("desk-debug-v0", "desk", 5), ("workflows-debug-v0", "workflows", 2)],
)
def test_full_episode_through_skyrl_make_matches_the_native_environment(env_id: str, family: str, seed: int) -> None:
    ref = reference(lambda: salesgym.make(env_id), family, seed)
    env = skyrl_gym.make("salesgym", env_config=None, extras={"env_id": env_id, "seed": seed, "max_turns": 10_000})
    assert isinstance(env, skyrl.SalesgymTextEnv) and isinstance(env, BaseTextEnv)
    rewards, outputs, system = play(env, [hermes(a) for a in ref.actions])
    assert len(outputs) == len(ref.actions)  # the episode ended exactly when the native one did
    assert rewards == ref.rewards and sum(rewards) == pytest.approx(ref.episode_return)
    last = outputs[-1]
    assert last["done"] and last["observations"] == [] and last["metadata"]["terminated"]
    report = last["metadata"]["salesgym"]
    assert report["event_log_hash"] == ref.event_log_hash and report["score"] == ref.score
    assert all(o["observations"][0]["role"] == "user" for o in outputs[:-1])
    # the tools are offered with the environment's own schemas, in the call format parse_tool_call reads
    for schema in salesgym.make(env_id).tool_schemas():
        assert f'"name":"{schema["function"]["name"]}"' in system
    assert "<tool_call>" in system
    metrics = env.get_metrics()
    assert metrics["episode_return"] == pytest.approx(ref.episode_return) and metrics["steps"] == len(ref.actions)


def test_per_id_registrations_and_split_rows() -> None:
    for env_id in salesgym.registry():
        assert skyrl_gym.spec(f"salesgym/{env_id}").kwargs == {"env_id": env_id}
    skyrl.register_envs()  # idempotent
    row = skyrl.split_rows("debug", max_turns=4, limit=1)[0]
    task = split_tasks("debug", limit=1)[0]
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config={"max_turns": 99}, extras=extras)
    ref = reference(lambda: task.start().env, "territory", task.seed)
    _, outputs, _ = play(env, [hermes(a) for a in ref.actions])
    assert len(outputs) == 4 and outputs[-1]["done"] and outputs[-1]["metadata"]["truncated"]  # max_turns
    assert [o["reward"] for o in outputs] == ref.rewards[:4]
    # cut at max_turns, still scored: the verifier's score of the episode as it stands, in the report and metrics
    cut = env.episode.env.score()
    assert outputs[-1]["metadata"]["salesgym"]["score"] == cut
    assert env.get_metrics() == {"episode_return": sum(ref.rewards[:4]), "steps": 4, "score": float(cut["primary"])}
    env2 = skyrl_gym.make("salesgym/desk-debug-v0", extras={"seed": 5})
    assert env2.episode.env_id == "desk-debug-v0"


def test_text_without_a_call_is_one_invalid_action_and_bad_rows_are_refused() -> None:
    env = skyrl_gym.make("salesgym", extras={"env_id": "territory-debug-v0", "seed": 3})
    env.init(None)
    out = env.step("I will think about it first.")
    assert not out["done"] and out["reward"] == 0.0
    assert out["metadata"]["tool_result"]["status"] == "error"
    assert env.episode.env._state.invalid_actions == 1
    broken = env.step('<tool_call>{"name": "view_opportunity", "arguments": </tool_call>')
    assert broken["metadata"]["tool_result"]["status"] == "error" and env.episode.env._state.invalid_actions == 2
    with pytest.raises(ValueError, match="needs 'env_id' and 'seed'"):
        skyrl_gym.make("salesgym", extras={"env_id": "territory-debug-v0"})
    with pytest.raises(ValueError, match="unknown environment"):
        skyrl_gym.make("salesgym", extras={"env_id": "nope-v0", "seed": 1})
