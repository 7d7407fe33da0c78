"""The verifier's verdict is kept as events arrive: ``env.score()`` never re-scans the log, and what it reports
equals a full re-scan of the log, at any point of an episode, on clones, on every golden episode and on random
ones.

``rescan`` below is the verifier's definition written the plain way (one pass over the whole log, then the
milestone rules per opportunity): the specification the incremental verdict must match exactly.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from test_golden import CASES as GOLDEN

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.core.events import EventLog
from salesgym.core.evidence import Evidence, Verifier
from salesgym.envs.territory import verifier
from salesgym.envs.territory.calendar import HOURS_PER_DAY
from salesgym.envs.territory.contract import MILESTONES
from salesgym.envs.territory.evidence import EvidenceType
from salesgym.envs.territory.milestones import final_discount, reached
from salesgym.envs.territory.verifier import DQ_CREDIT, MILESTONE_WEIGHTS, PENALTY
from salesgym.envs.territory.world import TerritoryWorld


def rescan(world: TerritoryWorld, log: EventLog, v: Verifier) -> dict[str, Any]:
    """The authoritative score by definition: every event of the log read again (docs/reward.md)."""
    ledger: dict[str, list[Evidence]] = {oid: [] for oid in world.opportunities}
    rejected, invalid, hours_used, penalties = 0, 0, 0.0, 0.0
    dropped: dict[str, float] = {}
    violations: Counter[str] = Counter()
    ended: dict[str, Any] = {"terminated": False, "truncated": False, "why": None}
    for e in log:
        if e.kind == "evidence_recorded":
            ev = v.verified(e.payload["evidence"])
            opp = world.opportunities.get(ev.subject) if ev is not None else None
            if ev is None or opp is None or ev.source_actor not in opp.stakeholder_ids:
                rejected += 1
            else:
                ledger[ev.subject].append(ev)
        elif e.kind == "tool_completed":
            hours_used += float(e.payload["resource_cost"].get("seller", 0.0))
        elif e.kind == "opportunity_disqualified" and e.actor == "agent":
            dropped.setdefault(e.payload["opportunity_id"], e.time)
        elif e.kind == "violation_recorded":
            violations[e.payload["kind"]] += 1
            penalties += PENALTY[e.payload["kind"]] * world.opportunities[e.payload["opportunity_id"]].true_value
        elif e.kind == "invalid_action":
            invalid += 1
        elif e.kind == "episode_ended":
            ended = {k: e.payload[k] for k in ("terminated", "truncated", "why")}
    advances: Counter[str] = Counter()
    advance_value = credit = closed_value = 0.0
    milestones: dict[str, str] = {}
    closed_days: list[float] = []
    discounts: list[float] = []
    backed = forfeited = 0
    for oid, opp in world.opportunities.items():
        evidence = ledger[oid]
        drop = dropped.get(oid)
        if drop is not None:
            evidence = [e for e in evidence if e.timestamp <= drop]
        times = reached(world, opp, evidence)
        top = len(times) - 1
        for k in range(1, top + 1):
            advances[MILESTONES[k]] += 1
        discount = final_discount(opp, evidence, top)
        advance_value += MILESTONE_WEIGHTS[top] * opp.true_value * (1.0 - discount)
        milestones[oid] = "Disqualified" if drop is not None else MILESTONES[top]
        if top == len(MILESTONES) - 1:
            discounts.append(discount)
            closed_value += opp.true_value * (1.0 - discount)
            closed_days.append(times[-1] / HOURS_PER_DAY)
        if drop is not None:
            if any(e.type == EvidenceType.DISQUALIFICATION_REASON for e in evidence):
                backed += 1
                credit += DQ_CREDIT * opp.true_value * max(0.0, 1.0 - drop / world.horizon)
            forfeited += verifier.closable_at(world, opp, drop)
    nonviable = {oid for oid, o in world.opportunities.items() if not o.viable}
    constrained = verifier.constrained_hours(world)
    n = len(world.opportunities)
    kept_viable = sum(1 for o in world.opportunities if o not in nonviable | set(dropped))
    return {
        "primary": round(100.0 * (advance_value + credit - penalties) / constrained, 6),
        "primary_ceiling": round(verifier.primary_ceiling(world), 6),
        "value_weighted_advances": round(advance_value, 4),
        "disqualification_credit": round(credit, 4),
        "penalties": round(penalties, 4),
        "closed_value": round(closed_value, 4),
        "closed_count": len(closed_days),
        "win_rate": round(len(closed_days) / n, 6),
        "advances": {m: advances.get(m, 0) for m in MILESTONES[1:]},
        "milestones": milestones,
        "disqualified": {"backed": backed, "unbacked": len(dropped) - backed, "still_closable": forfeited,
                         "missed": len(nonviable - set(dropped))},
        "disqualification_accuracy": round((len(set(dropped) & nonviable) + kept_viable) / n, 6),
        "cycle_time_days": round(sum(closed_days) / len(closed_days), 4) if closed_days else None,
        "mean_discount": round(sum(discounts) / len(discounts), 6) if discounts else None,
        "violations": dict(sorted(violations.items())),
        "evidence_rejected": rejected,
        "invalid_actions": invalid,
        "hours_used": round(hours_used, 4),
        "constrained_hours": round(constrained, 4),
        "utilisation": round(hours_used / constrained, 6),
        "n_opportunities": n,
        "viable_opportunities": n - len(nonviable),
        **ended,
    }


def rescanned(env: Any) -> dict[str, Any]:
    return {**rescan(env._world, env._log, env._verifier), "verifier_key": env._key_kind}


def check_along(env: Any, policy: Any, seed: int, every: int, rng: random.Random) -> int:
    """Play ``policy`` to the end, comparing the score with a re-scan every ``every`` steps and on clones taken
    on the way (each clone then plays a few random calls of its own). Returns the steps played."""
    steps = 0
    clones = []
    for steps, _ in enumerate(rollout(env, policy, seed), start=1):
        if steps % every == 0:
            assert env.score() == rescanned(env), steps
        if steps % (every * 3) == 1:
            clones.append(env.clone())
    assert env.score() == rescanned(env)
    for twin in clones:
        before = rescanned(twin)
        assert twin.score() == before
        for _ in range(25):
            obs = twin.observe()
            rows = obs["data"]["portfolio"]["rows"]
            oid = rng.choice(rows)[0]
            twin.step(rng.choice([
                {"tool": "disqualify", "args": {"opportunity_id": oid, "reason": "test"}},
                {"tool": "wait", "args": {"hours": 8.0, "until": None}},
                {"tool": "send_proposal", "args": {"opportunity_id": oid, "discount_pct": 40.0}},
                {"tool": "no_such_tool", "args": {}},
            ]))
        assert twin.score() == rescanned(twin)
    assert env.score() == rescanned(env)  # the clones' calls changed nothing here
    return steps


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_incremental_verdict_equals_a_rescan_on_the_golden_episodes(name: str) -> None:
    options, seed, policy_name = GOLDEN[name]
    env = salesgym.make("territory-v0", **options)
    env.reset(seed=seed)
    policy = make_policy(policy_name, seed, env.hidden_truth() if policy_name == "oracle" else None)
    assert check_along(env, policy, seed, every=37, rng=random.Random(seed)) > 100


RANDOM_CASES = [
    # (family, n, horizon, seed, policy): policies that drop deals, break discount rules, truncate, spam
    ("midmarket_saas", 10, 30, 101, "random"),
    ("healthcare", 12, 30, 102, "always-discount"),
    ("enterprise_security", 10, 90, 103, "ev+truncation"),
    ("public_sector", 15, 30, 104, "spam-all"),
    ("midmarket_saas", 4, 30, 105, "forger"),
    ("healthcare", 10, 90, 106, "ev+drop-by-reward"),
]


@pytest.mark.parametrize(("family", "n", "horizon", "seed", "policy_name"), RANDOM_CASES)
def test_incremental_verdict_equals_a_rescan_on_random_episodes(
    family: str, n: int, horizon: int, seed: int, policy_name: str
) -> None:
    env = salesgym.make("territory-v0", family=family, n_opportunities=n, horizon_days=horizon)
    env.reset(seed=seed)
    check_along(env, make_policy(policy_name, seed), seed, every=11, rng=random.Random(seed))


def test_random_calls_keep_the_verdict_equal_to_a_rescan() -> None:
    """Arbitrary calls (many refused), drops, deep discounts and the invalid-action ceiling."""
    rng = random.Random(7)
    for seed in range(3):
        env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30, invalid_action_limit=40)
        obs, _ = env.reset(seed=seed)
        tools = [t["function"]["name"] for t in env.tool_schemas()]
        for i in range(400):
            oid = rng.choice(obs["data"]["portfolio"]["rows"])[0]
            action = rng.choice([
                {"tool": rng.choice(tools), "args": {"opportunity_id": oid}},
                {"tool": "disqualify", "args": {"opportunity_id": oid, "reason": "x"}},
                {"tool": "send_proposal", "args": {"opportunity_id": oid, "discount_pct": rng.choice([5.0, 50.0])}},
                {"tool": "wait", "args": {"hours": rng.choice([1.0, 16.0]), "until": None}},
            ])
            obs, _, term, trunc, _ = env.step(action)
            if i % 23 == 0:
                assert env.score() == rescanned(env)
            if term or trunc:
                break
        assert env.score() == rescanned(env)


def test_the_score_never_reads_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes the score cost the same at any length: it is kept as events arrive, not re-read."""
    env = salesgym.make("territory-v0", n_opportunities=10, horizon_days=30)
    env.reset(seed=5)
    for _ in rollout(env, make_policy("expected-value", 5), 5, max_steps=150):
        pass
    expected = rescanned(env)

    def refuse(self: EventLog) -> Any:
        raise AssertionError("score() re-read the event log")

    monkeypatch.setattr(EventLog, "__iter__", refuse)
    monkeypatch.setattr(EventLog, "since", refuse)
    monkeypatch.setattr(EventLog, "__getitem__", refuse)
    assert env.score() == expected
    assert env.clone().score() == expected


def test_the_rescan_in_the_verifier_matches_the_definition() -> None:
    """``verifier.score`` (a log from anywhere: a stored run, a tampered copy) is the same verdict."""
    env = salesgym.make("territory-v0", n_opportunities=12, horizon_days=30, family="healthcare")
    env.reset(seed=9)
    for _ in rollout(env, make_policy("expected-value", 9), 9):
        pass
    assert {**verifier.score(env._world, env._log, env._verifier), "verifier_key": env._key_kind} == rescanned(env)
