"""`salesgym calibrate`: the estimators against hand-computed values, the bands and difficulty classes, a real
calibration run on a workflows split (determinism, resumption) and bad command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from salesgym.bench import calibration as cal
from salesgym.bench.splits import Slot
from salesgym.cli import app


# -- estimators ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (8, 0, 1, 0.0), (8, 8, 3, 1.0), (8, 4, 1, 0.5),
    (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
    (8, 2, 3, 1 - 20 / 56),  # 1 - C(6,3)/C(8,3)
    (8, 6, 3, 1.0),  # only 2 failures: any 3 attempts include a pass
    (4, 1, 4, 1.0),
])  # fmt: skip
def test_pass_at_k_matches_hand_computed_values(n: int, c: int, k: int, expected: float) -> None:
    assert cal.pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (8, 8, 8, 1.0), (8, 7, 8, 0.0), (8, 4, 1, 0.5),
    (5, 3, 2, 3 / 10),  # C(3,2)/C(5,2)
    (8, 6, 3, 20 / 56),  # C(6,3)/C(8,3)
    (8, 2, 3, 0.0),
])  # fmt: skip
def test_pass_hat_k_matches_hand_computed_values(n: int, c: int, k: int, expected: float) -> None:
    assert cal.pass_hat_k(n, c, k) == pytest.approx(expected)


def test_estimators_refuse_impossible_counts() -> None:
    for bad in ((0, 0, 1), (3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)):
        with pytest.raises(ValueError):
            cal.pass_at_k(*bad)
        with pytest.raises(ValueError):
            cal.pass_hat_k(*bad)


@pytest.mark.parametrize(("rate", "band"), [(0.0, "review"), (0.09, "review"), (0.1, "train"), (0.5, "train"),
                                            (0.9, "train"), (0.91, "regression"), (1.0, "regression")])
def test_bands(rate: float, band: str) -> None:
    assert cal.band(rate) == band


def test_difficulty_classes_by_pass_at_3() -> None:
    assert cal.difficulty(cal.pass_at_k(8, 0, 3)) == "hard"
    assert cal.difficulty(cal.pass_at_k(8, 3, 3)) == "medium"
    assert cal.difficulty(cal.pass_at_k(8, 6, 3)) == "easy"
    assert cal.difficulty(None) is None


def test_a_task_and_its_groups() -> None:
    a, b = Slot("t1", "tier1", "x", 1, 0), Slot("t2", "tier1", "x", 1, 0)
    ta = cal.calibrate_task(a, "s", [True, False, True, True])
    tb = cal.calibrate_task(b, "s", [False] * 4)
    assert (ta.passes, ta.rate, ta.band, ta.difficulty) == (3, 0.75, "train", "easy")
    assert ta.pass_hat[4] == 0.0 and ta.pass_at[1] == 0.75 and ta.pass_hat[2] == pytest.approx(3 / 6)
    assert (tb.band, tb.difficulty) == ("review", "hard")
    (g,) = cal.group([ta, tb], "template")
    assert (g.tasks, g.rate, g.bands["train"], g.bands["review"]) == (2, 0.375, 1, 1)
    data = cal.report("p", 4, [ta, tb], {"family_word": "tier"})
    assert data["summary"]["bands"] == {"review": 1, "train": 1, "regression": 0}
    assert "## By tier" in cal.markdown(data) and "| `t1` | s | `x` | 3/4 | 0.75 |" in cal.markdown(data)


def test_errors_and_stopped_episodes_are_failed_trials_and_say_so() -> None:
    from salesgym.bench.store import EpisodeRecord

    slot = Slot("t1", "tier1", "x", 1, 0)
    eps = [EpisodeRecord("p", "t1", 1, "ok", {"passed": True}, 0.1, 2, 2, trial=0),
           EpisodeRecord("p", "t1", 1, "error", None, 0.1, 0, 0, error="boom", trial=1),
           EpisodeRecord("p", "t1", 1, "stopped", {"passed": False}, 0.1, 1, 1, trial=2),
           EpisodeRecord("q", "t1", 1, "ok", {"passed": True}, 0.1, 2, 2, trial=0)]  # fmt: skip
    (t,) = cal.calibrate_split("s", [slot], eps, "p", None)
    assert (t.n, t.passes, t.errors, t.stopped, t.band) == (3, 1, 1, 1, "train")
    assert "1/3 (1 errors, 1 stopped)" in cal.markdown(cal.report("p", 3, [t], {}))
    with pytest.raises(ValueError, match="--pass-threshold"):
        cal.calibrate_split("s", [slot], [EpisodeRecord("p", "t1", 1, "ok", {"primary": 1.0}, 0.1, 1, 1)], "p", None)


def test_a_score_without_a_verdict_needs_a_threshold() -> None:
    assert cal.episode_passed({"passed": True, "primary": 0.0}, None) is True
    assert cal.episode_passed({"primary": 0.7}, 0.5) is True
    assert cal.episode_passed({"primary": 0.7}, None) is None


# -- the command -----------------------------------------------------------------------------------
def _calibrate(tmp: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["calibrate", "--family", "workflows", "--db", str(tmp / "c.sqlite"),
                                      "--workers", "1", *extra])  # fmt: skip
    return result.exit_code, result.output


def test_calibrate_writes_bands_deterministically(tmp_path: Path) -> None:
    args = ("-p", "reference-lapse", "--trials", "3", "--split", "workflows-eval", "--episodes", "4")
    code, text = _calibrate(tmp_path, *args, "--out", str(tmp_path / "a"))
    assert code == 0, text
    data = json.loads((tmp_path / "a" / "calibration.json").read_text())
    assert data["policy"] == "reference-lapse" and data["trials"] == 3 and len(data["tasks"]) == 4
    for t in data["tasks"]:
        assert t["n"] == 3 and t["band"] == cal.band(t["passes"] / 3)
        assert t["pass_at"]["3"] == pytest.approx(cal.pass_at_k(3, t["passes"], 3))
    assert {g["key"] for g in data["by_tier"]} == {"tier1", "tier2"}  # the split's first four tasks
    assert "| tier | tasks |" in (tmp_path / "a" / "calibration.md").read_text()
    # the same command against a fresh database gives the same numbers (policy seeds are fixed per trial)
    (tmp_path / "again").mkdir()
    code, text = _calibrate(tmp_path / "again", *args, "--out", str(tmp_path / "b"))
    assert code == 0, text
    again = json.loads((tmp_path / "b" / "calibration.json").read_text())
    assert [t["passes"] for t in again["tasks"]] == [t["passes"] for t in data["tasks"]]


def test_a_deterministic_policy_lands_at_zero_or_one(tmp_path: Path) -> None:
    code, text = _calibrate(tmp_path, "-p", "idle", "--trials", "2", "--split", "workflows-held-out",
                            "--episodes", "3", "--out", str(tmp_path / "o"))
    assert code == 0, text
    data = json.loads((tmp_path / "o" / "calibration.json").read_text())
    assert {t["band"] for t in data["tasks"]} == {"review"} and data["summary"]["rate"] == 0.0


@pytest.mark.parametrize(("args", "message"), [
    (("--trials", "2"), "give exactly one of --policy"),
    (("-p", "idle", "--agent", "x:Y"), "give exactly one of --policy"),
    (("-p", "no-such-policy",), "unknown policy"),
    (("-p", "idle", "--split", "no-such-split"), "no-such-split"),
    (("-p", "idle", "--split", "eval"), "is a territory split, not workflows"),
    (("-p", "idle", "--trials", "0"), "greater than or equal to 1"),
    (("--agent", "not-a-target"), "expected module:Class"),
    (("--agent", "no_such_module_xyz:Agent"), "cannot import module"),
    (("-p", "idle", "--family", "nope"), "unknown family"),
])  # fmt: skip
def test_bad_command_lines_get_one_clear_error(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    code, text = _calibrate(tmp_path, *args)
    assert code != 0 and message in text and "Traceback" not in text
    assert not (tmp_path / "c.sqlite").exists() or "unknown" not in message


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    code, text = _calibrate(tmp_path, "-p", "idle", "--split", "workflows-eval", "--out", str(tmp_path / "f"))
    assert code == 1 and "is not a directory" in text
