"""The verdict of a finished episode is computed once: the final step's reward and observation and the ``score()``
that follows share one report; and the jq prelude's faster helpers give exactly what jq's own definitions give."""

from __future__ import annotations

import random
from typing import Any

import jq
import pytest
from tests.workflows.wf_helpers import play_reference, step, workflow

from salesgym.envs.workflows import jqlib, verifier
from salesgym.envs.workflows.state import document
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.envs.workflows.tools import OWNER_OF_TABLE


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


# the plain definitions the prelude's faster ones must equal, value for value and error for error
JQ_PROSPECT = (".sequencer.prospects[] | select(.attributes.emails | map(ascii_downcase) | index($email "
               "| ascii_downcase) != null)")
JQ_EVENTS_OF = (". as $d | [$d.scheduler.invitees[] | select((.email | ascii_downcase) == ($email | ascii_downcase)) "
                "as $i | $d.scheduler.scheduled_events[] | select(.uri == $i.event) | . + {invitee: $i}]")
JQ_EVERY = "def every($xs; f): ($xs | length) > 0 and ([$xs[] | f] | length) == ($xs | length) and ([$xs[] | f] | all);"
PROBES = ["a@x.io", "A@X.IO", "A", "", "ann@x.io", "\u212a", 5, None, ["a"]]


def _plain(program: str) -> Any:
    return jq.compile(f"def ascii_downcase: {JQ_ASCII_DOWNCASE}; {JQ_EVERY} .email as $email | .doc | {program}")


def test_prospect_finds_what_jqs_definition_finds() -> None:
    emails = [v for v in _values(200) if not isinstance(v, dict)] + ["a@x.io", "A@x.IO"]
    rnd = random.Random(3)
    prospects: list[dict[str, Any]] = [{"id": str(i), "attributes": {"emails": rnd.sample(emails, rnd.randint(0, 3))}}
                                       for i in range(60)]
    for extra in ([], [{"id": "none", "attributes": {}}], [{"id": "num", "attributes": {"emails": [1]}}]):
        doc = {"sequencer": {"prospects": [p for p in prospects
                                           if all(isinstance(e, str) for e in p["attributes"]["emails"])] + extra}}
        for probe in [*PROBES, *emails[::20]]:
            want = _plain(f'[try ({JQ_PROSPECT} | .id) catch ["error", .]]').input_value(
                {"doc": doc, "email": probe}).all()
            got = jqlib.run('[try (prospect($email) | .id) catch ["error", .]]', doc, {"email": probe})
            assert got == want, (probe, extra)
    doc = {"sequencer": {"prospects": prospects}}  # some with a number among their emails: the same error
    for probe in PROBES:
        want = _plain(f'[try ({JQ_PROSPECT} | .id) catch ["error", .]]').input_value({"doc": doc, "email": probe})
        assert jqlib.run('[try (prospect($email) | .id) catch ["error", .]]', doc, {"email": probe}) == want.all()


def test_events_of_finds_what_jqs_definition_finds() -> None:
    emails = [v for v in _values(100) if not isinstance(v, list | dict)] + ["a@x.io", "A@x.IO", None]
    invitees = [{"email": e, "event": f"e{i % 7}"} for i, e in enumerate(emails)]
    events = [{"uri": f"e{i}", "status": "active"} for i in range(7)]
    for extra in ([], [{"event": "e1"}], [{"email": 3, "event": "e2"}]):
        doc = {"scheduler": {"invitees": [i for i in invitees if isinstance(i["email"], str)] + extra,
                             "scheduled_events": events}}  # fmt: skip
        for probe in [*PROBES, *emails[::10]]:
            want = _plain(f'try ({JQ_EVENTS_OF}) catch ["error", .]').input_value({"doc": doc, "email": probe}).all()
            assert jqlib.run('try events_of($email) catch ["error", .]', doc, {"email": probe}) == want, probe


def test_every_gives_what_its_plain_definition_gives() -> None:
    lists = [[], [1, 2], [2], None, 5, "ab", [1, None], {"a": 1}, [3, 2, 1], [[1], [2, 3]]]
    filters = [". > 1", 'error("x")', "(true, false)", "empty", 'if . == 2 then error("two") else true end', ".a?",
               "length > 0", "(. > 1, . > 2)", ". as $v | $doc | length > 0"]
    for xs in lists:
        for f in filters:
            want = _plain(f'. as $doc | .xs as $xs | [try every($xs; {f}) catch ["error", .]]').input_value(
                {"doc": {"xs": xs}, "email": None})
            got = jqlib.run(f'[try every($xs; {f}) catch ["error", .]]', {"xs": xs}, {"xs": xs})
            assert got == want.all(), (xs, f)


def _end_states(template: str, seed: int) -> list[tuple[Any, dict[str, Any], tuple[str, ...]]]:
    """(state document, parameters, assertion programs) of an instance at its start, half-way through its
    reference solution and at its end, and with each kind of record it holds at the end emptied in turn."""
    env = workflow(template, seed=seed)
    secret = env._world.secret
    exprs = tuple(a["expr"] for s in secret.steps for a in s["assertions"])
    docs = [document(env._state.tables, OWNER_OF_TABLE)]
    play_reference(env, len(secret.solution) // 2)
    docs.append(document(env._state.tables, OWNER_OF_TABLE))
    env = workflow(template, seed=seed)
    play_reference(env)
    end = document(env._state.tables, OWNER_OF_TABLE)
    docs.append(end)
    docs += [{**end, app: {**end[app], name: []}} for app in end for name in end[app] if end[app][name]][:6]
    return [(doc, dict(secret.params), exprs) for doc in docs]


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_templates_assertions_give_what_the_plain_prelude_gives(template: str) -> None:
    plain = f"def ascii_downcase: {JQ_ASCII_DOWNCASE}; def contact($email): {JQ_CONTACT}; " \
            f"def prospect($email): {JQ_PROSPECT}; def events_of($email): {JQ_EVENTS_OF}; {JQ_EVERY}"
    compiled: dict[tuple[Any, ...], Any] = {}
    for seed in (1, 2):
        for doc, values, exprs in _end_states(template, seed):
            key = (tuple(sorted(values)), exprs)
            if key not in compiled:
                names = "".join(f"($__in.params.{n}) as ${n} | " for n in key[0])
                batch = ", ".join(f'(try {{"ok": [$doc | ({e})]}} catch {{"error": .}})' for e in exprs)
                program = f"{jqlib.PRELUDE}\n{plain}\n. as $__in | {names}$__in.doc as $doc | [{batch}]"
                compiled[key] = jq.compile(program)
            want = compiled[key]
            expected = [r.get("ok") for r in want.input_value({"doc": doc, "params": values}).first()]
            assert jqlib.run_many(exprs, doc, values) == expected
