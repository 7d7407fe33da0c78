"""Configuration, imports and setup errors."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from llm_helpers import KEY, KEY_ENV

from salesgym.agents.llm import LLMConfig, LLMPolicy


def test_import_salesgym_does_not_import_openai_or_fastapi() -> None:
    code = (
        "import sys, salesgym, salesgym.agents, salesgym.agents.llm\n"
        "from salesgym.agents.llm import LLMPolicy\n"
        "LLMPolicy(1, model='m')\n"
        "bad = sorted(m for m in ('openai', 'fastapi', 'uvicorn', 'httpx') if m in sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_extra_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['openai'] = None\n"
        "import salesgym\n"
        "from salesgym.agents.llm import LLMPolicy\n"
        "from salesgym.agents.llm import ensure_sdk\n"
        "env = salesgym.make('territory-debug-v0'); obs, info = env.reset(seed=1)\n"
        "for check in (ensure_sdk, lambda: LLMPolicy(1, model='m').reset(obs, env.tool_schemas(), '')):\n"
        "    try:\n"
        "        check()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.count("pip install 'salesgym[llm]'") == 2


def test_a_missing_key_is_a_clear_error_before_the_first_step(monkeypatch: pytest.MonkeyPatch) -> None:
    import salesgym

    monkeypatch.delenv("SALESGYM_NO_SUCH_KEY", raising=False)
    env = salesgym.make("territory-debug-v0")
    obs, _ = env.reset(seed=1)
    with pytest.raises(RuntimeError, match="SALESGYM_NO_SUCH_KEY"):
        LLMPolicy(1, model="m", api_key_env="SALESGYM_NO_SUCH_KEY").reset(obs, env.tool_schemas(), "")


def test_config_is_frozen_picklable_json_and_free_of_secrets() -> None:
    config = LLMConfig(model="m", base_url="http://localhost:8000/v1", api_key_env=KEY_ENV, context="window",
                       extra_body={"top_k": 20})  # fmt: skip
    with pytest.raises(AttributeError):
        config.model = "other"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(config)) == config
    data = config.to_dict()
    assert json.loads(json.dumps(data)) == data and LLMConfig.from_dict(data) == config
    assert KEY not in json.dumps(data) and data["api_key_env"] == KEY_ENV
    assert LLMConfig().context == "summary" and LLMConfig().context_tokens is None  # the endpoint's, else 32,000
    assert LLMConfig().tool_choice == "auto"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"context": "everything"}, "context must be one of full, window, summary"),
        ({"context_tokens": 0}, "context_tokens must be a positive integer"),
        ({"max_tokens": 40_000, "context_tokens": 32_000}, "must be below context_tokens"),
        ({"tool_choice": "sometimes"}, "tool_choice must be one of auto, required, none"),
        ({"token_budget": -1}, "token_budget"),
        ({"wall_budget_s": 0}, "wall_budget_s"),
        ({"full_drop_to": 2.0}, "full_drop_to"),
        ({"max_retries": True}, "max_retries"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LLMConfig(model="m").replace(**changes)


def test_overrides_and_unknown_fields() -> None:
    policy = LLMPolicy(3, LLMConfig(model="a", temperature=0.5), model="b")
    assert (policy.config.model, policy.config.temperature, policy.name) == ("b", 0.5, "llm")
    with pytest.raises(TypeError, match="unknown LLMConfig field"):
        LLMPolicy(3, model="m", temprature=0.2)
    with pytest.raises(ValueError, match="needs a model"):
        LLMPolicy(3)


def test_a_policy_pickles_without_its_client(monkeypatch: pytest.MonkeyPatch) -> None:
    import salesgym

    env = salesgym.make("territory-debug-v0")
    obs, info = env.reset(seed=1)
    policy = LLMPolicy(1, model="m", api_key_env=KEY_ENV)
    policy.reset(obs, env.tool_schemas(), info["instructions"])
    clone = pickle.loads(pickle.dumps(policy))
    assert clone._client is None and clone.config == policy.config


def test_the_policy_can_be_made_from_keywords_alone() -> None:
    """As the docs show it: ``LLMPolicy(model=..., base_url=..., api_key_env=...)``; the seed defaults to 0."""
    from salesgym.agents.llm import LLMPolicy

    policy = LLMPolicy(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="SOME_KEY")
    assert policy.seed == 0 and policy.config.model == "m" and policy.config.api_key_env == "SOME_KEY"
