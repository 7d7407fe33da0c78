"""Golden episodes: pinned fingerprints of whole episodes, so a refactor or a speed-up that changes what an
episode *is* (events, rewards, what the agent reads, the score) fails here rather than silently shifting
every published benchmark number.

A change that is meant to alter the dynamics, or a baseline policy (baselines are part of every published
comparison too), updates these pins in the same commit (and bumps ``GENERATOR_VERSION`` when generation
changes), so the history shows when episodes stopped being comparable.
To print fresh pins: ``python tests/territory/test_golden.py``.

``golden/<name>.calls.json.gz`` holds the calls each episode made when ``REPLAYED`` was taken; replayed, they pin
the environment alone, so a change of a baseline policy (which moves ``PINS``) cannot hide a change of the
dynamics: ``REPLAYED`` moves only when the environment does.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Policy, Replay, rollout

GOLDEN_CALLS = Path(__file__).parent / "golden"

CASES = {
    # name: (make() options, seed, policy)
    "saas-20x90-expected-value": ({"n_opportunities": 20, "horizon_days": 90}, 11, "expected-value"),
    "security-10x30-random": (
        {"n_opportunities": 10, "horizon_days": 30, "family": "enterprise_security"},
        5,
        "random",
    ),
    "healthcare-12x90-oracle": ({"n_opportunities": 12, "horizon_days": 90, "family": "healthcare"}, 3, "oracle"),
}

PINS: dict[str, dict[str, Any]] = {
    "saas-20x90-expected-value": {
        "steps": 625,
        "events": 2693,
        "event_log_sha256": "cf8c3e5ec85cb9888a3682ddfd15d537e92a34b940a4218d9a3f8fcbd8035890",
        "calls_sha256": "3bc69c6962161054eb3f8633c2262056e37269468fdf6a0e90d042ed2a0eac9f",
        "observation_text_sha256": "6ad1cb5e808cf66c23daec52b677eaacdb63b8ad069330b6854d94d87c4827d9",
        "observation_data_sha256": "0d74609cd42ba468578f8f468172425e4453715bb1a56584a6197ec374128d79",
        "return": 141.328500986,
        "primary": 131.096386,
        "advances": {
            "Engaged": 20,
            "Qualified": 13,
            "Validated": 7,
            "Mobilised": 6,
            "Commercial": 5,
            "Commit": 5,
            "Closed": 2
        }
    },
    "security-10x30-random": {
        "steps": 212,
        "events": 468,
        "event_log_sha256": "dd9c5089821bd23f80afc754c1ee6536c3c4160e2724f75c72bcaa6fa346a112",
        "calls_sha256": "bfa6ba55ee14606140600b57cf83e0929b476a7303be1d57e00ed47f7a422c46",
        "observation_text_sha256": "b5499ae3b55c291befd4f21addcf1731afb5f57b6a3b4f7c6febb57c1602d481",
        "observation_data_sha256": "d464e707ee7e38fe1b6b42f399eb8e99f8b7bd35de9004f2e3152a8ddec45ed9",
        "return": -12.40530303,
        "primary": -13.909091,
        "advances": {
            "Engaged": 4,
            "Qualified": 0,
            "Validated": 0,
            "Mobilised": 0,
            "Commercial": 0,
            "Commit": 0,
            "Closed": 0
        }
    },
    "healthcare-12x90-oracle": {
        "steps": 436,
        "events": 1405,
        "event_log_sha256": "d71d70a77ce7f5367e0e69e3163f82633f04064c026ca7a4334ffca02dc85e17",
        "calls_sha256": "8dae6c892dfc37b2e7601e47ef059b0b3e4486ed16c32df2fb7ca7c54ee59bea",
        "observation_text_sha256": "74cc6be3c76e8e5c02d9a05ca6def578d6792ebbdb092396c33a79aab19ff01c",
        "observation_data_sha256": "aaecf50b48ac122e1091dc0dd51d1cc4fc174b2da7ec956a9ab8364425001e1e",
        "return": 395.346410256,
        "primary": 368.140903,
        "advances": {
            "Engaged": 12,
            "Qualified": 8,
            "Validated": 7,
            "Mobilised": 7,
            "Commercial": 7,
            "Commit": 7,
            "Closed": 5
        }
    }
}


# the environment's own pins: the recorded calls replayed (recorded with the policies of generator territory-gen/2)
REPLAYED: dict[str, dict[str, Any]] = {
    "saas-20x90-expected-value": {
        "steps": 613,
        "events": 2605,
        "event_log_sha256": "18f20fdf6d1075623578bd55802cc1c69d9eb6c1deac85738b3741af7ea902e9",
        "calls_sha256": "e7d751d0878e004ecb3e11df5334f41c36e005147f689fa4cf49126a8900140f",
        "observation_text_sha256": "b8d88a0871067723c9048f251121bb9d4ed76933a10c28582dbb6294234a54c6",
        "observation_data_sha256": "d0c70f615f78d0c5b671da66785b1164c973682fc806b25625f6d0a00c7f0457",
        "return": 129.881786243,
        "primary": 120.557975,
        "advances": {
            "Engaged": 19,
            "Qualified": 12,
            "Validated": 7,
            "Mobilised": 6,
            "Commercial": 5,
            "Commit": 5,
            "Closed": 2
        }
    },
    "security-10x30-random": {
        "steps": 212,
        "events": 468,
        "event_log_sha256": "dd9c5089821bd23f80afc754c1ee6536c3c4160e2724f75c72bcaa6fa346a112",
        "calls_sha256": "bfa6ba55ee14606140600b57cf83e0929b476a7303be1d57e00ed47f7a422c46",
        "observation_text_sha256": "b5499ae3b55c291befd4f21addcf1731afb5f57b6a3b4f7c6febb57c1602d481",
        "observation_data_sha256": "d464e707ee7e38fe1b6b42f399eb8e99f8b7bd35de9004f2e3152a8ddec45ed9",
        "return": -12.40530303,
        "primary": -13.909091,
        "advances": {
            "Engaged": 4,
            "Qualified": 0,
            "Validated": 0,
            "Mobilised": 0,
            "Commercial": 0,
            "Commit": 0,
            "Closed": 0
        }
    },
    "healthcare-12x90-oracle": {
        "steps": 436,
        "events": 1405,
        "event_log_sha256": "d71d70a77ce7f5367e0e69e3163f82633f04064c026ca7a4334ffca02dc85e17",
        "calls_sha256": "8dae6c892dfc37b2e7601e47ef059b0b3e4486ed16c32df2fb7ca7c54ee59bea",
        "observation_text_sha256": "74cc6be3c76e8e5c02d9a05ca6def578d6792ebbdb092396c33a79aab19ff01c",
        "observation_data_sha256": "aaecf50b48ac122e1091dc0dd51d1cc4fc174b2da7ec956a9ab8364425001e1e",
        "return": 395.346410256,
        "primary": 368.140903,
        "advances": {
            "Engaged": 12,
            "Qualified": 8,
            "Validated": 7,
            "Mobilised": 7,
            "Commercial": 7,
            "Commit": 7,
            "Closed": 5
        }
    }
}


def recorded_calls(name: str) -> list[Any]:
    with gzip.open(GOLDEN_CALLS / f"{name}.calls.json.gz", "rt", encoding="utf-8") as f:
        calls: list[Any] = json.load(f)
    return calls


def fingerprint(options: dict[str, Any], seed: int, policy_name: str, calls: list[Any] | None = None) -> dict[str, Any]:
    env = salesgym.make("territory-v0", **options)
    env.reset(seed=seed)
    policy: Policy = Replay(calls) if calls is not None else \
        make_policy(policy_name, seed, env.hidden_truth() if policy_name == "oracle" else None)
    texts, data, calls, rewards = hashlib.sha256(), hashlib.sha256(), hashlib.sha256(), []
    steps = 0
    for step in rollout(env, policy, seed):
        steps += 1
        obs = env.observe()
        texts.update(obs["text"].encode("utf-8", "surrogatepass"))
        data.update(json.dumps(obs["data"], sort_keys=True).encode("utf-8", "surrogatepass"))
        calls.update(json.dumps(step.action, sort_keys=True).encode())
        rewards.append(step.reward)
    score = env.score()
    return {
        "steps": steps,
        "events": env.state_version,
        "event_log_sha256": env.event_log_hash(),
        "calls_sha256": calls.hexdigest(),
        "observation_text_sha256": texts.hexdigest(),
        "observation_data_sha256": data.hexdigest(),
        "return": round(sum(rewards), 9),
        "primary": score["primary"],
        "advances": score["advances"],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_episode_is_unchanged(name: str) -> None:
    options, seed, policy = CASES[name]
    assert fingerprint(options, seed, policy) == PINS[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_calls_replay_to_the_same_episode(name: str) -> None:
    """The dynamics alone: the same calls on the same world give the same events, views, rewards and score."""
    options, seed, policy = CASES[name]
    assert fingerprint(options, seed, policy, recorded_calls(name)) == REPLAYED[name]


def test_fingerprints_do_not_depend_on_what_ran_before() -> None:
    # memo caches are process-wide: episodes run after other episodes (here in the opposite order to the
    # test above) must read exactly as in a fresh process, where the pins were taken
    for name in sorted(CASES, reverse=True):
        assert fingerprint(*CASES[name]) == PINS[name], name


if __name__ == "__main__":
    print(json.dumps({name: fingerprint(*case) for name, case in CASES.items()}, indent=4))
