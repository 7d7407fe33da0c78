"""``salesgym bench --family desk --buyer llm --buyer-model M --buyer-base-url U`` runs the desk against a
language-model buyer (a real loopback server, scripted), reports the buyer's tokens apart, is another run than
the rule-based one, and refuses bad buyer options in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_buyer_helpers import KEY_ENV, reply
from typer.testing import CliRunner

pytest.importorskip("openai")

from salesgym.agents.base import Replay, rollout
from salesgym.bench import runner
from salesgym.bench import splits as sp
from salesgym.bench.store import Store
from salesgym.cli import app
from salesgym.envs.desk.llm_buyer import request_seed
from salesgym.testing.scripted_openai import ScriptedOpenAI

MOVES = [reply("reject", "Not yet.", "not_convinced"), reply("accept", "Fine, I'll take it.")] * 20


def _bench(db: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["bench", "--family", "desk", "--episodes", "1", "-p", "quote-then-fit",
                                      "--workers", "1", "--db", str(db), *extra])  # fmt: skip
    return result.exit_code, result.output


def test_bench_runs_the_desk_against_a_language_model_buyer(tmp_path: Path) -> None:
    first = sp.load("desk-eval").territories[0]
    scripts = {request_seed(first.seed, f"L{i:03d}"): MOVES for i in range(first.n_opportunities)}
    db = tmp_path / "runs.sqlite"
    with ScriptedOpenAI(scripts) as server:
        code, output = _bench(db, "--buyer", "llm", "--buyer-model", "scripted-buyer", "--buyer-base-url",
                              server.base_url, "--buyer-api-key-env", KEY_ENV)  # fmt: skip
        asked = len(server.requests)
    assert code == 0 and "Traceback" not in output, output
    assert asked > 0
    code, _ = _bench(db)  # the rule-based desk on the same territory: another run
    assert code == 0
    with Store(db, readonly=True) as store:
        runs = store.runs()
        assert len(runs) == 2
        llm_run = next(r for r in runs if "env_options" in r.config)
        rules_run = next(r for r in runs if r is not llm_run)
        [episode] = store.episodes(llm_run.id)
        [rules] = store.episodes(rules_run.id)
        trajectory = store.trajectory(llm_run.id, "quote-then-fit", first.id)
        rules_trajectory = store.trajectory(rules_run.id, "quote-then-fit", first.id)
    assert llm_run.config["env_options"]["buyer_model"] == "scripted-buyer"
    assert "sk-buyer-not-a-real-key" not in str(llm_run.config)  # the key stays in its variable
    m = episode.metrics
    assert episode.status == "ok" and m["buyer_replies"] == asked and m["buyer_prompt_tokens"] > 0
    assert m["buyer_errors"] == 0 and m["conversions"] >= 1
    assert "buyer_replies" not in rules.metrics  # the rule-based desk's score is unchanged
    assert "counterparty_tape" not in rules_trajectory

    # offline replay of the stored episode, the server stopped: its calls, its buyer tape, the same event log
    options = tuple(sorted(llm_run.config["env_options"].items()))
    env = runner.make_env(first, None, "desk-v0", None, options)
    assert env.load_buyer_tape(trajectory["counterparty_tape"]) == asked
    list(rollout(env, Replay([turn["action"] for turn in trajectory["turns"]]), first.seed))
    assert env.event_log_hash() == trajectory["event_log_sha256"] and env.family.buyer.sent == 0
    assert env.score()["primary"] == m["primary"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--buyer", "robot"], "--buyer must be rules or llm"),
        (["--buyer-model", "m"], "apply to --buyer llm"),
        (["--buyer", "llm"], "a model name is needed"),
        (["--buyer", "llm", "--buyer-model", "m", "--buyer-api-key-env", "SALESGYM_NO_KEY"], "SALESGYM_NO_KEY"),
        (["--buyer", "llm", "--buyer-model", "m", "--buyer-base-url", "http://127.0.0.1:9/v1",
          "--buyer-api-key-env", KEY_ENV], "does not answer"),
        (["--split", "debug", "--family", "territory", "--buyer", "llm", "--buyer-model", "m"], "desk splits"),
    ],
)
def test_bad_buyer_options_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["bench", *(["--family", "desk"] if "--split" not in args else []), *args,
                                      "--episodes", "1", "--db", str(tmp_path / "r.sqlite")])  # fmt: skip
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "r.sqlite").exists()
