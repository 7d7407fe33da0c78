"""Golden episodes: pinned fingerprints of whole episodes, so a refactor or a speed-up that changes what an
episode *is* (events, rewards, what the agent reads, the score) fails here rather than silently shifting
every published benchmark number.

A change that is meant to alter the dynamics, or a baseline policy (baselines are part of every published
comparison too), updates these pins in the same commit (and bumps ``GENERATOR_VERSION`` when generation
changes), so the history shows when episodes stopped being comparable.
To print fresh pins: ``python tests/territory/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout

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
        "steps": 639,
        "events": 3850,
        "event_log_sha256": "c5ce26311190f566d2548db8e8a6504aa4f083c9dcca2e94b900e4a2dddc927a",
        "calls_sha256": "7440c297f825db51c63c9a5f15278931403bf489e31668b6fa9a3d1b45ba897c",
        "observation_text_sha256": "b585668882a77cc07718d995b533c04c277afb890a32b3a4fe1e855cb2a70e63",
        "observation_data_sha256": "7e2765ea760e315e4b4bf3d00a3f2da443f8b97764a9e73289829c486f8d07d5",
        "return": 0.652320796,
        "primary": 165.762821,
        "advances": {
            "Engaged": 18,
            "Qualified": 13,
            "Validated": 11,
            "Mobilised": 7,
            "Commercial": 7,
            "Commit": 7,
            "Closed": 5,
        },
    },
    "security-10x30-random": {
        "steps": 224,
        "events": 600,
        "event_log_sha256": "da26097ff485793f754e60c72e7323310b53abce5b432ae86ad8cb4d41b1eef3",
        "calls_sha256": "30e7506864be4563e944232ef3899f2c78fda589ecf6f4b190d61ca77cc64f7d",
        "observation_text_sha256": "4d98f0050cc0a20c942b889d0598fad99e6e699f53407ab42dc4ead07b1f063b",
        "observation_data_sha256": "8cde13971cf19203517c2998c1e19170e8f989ce011fa29d6351be8c05ab70fc",
        "return": 0.020629201,
        "primary": 73.299242,
        "advances": {
            "Engaged": 8,
            "Qualified": 0,
            "Validated": 0,
            "Mobilised": 0,
            "Commercial": 0,
            "Commit": 0,
            "Closed": 0,
        },
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
            "Closed": 5,
        },
    },
}


def fingerprint(options: dict[str, Any], seed: int, policy_name: str) -> dict[str, Any]:
    env = salesgym.make("territory-v0", **options)
    env.reset(seed=seed)
    policy = make_policy(policy_name, seed, env.hidden_truth() if policy_name == "oracle" else None)
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


def test_fingerprints_do_not_depend_on_what_ran_before() -> None:
    # memo caches are process-wide: episodes run after other episodes (here in the opposite order to the
    # test above) must read exactly as in a fresh process, where the pins were taken
    for name in sorted(CASES, reverse=True):
        assert fingerprint(*CASES[name]) == PINS[name], name


if __name__ == "__main__":
    print(json.dumps({name: fingerprint(*case) for name, case in CASES.items()}, indent=4))
