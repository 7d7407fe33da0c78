"""The verdict of a finished episode is computed once: the final step's reward and observation and the ``score()``
that follows share one report; and the jq prelude's faster helpers give exactly what jq's own definitions give."""

from __future__ import annotations

import random
from typing import Any

import jq
import pytest
from tests.workflows.wf_helpers import play_reference, step, workflow

from salesgym.envs.workflows import jqlib, verifier


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the verifier's full judgements (``judge_states``) made from now on."""
    calls: list[int] = []
    real = verifier.judge_states

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(verifier, "judge_states", counting)
    return calls


@pytest.mark.parametrize("template", ["crm-inbound-sql", "inbound-new-company"])
def test_score_after_finish_reuses_the_final_steps_verdict(template: str, judged: list[int]) -> None:
    env = workflow(template)
    play_reference(env)
    assert judged == []
    assert step(env, "finish_task", summary="done")["reward"] == 1.0
    assert len(judged) == 1  # the reward and the observation ask for it: one judgement
    report = env.score()
    assert len(judged) == 1  # score() took the step's report
    fresh = verifier.score(env._world, env._state, env._log, None)
    assert {k: v for k, v in report.items() if k != "verifier_key"} == fresh


def test_a_handed_out_report_is_never_handed_out_again(judged: list[int]) -> None:
    env = workflow("crm-inbound-sql")
    play_reference(env)
    step(env, "finish_task", summary="done")
    first = env.score()
    first["passed"] = "edited by the caller"
    first["steps"].clear()
    second = env.score()
    assert second["passed"] is True and second["steps"] and len(judged) == 2


def test_a_clone_or_another_episode_never_gets_anothers_report(judged: list[int]) -> None:
    env = workflow("crm-inbound-sql")
    play_reference(env)
    twin = env.clone()
    step(env, "finish_task", summary="done")
    step(twin, "hubspot-list-owners")
    assert step(twin, "finish_task", summary="done")["reward"] == 1.0
    assert len(judged) == 2
    failing = workflow("crm-inbound-sql")
    assert step(failing, "finish_task", summary="nothing")["reward"] == 0.0
    assert env.score()["passed"] and twin.score()["passed"] and not failing.score()["passed"]
    assert len(judged) == 3


def test_reports_kept_are_bounded_and_unclaimed_ones_are_recomputed(judged: list[int]) -> None:
    envs = [workflow("crm-inbound-sql", seed=s) for s in range(verifier._KEPT + 2)]
    for env in envs:
        step(env, "finish_task", summary="nothing")
    assert len(verifier._kept) <= verifier._KEPT
    assert not envs[0].score()["passed"]  # its report was dropped: computed again, the same verdict
    assert len(judged) == len(envs) + 1


# -- the prelude's helpers against jq's own definitions ---------------------------------------------------------
JQ_ASCII_DOWNCASE = "explode | map(if 65 <= . and . <= 90 then . + 32 else . end) | implode"  # jq 1.7/1.8's
JQ_CONTACT = ('.crm.contacts[] | select((.properties.email // "" | ascii_downcase) == ($email | ascii_downcase))')


def _values(n: int) -> list[Any]:
    rnd = random.Random(7)
    alphabet = "aAzZ@[`{09 .\u212a\u00df\u0130\u00c9\u00e9\U0001f600\x00"
    values: list[Any] = ["", "A", "Z", "@", "[", "`", "{", "Ann@X.io", None, 1, 2.5, True, False, [], ["A"], {"a": "B"}]
    return values + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 10))) for _ in range(n)]


def test_the_preludes_ascii_downcase_is_jqs_on_every_value() -> None:
    values = _values(2000)
    ours = jq.compile(f"{jqlib.PRELUDE}\n[.[] | try ascii_downcase catch [\"error\", .]]").input_value(values).first()
    plain = jq.compile(f"[.[] | try ({JQ_ASCII_DOWNCASE}) catch [\"error\", .]]").input_value(values).first()
    assert ours == plain and ["error", "explode input must be a string"] in ours


def test_contact_finds_what_jqs_definition_finds() -> None:
    emails = [v for v in _values(300) if not isinstance(v, list | dict)]
    doc = {"crm": {"contacts": [{"id": str(i), "properties": {"email": e}} for i, e in enumerate(emails)]
                   + [{"id": "np"}, {"id": "bad", "properties": "text"}]}}  # fmt: skip
    for probe in ["a@x.io", "A", "", "ann@x.io", "\u212a", 5, None, *emails[::25]]:
        plain = jq.compile(f"def ascii_downcase: {JQ_ASCII_DOWNCASE}; .email as $email | .doc "
                           f"| [try ({JQ_CONTACT} | .id) catch [\"error\", .]]")
        got = jqlib.run('[try (contact($email) | .id) catch ["error", .]]', doc, {"email": probe})
        assert got == plain.input_value({"doc": doc, "email": probe}).all(), probe
