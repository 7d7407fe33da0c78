"""Private splits: a published, hashed manifest whose worlds only the holder of the split key can build.

Every test makes its own key and its own private manifest in a tmp dir; the key of the committed
``splits/test-private.json`` is not in the repository.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from salesgym.bench import runner as rn
from salesgym.bench import splits as sp
from salesgym.cli import app

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"
NAME = "private-t"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sp.KEY_ENV_VAR, raising=False)


def _keygen(path: Path) -> Path:
    code, _, err = _invoke("splits", "keygen", "--out", str(path))
    assert code == 0, err
    return path


@pytest.fixture
def private_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A splits directory with the public manifests and a private one sealed with a fresh key."""
    pytest.importorskip("salesgym.envs.territory.families")
    d = tmp_path / "splits"
    shutil.copytree(REPO_SPLITS, d, ignore=shutil.ignore_patterns("test-private.json"))
    key = _keygen(tmp_path / "keys" / "split.key")
    code, _, err = _invoke("splits", "generate", "--out", str(d), "--private", NAME, "--key-file", str(key))
    assert code == 0, err
    return d, key


def test_committed_private_manifest_lists_no_seed() -> None:
    raw = json.loads((REPO_SPLITS / "test-private.json").read_text())
    assert raw["format_version"] == sp.PRIVATE_FORMAT_VERSION
    assert raw["seeding"]["kind"] == "keyed" and len(raw["seeding"]["key_id"]) == 16
    assert all(t["seed"] is None for t in raw["territories"])
    m = sp.load("test-private", REPO_SPLITS)
    assert m.private and m.locked and m.territories == ()
    with pytest.raises(sp.SplitError, match="is private"):
        m.limited(None)
    ms = {c.manifest.name: c.manifest for c in sp.verify_all(REPO_SPLITS) if c.manifest is not None}
    assert "test-private" in ms and sp.rule_violations(ms) == []
    assert sp.environment_problems(m) == []
    held = ms["held-out"]
    assert m.templates <= held.templates and m.families == held.families  # drawn like held-out


def test_key_file_is_private_and_never_overwritten(tmp_path: Path) -> None:
    key = _keygen(tmp_path / "k")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    before = key.read_text()
    code, _, err = _invoke("splits", "keygen", "--out", str(key))
    assert code == 1 and "refusing to overwrite" in err
    assert key.read_text() == before
    assert before.strip() not in repr(sp.load_key(key))  # the secret is never in a repr


def test_the_key_reproduces_the_same_seeds(private_dir: tuple[Path, Path]) -> None:
    d, key = private_dir
    one = sp.load(NAME, d).unlock(sp.load_key(key))
    two = sp.load(NAME, d).unlock(sp.load_key(key))
    assert one.territories == two.territories and len(one.territories) == len(one.layout)
    seeds = [t.seed for t in one.territories]
    assert all(0 <= s < sp.SEED_LIMIT for s in seeds)
    assert len(set(seeds)) == len(seeds)
    secret = bytes.fromhex(key.read_text())
    assert seeds[0] == sp.derive_seed(secret, NAME, one.territories[0].id)


def test_a_wrong_key_is_refused(private_dir: tuple[Path, Path], tmp_path: Path) -> None:
    d, key = private_dir
    other = _keygen(tmp_path / "other.key")
    m = sp.load(NAME, d)
    with pytest.raises(sp.SplitError, match="wrong key"):
        m.unlock(sp.load_key(other))
    code, _, err = _invoke(
        "bench", "--split", NAME, "--splits-dir", str(d), "--key-file", str(other), "--db", str(tmp_path / "x.sqlite")
    )
    assert code == 1 and "wrong key" in err
    assert sp.load_key(other).key_id in err and sp.load_key(key).key_id in err
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "too short"), ("abcd", "too short"), ("zz" * 32, "hex string"), (b"\xff\xfe".hex()[:3], "hex string")],
)
def test_a_bad_key_file_is_a_clear_error(content: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "bad.key").write_text(content)
    with pytest.raises(sp.SplitError, match=message):
        sp.load_key(tmp_path / "bad.key")
    with pytest.raises(sp.SplitError, match="not found"):
        sp.load_key(tmp_path / "missing.key")


def test_the_hash_covers_the_seeding_block(private_dir: tuple[Path, Path], tmp_path: Path) -> None:
    d, key = private_dir
    path = d / f"{NAME}.json"
    data = json.loads(path.read_text())
    other = sp.load_key(_keygen(tmp_path / "other.key"))
    edited = {**data, "seeding": {**data["seeding"], "key_id": other.key_id}}
    path.write_text(json.dumps(edited))
    with pytest.raises(sp.SplitError, match="sha256 mismatch"):
        sp.load(NAME, d)
    sp.write_manifest(edited, path)  # resealed by someone who swapped the key: a new hash, the old key no longer fits
    resealed = sp.load(NAME, d)
    assert resealed.sha256 != data["sha256"]
    with pytest.raises(sp.SplitError, match="wrong key"):
        resealed.unlock(sp.load_key(key))


