"""Golden desk episodes: pinned fingerprints of whole episodes (events, rewards, calls, every observation the agent
reads, the task card, the hidden truth, the score), so a speed-up that changes what a desk episode *is* fails
here rather than silently shifting the desk benchmark's numbers.

A change meant to alter the dynamics, the generator or a baseline updates these pins in the same commit (and
bumps ``GENERATOR_VERSION`` or ``TASK_VERSION`` as the change requires). To print fresh pins:
``python tests/desk/test_desk_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout

CASES: dict[str, tuple[dict[str, Any], int, str]] = {
    # name: (make() options, seed, policy)
    "default-standard-40x2-oracle": ({"n_leads": 40, "shift_days": 2}, 7, "oracle"),
    "skeptical-cold-30x1-quote-then-fit": (
        {"n_leads": 30, "shift_days": 1, "variant": "skeptical", "lead_mix": "cold_list"}, 3, "quote-then-fit"),
    "impulsive-standard-100x1-greedy": (
        {"n_leads": 100, "shift_days": 1, "variant": "impulsive"}, 11, "greedy-by-need"),
    "analytical-standard-12x1-random": ({"n_leads": 12, "shift_days": 1, "variant": "analytical"}, 5, "random"),
}

PINS: dict[str, dict[str, Any]] = {
    "default-standard-40x2-oracle": {
        "steps": 164,
        "events": 405,
        "event_log_sha256": "a29441b9aba2fc4393046311a6352b8a7cb22af0806e7a4a29387a1136256c30",
        "calls_sha256": "9640e67710b4658d03d012281b49cb3cd3efa593c94e63b8f3700d92f6b408ea",
        "observation_text_sha256": "a26bc2aadf610b1526eadbf73d7e3247bc47b1f34a4c05d27cf4bc9787448112",
        "observation_data_sha256": "4220e044f48110b34ed017b1c31a02c00a452032f7f8a10e23c27d714a2bf567",
        "hidden_truth_sha256": "caea6175653f70930bb1222e7fa0a8b81d63a9dbbfe3c2be0f615ff8ff8f6d71",
        "task_card_sha256": "6a5a12794fdceee32943c2f14474e5ee9d724f8c52648ccc7d2aa9998f9a88f9",
        "return": 12208.77,
        "score_sha256": "a09b8a559234d7a1bf4e764a1256649504238ac948930f741f8638a78d5af279"
    },
    "skeptical-cold-30x1-quote-then-fit": {
        "steps": 215,
        "events": 512,
        "event_log_sha256": "ea04c6d3cb91811ce74a60fd903e4ad85aa5c078c77aafcceebed6bee5486139",
        "calls_sha256": "774bd58a560b350f16630dbc85f4b9b47b4c27b69095fc17b4754aa6d9c682be",
        "observation_text_sha256": "30246d11837f3e8783b04c1b36fcc2558ac17669c1102a503ab53c6bac1cc540",
        "observation_data_sha256": "684b5dd69434c7d588e11296e6ccbed8769de38f063496d50ec11ac217190ad1",
        "hidden_truth_sha256": "508e29f3a6f98453fb0cdc270cedab7deb2328f3e67913e4f02de9caa16a7a62",
        "task_card_sha256": "acf2c91690e768ca1bde8749094b462e3054ea6d919169f665f912c9c80a5e74",
        "return": 1775.06,
        "score_sha256": "774194d2007c5abdce7c4091c677f20444556127844c1e7800738aba1aeb4f9c"
    },
    "impulsive-standard-100x1-greedy": {
        "steps": 239,
        "events": 576,
        "event_log_sha256": "dbf50e0149ddb3d1141f6d351cc794491af07fa7f07da47f864b34502703c98d",
        "calls_sha256": "7d0465895bb16996aafe48afc03998c1c4424c5adb94a026e6a497df010a62a5",
        "observation_text_sha256": "940907e6d6a55ab7b5dae7dd16a645bc5def7c5b63d23a3cc687dc2da431e18c",
        "observation_data_sha256": "b02b8208fe4c58756ef8e5f10faa84e1ee1b95caf922fc2e359e3407f0864acc",
        "hidden_truth_sha256": "49acd61b3477d7d7a4de5678a0b0e69d11f655607bdb715375b11baeeb032eea",
        "task_card_sha256": "4dacda20007eab42ad919773d9694ce093f5db0ebc474dc08c867de1f1832c76",
        "return": 10006.04,
        "score_sha256": "8c4820541f02d76831437d45c0fc1f93b82ac751794cc67ab99eb3e2e3e7e863"
    },
    "analytical-standard-12x1-random": {
        "steps": 167,
        "events": 234,
        "event_log_sha256": "25bdbea0c0aaa28f1d8542a32ba8060dd312cb1ce3711398e911e9c19dd5596d",
        "calls_sha256": "ee3002cdaf55f7e4dd27d8969f0fa9d80d3e74e83c6560271b7d68ed28caaeac",
        "observation_text_sha256": "7c4b334a6fdaddddb3eb7ba5a3eff880974852b08f175716da8335f0208e635e",
        "observation_data_sha256": "058f5d7084f831a729e268b7bf392a7fea49eed495a52631c459d257151b6403",
        "hidden_truth_sha256": "d89a9b5b39b01dca8be56bc87af6968df4bc92adfec486581c63ddb1cf39d15a",
        "task_card_sha256": "ccde4020de4537f1f783aa5c6927fbf7f63cd8288b6cb5e8670a16cefe429e36",
        "return": -100.0,
        "score_sha256": "63c66b55e301b90a518020002cb5b2a89fecf2055231e674665e271ce140e474"
    }
}


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(options: dict[str, Any], seed: int, policy_name: str) -> dict[str, Any]:
    env = salesgym.make("desk-v0", **options)
    first, info = env.reset(seed=seed)
    policy = make_policy(policy_name, seed, env.hidden_truth() if policy_name == "oracle" else None, "desk")
    texts, data, calls, rewards = hashlib.sha256(), hashlib.sha256(), hashlib.sha256(), []
    texts.update(first["text"].encode("utf-8", "surrogatepass"))
    steps = 0
    for step in rollout(env, policy, seed):
        steps += 1
        obs = env.observe()
        texts.update(obs["text"].encode("utf-8", "surrogatepass"))
        data.update(json.dumps(obs["data"], sort_keys=True).encode("utf-8", "surrogatepass"))
        calls.update(json.dumps(step.action, sort_keys=True).encode())
        rewards.append(step.reward)
    return {
        "steps": steps,
        "events": env.state_version,
        "event_log_sha256": env.event_log_hash(),
        "calls_sha256": calls.hexdigest(),
        "observation_text_sha256": texts.hexdigest(),
        "observation_data_sha256": data.hexdigest(),
        "hidden_truth_sha256": _sha(env.hidden_truth()),
        "task_card_sha256": _sha(info["instructions"]),
        "return": round(sum(rewards), 9),
        "score_sha256": _sha(env.score()),
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_desk_episode_is_unchanged(name: str) -> None:
    assert fingerprint(*CASES[name]) == PINS[name]


def test_fingerprints_do_not_depend_on_what_ran_before() -> None:
    # the desk's memos are process-wide: episodes run after others (here in reverse order) must read the same
    for name in sorted(CASES, reverse=True):
        assert fingerprint(*CASES[name]) == PINS[name], name


if __name__ == "__main__":
    print(json.dumps({name: fingerprint(*case) for name, case in CASES.items()}, indent=4))
