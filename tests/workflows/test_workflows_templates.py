"""Every template: a well-formed blueprint whose reference solution passes, and which doing nothing fails."""

from __future__ import annotations

from collections import Counter

import pytest
from tests.workflows.wf_helpers import play_reference, step, workflow

from salesgym.envs.workflows.tasks.templates import TEMPLATES

SEEDS = (0, 7, 123)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_reference_solution_passes_and_doing_nothing_fails(template: str) -> None:
    many = TEMPLATES[template].fixture.__module__.endswith("fixtures_tier4")  # fifty of them: two seeds each
    for seed in SEEDS[:2] if many else SEEDS:
        env = workflow(template, seed)
        idle = env.clone()
        results = play_reference(env)
        assert all(r["status"] == "ok" for r in results), [r["output"] for r in results if r["status"] != "ok"]
        done = step(env, "finish_task", summary="done")
        score = env.score()
        assert done["terminated"] and score["passed"], (seed, [a for s in score["steps"] for a in s["assertions"]
                                                               if not a["passed"]], score["violations"])
        assert done["reward"] == 1.0 == score["primary"] and score["partial"] == 1.0
        nothing = step(idle, "finish_task", summary="nothing")
        idle_score = idle.score()
        assert nothing["reward"] == 0.0 and not idle_score["passed"] and idle_score["partial"] < 1.0


def test_every_tier_is_covered_and_blueprints_are_data() -> None:
    tiers = Counter(t.tier for t in TEMPLATES.values())
    assert set(tiers) == {1, 2, 3, 4} and sum(tiers.values()) == len(TEMPLATES) >= 19
    for t in TEMPLATES.values():
        t.check()
        assert t.solution and t.steps and t.mechanisms, t.id
        assert {s.app for s in t.steps} == set(t.apps), f"{t.id}: every app of the task has a step"


def test_at_least_fifty_four_app_templates_each_a_distinct_workflow() -> None:
    four = [t for t in TEMPLATES.values() if t.tier == 4]
    assert len(four) >= 50
    for field in ("title", "goal", "prompt"):
        values = [getattr(t, field) for t in TEMPLATES.values()]
        assert len(set(values)) == len(values), f"two templates share a {field}"
    assert len({t.motion for t in four}) >= 6  # inbound, outbound, pipeline, re-engagement, handoff, hygiene...
    for t in four:
        assert not set(t.read_only) >= {"crm", "sequencer", "scheduler"}, t.id  # real writes, not four lookups
        assert len(set(t.mechanisms) - {"four_apps"}) >= 2, t.id  # the rules that bite, beyond the app count
    mechanisms = Counter(m for t in four for m in t.mechanisms if m != "four_apps")
    assert len(mechanisms) >= 20 and max(mechanisms.values()) <= len(four) // 3  # no single rule does all the work


# the first ids of each catalogue in order, as the Python template modules declared them before the templates became
# data: new templates are appended after them
ORDER_SHA256 = {"package": (111, "392bf6c301d195476894ea728ba355bfa70c7ba5424fc0da7bc59e52cce0444e"),
                "workflows-counterparty": (7, "1c687808f6accd04202c51b09ca3443399425372925ba8cab076e26972f3ca02")}


def test_the_catalogue_order_is_fixed() -> None:
    """The seed's draw and the splits go by position: the ids and their order are pinned (the data files group
    templates by motion; ``pack.json``'s ``order`` keeps the declaration order, new ids at its end), whichever
    module a caller imports first."""
    import hashlib
    import subprocess
    import sys

    from salesgym.envs.workflows import packs

    catalogues = {"package": list(TEMPLATES), "workflows-counterparty": list(packs.builtin()["workflows-counterparty"])}
    for name, ids in catalogues.items():
        n, digest = ORDER_SHA256[name]
        assert hashlib.sha256(",".join(ids[:n]).encode()).hexdigest() == digest, f"{name}: an id moved"
    for first in ("packs", "tasks.model", "splits"):
        code = (f"import salesgym.envs.workflows.{first}; from salesgym.envs.workflows.tasks.templates "
                "import TEMPLATES; print(','.join(TEMPLATES))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        assert out == ",".join(TEMPLATES), first


def test_instances_are_seeded() -> None:
    """(Reset's cost is measured by ``benchmarks/bench_workflows.py``, not timed here.)"""
    a, b, c = workflow("sched-earliest-demo", 5), workflow("sched-earliest-demo", 5), workflow("sched-earliest-demo", 6)
    assert a.hidden_truth() == b.hidden_truth() and a.instructions() == b.instructions()
    assert a.hidden_truth()["instance"]["params"] != c.hidden_truth()["instance"]["params"]


def test_the_seed_draws_templates_when_none_is_given() -> None:
    import salesgym

    env = salesgym.make("workflows-v0")
    drawn = set()
    for seed in range(40):
        env.reset(seed=seed)
        drawn.add(env._world.secret.template)
    assert len(drawn) > 10
    debug = salesgym.make("workflows-debug-v0")
    for seed in range(10):
        debug.reset(seed=seed)
        assert debug._world.tier == 1


def test_records_have_provenance_that_no_tool_shows() -> None:
    env = workflow("crm-inbound-sql")
    prov = env.hidden_truth()["provenance"]
    assert all(v.startswith("workflows-gen/1:3:") for v in prov.values())
    assert set(prov) == {f"{t}/{k}" for t, rows in env._world.tables.items() for k in rows}
    out = step(env, "hubspot-list-objects", objectType="contacts", limit=50)
    assert "provenance" not in str(out["output"])
