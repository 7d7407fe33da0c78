"""Trajectories in the run store: written with every episode, replayable on a fresh environment, exported as
chat transcripts with tools (the SFT format TRL reads); a private split's seeds stay out. And ``--dry-run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_fixtures import write_agent_module
from typer.testing import CliRunner

from salesgym.bench import analysis as an
from salesgym.bench import runner
from salesgym.bench.runner import EpisodeSpec, LocalBackend, run_benchmark, run_episode
from salesgym.bench.splits import load
from salesgym.bench.store import EpisodeRecord, Store, decode_trajectory
from salesgym.bench.transcripts import transcript, turn_messages
from salesgym.cli import app

DEBUG = load("debug")
POLICIES = ("expected-value", "random", "ev+truncation")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("traj") / "r.sqlite"
    with Store(db) as store:
        run_id = run_benchmark(store, DEBUG, POLICIES, LocalBackend(2)).run.id
    return db, run_id


def test_every_episode_has_its_trajectory(run: tuple[Path, str]) -> None:
    db, run_id = run
    with Store(db, readonly=True) as store:
        eps = store.episodes(run_id)
        assert len(eps) == 9
        for ep in eps:
            traj = store.trajectory(run_id, ep.policy, ep.territory_id, ep.trial)
            assert traj["format"] == "salesgym-trajectory/1"
            assert (traj["policy"], traj["territory"], traj["trial"], traj["seed"]) == (
                ep.policy, ep.territory_id, 0, ep.seed)
            assert len(traj["turns"]) == ep.steps and traj["end"] == ep.end
            assert traj["instructions"] and traj["tools"]
        ends = {ep.policy: ep.end for ep in eps}
    assert ends["expected-value"] == "terminated" and ends["ev+truncation"] == "truncated"
    a = an.analyse(eps, list(POLICIES))
    assert a.ends["ev+truncation"] == {"truncated": 3} and a.ends["random"] == {"terminated": 3}


def test_replaying_a_stored_trajectory_gives_the_same_results(run: tuple[Path, str]) -> None:
    db, run_id = run
    territories = {t.id: t for t in DEBUG.territories}
    with Store(db, readonly=True) as store:
        stored = list(store.iter_trajectories(run_id))
    assert len(stored) == 9
    for ep, traj in stored:
        t = territories[ep.territory_id]
        env = runner.make_env(t, None, "territory-v0")
        obs, _ = env.reset(seed=traj["seed"])
        assert obs["text"] == traj["observation"]
        for turn in traj["turns"]:
            obs, reward, *_, info = env.step(turn["action"])
            replayed = (info["tool_result"], reward, obs["text"])
            assert replayed == (turn["tool_result"], turn["reward"], turn["observation"])
        assert env.score()["primary"] == ep.metrics["primary"]  # type: ignore[index]


def _export(db: Path, run_id: str, out: Path, *extra: str) -> list[dict]:
    result = CliRunner().invoke(app, ["export", run_id, "--trajectories", "--db", str(db), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    assert f"wrote {out} (9 episode transcript(s))" in result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("mode", ["object", "string"])
def test_export_is_a_chat_transcript_with_tools(run: tuple[Path, str], tmp_path: Path, mode: str) -> None:
    db, run_id = run
    lines = _export(db, run_id, tmp_path / "t.jsonl", "--tool-arguments", mode)
    with Store(db, readonly=True) as store:
        trajectories = {(e.policy, e.territory_id): t for e, t in store.iter_trajectories(run_id)}
    for record in lines:
        meta, messages = record["metadata"], record["messages"]
        traj = trajectories[(meta["policy"], meta["territory"])]
        assert record["tools"] == traj["tools"] and {t["type"] for t in record["tools"]} == {"function"}
        assert messages[0] == {"role": "system", "content": traj["instructions"]}
        assert messages[1] == {"role": "user", "content": traj["observation"]}
        assert meta["trial"] == 0 and meta["turns"] == len(traj["turns"]) and "primary" in meta["score"]
        body = messages[2:]
        assert len(body) == 2 * len(traj["turns"])
        for turn, assistant, answer in zip(traj["turns"], body[::2], body[1::2], strict=True):
            (call,) = assistant["tool_calls"]
            assert assistant["role"] == "assistant" and assistant["content"] is None and call["type"] == "function"
            args = call["function"]["arguments"]
            if mode == "string":
                assert isinstance(args, str)
                args = json.loads(args)
            assert call["function"]["name"] == turn["action"]["tool"] and args == turn["action"]["args"]
            assert answer == {"role": "tool", "tool_call_id": call["id"], "name": turn["action"]["tool"],
                              "content": turn["observation"]}
        assert len({m["tool_call_id"] for m in body[1::2]}) == len(traj["turns"])


def test_the_policys_own_messages_are_kept() -> None:
    """A language model's turn record carries its messages (OpenAI format): they replace the made-up call."""
    own = [
        {"role": "assistant", "content": "no tool"},
        {"role": "user", "content": "Call one tool."},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "abc", "type": "function", "function": {"name": "view_opportunity", "arguments": '{"page": 0}'}}]},
    ]
    turn = {"action": {"tool": "view_opportunity", "args": {"page": 0}}, "model": {"messages": own, "usage": {}},
            "observation": "after"}
    msgs = turn_messages(turn, 7)
    assert msgs[:2] == own[:2]
    assert msgs[2]["tool_calls"][0]["function"]["arguments"] == {"page": 0}  # re-encoded as an object
    assert msgs[3] == {"role": "tool", "tool_call_id": "abc", "name": "view_opportunity", "content": "after"}
    assert turn_messages(turn, 7, "string")[2]["tool_calls"][0]["function"]["arguments"] == '{"page": 0}'
    bad = turn_messages({"action": "{not a call", "model": None, "observation": "refused"}, 0)
    assert bad == [{"role": "assistant", "content": '"{not a call"'}, {"role": "user", "content": "refused"}]


