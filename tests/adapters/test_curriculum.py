"""The curriculum, failure mining and training switches (framework-neutral: no trainer library needed)."""

from __future__ import annotations

import pytest

import salesgym
from salesgym.adapters.curriculum import (
    TERRITORY_STAGES,
    CurriculumConfig,
    Stage,
    TaskSampler,
    TrainingSwitches,
)
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.envs.territory.reward import RewardConfig
from salesgym.envs.territory.verifier import MILESTONE_WEIGHTS

STAGES = (
    Stage("debug", {"n_opportunities": 4, "horizon_days": 30}, steps=2),
    Stage("small", {"n_opportunities": 10, "horizon_days": 30}, steps=3),
    Stage("large", {"n_opportunities": 50, "horizon_days": 90}),
)


def config(**kw: object) -> CurriculumConfig:
    return CurriculumConfig(**{"stages": STAGES, "seed": 5, **kw})  # type: ignore[arg-type]


def test_stages_are_left_after_their_steps() -> None:
    s = TaskSampler(config(mining_share=0.0))
    stages = [s.next(step).stage for step in range(8)]
    assert stages == ["debug"] * 2 + ["small"] * 3 + ["large"] * 3
    assert s.promotions == [(2, "small"), (5, "large")]
    s2 = TaskSampler(config(mining_share=0.0))
    assert s2.next(7).stage == "large" and s2.promotions == [(2, "small"), (5, "large")]  # a jump passes both
    task = s.next(9)
    assert task.make_kwargs == {"n_opportunities": 50, "horizon_days": 90} and task.env_id == "territory-v0"


def test_a_stage_is_left_once_its_recent_mean_score_reaches_the_goal() -> None:
    stages = (Stage("debug", {"n_opportunities": 4, "horizon_days": 30}, promote_score=10.0, window=3),
              Stage("small", {"n_opportunities": 10, "horizon_days": 30}))  # fmt: skip
    s = TaskSampler(config(stages=stages, mining_share=0.0))
    tasks = [s.next(step) for step in range(3)]
    s.record(tasks[0], 30.0)
    s.record(tasks[1], 30.0)
    assert s.stage.name == "debug"  # the window is not full yet
    s.record(tasks[2], -100.0)
    assert s.stage.name == "debug"  # mean -13.3
    for t in [s.next(3), s.next(3), s.next(3)]:
        assert s.stage.name == "debug"  # means -10, -6.7, then 40
        s.record(t, 40.0)
    assert s.stage.name == "small" and s.promotions == [(3, "small")]
    s.record(tasks[0], -1e6)  # a debug task's late score does not count for the new stage
    assert s.next(4).stage == "small"


def test_mined_worlds_are_the_lowest_scoring_of_the_stage() -> None:
    s = TaskSampler(config(stages=(STAGES[0],), mining_share=1.0, mining_pool=2, mining_min_seen=4))
    fresh = [s.next() for _ in range(4)]
    assert not any(t.mined for t in fresh) and len({t.seed for t in fresh}) == 4
    scores = {fresh[0].seed: 5.0, fresh[1].seed: -2.0, fresh[2].seed: 9.0, fresh[3].seed: 0.0}
    for t in fresh:
        s.record(t, scores[t.seed])
    s.record(fresh[1], 20.0)  # its mean is now 9: no longer among the two lowest
    assert [t.seed for t in s.lowest("debug", 2)] == [fresh[3].seed, fresh[0].seed]
    mined = [s.next() for _ in range(12)]
    assert all(t.mined for t in mined)
    assert {t.seed for t in mined} == {fresh[3].seed, fresh[0].seed}
    assert all(t.make_kwargs == fresh[0].make_kwargs for t in mined)


