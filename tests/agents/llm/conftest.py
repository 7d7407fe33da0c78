"""The LLM policy's tests run against a real loopback server whose model is scripted (no mocks); helpers are
in ``llm_helpers``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_helpers import KEY, KEY_ENV

from salesgym.testing.scripted_openai import ScriptedOpenAI


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as s:
        yield s
