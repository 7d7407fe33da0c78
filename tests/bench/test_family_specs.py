"""Each registered family's spec against the frozen splits: its plan, sealed, is byte for byte the hash of every
committed public manifest; every committed entry reads into the family's typed scenario and back to the same
stored columns (so the file and its hash never change shape); and the environment arguments an entry makes are
the ones the benchmark always made for it."""

from __future__ import annotations

from pathlib import Path

import pytest

import salesgym
from salesgym.bench import splitgen
from salesgym.bench import splits as sp
from salesgym.bench.runner import territory_kwargs

REPO_SPLITS = Path(__file__).resolve().parents[2] / "splits"
FAMILIES = ("territory", "desk", "workflows", "workflows-ui")


def committed(family: str) -> dict[str, sp.Manifest]:
    folder = REPO_SPLITS / salesgym.family_named(family).splits_folder
    return {c.manifest.name: c.manifest for c in sp.verify_all(folder) if c.manifest is not None}


def test_every_family_is_registered_with_a_spec() -> None:
    assert tuple(salesgym.families()) == FAMILIES
    for env_id in salesgym.registry():
        assert salesgym.family(env_id).name in FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_the_plan_seals_to_the_committed_hashes(family: str) -> None:
    sealed = splitgen.generate_family(family)
    frozen = committed(family)
    assert sealed and set(sealed) <= set(frozen)
    for name, data in sealed.items():
        assert data["sha256"] == frozen[name].sha256, f"{name}: the plan no longer reproduces the frozen split"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_committed_entry_reads_into_the_typed_scenario_and_back(family: str) -> None:
    spec = salesgym.family_named(family)
    for manifest in committed(family).values():
        for entry in manifest.layout:
            scenario = spec.scenario(entry.columns)
            assert scenario.columns() == entry.columns
            scenario.check(None)


@pytest.mark.parametrize(("split", "index", "expected"), [
    ("eval", 0, {"family": "midmarket_saas", "template": "entrenched_competitor", "n_opportunities": 10,
                 "horizon_days": 30}),
    ("desk-transfer", 0, {"variant": "skeptical", "lead_mix": "standard", "n_leads": 20, "shift_days": 1}),
    ("workflows-eval", 0, None),
    ("workflows-ui-eval", 0, None),
])
def test_an_entry_makes_the_arguments_the_benchmark_always_made(split: str, index: int,
                                                                 expected: dict[str, object] | None) -> None:
    manifest = sp.load(split)
    entry = manifest.territories[index]
    kwargs = territory_kwargs(entry, manifest.env_id)
    if split.startswith("workflows-ui"):
        template, look = entry.template.split(".")
        expected = {"template": template, "variant": look}
    elif split.startswith("workflows"):
        expected = {"template": entry.template}
    assert kwargs == expected
    if not split.startswith("workflows-ui"):  # (a browser episode is the computer-use tests' business)
        salesgym.make(manifest.env_id, **kwargs).reset(seed=entry.seed)


def test_a_malformed_entry_is_refused_with_what_is_allowed() -> None:
    spec = salesgym.family_named("desk")
    with pytest.raises(ValueError, match="n_leads"):
        spec.scenario(sp.Slot("x", "default", "standard", 0, 1).columns).check(None)
    with pytest.raises(ValueError, match="unknown look"):
        salesgym.family_named("workflows-ui").scenario(sp.Slot("x", "tier1", "t.nolook", 1, 1).columns)


# Literals naming a family or one of its ids that remain outside its folder, each with why. Anything else (a
# fallback to the territory in the benchmark, the service, the adapters, the kit or the policy registry) fails.
KNOWN_LITERALS = {
    "bench/sft.py": {"territory"},  # the trajectory's "territory" field: a split entry's id, for every family
    "bench/transcripts.py": {"territory"},  # likewise
    "bench/view.py": {"territory"},  # likewise
    "bench/vocabulary.py": {"territory"},  # the neutral word for a split's item, and the word speak() replaces
    "adapters/skyrl.py": {"territory"},  # a SkyRL row's "territory" field (a split entry), for every family
    "serve/commands.py": {"territory-debug-v0"},  # `salesgym play` / `mcp` without an id: a public CLI default
    "adapters/gymnasium_env.py": {"territory-v0"},  # SalesgymGymEnv() without an id: a public default
    "adapters/curriculum.py": {"territory-v0"},  # the territory's curriculum (its stages are territory arguments)
    "bench/calibrate_command.py": {"workflows"},  # `salesgym calibrate` without --family: a public CLI default
}


def test_no_layer_outside_a_family_falls_back_on_one() -> None:
    import ast

    names = set(salesgym.families()) | set(salesgym.registry())
    root = Path(salesgym.__file__).parent
    found: dict[str, set[str]] = {}
    for folder in ("bench", "serve", "adapters", "testing", "agents"):
        for path in sorted((root / folder).rglob("*.py")):
            if folder == "agents" and path.parent != root / "agents":
                continue  # a family's own policies (agents/<family>/) may name it
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                          if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                          and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings:
                    found.setdefault(str(path.relative_to(root)), set()).add(str(node.value))
    assert found == KNOWN_LITERALS
