"""A red-team sweep of the people's voice: an agent asks for one fact and adds a persuasion attack
(``testing.persuasion.EXTRACTIONS``) to get the rest; the voice, scripted to comply, tells every other hidden fact
(and its persona) in each disguise a verbatim check would miss (``DISGUISES``). For every attack and disguise the
voice's words are refused, the rule's words stand, nothing unasked reaches the agent and the score counts it."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from tests.workflows.wf_helpers import params, step, workflow

pytest.importorskip("openai")

from salesgym.testing.persuasion import DISGUISES, EXTRACTIONS
from salesgym.testing.scripted_openai import ScriptedOpenAI, text_reply

KEY_ENV = "SALESGYM_TEST_WORKFLOWS_VOICE_KEY"
os.environ[KEY_ENV] = "sk-workflows-not-a-real-key"
TEMPLATE, SEED = "crm-budget-colleague", 6
ASK = "What budget did they give you?"  # names the budget's keyword only


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as s:
        yield s


def _plain(text: str) -> str:
    """Letters and digits only, case-folded, compatibility forms folded: how a reader sees through a disguise."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def _asked(server: ScriptedOpenAI, reply: str, question: str) -> tuple[Any, dict[str, Any]]:
    env = workflow(TEMPLATE, SEED, voice="llm", llm={"model": "scripted", "base_url": server.base_url,
                                                     "api_key_env": KEY_ENV, "max_retries": 0})  # fmt: skip
    p = params(env)
    server.script(0, [text_reply(reply.format(**p, persona=env._world.secret.persona))])
    return env, step(env, "ask_requester", question=question)["output"]


def _unseen(env: Any, p: dict[str, Any], keys: tuple[str, ...]) -> None:
    seen = _plain(str(env.observe()))
    for key in keys:
        value = _plain(str(p[key]))
        assert value not in seen and value[::-1] not in seen, key


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
@pytest.mark.parametrize("attack", sorted(EXTRACTIONS))
def test_a_persuaded_voice_never_tells_an_unasked_fact_in_any_disguise(server: ScriptedOpenAI, attack: str,
                                                                       disguise: str) -> None:  # fmt: skip
    spell = DISGUISES[disguise]
    env = workflow(TEMPLATE, SEED)
    p = params(env)
    secret = {f.key: f.value for f in env._world.secret.facts}
    others = tuple(k for k in secret if k != "budget")
    leak = f"The budget is {secret['budget']}. And since you asked: " + "; ".join(spell(secret[k]) for k in others)
    env, out = _asked(server, leak.replace("{", "{{").replace("}", "}}"), ASK + EXTRACTIONS[attack])
    assert out["answer"] == secret["budget"], out  # the rule's words
    assert out["voice_error"] == "the voice revealed something not asked for; these are the rule's words"
    assert not set(others) & set(env._state.revealed)
    _unseen(env, {**p, **secret}, others)
    [spoken] = [e for e in env.event_log() if e["kind"] == "voice_spoke"]
    assert sorted(spoken["payload"]["unasked"]) == sorted(others)
    step(env, "finish_task", summary="done")
    assert env.score()["voice"]["refused"] == 1


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
def test_a_persuaded_voice_never_shows_its_persona_in_any_disguise(server: ScriptedOpenAI, disguise: str) -> None:
    env = workflow(TEMPLATE, SEED)
    persona, budget = env._world.secret.persona, params(env)["budget"]
    reply = f"The budget is {budget}. (My notes say I am {DISGUISES[disguise](persona)}.)"
    env, out = _asked(server, reply.replace("{", "{{").replace("}", "}}"), ASK + EXTRACTIONS["system-prompt"])
    assert out == {"from": env._world.task.requester, "answer": budget,
                   "voice_error": "the voice revealed something not asked for; these are the rule's words"}


@pytest.mark.parametrize("reply", ["It's {budget}.", "They told me {budget}, happy to help with the rest.",
                                   "Budget: {budget} (that is all I can share)."])
def test_an_honest_answer_still_passes(server: ScriptedOpenAI, reply: str) -> None:
    env, out = _asked(server, reply, ASK)
    assert "voice_error" not in out and out["answer"] == reply.format(budget=params(env)["budget"])
