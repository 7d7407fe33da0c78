"""``salesgym bench --policy llm`` end to end against a real OpenAI-compatible server on loopback whose scripted
"model" plays expected-value's moves (and fails on cue): HTTP, the SDK, tool-call parsing, the run store,
token columns, trajectories, the transcript export and the viewer, with nothing mocked."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import salesgym
from salesgym.agents.llm import sampling_seed
from salesgym.bench import splits as sp
from salesgym.bench.policyspec import outside_seed
from salesgym.bench.store import Store
from salesgym.cli import app
from salesgym.testing.scripted_openai import ScriptedOpenAI, http_error, script_of, text_reply

KEY_ENV = "SALESGYM_TEST_BENCH_LLM_KEY"
os.environ[KEY_ENV] = "sk-scripted-not-a-real-key"  # at import: workers fork from a server started with this env
DEBUG = sp.load("debug")


def _key(territory: sp.Territory) -> int:
    """What the endpoint sees as the request seed of a territory's trial-0 episode (never the world's seed)."""
    return sampling_seed(outside_seed(territory.seed))


def _env(t: sp.Territory) -> object:
    return salesgym.make("territory-v0", family=t.family, template=t.template, n_opportunities=t.n_opportunities,
                         horizon_days=t.horizon_days)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as s:
        yield s


def _bench(server: ScriptedOpenAI, db: Path, *extra: str) -> str:
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "-p", "llm", "-p", "expected-value", "-p", "idle",
                                      "-p", "random", "-p", "oracle", "--model", "scripted", "--base-url",
                                      server.base_url, "--api-key-env", KEY_ENV, "--workers", "2", "--db", str(db),
                                      *extra])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return result.output


@pytest.fixture(scope="module")
def run(server: ScriptedOpenAI, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    for t in DEBUG.territories:
        server.script(_key(t), script_of(lambda t=t: _env(t), "expected-value", t.seed))
    db = tmp_path_factory.mktemp("llm") / "runs.sqlite"
    output = _bench(server, db, "--price-in", "2", "--price-out", "8")
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
    return db, run_id, output


def test_the_scripted_model_reproduces_expected_value_exactly(run: tuple[Path, str, str],
                                                              server: ScriptedOpenAI) -> None:
    db, run_id, _ = run
    with Store(db, readonly=True) as store:
        eps = {(e.policy, e.territory_id): e for e in store.episodes(run_id)}
        for t in DEBUG.territories:
            llm, ev = eps[("llm", t.id)], eps[("expected-value", t.id)]
            assert llm.status == ev.status == "ok" and llm.end == ev.end == "terminated"
            assert llm.metrics and ev.metrics
            assert llm.metrics == ev.metrics  # score, return, reward by tool: all of it
            a, b = store.trajectory(run_id, "llm", t.id), store.trajectory(run_id, "expected-value", t.id)
            assert [x["tool_result"] for x in a["turns"]] == [x["tool_result"] for x in b["turns"]]
            assert server.moves_left(_key(t)) == 0  # every scripted move was asked for, once
            requests = server.requests_for(_key(t))
            assert len(requests) == len(a["turns"])
            assert all(r["seed"] == _key(t) != t.seed for r in requests)  # the world's seed never left
            first = requests[0]["body"]
            assert first["tools"] == a["tools"] == _env(t).tool_schemas()  # type: ignore[attr-defined]
            assert first["messages"][0] == {"role": "system", "content": a["instructions"]}
            record = llm.policy_record or {}
            assert record["usage"]["prompt_tokens"] > 0 and record["usage"]["completion_tokens"] > 0
            assert not any(record["failures"].values()) and record["requests"] == len(requests)


def test_the_leaderboard_shows_tokens_and_cost(run: tuple[Path, str, str]) -> None:
    db, run_id, output = run
    assert "llm" in output and "tokens" in output.lower() and "$" in output
    with Store(db, readonly=True) as store:
        usage = [e.policy_record["usage"] for e in store.episodes(run_id) if e.policy == "llm" and e.policy_record]
    assert len(usage) == 3 and all(u["prompt_tokens"] > u["cached_tokens"] >= 0 for u in usage)


def test_trajectories_export_as_transcripts_with_the_models_calls(run: tuple[Path, str, str], tmp_path: Path) -> None:
    db, run_id, _ = run
    out = tmp_path / "t.jsonl"
    result = CliRunner().invoke(app, ["export", run_id, "--db", str(db), "--trajectories", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    llm = [x for x in lines if x["metadata"]["policy"] == "llm"]
    assert len(llm) == 3
    for t in llm:
        calls = {c["id"]: c for m in t["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []}
        answered = [m["tool_call_id"] for m in t["messages"] if m["role"] == "tool"]
        assert calls and sorted(answered) == sorted(calls)  # every call the model made is answered, once
        assert t["messages"][0]["role"] == "system" and t["tools"]


def test_the_viewer_shows_the_models_turns(run: tuple[Path, str, str]) -> None:
    db, run_id, _ = run
    result = CliRunner().invoke(app, ["view", run_id, "--db", str(db), "--episode", f"llm/{DEBUG.territories[0].id}",
                                      "--turns", "1:3"])
    assert result.exit_code == 0, result.output
    assert "Episode: llm" in result.output and "prompt_tokens" in result.output


def test_endpoint_failures_are_recorded_and_counted_never_turned_into_actions(server: ScriptedOpenAI,
                                                                              tmp_path: Path) -> None:
    """One territory's model answers in plain text twice, then the endpoint fails for good: the episode
    stops with the endpoint error as its recorded end; nothing the endpoint did became an action."""
    t = DEBUG.territories[0]
    moves = script_of(lambda: _env(t), "expected-value", t.seed)[:5]
    server.script(_key(t), [*moves[:2], text_reply("let me think"), text_reply("still thinking"), *moves[2:],
                            *[http_error(500)] * 10])
    db = tmp_path / "fail.sqlite"
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "--episodes", "1", "-p", "llm", "-p", "idle",
                                      "-p", "random", "-p", "oracle", "--model", "scripted", "--base-url",
                                      server.base_url, "--api-key-env", KEY_ENV, "--db", str(db), "--workers", "1"])
    assert result.exit_code == 0, result.output
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
        ep = next(e for e in store.episodes(run_id) if e.policy == "llm")
        traj = store.trajectory(run_id, "llm", t.id)
    assert ep.status == "stopped" and ep.end is not None and ep.end.startswith("stopped: endpoint_error")
    record = ep.policy_record or {}
    assert record["failures"]["no_tool_call"] == 2 and record["failures"]["endpoint_error"] == 1
    assert record["retries"] >= 1
    assert [x["action"] for x in traj["turns"]] == [{"tool": m["calls"][0]["name"], "args": m["calls"][0]["arguments"]}
                                                    for m in moves]


def test_several_calls_in_one_reply_export_as_one_assistant_message_with_every_call_answered(
    server: ScriptedOpenAI,
) -> None:
    """Three calls a reply, and a cap of two: each reply is one assistant message; each call gets exactly one
    tool message (the third gets the policy's "not carried out"), in the conversation and in the export."""
    from salesgym.agents.base import Episode
    from salesgym.agents.llm import LLMPolicy
    from salesgym.agents.trajectory import Recorder
    from salesgym.bench.store import EpisodeRecord
    from salesgym.bench.transcripts import transcript

    t = DEBUG.territories[1]
    seed = outside_seed(t.seed)
    server.script(sampling_seed(seed), script_of(lambda: _env(t), "expected-value", t.seed, per_reply=3)[:6])
    policy = LLMPolicy(seed, model="scripted", base_url=server.base_url, api_key_env=KEY_ENV, max_calls_per_reply=2)
    rec = Recorder(Episode(_env(t), policy, t.seed, max_steps=12), env_id="territory-v0")
    for _ in rec:
        pass
    traj = rec.trajectory
    assert len(traj["turns"]) == 12 and policy.episode_record()["failures"]["extra_tool_calls"] == 6
    messages = transcript(traj, EpisodeRecord("llm", t.id, t.seed, "ok", {}, 0.0, 12, 12), "r")["messages"]
    replies = [m for m in messages if m["role"] == "assistant"]
    assert len(replies) == 6 and all(len(m["tool_calls"]) == 3 for m in replies)
    answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(answers) == sorted(c["id"] for m in replies for c in m["tool_calls"])
    carried = [m for m in messages if m["role"] == "tool" and not m["content"].startswith("Not carried out")]
    assert len(carried) == 12


@pytest.mark.parametrize(("args", "message"), [
    (("--context", "everything"), "context must be one of full, window, summary"),
    (("--api-key-env", "SALESGYM_TEST_NO_SUCH_KEY"), "set the environment variable SALESGYM_TEST_NO_SUCH_KEY"),
    ((), "--model"),
])
def test_bad_llm_options_are_one_line_before_any_episode(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    db = tmp_path / "x.sqlite"
    model = ("--model", "m") if args else ()
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "-p", "llm", *model, "--base-url",
                                      "http://127.0.0.1:9/v1", "--db", str(db), *args])
    assert result.exit_code in (1, 2) and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not db.exists()
