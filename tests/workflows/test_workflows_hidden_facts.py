"""Hidden facts cannot be guessed (issue 18 §5): a write that uses a fact the agent was never told is a violation,
whatever the guess, and each fact's value is drawn so that the best blind guess is right in at most 10% of
instances (the time zone once had 5 values and the loss reason 4: the most common passed 28-33% of the time)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from wf_helpers import step, workflow

from salesgym.envs.workflows.tasks.model import instantiate, resolve
from salesgym.envs.workflows.tasks.templates import TEMPLATES

FLAVOUR = "context"  # why the task matters: told when asked, used by nothing the verifier checks
REVEALING = ("ask_requester", "reply_message")
WITH_FACTS = [t for t, spec in TEMPLATES.items() if spec.facts]
FACTS = [(t, f.key, f.param) for t in WITH_FACTS for f in TEMPLATES[t].facts]
SEEDS = range(5000, 5300)


def _untold(score: dict[str, Any]) -> set[str]:
    return {v["fact"] for v in score["forbidden"]["violations"] if "fact" in v}


def _play_without_asking(env: Any, finish: bool = True) -> dict[str, Any]:
    """The reference solution with every question and reply left out: each write sends the true value, a perfect
    guess made without being told."""
    secret = env._world.secret
    outputs: list[Any] = []
    for action in secret.solution:
        if action["tool"] in REVEALING:
            outputs.append({})
            continue
        info = env.step(resolve(action, secret.params, outputs))[4]
        outputs.append(info["tool_result"]["output"])
    if finish:
        env.step({"tool": "finish_task", "args": {"summary": "done"}})
    return dict(env.score())


def test_every_template_with_a_hidden_fact_is_covered() -> None:
    assert len(WITH_FACTS) >= 15 and {k for _, k, _ in FACTS} >= {"amount", "timezone", "reason", "cover",
                                                                   "fallback", "new_day", "referral", "budget"}


@pytest.mark.parametrize("template", WITH_FACTS)
def test_a_write_that_uses_an_untold_fact_is_a_violation(template: str) -> None:
    for seed in (1, 2):
        env = workflow(template, seed)
        score = _play_without_asking(env)
        assert not score["passed"]
        assert _untold(score) == {f.key for f in TEMPLATES[template].facts}, score["forbidden"]
        assert score["violations"]["forbidden"] >= 1 and score["partial"] < 1


@pytest.mark.parametrize("template", WITH_FACTS)
def test_the_reference_asks_first_and_no_untold_fact_is_flagged(template: str) -> None:
    from wf_helpers import play_reference

    env = workflow(template, 1)
    play_reference(env)
    step(env, "finish_task", summary="done")
    score = env.score()
    assert score["passed"] and not _untold(score), score["forbidden"]


def test_asking_after_the_write_is_too_late() -> None:
    env = workflow("crm-closed-won", 1)
    p = dict(env._world.secret.params)
    _play_without_asking(env, finish=False)
    assert step(env, "ask_requester", question="What amount was agreed?")["output"]["answer"] == p["amount"]
    step(env, "finish_task", summary="done")
    score = env.score()
    assert not score["passed"] and _untold(score) == {"amount"}
    hits = [v for v in score["forbidden"]["violations"] if "fact" in v]  # the deal's amount, then the note's
    assert [h["tool"] for h in hits] == ["hubspot-batch-update-objects", "hubspot-create-engagement"]
    assert all("before it was told" in h["rule"] for h in hits)


@pytest.mark.parametrize(("template", "key", "param"), [f for f in FACTS if f[1] != FLAVOUR],
                         ids=[f"{t}-{k}" for t, k, _ in FACTS if k != FLAVOUR])
def test_the_best_blind_guess_of_a_fact_is_right_in_at_most_a_tenth_of_instances(template: str, key: str,
                                                                                  param: str) -> None:
    values = Counter(str(instantiate(TEMPLATES[template], seed, 60).secret.params[param]) for seed in SEEDS)
    value, count = values.most_common(1)[0]
    assert count / len(SEEDS) <= 0.10, f"{template}: {key} is {value!r} in {count} of {len(SEEDS)} instances"


# facts that name one record among several the agent can see: the guess is a record, and the structural guess
# ("the first one listed") must be no better than the fact's own values
CHOICES = {
    "outbound-locked-mailbox": ("cover_user", "sequencer.users",
                                lambda r, p: not r["attributes"]["locked"]),
    "outbound-disabled-sequence": ("sequence_id", "sequencer.sequences",
                                   lambda r, p: r["attributes"]["enabled"]
                                   and r["attributes"]["ruleset"]["sequenceExclusivity"] == "none"),
}


@pytest.mark.parametrize("template", sorted(CHOICES))
def test_a_fact_that_names_a_record_has_ten_candidates_and_no_favourite(template: str) -> None:
    param, table, fits = CHOICES[template]
    ranks: Counter[int] = Counter()
    for seed in SEEDS:
        world = instantiate(TEMPLATES[template], seed, 60)
        p = world.secret.params
        candidates = [int(k) for k, r in world.tables[table].items() if fits(r, p)]
        assert len(candidates) >= 10 and p[param] in candidates
        ranks[candidates.index(p[param])] += 1
    assert max(ranks.values()) / len(SEEDS) <= 0.10, ranks
