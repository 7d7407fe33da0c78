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
from salesgym.envs.territory import splits as territory_splits

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
    assert "test-private" in ms and territory_splits.rules(ms) == []
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
        env = rn.make_env(t, None, "territory-v0")
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
    assert territory_splits.rules(ms) == []
    train_slot = ms["train"].layout[0]
    leaky = sp.Manifest(NAME, "", (), None, "x", seeding=ms[NAME].seeding, private_slots=(*ms[NAME].layout, train_slot))
    problems = territory_splits.rules({**ms, NAME: leaky})
    assert any(f"{NAME} shares template(s) with train" in p for p in problems)


# -- every family has private splits (issue 18 §7) ------------------------------------------------------------
FAMILIES = {"desk": "desk-v0", "workflows": "workflows-v0"}
EXAMPLE_PACK = Path(__file__).resolve().parents[1] / "workflows" / "example_pack"
LOOKUP = Path(__file__).resolve().parent / "lookup_agent.py"


def _copy_splits(tmp_path: Path) -> Path:
    return Path(shutil.copytree(REPO_SPLITS, tmp_path / "splits"))


def _passed(db: Path) -> dict[str, list[bool]]:
    """Each policy's verdicts in a run database."""
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT policy, metrics FROM episodes").fetchall()
    raw.close()
    out: dict[str, list[bool]] = {}
    for policy, metrics in rows:
        out.setdefault(policy, []).append(bool(json.loads(metrics)["passed"]))
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_private_works_for_every_family_and_leaves_the_public_splits_alone(family: str, tmp_path: Path) -> None:
    d = _copy_splits(tmp_path)
    before = {p.name: p.read_bytes() for p in (d / family).glob("*.json")}
    key = _keygen(tmp_path / "k")
    name = f"{family}-mine"
    code, out, err = _invoke("splits", "generate", "--family", family, "--private", name, "--key-file", str(key),
                             "--out", str(d / family))
    assert code == 0, err
    assert {p.name: p.read_bytes() for p in (d / family).glob("*.json") if p.name in before} == before
    raw = json.loads((d / family / f"{name}.json").read_text())
    assert raw["format_version"] == sp.PRIVATE_FORMAT_VERSION and raw["env_id"] == FAMILIES[family]
    assert raw["seeding"]["key_id"] == sp.load_key(key).key_id and all(t["seed"] is None for t in raw["territories"])
    m = sp.load(name, d)
    assert m.locked and m.env_id == FAMILIES[family]
    seeds = [t.seed for t in m.unlock(sp.load_key(key)).territories]
    assert seeds[0] == sp.derive_seed(bytes.fromhex(key.read_text()), name, m.layout[0].id)
    code, out, err = _invoke("splits", "verify", "--splits-dir", str(d))
    assert code == 0 and "private (key id" in out, err
    code, _, err = _invoke("splits", "generate", "--family", family, "--private", f"{family}-eval", "--key-file",
                           str(key), "--out", str(d / family))
    assert code == 1 and "needs its own name" in err


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_ships_a_private_test_split(family: str) -> None:
    path = REPO_SPLITS / family / f"{family}-test-private.json"
    raw = json.loads(path.read_text())
    assert raw["format_version"] == sp.PRIVATE_FORMAT_VERSION and all(t["seed"] is None for t in raw["territories"])
    checks = sp.verify_all(REPO_SPLITS / family)
    assert all(c.ok for c in checks), [c.message for c in checks if not c.ok]
    ms = {c.manifest.name: c.manifest for c in checks if c.manifest is not None}
    m = ms[f"{family}-test-private"]
    assert m.locked and sp.environment_problems(m) == []
    import salesgym

    assert salesgym.family(m.env_id).split_rules(ms) == []
    like = ms["desk-transfer"] if family == "desk" else ms["workflows-held-out"]  # drawn like the family's
    assert m.templates == like.templates and m.families == like.families  # generalisation split


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_bench_key_file_runs_a_private_split_of_every_family(family: str, tmp_path: Path) -> None:
    d = _copy_splits(tmp_path)
    key = _keygen(tmp_path / "k")
    name = f"{family}-mine"
    assert _invoke("splits", "generate", "--family", family, "--private", name, "--key-file", str(key),
                   "--out", str(d / family))[0] == 0
    db = tmp_path / "runs.sqlite"
    code, _, err = _invoke("bench", "--split", name, "--splits-dir", str(d), "--db", str(db))
    assert code == 1 and "is private" in err and not db.exists()
    code, _, err = _invoke("bench", "--split", name, "--splits-dir", str(d), "--key-file", str(key), "-p", "idle",
                           "--episodes", "2", "--workers", "1", "--db", str(db))
    assert code == 0, err
    unlocked = sp.load(name, d).unlock(sp.load_key(key))
    with sqlite3.connect(db) as raw:
        stored = sorted(s for (s,) in raw.execute("SELECT seed FROM episodes WHERE policy = 'idle'"))
    raw.close()
    assert stored == sorted(t.seed for t in unlocked.territories[:2])