def test_a_private_split_keeps_its_seeds_out_of_trajectories() -> None:
    t = DEBUG.territories[0]
    rec = run_episode(EpisodeSpec("random", t, trial=1, private=True))
    assert rec.trajectory is not None
    traj = decode_trajectory(rec.trajectory)
    assert traj["seed"] is None and "policy_seed" not in traj
    text = json.dumps(traj)
    assert str(t.seed) not in text and str(runner.trial_seed(t.seed, 1)) not in text
    episode = EpisodeRecord(rec.policy, t.id, t.seed, rec.status, rec.metrics, 0.0, rec.steps, rec.tool_calls)
    assert transcript(traj, episode, "run")["metadata"]["seed"] is None


# -- dry run ---------------------------------------------------------------------------------------
def test_dry_run_writes_nothing_and_projects_the_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mod = write_agent_module(tmp_path)
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["bench", "--split", "debug", "--agent", f"{mod}:CoinSeller", "--dry-run",
                                      "--dry-run-episodes", "1", "--trials", "2", "--workers", "1", "--db", str(db),
                                      "--price-in", "1", "--price-out", "2"])
    assert result.exit_code == 0, result.output
    assert "projected for 6 episode(s) per policy" in " ".join(result.output.split())
    assert "projected: $" in result.output
    assert not db.exists() and list(tmp_path.glob("*.sqlite*")) == []


def test_projection_scales_the_sample() -> None:
    t = DEBUG.territories[:2]
    sample = [run_episode(EpisodeSpec("random", x)) for x in t]
    usage = [{"usage": {"prompt_tokens": 1000.0 * (i + 1), "completion_tokens": 10.0, "cached_tokens": 0.0}}
             for i in range(2)]
    sample = [EpisodeRecord(**{**e.to_dict(), "policy_record": u}) for e, u in zip(sample, usage, strict=True)]
    (p,) = an.projection(sample, ["random"], 30, an.Prices(2.0, 4.0))
    assert (p.sampled, p.episodes) == (2, 30)
    assert p.tokens == pytest.approx({"prompt_tokens": 1500 * 30, "completion_tokens": 10 * 30, "cached_tokens": 0})
    assert p.cost == pytest.approx(30 * (1500 * 2.0 + 10 * 4.0) / 1e6)
    assert p.wall_s == pytest.approx(30 * sum(e.wall_s for e in sample) / 2)


def test_the_viewer_reads_a_real_stored_trajectory(run: tuple[Path, str], tmp_path: Path) -> None:
    """The store's trajectories are what ``salesgym view`` shows (no stand-in for Store.trajectory here)."""
    from test_view import _cli

    db, run_id = run
    code, out, err = _cli(run_id, "--db", str(db), "--episode", f"random/{DEBUG.territories[1].id}/0", "--turns", "1:3")
    assert code == 0, err
    assert f"Episode: random on {DEBUG.territories[1].id}" in out and "Final score" in out