def test_the_mining_share_and_every_draw_are_reproducible() -> None:
    def play(seed: int) -> list[tuple[int, bool, str]]:
        s = TaskSampler(config(seed=seed, mining_share=0.25, mining_pool=3, mining_min_seen=3))
        out = []
        for i in range(200):
            t = s.next(i // 20)
            s.record(t, float(t.seed % 97))  # a deterministic "policy": the score is a function of the world
            out.append((t.seed, t.mined, t.stage))
        return out

    a, b, c = play(5), play(5), play(6)
    assert a == b and a != c
    share = sum(m for _, m, _ in a) / len(a)
    assert 0.15 < share < 0.35
    stages = {st for *_, st in a}
    assert stages == {"debug", "small", "large"}


def test_each_switch_changes_what_it_says_and_only_that() -> None:
    def tasks(*ablations: str) -> list:  # type: ignore[type-arg]
        cfg = config(mining_share=0.5, mining_pool=2, mining_min_seen=2, switches=TrainingSwitches.ablate(ablations))
        s = TaskSampler(cfg)
        out = []
        for i in range(12):
            t = s.next(i)
            s.record(t, float(t.seed % 13))
            out.append(t)
        return out

    full = tasks()
    assert {t.stage for t in full} == {"debug", "small", "large"} and any(t.mined for t in full)
    plain = TaskSampler(config(mining_share=0.0))
    by_draw = [plain.next(i).seed for i in range(12)]  # a fresh world's seed is a function of the draw number
    flat = tasks("no_curriculum")
    assert {t.stage for t in flat} == {"large"} and any(t.mined for t in flat)
    for got in (full, flat):
        assert all(t.seed == seed for t, seed in zip(got, by_draw, strict=True) if not t.mined)
    fresh = tasks("no_failure_mining")
    assert not any(t.mined for t in fresh) and [t.stage for t in fresh] == [t.stage for t in full]
    assert [t.seed for t in fresh] == by_draw
    for name, ablation in [("no_shaping", "sparse_reward"), ("no_throughput_reward", "no_throughput_reward"),
                           ("no_terminal_economics", "no_terminal_economics")]:  # fmt: skip
        got = tasks(name)
        assert [t.seed for t in got] == [t.seed for t in full] and [t.stage for t in got] == [t.stage for t in full]
        assert all(g.make_kwargs == {**f.make_kwargs, "ablation": [ablation]} for g, f in zip(got, full, strict=True))


def test_the_reward_switches_change_only_their_milestone_weights() -> None:
    w = MILESTONE_WEIGHTS
    assert RewardConfig.for_ablations(["no_throughput_reward"]).weights == (0.0,) * 6 + w[6:]
    assert RewardConfig.for_ablations(["no_terminal_economics"]).weights == (*w[:6], w[5], w[5])
    assert RewardConfig.for_ablations(["sparse_reward"]).weights == (0.0,) * 7 + (1.0,)
    with pytest.raises(ValueError, match="no milestone that pays"):
        RewardConfig.for_ablations(["sparse_reward", "no_terminal_economics"])
    # the same calls: the same score, a different return (the expected-value seller closes deals on this world)
    results = {}
    for ablation in (None, "sparse_reward", "no_throughput_reward", "no_terminal_economics"):
        env = salesgym.make("territory-debug-v0", ablation=ablation)
        steps = list(rollout(env, make_policy("expected-value", 1), seed=40001))
        results[ablation] = (env.score()["primary"], tuple(st.reward for st in steps))
    assert len({score for score, _ in results.values()}) == 1
    assert len({rewards for _, rewards in results.values()}) == len(results)


def test_bad_configuration_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="never left"):
        CurriculumConfig(stages=(Stage("a", {}), Stage("b", {})))
    with pytest.raises(ValueError, match="unique"):
        CurriculumConfig(stages=(Stage("a", {}, steps=1), Stage("a", {})))
    with pytest.raises(ValueError, match="unknown training ablation"):
        TrainingSwitches.ablate(["no_reward"])
    with pytest.raises(ValueError, match="has no training ablation"):
        CurriculumConfig(env_id="desk-v0", stages=(Stage("a", {}),), switches=TrainingSwitches(shaping=False))
    with pytest.raises(ValueError, match="no milestone that pays"):
        CurriculumConfig(switches=TrainingSwitches.ablate(["no_shaping", "no_terminal_economics"]))
    with pytest.raises(ValueError, match="unknown curriculum keys"):
        CurriculumConfig.from_dict({"stage": []})
    cfg = CurriculumConfig.from_dict({"stages": [{"name": "only", "make_kwargs": {"n_opportunities": 4}}],
                                      "ablations": ["no_curriculum"], "seed": 3})  # fmt: skip
    assert cfg.switches == TrainingSwitches(curriculum=False) and cfg.stages[0].name == "only"
    assert CurriculumConfig().stages == TERRITORY_STAGES


def test_fixed_rows_follow_the_step_schedule() -> None:
    rows = TaskSampler(config()).rows(10, per_step=2)
    assert [r["stage"] for r in rows] == ["debug"] * 4 + ["small"] * 6
    assert set(rows[0]) == {"env_id", "seed", "make_kwargs", "stage", "mined"} and not any(r["mined"] for r in rows)
    env = salesgym.make(rows[0]["env_id"], **__import__("json").loads(rows[0]["make_kwargs"]))
    obs, _ = env.reset(seed=rows[0]["seed"])
    assert obs["data"]
