"""Frozen benchmark splits: manifest format, loading with clear errors, hashing, verification, split keys.

A manifest is one JSON file per split (``splits/<name>.json``)::

    {"format_version": 1, "name": "eval", "description": "...",
     "territories": [{"id", "family", "template", "seed", "n_opportunities", "horizon_days"}, ...],
     "contamination": {...}, "sha256": "..."}

A manifest may name the registered environment it describes (``"env_id"``, inside the hash); without one it
is the first registered id of the family whose manifests name none (:func:`unnamed_env_id`: the territory's, frozen
before ids). Another family's manifests live in a subdirectory named after it (``splits/desk/desk-eval.json``);
:func:`load` finds a split by name in the splits directory or one of its family subdirectories.

Every family's entries are stored in the same columns (``core/family.py``, ``SplitColumns``); the family reads
them into its own typed scenario (``salesgym.family(env_id).scenario``).

``sha256`` is the hash of the canonical JSON (``sort_keys``, separators ``(",", ":")``) of every other
field, so any edit to a territory, the description or the contamination note is caught. Manifests are
generated once (:mod:`salesgym.bench.splitgen`) and committed; ``salesgym splits verify`` re-checks them.

Seeds are ints with ``0 <= seed < 2**63`` (:data:`SEED_LIMIT`: they fit SQLite's signed 64-bit INTEGER).

A *private* manifest (``format_version`` 2) lists no seeds: every territory has ``"seed": null`` and the
manifest carries ``"seeding": {"kind": "keyed", "scheme": "hmac-sha256-v1", "key_id": "<16 hex>"}``
(inside the hash). A territory's seed is HMAC-SHA256 of the manifest name and territory id under a key the
operator holds (:func:`derive_seed`), so the file can be published and hashed while its worlds can be
built only where the key is. ``key_id`` is a public fingerprint of that key; a wrong key is refused.

A manifest may be cut over a *template pack*, scenario data the operator holds outside the package (the workflows
family's: ``envs/workflows/packs.py``): ``"pack": {"name", "fingerprint"}`` (inside the hash) names it, and the
benchmark runs it only with a directory whose pack has that fingerprint (:func:`attach_pack`, ``--templates-dir``
or ``$SALESGYM_TEMPLATES_DIR``), so the manifest can be published while its templates and their reference
solutions stay with the operator.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from salesgym.core.family import SplitColumns

FORMAT_VERSION = 1  # public manifests: seeds are in the file
PRIVATE_FORMAT_VERSION = 2  # adds "seeding"; territories carry "seed": null (derived from the operator's key)
FORMAT_VERSIONS = (FORMAT_VERSION, PRIVATE_FORMAT_VERSION)
ENV_VAR = "SALESGYM_SPLITS_DIR"
KEY_ENV_VAR = "SALESGYM_SPLIT_KEY_FILE"
PACK_ENV_VAR = "SALESGYM_TEMPLATES_DIR"  # the template pack of a split cut over one
SEED_LIMIT = 2**63  # exclusive: the run store keeps seeds in a signed 64-bit SQLite INTEGER
KEYED_SCHEME = "hmac-sha256-v1"
KEY_BYTES = 32
# ids and names end up in run ids, file names and tables: short, printable, no path separators
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TERRITORY_FIELDS: dict[str, type] = {
    "id": str,
    "family": str,
    "template": str,
    "seed": int,
    "n_opportunities": int,
    "horizon_days": int,
}
REQUIRED_FIELDS: dict[str, type] = {
    "format_version": int,
    "name": str,
    "description": str,
    "territories": list,
    "sha256": str,
}


class SplitError(Exception):
    """A manifest that cannot be used; the message names the file and what is wrong."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def unnamed_env_id() -> str:
    """The registered id a manifest without ``env_id`` describes: the first id of the family whose spec says its
    manifests name none (``FamilySpec.unnamed_manifests``)."""
    import salesgym

    for name, spec in salesgym.families().items():
        if spec.unnamed_manifests:
            return salesgym.family_ids(name)[0]
    raise ValueError("no registered family's manifests may omit env_id")


