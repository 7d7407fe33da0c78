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
WIDE = {"COLUMNS": "240"}  # the leaderboard's every column, uncut


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


def _board_rows(output: str) -> dict[str, list[str]]:
    """The leaderboard's rows by policy name: ``[rank label, cells...]`` (a wide terminal, so nothing is cut)."""
    rows: dict[str, list[str]] = {}
    for line in output.splitlines():
        cells = line.split()
        if len(cells) > 2 and cells[1] in {"llm", "idle", "random", "oracle", "expected-value"}:
            rows.setdefault(cells[1], cells[:1] + cells[2:])
    return rows


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
                                      server.base_url, "--api-key-env", KEY_ENV, "--db", str(db), "--workers", "1"],
                                env=WIDE)
    # an episode the endpoint stopped is not scored: the row is shown, not ranked, and the run says so
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "1 episode(s) were stopped by the endpoint and are not scored" in result.stderr
    assert "--retry-errors" in result.stderr
    board = _board_rows(result.stdout)
    assert board["llm"][0] == "invalid" and "endpoint 100%" in " ".join(board["llm"])
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
        ep = next(e for e in store.episodes(run_id) if e.policy == "llm")
        traj = store.trajectory(run_id, "llm", t.id)
        assert ("llm", t.id, 0) in store.pending(run_id, [("llm", t.id, 0)], retry_errors=True)  # re-played then
        assert store.pending(run_id, [("idle", t.id, 0)], retry_errors=True) == []
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


def _llm_only(server: ScriptedOpenAI, db: Path, *extra: str, episodes: int = 1) -> object:
    return CliRunner().invoke(app, ["bench", "--split", "debug", "--episodes", str(episodes), "-p", "llm", "-p",
                                    "idle", "-p", "random", "-p", "oracle", "--model", "scripted", "--base-url",
                                    server.base_url, "--api-key-env", KEY_ENV, "--db", str(db), "--workers", "1",
                                    *extra], env=WIDE)  # fmt: skip


def test_every_llm_knob_reaches_the_request_and_the_run(server: ScriptedOpenAI, tmp_path: Path) -> None:
    t = DEBUG.territories[0]
    server.script(None, script_of(lambda: _env(t), "expected-value", t.seed)[:3])  # --no-send-seed: no seed key
    db = tmp_path / "knobs.sqlite"
    result = _llm_only(server, db, "--tool-choice", "required", "--extra-body", '{"top_k": 20, "min_p": 0.05}',
                       "--context-tokens", "12000", "--timeout", "30", "--token-budget", "900000", "--wall-budget",
                       "600", "--temperature", "0.3", "--no-send-seed", "--max-tokens", "256", "--llm-set",
                       "max_retries=1", "--llm-set", "window_turns=6", "--max-steps", "3")  # fmt: skip
    assert result.exit_code == 0, result.output
    bodies = [r["body"] for r in server.requests_for(None)]
    assert len(bodies) == 3
    for body in bodies:
        assert (body["tool_choice"], body["top_k"], body["min_p"], body["max_tokens"], body["temperature"]) == (
            "required", 20, 0.05, 256, 0.3)
        assert "seed" not in body
    with Store(db, readonly=True) as store:
        config = store.runs()[-1].config["agents"]["llm"]["config"]
    assert {k: config[k] for k in ("tool_choice", "extra_body", "context_tokens", "timeout_s", "token_budget",
                                   "wall_budget_s", "temperature", "send_seed", "max_tokens", "max_retries",
                                   "window_turns")} == {
        "tool_choice": "required", "extra_body": {"top_k": 20, "min_p": 0.05}, "context_tokens": 12000,
        "timeout_s": 30.0, "token_budget": 900000, "wall_budget_s": 600.0, "temperature": 0.3, "send_seed": False,
        "max_tokens": 256, "max_retries": 1, "window_turns": 6}  # fmt: skip


def test_the_context_length_the_endpoint_publishes_is_the_runs(tmp_path: Path) -> None:
    t = DEBUG.territories[0]
    with ScriptedOpenAI(context_length=14_000) as published:
        published.script(_key(t), script_of(lambda: _env(t), "expected-value", t.seed)[:2])
        db = tmp_path / "ctx.sqlite"
        result = _llm_only(published, db, "--max-steps", "2")
        assert result.exit_code == 0, result.output
        assert "publishes no context length" not in result.stderr
        bodies = [r["body"] for r in published.requests_for(_key(t))]
    assert [b["tool_choice"] for b in bodies] == ["auto", "auto"]  # the default, with the tools
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
        assert store.runs()[-1].config["agents"]["llm"]["config"]["context_tokens"] == 14_000
        ep = next(e for e in store.episodes(run_id) if e.policy == "llm")
    assert (ep.policy_record or {})["context"]["context_tokens"] == 14_000


@pytest.mark.parametrize(("args", "message"), [
    (("--extra-body", "{top_k: 1}"), "--extra-body: not JSON"),
    (("--extra-body", "[1]"), "--extra-body takes a JSON object"),
    (("--llm-set", "window_turns"), "--llm-set takes FIELD=VALUE"),
    (("--llm-set", "no_such_field=1"), "unknown LLMConfig field(s) no_such_field"),
    (("--tool-choice", "sometimes"), "tool_choice must be one of auto, required, none"),
    (("--context-tokens", "512"), "must be below context_tokens"),
])  # fmt: skip
def test_bad_knobs_are_one_line_before_any_episode(server: ScriptedOpenAI, tmp_path: Path, args: tuple[str, ...],
                                                   message: str) -> None:
    db = tmp_path / "bad.sqlite"
    result = _llm_only(server, db, *args)
    assert result.exit_code in (1, 2) and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not db.exists()