def test_options_a_family_does_not_support_are_refused(tmp_path: Path) -> None:
    d = _copy_splits(tmp_path)
    key = _keygen(tmp_path / "k")
    pack = str(EXAMPLE_PACK)
    for args, message in [
        (("--family", "desk", "--held-out-family", "x"), "--held-out-family applies to plans that let one choose"),
        (("--family", "workflows", "--held-out-family", "x"), "--held-out-family applies to plans that let one choose"),
        (("--family", "desk", "--private", "d-p", "--key-file", str(key), "--templates-dir", pack),
         "desk has no template packs"),
        (("--templates-dir", pack), "--templates-dir applies to --private"),
        (("--family", "workflows", "--templates-dir", pack), "--templates-dir applies to --private"),
        (("--family", "desk", "--key-file", str(key)), "applies to --private only"),
        (("--family", "workflows", "--private", "w-p"), "needs the split's key"),
    ]:
        out = tmp_path / "out"
        code, _, err = _invoke("splits", "generate", "--out", str(out), *args)
        assert code == 1 and message in err, (args, err)
        assert not out.exists() or not any(out.iterdir()), "a refused generate writes nothing"
    code, _, err = _invoke("bench", "--split", "workflows-eval", "--splits-dir", str(d), "--templates-dir", pack,
                           "--db", str(tmp_path / "x.sqlite"))
    assert code == 1 and "uses no template pack" in err


def test_a_private_split_over_a_template_pack_the_package_has_never_seen(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack lives in a temporary folder only; a private split is cut over it, bench scores it with the pack, and
    an agent that looks its task up in everything public passes none of it (it passes public tasks)."""
    from salesgym.envs.workflows import packs

    pack = Path(shutil.copytree(EXAMPLE_PACK, tmp_path / "operator" / "pack"))
    d = _copy_splits(tmp_path)
    key = _keygen(tmp_path / "k")
    name = "acme-test"
    code, _, err = _invoke("splits", "generate", "--family", "workflows", "--private", name, "--key-file", str(key),
                           "--templates-dir", str(pack), "--out", str(d / "workflows"))
    assert code == 0, err
    m = sp.load(name, d)
    loaded = packs.load(pack)
    assert m.pack is not None and (m.pack.name, m.pack.fingerprint) == (loaded.name, loaded.fingerprint)
    assert {t.template for t in m.layout} == set(loaded.templates) and m.locked
    text = (d / "workflows" / f"{name}.json").read_text()
    for template in loaded.templates.values():  # the manifest names the pack, it does not carry it
        assert template.goal not in text and template.prompt[:40] not in text and '"$p"' not in text
    code, out, err = _invoke("splits", "verify", "--splits-dir", str(d))
    assert code == 0 and "template pack acme-private" in out, err

    db = tmp_path / "runs.sqlite"
    base = ("bench", "--split", name, "--splits-dir", str(d), "--key-file", str(key), "--workers", "1", "--db", str(db))
    code, _, err = _invoke(*base, "-p", "idle")
    assert code == 1 and "template pack 'acme-private'" in err and "--templates-dir" in err and not db.exists()
    other = Path(shutil.copytree(pack, tmp_path / "edited"))
    (other / "templates" / "acme-owner-handover.json").write_text(
        (other / "templates" / "acme-owner-handover.json").read_text().replace("leaving", "retiring"))
    code, _, err = _invoke(*base, "--templates-dir", str(other), "-p", "idle")
    assert code == 1 and "fingerprint" in err and not db.exists()

    code, out, err = _invoke(*base, "--templates-dir", str(pack), "-p", "reference", "-p", "idle")
    assert code == 0, err
    verdicts = _passed(db)
    assert len(verdicts["reference"]) == len(m.layout) == 9 and all(verdicts["reference"])
    assert not any(verdicts["idle"])

    monkeypatch.chdir(tmp_path)
    shutil.copy(LOOKUP, tmp_path / "lookup_agent.py")
    code, out, err = _invoke(*base, "--templates-dir", str(pack), "--agent", "lookup_agent:Lookup", "-p", "idle")
    assert code == 0, err
    assert len(_passed(db)["lookup"]) == 9 and not any(_passed(db)["lookup"])  # 0 of 9

    public = tmp_path / "public.sqlite"
    code, out, err = _invoke("bench", "--split", "workflows-held-out", "--splits-dir", str(d), "--episodes", "3",
                             "--workers", "1", "--agent", "lookup_agent:Lookup", "-p", "idle", "--db", str(public))
    assert code == 0, err
    assert _passed(public)["lookup"] == [True, True, True]  # the attack is real: a public task, it solves