@dataclass(frozen=True, slots=True)
class Territory:
    """One territory of a split: everything needed to build the same world anywhere."""

    id: str
    family: str
    template: str
    seed: int
    n_opportunities: int
    horizon_days: int

    @property
    def template_key(self) -> str:
        return f"{self.family}/{self.template}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def slot(self) -> Slot:
        return Slot(self.id, self.family, self.template, self.n_opportunities, self.horizon_days)

    @property
    def columns(self) -> SplitColumns:
        return SplitColumns(self.family, self.template, self.n_opportunities, self.horizon_days)


@dataclass(frozen=True, slots=True)
class Slot:
    """A territory without its seed: what a private manifest lists (and what split rules look at)."""

    id: str
    family: str
    template: str
    n_opportunities: int
    horizon_days: int

    @property
    def template_key(self) -> str:
        return f"{self.family}/{self.template}"

    def with_seed(self, seed: int) -> Territory:
        return Territory(self.id, self.family, self.template, seed, self.n_opportunities, self.horizon_days)

    @property
    def columns(self) -> SplitColumns:
        return SplitColumns(self.family, self.template, self.n_opportunities, self.horizon_days)


@dataclass(frozen=True, slots=True)
class KeyedSeeding:
    """A private manifest's ``seeding`` block: seeds come from the key whose fingerprint is ``key_id``."""

    key_id: str
    scheme: str = KEYED_SCHEME

    def to_dict(self) -> dict[str, str]:
        return {"kind": "keyed", "scheme": self.scheme, "key_id": self.key_id}


@dataclass(frozen=True, slots=True)
class PackRef:
    """A manifest's ``pack`` block: the template pack its territories come from, by name and fingerprint."""

    name: str
    fingerprint: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "fingerprint": self.fingerprint}


@dataclass(frozen=True, slots=True)
class SplitKey:
    """An operator's split key (never printed: ``repr`` shows only where it came from and its fingerprint)."""

    secret: bytes = field(repr=False)
    source: str = "<key>"

    @property
    def key_id(self) -> str:
        return key_id(self.secret)


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    description: str
    territories: tuple[Territory, ...]  # with seeds; empty for a private manifest until :meth:`unlock`
    contamination: Mapping[str, Any] | None
    sha256: str
    path: Path | None = None
    format_version: int = FORMAT_VERSION
    seeding: KeyedSeeding | None = None  # None: a public manifest, seeds in the file
    private_slots: tuple[Slot, ...] = ()  # a private manifest's territories, without seeds
    env_id: str = field(default_factory=lambda: unnamed_env_id())  # the environment whose worlds they are
    pack: PackRef | None = None  # the template pack the territories come from (None: the package's scenarios)
    pack_dir: str | None = None  # where that pack is, once :func:`attach_pack` checked its fingerprint

    @property
    def private(self) -> bool:
        return self.seeding is not None

    @property
    def locked(self) -> bool:
        """A private manifest whose key has not been applied: its worlds cannot be built."""
        return self.seeding is not None and not self.territories

    @property
    def layout(self) -> tuple[Slot, ...]:
        """Every territory without its seed (available with or without the key)."""
        return self.private_slots if self.seeding is not None else tuple(t.slot for t in self.territories)

    @property
    def families(self) -> set[str]:
        return {t.family for t in self.layout}

    @property
    def templates(self) -> set[str]:
        """Templates as ``family/template`` keys (a template belongs to its family)."""
        return {t.template_key for t in self.layout}

    def limited(self, n: int | None) -> tuple[Territory, ...]:
        """The first ``n`` territories (all when ``n`` is None); a locked private manifest has none to give."""
        if self.locked:
            raise SplitError(self.path or self.name, locked_message(self.name))
        return self.territories if n is None else self.territories[:n]

    def unlock(self, key: SplitKey) -> Manifest:
        """This private manifest with every territory's seed derived from ``key``; refuses a wrong key."""
        if self.seeding is None:
            raise SplitError(self.path or self.name, f"split {self.name!r} is public: it needs no key")
        if key.key_id != self.seeding.key_id:
            raise SplitError(
                key.source,
                f"wrong key for split {self.name!r}: this key's id is {key.key_id} but the split was sealed "
                f"with key id {self.seeding.key_id}",
            )
        unlocked = tuple(s.with_seed(derive_seed(key.secret, self.name, s.id)) for s in self.private_slots)
        return replace(self, territories=unlocked)