def test_an_endpoint_that_does_not_answer_is_one_line_before_any_episode(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for extra in ((), ("--dry-run",)):
        db = tmp_path / "dead.sqlite"
        result = CliRunner().invoke(app, ["bench", "--split", "debug", "-p", "llm", "--model", "m", "--base-url",
                                          f"http://127.0.0.1:{port}/v1", "--api-key-env", KEY_ENV, "--db", str(db),
                                          *extra])  # fmt: skip
        assert result.exit_code == 1 and "does not answer (connection error" in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and not db.exists()


def test_a_dry_run_does_not_project_from_failed_episodes(server: ScriptedOpenAI, tmp_path: Path) -> None:
    t = DEBUG.territories[0]
    server.script(_key(t), [http_error(503)] * 10)
    result = _llm_only(server, tmp_path / "dry.sqlite", "--dry-run", "--dry-run-episodes", "1", "--llm-set",
                       "max_retries=1")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "1 of 4 sampled episode(s) failed (first: llm: stopped: endpoint_error: HTTP 503" in result.stderr
    assert "projected" not in result.stdout and "no cost" not in result.stdout


def test_a_model_that_never_calls_a_tool_shows_why_its_episodes_ended(server: ScriptedOpenAI,
                                                                       tmp_path: Path) -> None:
    """Scored (it chose to do nothing), ranked, and its "ended by" says so; the export keeps the turn it
    stopped in (three replies without a call and the requests for one)."""
    for t in DEBUG.territories[:2]:
        server.script(_key(t), [text_reply("I would call someone."), text_reply("Let me think."),
                                text_reply("Done.")])  # fmt: skip
    db = tmp_path / "talk.sqlite"
    result = _llm_only(server, db, episodes=2)
    assert result.exit_code == 0, result.output
    # this server publishes no context length and none was given: the run says what it assumes
    assert (f"note: the endpoint at {server.base_url} publishes no context length for scripted: the policy "
            "assumes 32,000 tokens; give --context-tokens if the model reads fewer") in result.stderr
    board = _board_rows(result.stdout)
    assert board["llm"][0] != "invalid" and "no call 100%" in " ".join(board["llm"])
    assert board["idle"][-1] == "—"  # ran to its end
    with Store(db, readonly=True) as store:
        run_id = store.runs()[-1].id
    out = tmp_path / "t.jsonl"
    exported = CliRunner().invoke(app, ["export", run_id, "--db", str(db), "--trajectories", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(x) for x in out.read_text().splitlines() if json.loads(x)["metadata"]["policy"] == "llm"]
    assert len(rows) == 2
    for row in rows:
        said = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        assert said == ["I would call someone.", "Let me think.", "Done."]
        assert [m["role"] for m in row["messages"]] == ["system", "user", *["assistant", "user"] * 3]
        assert row["metadata"]["end"] == "stopped: no_tool_call"
    shown = CliRunner().invoke(app, ["view", run_id, "--db", str(db), "--episode", f"llm/{DEBUG.territories[0].id}"],
                               env=WIDE)  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "stopped in turn 1 (no_tool_call)" in shown.output and "Let me think." in shown.output
    header = shown.output.split("Trace (")[0]  # the stopped turn is the trace's: the header names only why
    assert "stopped reason no_tool_call" in header and "Let me think." not in header


def test_invalid_episodes_are_not_scored_and_a_mostly_invalid_row_is_not_ranked() -> None:
    from salesgym.bench import analysis as an
    from salesgym.bench.store import EpisodeRecord

    def ep(policy: str, tid: str, primary: float, end: str = "terminated") -> EpisodeRecord:
        status = "stopped" if end.startswith("stopped") else "ok"
        return EpisodeRecord(policy, tid, 0, status, {"primary": primary, "closed_value": 0.0}, 1.0, 5, 5, end=end)

    dead = "stopped: endpoint_error: connection error: ConnectError"
    tids = ["a", "b", "c", "d"]
    eps = [ep("idle", t, 0.0) for t in tids] + [ep("oracle", t, 10.0) for t in tids]
    eps += [ep("flaky", t, 5.0) for t in tids[:3]] + [ep("flaky", "d", 0.0, dead)]  # one of four invalid
    eps += [ep("down", "a", 2.0)] + [ep("down", t, 0.0, dead) for t in tids[1:]]  # three of four invalid
    eps += [ep("quiet", t, 0.0, "stopped: no_tool_call") for t in tids]  # chose to do nothing: scored
    a = an.analyse(eps, ["idle", "oracle", "flaky", "down", "quiet"])
    labels = {r.policy: label for label, r in an.ranked(a.rows, "ref")}
    assert labels == {"flaky": "1", "idle": "2", "quiet": "3", "down": "invalid", "oracle": "ref"}
    flaky = next(r for r in a.rows if r.policy == "flaky")
    assert flaky.invalid == 1 and flaky.primary is not None and flaky.primary.mean == 5.0  # the invalid 0 left out
    assert a.stops["flaky"] == {"endpoint": 0.25} and a.stops["quiet"] == {"no call": 1.0} and a.stops["idle"] == {}
    assert an.stops_text(a.stops["down"]) == "endpoint 75%"
    proj = an.projection(eps, ["flaky", "quiet"], 10, None)
    assert [p.errors for p in proj] == [1, 0]


def test_the_context_flag_names_every_strategy_and_the_default() -> None:
    from salesgym.llm.config import STRATEGIES, LLMConfig

    shown = " ".join(CliRunner().invoke(app, ["bench", "--help"], terminal_width=200).output.split())
    line = shown[shown.index("--context "):][:200]
    assert all(s in line for s in STRATEGIES) and f"default {LLMConfig.context}" in line, line
