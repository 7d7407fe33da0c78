"""The episode viewer in the terminal: real recorded episodes rendered with rich, read back as text."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner
from view_fakes import HOSTILE, expected_value, expected_value_quarter, hostile, random_debug, wait_runs, with_model

from salesgym.bench import view
from salesgym.bench.store import EpisodeRecord, RunRecord, Store, encode_trajectory
from salesgym.bench.view import EpisodeKey, EpisodeNotFound, parse_turns, select_episode
from salesgym.cli import app

WIDE = 400  # wide enough that no assertion depends on where rich wraps


def _text(traj: dict[str, Any], score: dict[str, Any] | None, width: int = WIDE, **kw: Any) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False)
    view.render(traj, score, console, **kw)
    return buf.getvalue()


def _rows(text: str) -> dict[str, str]:
    """Trace rows by their turn number cell (``12`` or ``40–44``), each with its continuation lines."""
    rows: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+(?:–\d+)?)\s{2,}", line)
        if m:
            current = m.group(1)
            rows[current] = line
        elif current is not None and line.startswith(" ") and line.strip():
            rows[current] += "\n" + line
        else:
            current = None
    return rows


# -- the trace -----------------------------------------------------------------------------------------------
def test_full_view_shows_every_tool_call_in_order() -> None:
    traj, score = expected_value()
    rows = _rows(_text(traj, score, full=True))
    assert len(traj["turns"]) > 150
    assert list(rows) == [str(n) for n in range(1, len(traj["turns"]) + 1)]
    for n, turn in enumerate(traj["turns"], start=1):
        action = turn["action"]
        first_arg = next(iter(action["args"].items()), None)
        assert f"{action['tool']}(" in rows[str(n)]
        if first_arg and isinstance(first_arg[1], str):
            assert f'{first_arg[0]}="{first_arg[1]}"' in rows[str(n)]
        assert turn["observation"].splitlines()[0] in rows[str(n)]  # --full: the observation after each turn


def test_waits_fold_but_what_arrived_meanwhile_is_shown() -> None:
    traj, score = expected_value()
    text = _text(traj, score)
    rows = _rows(text)
    runs = wait_runs(traj["turns"])
    assert runs, "the expected-value seller waits for replies"
    for first, last in runs:
        row = rows[f"{first}–{last}"]
        assert f"wait ×{last - first + 1}" in row
        for turn in traj["turns"][first - 1 : last]:
            for it in turn["data"]["inbox"]:
                assert it["text"] in row
        for n in range(first, last + 1):
            assert str(n) not in rows  # folded into the range row
    assert len(text.splitlines()) < len(_text(traj, score, full=True).splitlines())


def test_buyer_replies_and_verified_milestones_are_shown_where_they_arrived() -> None:
    traj, score = expected_value()
    rows = _rows(_text(traj, score, full=True))
    kinds: set[str] = set()
    for n, turn in enumerate(traj["turns"], start=1):
        for it in turn["data"]["inbox"]:
            kinds.add(it["kind"])
            row = rows[str(n)]
            assert f"{it['kind']} {it['opportunity_id']}" in row
            assert it["text"] in row
            if it["kind"] == "milestone":
                assert f"★ milestone {it['opportunity_id']}" in row and f"milestone {it['milestone']}" in row
            if it["evidence"]:
                assert f"evidence {it['evidence']}" in row
    assert {"reply", "milestone", "meeting_answer"} <= kinds


def test_milestone_counts_changes_are_shown_on_the_turn_they_happen() -> None:
    traj, score = expected_value()
    rows = _rows(_text(traj, score, full=True))
    before = traj["data"]["milestone_counts"]
    changed = 0
    for n, turn in enumerate(traj["turns"], start=1):
        after = turn["data"]["milestone_counts"]
        names = [k for k in {**before, **after} if before.get(k, 0) != after.get(k, 0)]
        for k in names:
            assert f"{k} {before.get(k, 0)}→{after.get(k, 0)}" in rows[str(n)]
        if not names:
            assert "▲ milestones" not in rows[str(n)]
        changed += bool(names)
        before = after
    assert changed >= 10


def test_folded_rows_show_the_net_milestone_change() -> None:
    traj, score = expected_value_quarter()
    rows = _rows(_text(traj, score))
    turns = traj["turns"]
    checked = 0
    for first, last in wait_runs(turns):
        before = turns[first - 2]["data"]["milestone_counts"] if first > 1 else traj["data"]["milestone_counts"]
        after = turns[last - 1]["data"]["milestone_counts"]
        for k in {**before, **after}:
            if before.get(k, 0) != after.get(k, 0):
                assert f"{k} {before.get(k, 0)}→{after.get(k, 0)}" in rows[f"{first}–{last}"]
                checked += 1
    assert checked


def test_capacity_costs_errors_and_rewards() -> None:
    traj, score = random_debug()
    rows = _rows(_text(traj, score))
    errors = 0
    for n, turn in enumerate(traj["turns"], start=1):
        row = rows.get(str(n))
        if row is None:  # folded
            continue
        result = turn["tool_result"]
        if result["status"] == "error":
            errors += 1
            assert f"error · {view.number(result['time_cost'])}h" in row
            assert result["output"]["error"] in row
        for res, cost in result["resource_cost"].items():
            if cost:
                left = turn["data"]["capacity_left"][res]
                assert f"{res} −{view.number(cost)} ({view.number(left)} left)" in row
        if turn["reward"]:
            assert f"reward {turn['reward']:+.4g}" in row
    assert errors >= 5


def test_header_end_and_final_score() -> None:
    traj, score = expected_value()
    text = _text(traj, score)
    assert "Episode: expected-value on t01" in text
    assert f"turns {len(traj['turns'])}" in text and "env_id territory-v0" in text and "seed 3" in text
    assert "start: time Mon 2027-01-04 09:00 · capacity left seller 30, se 7" in text
    last = traj["turns"][-1]["data"]
    assert f"end {traj['end']} · time {last['time']['stamp']}" in text
    assert "capacity left " + ", ".join(f"{k} {view.number(v)}" for k, v in last["capacity_left"].items()) in text
    score_part = text.split("Final score", 1)[1]
    assert f"primary {view.number(score['primary'])}" in score_part
    assert f"penalties {view.number(score['penalties'])}" in score_part
    assert "advances " + ", ".join(f"{k} {v}" for k, v in score["advances"].items()) in score_part
    assert f"disqualified backed {score['disqualified']['backed']}" in score_part
    assert f"why {score['why']}" in score_part


def test_a_missing_score_and_a_score_of_another_family() -> None:
    traj, _ = random_debug()
    assert "no score recorded" in _text(traj, None)
    text = _text(traj, {"revenue": 1234.5, "compliance": {"breaches": 2}, "sold": 3, "note": "x"})
    score_part = text.split("Final score", 1)[1]
    assert "revenue 1,234 · sold 3" in score_part  # the headline: its first numbers
    assert "compliance breaches 2" in score_part and "note x" in score_part


# -- long episodes -------------------------------------------------------------------------------------------
def test_turn_range() -> None:
    traj, score = expected_value()
    text = _text(traj, score, turns=parse_turns("10:40"), full=True)
    rows = _rows(text)
    assert list(rows) == [str(n) for n in range(10, 41)]
    assert f"turns 10–40 of {len(traj['turns'])}" in text
    assert "Final score" in text  # the end and the score are always shown
    empty = _text(traj, score, turns=parse_turns("900:"))
    assert not _rows(empty) and f"no turns in the range asked for; the episode has {len(traj['turns'])}" in empty


def test_range_starts_with_the_change_since_the_turn_before() -> None:
    traj, score = expected_value()
    turns = traj["turns"]
    n = next(i for i in range(2, len(turns)) if turns[i - 1]["data"]["milestone_counts"]
             != turns[i - 2]["data"]["milestone_counts"])
    rows = _rows(_text(traj, score, turns=parse_turns(str(n)), full=True))
    assert list(rows) == [str(n)] and "▲ milestones" in rows[str(n)]


def test_long_texts_are_cut_with_a_note_unless_full() -> None:
    traj, score = expected_value()
    long_turn = max(range(len(traj["turns"])), key=lambda i: len(json.dumps(traj["turns"][i]["tool_result"]["output"])))
    output = view.compact(traj["turns"][long_turn]["tool_result"]["output"])
    n = str(long_turn + 1)
    short = _rows(_text(traj, score, turns=parse_turns(n)))[n]
    assert output not in short and f"… +{len(output) - view.OUTPUT_LIMIT:,} chars" in short
    assert output in _rows(_text(traj, score, 100_000, turns=parse_turns(n), full=True))[n]


def test_parse_turns_refuses_nonsense() -> None:
    assert parse_turns(" 3 : 5 ") == slice(2, 5)
    for bad in ("a:b", "0:3", "5:2", "1:2:3", "-1"):
        with pytest.raises(ValueError, match="--turns"):
            parse_turns(bad)


# -- a language model in the seat ----------------------------------------------------------------------------
def test_model_messages_usage_and_failures() -> None:
    traj, score = expected_value()
    traj = with_model(traj, failing=(3,))
    text = _text(traj, score)
    rows = _rows(text)
    assert "model totals prompt_tokens 123,456, completion_tokens 7,890" in text
    assert "failures no_tool_call 1, malformed_call 1" in text and "sampling temperature 0, seed 7" in text
    row = rows["3"]
    assert "» assistant: Turn 3: let me think about the pipeline first." in row
    assert '» assistant calls find_stakeholders({not json)' in row
    assert "✗ no_tool_call: the reply had no tool call" in row
    assert "✗ malformed_call: arguments are not JSON" in row
    assert "requests 3 · prompt_tokens 1,003 · completion_tokens 43 · cached_tokens 900 · latency_s 0.75" in row
    assert "» assistant: Turn 1: next I call view_opportunity." in rows["1"]
    assert "» assistant calls" not in rows["1"]  # the call it made is the turn's call, shown once
    assert rows["3"].count("» assistant calls") == 1  # the malformed one
    first, last = wait_runs(traj["turns"])[0]
    folded = rows[f"{first}–{last}"]  # a fold sums its turns' usage
    k = last - first + 1
    prompt = sum(1000 + n for n in range(first, last + 1))
    assert f"» requests {k} · prompt_tokens {prompt:,} · completion_tokens" in folded


def test_a_call_beside_the_one_played_is_shown() -> None:
    traj, score = expected_value()
    traj = with_model(traj, failing=())
    played = traj["turns"][0]["model"]["messages"][-1]["tool_calls"][0]
    fn = {"name": "disqualify", "arguments": '{"opportunity_id": "o001"}'}
    extra = {"id": "x", "type": "function", "function": fn}
    traj["turns"][0]["model"]["messages"][-1]["tool_calls"] = [played, extra]
    row = _rows(_text(traj, score, turns=slice(0, 1)))["1"]
    assert row.count("» assistant calls") == 1 and '» assistant calls disqualify({"opportunity_id": "o001"})' in row


def test_a_failing_wait_is_not_folded_away() -> None:
    traj, score = expected_value()
    first, last = wait_runs(traj["turns"])[0]
    rows = _rows(_text(with_model(traj, failing=(first,)), score))
    assert "✗ no_tool_call" in rows[str(first)]
    if last - first >= 2:
        assert f"{first + 1}–{last}" in rows


# -- hostile text --------------------------------------------------------------------------------------------
def test_hostile_text_is_shown_as_text_never_interpreted() -> None:
    traj, score = hostile(expected_value()[0])
    text = _text(traj, score, turns=slice(0, 3))
    assert "\x1b" not in text and "\x00" not in text and "\u202e" not in text and "\x07" not in text
    visible = view.clean(HOSTILE)
    assert "[bold red]RED[/bold red] [link=http://evil.example]click[/link]" in text
    assert "\\x1b[2J\\x1b[31mansi" in text and "nul\\x00" in text and "\\u202eevil" in text
    assert text.count(visible[:60]) >= 8  # policy, call, output, inbox item, alert, message, failure, score
    full = _text(traj, score, 100_000, turns=slice(0, 1), full=True)
    assert visible * 3 in full  # the observation, uncut


def test_hostile_text_on_a_colour_terminal_emits_only_colour_codes() -> None:
    traj, score = hostile(expected_value()[0])
    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system="truecolor", force_terminal=True)
    view.render(traj, score, console, turns=slice(0, 2), full=True)
    codes = re.findall(r"\x1b[^a-zA-Z]*[a-zA-Z]?", buf.getvalue())
    assert codes and all(re.fullmatch(r"\x1b\[[0-9;]*m", c) for c in codes), {c for c in codes if c[-1:] != "m"}
    assert "\x00" not in buf.getvalue() and "\x07" not in buf.getvalue()


@pytest.mark.parametrize(
    "traj",
    [
        {},
        {"turns": "nope", "data": [], "policy": None},
        {"turns": [None, 3, {"action": object(), "tool_result": [], "data": {"inbox": [7, None, {"kind": 1}]}}]},
        {"turns": [{"action": "{\"tool\": ", "model": {"messages": [None, {"content": [{"text": "hi"}]}],
                                                      "usage": {"prompt_tokens": "many"}, "failures": [3]}}]},
        {"turns": [{"action": {"tool": "wait", "args": [1]}, "tool_result": {"status": "ok", "time_cost": "x"},
                    "data": {"milestone_counts": {"A": "b"}, "capacity_left": 5, "time": 3.5}}] * 3},
    ],
)
def test_any_shape_of_trajectory_renders(traj: dict[str, Any]) -> None:
    text = _text(traj, {"primary": float("nan"), "x": [1, {"y": None}]})
    assert "Final score" in text
    assert view.html(traj, None).startswith("<!doctype html>")


# -- choosing the episode ------------------------------------------------------------------------------------
def test_select_episode() -> None:
    keys = [EpisodeKey("random", "t02"), EpisodeKey("llm/org/model-7b", "t01", 1),
            EpisodeKey("llm/org/model-7b", "t01", 0), EpisodeKey("idle", "t01")]
    assert select_episode(keys, None) == EpisodeKey("idle", "t01")
    assert select_episode(keys, "llm/org/model-7b/t01") == EpisodeKey("llm/org/model-7b", "t01", 0)
    assert select_episode(keys, "llm/org/model-7b/t01/1").trial == 1
    with pytest.raises(EpisodeNotFound) as e:
        select_episode(keys, "random/t09", "r1")
    assert str(e.value) == "no episode 'random/t09' in run r1; valid ids (POLICY/TERRITORY[/TRIAL]): random/t02/0"
    with pytest.raises(EpisodeNotFound, match=r"valid ids .*idle/t01/0, llm/org/model-7b/t01/0, .*random/t02/0$"):
        select_episode(keys, "oracle/t01")
    many = [EpisodeKey("p", f"t{i:02}") for i in range(20)]
    with pytest.raises(EpisodeNotFound, match=r"valid ids \(POLICY/TERRITORY\[/TRIAL\]\): p/t00, .* … and 12 more$"):
        select_episode(many, "p/x")
    with pytest.raises(EpisodeNotFound, match="no episodes in run r2"):
        select_episode([], None, "r2")


# -- the command: the real CLI over a real store holding these trajectories -------------------------------
@pytest.fixture
def run_db(tmp_path: Path) -> Path:
    ev, ev_score = expected_value()
    rnd, rnd_score = random_debug()
    rnd["territory"] = "t02"
    db = tmp_path / "runs.sqlite"
    with Store(db) as store:
        store.ensure_run(RunRecord("r1", "", "debug", "0" * 64, ("expected-value", "random")))
        for (policy, territory), traj, score in ((("expected-value", "t01"), ev, ev_score),
                                                 (("random", "t02"), rnd, rnd_score)):
            store.record("r1", EpisodeRecord(policy, territory, 3, "ok", score, 0.1, 10, 10,
                                             trajectory=encode_trajectory(traj)))
    return db


def _cli(*args: str) -> tuple[int, str, str]:
    """``salesgym view ARGS`` through the real command-line app."""
    result = CliRunner().invoke(app, ["view", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def test_view_command_shows_an_episode(run_db: Path) -> None:
    code, out, err = _cli("r1", "--db", str(run_db), "--episode", "random/t02", "--turns", "1:5")
    assert code == 0, err
    assert "Episode: random on t02" in out and "turns 1–5 of" in out and "Final score" in out
    assert "penalties 17.36" in out
    code, out, err = _cli("r1", "--db", str(run_db))
    assert code == 0 and "Episode: expected-value" in out
    assert "showing expected-value/t01 (2 episodes in run r1; pick one with --episode)" in err


def test_view_command_writes_the_page(run_db: Path, tmp_path: Path) -> None:
    page = tmp_path / "out" / "ep.html"
    code, out, _ = _cli("r1", "--db", str(run_db), "--episode", "expected-value/t01/0", "--html", str(page))
    assert code == 0 and f"wrote {page}" in out and "Episode" not in out
    assert "salesgym episode: expected-value on t01" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--episode", "oracle/t01"), 1, "error: no episode 'oracle/t01' in run r1; valid ids "
         "(POLICY/TERRITORY[/TRIAL]): expected-value/t01, random/t02"),
        (("--episode", "random/t01"), 1, "valid ids (POLICY/TERRITORY[/TRIAL]): random/t02"),
        (("--turns", "9:2"), 2, "error: --turns '9:2': turns are numbered from 1"),
    ],
)
def test_view_command_errors_are_one_line(run_db: Path, args: tuple[str, ...], code: int, message: str) -> None:
    got, _, err = _cli("r1", "--db", str(run_db), *args)
    assert got == code and message in err and len(err.strip().splitlines()) == 1, err


def test_view_command_refuses_a_directory_for_the_page(run_db: Path, tmp_path: Path) -> None:
    code, _, err = _cli("r1", "--db", str(run_db), "--html", str(tmp_path))
    assert code == 2 and f"error: Invalid value for '--html': file '{tmp_path}' is a directory" in err
    code, _, err = _cli("r1", "--db", str(run_db), "--html", str(run_db / "x.html"))
    assert code == 1 and "is not a directory" in err


def test_view_command_unknown_run_or_database(run_db: Path, tmp_path: Path) -> None:
    code, _, err = _cli("nope", "--db", str(run_db))
    assert code == 1 and "no run 'nope'" in err
    code, _, err = _cli("r1", "--db", str(tmp_path / "missing.sqlite"))
    assert code == 1 and "no run database here" in err