def locked_message(name: str) -> str:
    return (
        f"split {name!r} is private: its seeds are derived from a key the operator holds; pass --key-file FILE "
        f"or set ${KEY_ENV_VAR}"
    )


# -- split keys ------------------------------------------------------------------------------------
def key_id(secret: bytes) -> str:
    """A short public fingerprint of a split key (reveals nothing usable about the key)."""
    return hmac.new(secret, b"salesgym/split-key-id/v1", hashlib.sha256).hexdigest()[:16]


def derive_seed(secret: bytes, split_name: str, territory_id: str) -> int:
    """The seed of a private split's territory: HMAC-SHA256(key, name, id) reduced to ``0 <= seed < 2**63``."""
    msg = b"\0".join((b"salesgym/split-seed/v1", split_name.encode("utf-8"), territory_id.encode("utf-8")))
    return int.from_bytes(hmac.new(secret, msg, hashlib.sha256).digest()[:8], "big") >> 1


def new_key() -> SplitKey:
    return SplitKey(secrets.token_bytes(KEY_BYTES), "<new key>")


def write_key(path: Path | str, key: SplitKey | None = None) -> SplitKey:
    """Write a (new) key as hex to a file only its owner can read; never overwrites an existing file."""
    path = Path(path)
    key = key or new_key()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SplitError(path, "key file already exists; refusing to overwrite a key (pick another path)") from None
    except OSError as err:
        raise SplitError(path, f"cannot write the key file: {err.strerror or err}") from err
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key.secret.hex() + "\n")
    return SplitKey(key.secret, str(path))


def load_key(path: Path | str) -> SplitKey:
    """Read a key file written by :func:`write_key` (hex, at least 32 bytes; surrounding whitespace ignored)."""
    path = Path(path)
    if path.is_dir():
        raise SplitError(path, "key file is a directory")
    if not path.is_file():
        raise SplitError(path, "key file not found")
    try:
        text = path.read_text(encoding="ascii").strip()
        secret = bytes.fromhex(text)
    except OSError as err:
        raise SplitError(path, f"cannot read the key file: {err.strerror or err}") from err
    except ValueError:  # UnicodeDecodeError included
        raise SplitError(path, "key file must hold one hex string (write one with `salesgym splits keygen`)") from None
    if len(secret) < KEY_BYTES:
        raise SplitError(path, f"key is too short: {len(secret)} bytes, need at least {KEY_BYTES}")
    return SplitKey(secret, str(path))


def resolve_key(explicit: Path | str | None = None) -> SplitKey | None:
    """The split key: ``explicit`` file, else ``$SALESGYM_SPLIT_KEY_FILE``, else None."""
    if explicit is not None:
        return load_key(explicit)
    env = os.environ.get(KEY_ENV_VAR)
    return load_key(env) if env else None


