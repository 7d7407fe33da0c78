"""The territory's task card (``env.instructions()``): pinned text, public facts only, the facts it states are
the world's (issue: a language model in the seat).

Regenerate after an intended change with ``SALESGYM_UPDATE_SNAPSHOTS=1 python -m pytest tests/territory``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import salesgym
from salesgym.envs.territory.instructions import TASK_VERSION
from salesgym.envs.territory.variants import hidden_variant

SNAPSHOT = Path(__file__).resolve().parent.parent / "snapshots" / "territory_task_card.md"


def test_the_task_card_matches_the_snapshot() -> None:
    env = salesgym.make("territory-v0", n_opportunities=20, horizon_days=90)
    _, info = env.reset(seed=7)
    text = env.instructions()
    if os.environ.get("SALESGYM_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
        pytest.skip(f"snapshot written to {SNAPSHOT}")
    assert text == SNAPSHOT.read_text(encoding="utf-8"), "the task card changed: review it, bump TASK_VERSION"
    assert info["instructions"] == text and TASK_VERSION in text


def test_the_card_states_this_worlds_public_facts() -> None:
    env = salesgym.make("territory-v0", n_opportunities=30, horizon_days=180, family="enterprise_security")
    obs, _ = env.reset(seed=3)
    facts, card = obs["data"]["territory"], env.instructions()
    assert "30 open opportunities" in card and "180 calendar days" in card
    assert f"{facts['business_days']} business days" in card
    assert f"solution engineers {facts['capacity_per_week']['se']:g} h" in card
    assert f"legal {facts['capacity_per_week']['legal']:g} h (book {facts['lead_days']['legal']} business" in card
    assert f"up to {round(100 * facts['discount_authority'])}% discount" in card
    assert f"{env.invalid_action_limit} such calls" in card
    for tool in (t["function"]["name"] for t in env.tool_schemas()):
        assert f"`{tool}`" in card or f"{tool} " in card, f"the card never names {tool}"


def test_the_card_is_the_same_for_worlds_that_differ_only_in_hidden_truth() -> None:
    env = salesgym.make("territory-v0", n_opportunities=12, horizon_days=90)
    env.reset(seed=5)
    card = env.instructions()
    for k in range(3):
        twin = salesgym.make("territory-v0", n_opportunities=12, horizon_days=90)
        twin.start_world(hidden_variant(env._world, k))
        assert twin.hidden_truth() != env.hidden_truth() and twin.instructions() == card


def test_the_card_carries_no_verifier_key_or_hidden_value() -> None:
    env = salesgym.make("territory-v0", n_opportunities=20, horizon_days=90)
    env.reset(seed=7)
    card, truth = env.instructions(), env.hidden_truth()
    assert "key" not in card.lower() and "proof" not in card.lower() and "weight" not in card.lower()
    for opp in truth["opportunities"].values():
        assert f"{opp['true_value']:,.0f}" not in card and str(round(opp["true_value"])) not in card
