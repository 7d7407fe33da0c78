"""What ``bench`` and ``calibrate`` both do before the first episode: unlock a private split, check that the
environment can play it, and resolve the run's policies."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from salesgym.bench import llm_options as lo
from salesgym.bench import splits as sp
from salesgym.bench.policyspec import LLM_NAME, PolicySpec, resolve_agent, resolve_llm
from salesgym.bench.runner import BenchError


def unlock(manifest: sp.Manifest, key_file: Path | None) -> sp.Manifest:
    """A private split with its seeds derived from the operator's key; a public one as it is."""
    if not manifest.private:
        if key_file is not None:
            raise BenchError(f"--key-file applies to private splits only; {manifest.name!r} lists its seeds")
        return manifest
    key = sp.resolve_key(key_file)
    if key is None:
        raise sp.SplitError(manifest.path or manifest.name, sp.locked_message(manifest.name))
    return manifest.unlock(key)


def preflight(manifest: sp.Manifest) -> None:
    """Fail early, in this process, if the environment or the scenario catalogue is missing or disagrees."""
    try:
        import salesgym

        if not hasattr(salesgym, "make"):
            raise ImportError("salesgym.make is missing")
        from salesgym.agents import make_policy  # noqa: F401
    except ImportError as e:
        raise BenchError(f"the environment or the policies are not installed: {e}") from e
    where = manifest.path or manifest.name
    catalogue = salesgym.family(manifest.env_id).catalogue()
    problems = [] if manifest.pack is not None else sp.check_catalogue(manifest, catalogue)  # a pack: checked below
    if problems:
        raise BenchError(f"{where}: split does not match the scenario catalogue: {'; '.join(problems[:5])}")
    problems = sp.environment_problems(manifest)
    if problems:
        raise BenchError(f"{where}: the environment cannot build this split: {'; '.join(problems[:5])}")
    _first_world(manifest)


def _first_world(manifest: sp.Manifest) -> None:
    """Build, reset and score the split's first world here, before any episode: whatever a family imports
    only when it plays or scores (a verifier's library) is missing now, once, not in every episode's record."""
    from salesgym.bench import runner

    if not manifest.territories:
        return
    first = manifest.territories[0]
    try:
        env = runner.make_env(first, None, manifest.env_id, manifest.pack_dir)
        env.reset(seed=first.seed)
        env.score()
    except ImportError as e:
        raise BenchError(f"{manifest.name}: a library this family needs is missing: {e}") from e
    except Exception as e:  # every episode would fail the same way
        raise BenchError(f"{manifest.name}: cannot build and score {first.id}: {type(e).__name__}: {e}") from e


def resolve_policies(
    names: list[str] | None, agents: list[str] | None, llm_options: Mapping[str, object], suite: object,
    extra: list[PolicySpec] | None = None,
) -> tuple[list[PolicySpec], list[str]]:
    """The run's policies from ``--policy`` (registered names, or ``llm``), ``--agent`` and ``extra`` (a
    service's sessions), checked here; and the floors and reference added so that agents are normalised like
    the baselines (named in the 2nd item)."""
    from salesgym.bench import runner

    names = list(names or [])
    wants_llm = LLM_NAME in names
    given = {k: v for k, v in llm_options.items() if v is not None}
    if given and not wants_llm:
        raise BenchError(f"{', '.join(map(lo.flag_of, given))} apply to --policy llm only")
    builtins = [n for n in names if n != LLM_NAME]
    if not builtins and not agents and not wants_llm and not extra:
        builtins = list(suite.all)  # type: ignore[attr-defined]
    specs = [PolicySpec.builtin(n) for n in runner.validate_policies(builtins, suite)]  # type: ignore[arg-type]
    if wants_llm:
        if "model" not in given:
            raise BenchError("--policy llm needs --model (and --base-url for an endpoint other than OpenAI's)")
        specs.append(resolve_llm(given))
    for target in dict.fromkeys(agents or []):
        spec = resolve_agent(target)
        taken = next((s for s in specs if s.name == spec.name), None)
        if taken is not None:
            what = "a registered policy" if taken.kind == "builtin" else f"--agent {taken.target or taken.name}"
            raise BenchError(f"--agent {target}: its name {spec.name!r} is already {what}; give it another `name`")
        specs.append(spec)
    for spec in extra or []:
        if any(s.name == spec.name for s in specs):
            raise BenchError(f"--name {spec.name!r} is already a policy of this run; choose another")
        specs.append(spec)
    added: list[str] = []
    if any(s.kind != "builtin" for s in specs):
        have = {s.name for s in specs}
        reference = tuple(suite.reference)  # type: ignore[attr-defined]
        wanted = [*suite.floors, *([] if have & set(reference) else reference[:1])]  # type: ignore[attr-defined]
        added = [n for n in wanted if n not in have]
        specs += [PolicySpec.builtin(n) for n in added]
    return specs, added