# -- hashing ---------------------------------------------------------------------------------------
def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def content_hash(data: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of everything except the ``sha256`` field."""
    body = {k: v for k, v in data.items() if k != "sha256"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def seal(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with its ``sha256`` field (re)computed, placed last."""
    body = {k: v for k, v in data.items() if k != "sha256"}
    return {**body, "sha256": content_hash(body)}


# -- locating --------------------------------------------------------------------------------------
def _candidates() -> list[Path]:
    here = Path(__file__).resolve()
    return [
        here.parents[3] / "splits",  # <repo>/src/salesgym/bench/splits.py -> <repo>/splits (editable installs)
        Path(sys.prefix) / "share" / "salesgym" / "splits",  # wheel installs (pyproject data-files)
        Path.cwd() / "splits",
    ]


def default_splits_dir() -> Path:
    """``$SALESGYM_SPLITS_DIR``, else the repository's ``splits/`` found relative to the package source."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    for cand in _candidates():
        if cand.is_dir():
            return cand
    return _candidates()[0]


def resolve_splits_dir(explicit: Path | str | None = None) -> Path:
    """The splits directory to use: explicit argument > environment variable > default; must exist."""
    path = Path(explicit) if explicit is not None else default_splits_dir()
    if path.exists() and not path.is_dir():
        raise SplitError(path, "is not a directory (--splits-dir and $SALESGYM_SPLITS_DIR name the splits directory)")
    if not path.is_dir():
        searched = ", ".join(str(p) for p in _candidates())
        raise SplitError(path, f"splits directory does not exist (set --splits-dir or ${ENV_VAR}; searched {searched})")
    return path


def manifest_path(splits_dir: Path | str, name: str) -> Path:
    """Where split ``name`` lives: the splits directory itself, else the family subdirectory holding it."""
    top = Path(splits_dir) / f"{name}.json"
    if top.is_file() or not NAME_PATTERN.fullmatch(name):
        return top
    return next(iter(sorted(Path(splits_dir).glob(f"*/{name}.json"))), top)


def available(splits_dir: Path | str) -> list[str]:
    """Every split name in the directory and its family subdirectories."""
    return sorted(p.stem for pattern in ("*.json", "*/*.json") for p in Path(splits_dir).glob(pattern))


def family_dirs(splits_dir: Path | str) -> list[Path]:
    """The splits directory and each family subdirectory that holds manifests."""
    root = Path(splits_dir)
    return [root, *sorted(d for d in root.iterdir() if d.is_dir() and any(d.glob("*.json")))]


# -- loading ---------------------------------------------------------------------------------------
def _is_type(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _parse_territory(path: Path, i: int, raw: Any, keyed: bool) -> tuple[Slot, int | None]:
    """One territory entry: its slot and its seed (None in a private manifest, where seeds are keyed)."""
    where = f"territories[{i}]"
    if not isinstance(raw, dict):
        raise SplitError(path, f"{where} must be an object, got {type(raw).__name__}")
    missing = [k for k in TERRITORY_FIELDS if k not in raw]
    if missing:
        raise SplitError(path, f"{where} is missing key(s) {', '.join(missing)}")
    extra = sorted(set(raw) - set(TERRITORY_FIELDS))
    if extra:
        raise SplitError(path, f"{where} has unknown key(s) {', '.join(extra)}")
    for key, kind in TERRITORY_FIELDS.items():
        if key == "seed" and keyed:
            if raw[key] is not None:
                raise SplitError(path, f"{where}.seed must be null in a private manifest (seeds come from the key)")
            continue
        if not _is_type(raw[key], kind):
            raise SplitError(path, f"{where}.{key} must be {kind.__name__}, got {type(raw[key]).__name__}")
    for key in ("id", "family", "template"):
        if not NAME_PATTERN.fullmatch(raw[key]):
            got = repr(raw[key])[:80]
            raise SplitError(path, f"{where}.{key} must be 1-64 letters, digits, '.', '_' or '-', got {got}")
    if not keyed and not 0 <= raw["seed"] < SEED_LIMIT:
        raise SplitError(path, f"{where}.seed must be in 0..2**63-1, got {raw['seed']}")
    if raw["n_opportunities"] < 1:
        raise SplitError(path, f"{where}.n_opportunities must be >= 1, got {raw['n_opportunities']}")
    if raw["horizon_days"] < 1:
        raise SplitError(path, f"{where}.horizon_days must be >= 1, got {raw['horizon_days']}")
    slot = Slot(raw["id"], raw["family"], raw["template"], raw["n_opportunities"], raw["horizon_days"])
    return slot, None if keyed else raw["seed"]


def _parse_pack(path: Path, data: Mapping[str, Any]) -> PackRef | None:
    raw = data.get("pack")
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"name", "fingerprint"}:
        raise SplitError(path, "pack must be an object with exactly name and fingerprint")
    if not isinstance(raw["name"], str) or not NAME_PATTERN.fullmatch(raw["name"]):
        raise SplitError(path, f"pack.name must be 1-64 letters, digits, '.', '_' or '-', got {repr(raw['name'])[:80]}")
    if not isinstance(raw["fingerprint"], str) or not re.fullmatch(r"[0-9a-f]{64}", raw["fingerprint"]):
        raise SplitError(path, "pack.fingerprint must be 64 lowercase hex digits (a sha256)")
    return PackRef(raw["name"], raw["fingerprint"])


def _parse_seeding(path: Path, data: Mapping[str, Any]) -> KeyedSeeding | None:
    if data["format_version"] == FORMAT_VERSION:
        if "seeding" in data:
            raise SplitError(path, f"seeding needs format_version {PRIVATE_FORMAT_VERSION}")
        return None
    raw = data.get("seeding")
    if not isinstance(raw, dict):
        raise SplitError(path, f"format_version {PRIVATE_FORMAT_VERSION} needs a seeding object")
    if raw.get("kind") != "keyed":
        raise SplitError(path, f"seeding.kind must be 'keyed', got {repr(raw.get('kind'))[:40]}")
    if raw.get("scheme") != KEYED_SCHEME:
        scheme = repr(raw.get("scheme"))[:40]
        raise SplitError(path, f"unsupported seeding.scheme {scheme} (this salesgym knows {KEYED_SCHEME})")
    kid = raw.get("key_id")
    if not isinstance(kid, str) or not re.fullmatch(r"[0-9a-f]{16}", kid):
        raise SplitError(path, "seeding.key_id must be 16 lowercase hex digits")
    extra = sorted(set(raw) - {"kind", "scheme", "key_id"})
    if extra:
        raise SplitError(path, f"seeding has unknown key(s) {', '.join(extra)}")
    return KeyedSeeding(key_id=kid, scheme=KEYED_SCHEME)


def parse(data: Any, path: Path | str = "<manifest>") -> Manifest:
    """Validate a decoded manifest (structure, types, hash) and build a :class:`Manifest`."""
    path = Path(path)
    if not isinstance(data, dict):
        raise SplitError(path, f"top level must be a JSON object, got {type(data).__name__}")
    missing = [k for k in REQUIRED_FIELDS if k not in data]
    if missing:
        raise SplitError(path, f"missing key(s) {', '.join(missing)}")
    for key, kind in REQUIRED_FIELDS.items():
        if not _is_type(data[key], kind):
            raise SplitError(path, f"{key} must be {kind.__name__}, got {type(data[key]).__name__}")
    if data["format_version"] not in FORMAT_VERSIONS:
        versions = " and ".join(map(str, FORMAT_VERSIONS))
        raise SplitError(path, f"unsupported format_version {data['format_version']} (this salesgym reads {versions})")
    if not NAME_PATTERN.fullmatch(data["name"]):
        raise SplitError(path, f"name must be 1-64 letters, digits, '.', '_' or '-', got {repr(data['name'])[:80]}")
    try:
        env_id = data["env_id"] if "env_id" in data else unnamed_env_id()
    except ValueError as err:
        raise SplitError(path, f"names no env_id: {err}") from None
    if not isinstance(env_id, str) or not NAME_PATTERN.fullmatch(env_id):
        raise SplitError(path, f"env_id must be a registered environment id, got {repr(env_id)[:80]}")
    contamination = data.get("contamination")
    if contamination is not None and not isinstance(contamination, dict):
        raise SplitError(path, f"contamination must be an object, got {type(contamination).__name__}")
    expected = content_hash(data)
    if data["sha256"] != expected:
        raise SplitError(
            path,
            f"sha256 mismatch: the manifest says {data['sha256'][:16]}... but its content hashes to {expected[:16]}... "
            "(the split was edited after it was frozen; restore it or regenerate with `salesgym splits generate`)",
        )
    seeding = _parse_seeding(path, data)
    pack = _parse_pack(path, data)
    parsed = [_parse_territory(path, i, t, seeding is not None) for i, t in enumerate(data["territories"])]
    if not parsed:
        raise SplitError(path, "territories is empty")
    seen: set[str] = set()
    for slot, _ in parsed:
        if slot.id in seen:
            raise SplitError(path, f"duplicate territory id {slot.id!r}")
        seen.add(slot.id)
    if path.suffix == ".json" and path.stem != data["name"]:
        raise SplitError(path, f"name {data['name']!r} does not match the file name {path.name!r}")
    return Manifest(
        name=data["name"],
        description=data["description"],
        territories=tuple(slot.with_seed(seed) for slot, seed in parsed if seed is not None),
        contamination=contamination,
        sha256=data["sha256"],
        path=path,
        format_version=data["format_version"],
        seeding=seeding,
        private_slots=tuple(slot for slot, _ in parsed) if seeding is not None else (),
        env_id=env_id,
        pack=pack,
    )


def load_file(path: Path | str) -> Manifest:
    """Load and verify one manifest file."""
    path = Path(path)
    if not path.is_file():
        raise SplitError(path, "manifest file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SplitError(path, f"cannot read: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise SplitError(path, f"not a text file: invalid UTF-8 at byte {err.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SplitError(path, f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from err
    except RecursionError:
        raise SplitError(path, "invalid JSON: nested too deeply") from None
    return parse(data, path)


def load(name: str, splits_dir: Path | str | None = None) -> Manifest:
    """Load the split ``name`` from ``splits_dir`` (default: :func:`resolve_splits_dir`)."""
    directory = resolve_splits_dir(splits_dir)
    path = manifest_path(directory, name)
    if not NAME_PATTERN.fullmatch(name) or not path.is_file():
        names = ", ".join(available(directory)) or "none"
        raise SplitError(path, f"no split named {name!r} (available in {directory}: {names})")
    return load_file(path)


# -- verification ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Check:
    path: Path
    ok: bool
    message: str
    manifest: Manifest | None = None


def verify_all(splits_dir: Path | str | None = None) -> list[Check]:
    """Load every ``*.json`` manifest in the directory; one :class:`Check` per file, never raises for a file."""
    directory = resolve_splits_dir(splits_dir)
    checks: list[Check] = []
    for path in sorted(directory.glob("*.json")):
        try:
            m = load_file(path)
        except SplitError as err:
            checks.append(Check(path, False, err.problem))
        else:
            msg = f"ok  {len(m.layout)} territories  sha256 {m.sha256[:12]}"
            if m.seeding is not None:
                msg += f"  private (key id {m.seeding.key_id})"
            if m.pack is not None:
                try:  # a pack the package ships is checked here and now; an operator's needs its directory
                    where = "shipped with the package" if shipped_pack(m) else "its templates need the pack"
                except SplitError as err:
                    checks.append(Check(path, False, err.problem))
                    continue
                msg += f"  template pack {m.pack.name} ({m.pack.fingerprint[:12]}; {where})"
            checks.append(Check(path, True, msg, m))
    if not checks:
        checks.append(Check(directory, False, "no manifest (*.json) found"))
    return checks


def shared_seeds(manifests: Mapping[str, Manifest]) -> list[str]:
    """Territories of different splits that share a seed (so the same world would be in both)."""
    problems: list[str] = []
    seeds: dict[int, str] = {}
    for name, m in sorted(manifests.items()):
        for t in m.territories:
            if t.seed in seeds and seeds[t.seed] != name:
                problems.append(f"{name} shares seed {t.seed} with {seeds[t.seed]}")
            seeds[t.seed] = name
    return problems


def check_catalogue(manifest: Manifest, families: Mapping[str, Any]) -> list[str]:
    """Territories whose family or template the scenario catalogue (groups with their ``templates``) does not know."""
    problems: list[str] = []
    for t in manifest.layout:
        fam = families.get(t.family)
        if fam is None:
            problems.append(f"{t.id}: unknown family {t.family!r}")
        elif t.template not in fam.templates:
            problems.append(f"{t.id}: family {t.family!r} has no template {t.template!r}")
    return problems


def environment_problems(manifest: Manifest) -> list[str]:
    """Territories the split's environment would refuse to build (unknown family or template, a size or
    horizon it does not accept), as the family's typed scenario says. A split over a template pack is
    checked against the pack once one is attached (without it there is nothing to check its templates against)."""
    import salesgym

    try:
        spec = salesgym.family(manifest.env_id)
    except ValueError as err:
        return [str(err)]
    if manifest.pack is not None and manifest.pack_dir is None:
        return []
    problems: list[str] = []
    for t in manifest.layout:
        try:
            spec.scenario(t.columns).check(manifest.pack_dir)
        except ValueError as err:
            problems.append(f"{t.id}: {err}")
    return problems


def pack_message(manifest: Manifest) -> str:
    assert manifest.pack is not None
    return (f"split {manifest.name!r} is cut over the template pack {manifest.pack.name!r} (fingerprint "
            f"{manifest.pack.fingerprint[:16]}): pass --templates-dir DIR, the pack's directory, or set "
            f"${PACK_ENV_VAR}")


def attach_pack(manifest: Manifest, directory: Path | str | None) -> Manifest:
    """``manifest`` with its template pack found at ``directory`` (else ``$SALESGYM_TEMPLATES_DIR``), after
    checking that the pack there has the fingerprint the manifest was sealed with; a manifest without a pack is
    returned as it is when no directory is given, and refused when one is. Without a directory, a split cut over a
    pack the package ships (the family's ``shipped_packs``) gets that pack, by name."""
    if directory is None and manifest.pack is not None:
        shipped = shipped_pack(manifest)
        if shipped is not None:
            return shipped
    if directory is None:
        directory = os.environ.get(PACK_ENV_VAR) or None
        if manifest.pack is None:
            return manifest
    if manifest.pack is None:
        raise SplitError(directory or manifest.name, f"--templates-dir applies to splits cut over a template pack; "
                         f"{manifest.name!r} uses no template pack")
    if directory is None:
        raise SplitError(manifest.path or manifest.name, pack_message(manifest))
    import salesgym

    load = salesgym.family(manifest.env_id).load_pack
    if load is None:
        raise SplitError(manifest.path or manifest.name, f"{manifest.env_id} has no template packs")
    try:
        pack = load(directory)
    except ValueError as err:  # the family's pack error names the file and the problem
        raise SplitError(getattr(err, "path", directory), getattr(err, "problem", str(err))) from None
    if pack.fingerprint != manifest.pack.fingerprint:
        raise SplitError(directory, f"this template pack's fingerprint is {pack.fingerprint[:16]} but split "
                         f"{manifest.name!r} was cut over {manifest.pack.fingerprint[:16]} (the pack changed, or it is "
                         "another one)")
    return replace(manifest, pack_dir=str(pack.path))


def shipped_pack(manifest: Manifest) -> Manifest | None:
    """``manifest`` with the shipped pack its ``pack`` names attached (None: no pack, or its family ships no pack of
    that name); refused when the shipped pack's files changed since the split was sealed."""
    import salesgym

    ref = manifest.pack
    try:
        hook = salesgym.family(manifest.env_id).shipped_packs
    except ValueError:
        return None
    pack = None if hook is None or ref is None else hook().get(ref.name)
    if pack is None or ref is None:
        return None
    if pack.fingerprint != ref.fingerprint:
        raise SplitError(manifest.path or manifest.name, f"split {manifest.name!r} was cut over the shipped template "
                         f"pack {ref.name!r} at fingerprint {ref.fingerprint[:16]}, but this package's copy is "
                         f"{pack.fingerprint[:16]} (its templates changed after the split was frozen)")
    return replace(manifest, pack_dir=pack.name)


def write_manifest(data: Mapping[str, Any], path: Path | str) -> Path:
    """Seal and write a manifest as readable JSON (the hash is over the canonical form, not this text)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(seal(data), indent=2) + "\n", encoding="utf-8")
    return path


def territories_to_dicts(territories: Sequence[Territory]) -> list[dict[str, Any]]:
    return [t.to_dict() for t in territories]
