"""The territory's confidentiality scanner (the conformance kit's ``LeakScanner``) bites, and a seller that
holds discovery meetings (so roles and budget bands get revealed) never sees more than it was shown."""

from __future__ import annotations

from typing import Any

import pytest
from salesgym_testkit import DiligentSeller

from salesgym.envs.territory.conformance import ROLE_WORDS, LeakScanner, distinctive
from salesgym.envs.territory.env import TerritoryEnv


def test_a_scripted_seller_that_holds_discovery_sees_nothing_hidden() -> None:
    env = TerritoryEnv(n_opportunities=4, horizon_days=30)
    env.reset(seed=1)
    scanner = LeakScanner(env)
    scanner.learn(env.event_log())
    seller = DiligentSeller()
    seen = len(env.event_log())
    for i in range(300):
        action = seller.act(env)
        if i % 5 == 4:
            action = {"tool": "view_opportunity", "args": {"opportunity_id": f"o{(i // 5) % 4:03d}", "page": 0}}
        obs, _, terminated, truncated, info = env.step(action)
        log = env.event_log()
        scanner.learn(log[seen:])
        seen = len(log)
        scanner.scan(obs, {"info": info})
        if terminated or truncated:
            break
    assert scanner.revealed_roles, "the scripted seller never held discovery: the role check did not run"


def test_the_scanner_catches_planted_leaks() -> None:
    """The scan can fail: planted hidden values in an observation or output are caught."""
    env = TerritoryEnv(n_opportunities=10, horizon_days=30, family="public_sector", template="zombie_pipeline")
    obs, _ = env.reset(seed=5)
    scanner = LeakScanner(env)
    scanner.scan(obs, {})
    hidden = env.hidden_truth()
    opp = next(o for o in hidden["opportunities"].values() if distinctive(o["true_value"]))
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
        {"penalty": 1.0},
    ]
    for plant in plants:
        with pytest.raises(AssertionError):
            scanner.scan(obs, plant)