def test_without_the_key_nothing_can_be_built(private_dir: tuple[Path, Path], tmp_path: Path) -> None:
    d, _ = private_dir
    m = sp.load(NAME, d)
    assert m.locked and m.territories == ()
    with pytest.raises(rn.BenchError, match="is private"):
        rn.plan(m, ["random"], None, None, 100)
    db = tmp_path / "x.sqlite"
    code, _, err = _invoke("bench", "--split", NAME, "--splits-dir", str(d), "--db", str(db))
    assert code == 1 and "is private" in err and "--key-file" in err and sp.KEY_ENV_VAR in err
    assert not db.exists()
    code, out, _ = _invoke("splits", "verify", "--splits-dir", str(d))  # checkable without the key
    assert code == 0 and "private (key id" in out


def test_two_keys_build_different_worlds(private_dir: tuple[Path, Path], tmp_path: Path) -> None:
    d, key = private_dir
    m = sp.load(NAME, d)
    mine = m.unlock(sp.load_key(key))
    data = json.loads((d / f"{NAME}.json").read_text())
    other_key = sp.load_key(_keygen(tmp_path / "other.key"))
    theirs = sp.parse(sp.seal({**data, "seeding": {**data["seeding"], "key_id": other_key.key_id}})).unlock(other_key)
    assert all(a.seed != b.seed for a, b in zip(mine.territories, theirs.territories, strict=True))

    def truth(t: sp.Territory) -> str:
        env = rn.make_env(t, None)
        env.reset(seed=t.seed)
        return json.dumps(env.hidden_truth(), sort_keys=True, default=str)

    a, b = mine.territories[0], theirs.territories[0]
    assert (a.family, a.template, a.n_opportunities) == (b.family, b.template, b.n_opportunities)
    assert truth(a) != truth(b)
    assert truth(a) == truth(sp.load(NAME, d).unlock(sp.load_key(key)).territories[0])


def test_bench_on_a_private_split_and_its_exports(
    private_dir: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d, key = private_dir
    monkeypatch.setenv(sp.KEY_ENV_VAR, str(key))  # the key from the environment, as an operator's job would
    for name in ("SALESGYM_VERIFIER_KEY", "SALESGYM_VERIFIER_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "runs.sqlite"
    code, _, err = _invoke(
        "bench",
        "--split",
        NAME,
        "--splits-dir",
        str(d),
        "-p",
        "random",
        "--episodes",
        "1",
        "--workers",
        "1",
        "--db",
        str(db),
    )
    assert code == 0, err
    assert "signs with the public development key" in err
    with sqlite3.connect(db) as raw:
        (run_id,) = raw.execute("SELECT id FROM runs").fetchone()
        (stored,) = raw.execute("SELECT seed FROM episodes").fetchone()
    raw.close()
    unlocked = sp.load(NAME, d).unlock(sp.load_key(key))
    assert stored == unlocked.territories[0].seed  # the operator's store keeps what it played

    code, _, err = _invoke("export", run_id, "--db", str(db), "--out", str(tmp_path / "e.json"))
    assert code == 0, err
    exported = json.loads((tmp_path / "e.json").read_text())
    assert exported["run"]["config"]["private_split"] is True
    assert [e["seed"] for e in exported["episodes"]] == [None]
    assert str(stored) not in (tmp_path / "e.json").read_text()
    code, _, err = _invoke("export", run_id, "--db", str(db), "--format", "csv", "--out", str(tmp_path / "e.csv"))
    assert code == 0, err
    with (tmp_path / "e.csv").open() as fh:
        assert [r["seed"] for r in csv.DictReader(fh)] == [""]
    code, _, err = _invoke("report", run_id, "--db", str(db), "--out", str(tmp_path / "rep"))
    assert code == 0, err
    for page in (tmp_path / "rep").glob("report.*"):
        assert str(stored) not in page.read_text()


def test_generate_keeps_private_and_public_apart(tmp_path: Path) -> None:
    pytest.importorskip("salesgym.envs.territory.families")
    d = tmp_path / "gen"
    key = _keygen(tmp_path / "k")
    assert _invoke("splits", "generate", "--out", str(d))[0] == 0
    code, _, err = _invoke("splits", "generate", "--out", str(d), "--private", NAME, "--key-file", str(key))
    assert code == 0, err
    assert f"`{NAME}`" in (d / "README.md").read_text() and "private (key id" in (d / "README.md").read_text()
    code, _, err = _invoke("splits", "generate", "--out", str(d))  # public regeneration leaves the private one
    assert code == 0, err
    assert (d / f"{NAME}.json").is_file() and f"`{NAME}`" in (d / "README.md").read_text()
    code, _, err = _invoke("splits", "verify", "--splits-dir", str(d))
    assert code == 0, err
    for args, message in [
        (("--private", NAME), "needs the split's key"),
        (("--private", "eval", "--key-file", str(key)), "needs its own name"),
        (("--key-file", str(key)), "applies to --private only"),
    ]:
        code, _, err = _invoke("splits", "generate", "--out", str(tmp_path / "other"), *args)
        assert code == 1 and message in err, err


def test_a_private_split_follows_the_held_out_rule(private_dir: tuple[Path, Path]) -> None:
    d, _ = private_dir
    ms = {c.manifest.name: c.manifest for c in sp.verify_all(d) if c.manifest is not None}
    assert sp.rule_violations(ms) == []
    train_slot = ms["train"].layout[0]
    leaky = sp.Manifest(NAME, "", (), None, "x", seeding=ms[NAME].seeding, private_slots=(*ms[NAME].layout, train_slot))
    problems = sp.rule_violations({**ms, NAME: leaky})
    assert any(f"{NAME} shares template(s) with train" in p for p in problems)
