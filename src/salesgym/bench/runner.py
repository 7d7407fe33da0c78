"""Play benchmark episodes (policy x territory x trial) on a local process pool or as Ray tasks.

An episode is a pure function of its :class:`EpisodeSpec` (territory spec + policy spec + trial + ablation),
so every backend returns the same records; only wall time differs. The main process alone writes to the
store, one committed row (with its trajectory) per finished episode, which is what makes interrupted runs
resumable.

Trials: the world is always the territory's (its seed); trial ``k`` changes only the policy's seed,
:func:`trial_seed`. Trial 0 seeds the policy with the territory seed, as runs without trials always did.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import select
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any, Protocol

from salesgym.agents.base import PolicySuite
from salesgym.bench.policyspec import BUILTIN, PolicySpec
from salesgym.bench.splits import (
    SEED_LIMIT,
    Manifest,
    Slot,
    Territory,
    locked_message,
    pack_message,
    unnamed_env_id,
)
from salesgym.bench.store import PRIVATE_KEY, EpisodeRecord, RunRecord, Store, encode_trajectory

DEFAULT_MAX_STEPS = 20_000
BACKENDS = ("local", "ray")


class BenchError(Exception):
    """A benchmark that cannot start (bad policy, ablation, backend, missing environment...)."""


# -- policies --------------------------------------------------------------------------------------
def family_of(env_id: str) -> str:
    """The name of the family a registered id belongs to (its registered spec's)."""
    import salesgym

    return salesgym.family(env_id).name


def family_of_run(config: Mapping[str, Any]) -> str:
    """The family a stored run played: its config's ``family``, else (a run of a manifest that names no
    ``env_id``, whose config never says) the family of :func:`~salesgym.bench.splits.unnamed_env_id`."""
    found = config.get("family")
    return found if isinstance(found, str) else family_of(unnamed_env_id())


def policy_suite(family: str) -> PolicySuite:
    """The registered policies of an environment family (imports ``salesgym.agents`` lazily)."""
    try:
        from salesgym.agents import suite
    except ImportError as err:
        raise BenchError(f"the policy registry is not available (salesgym.agents): {err}") from err
    try:
        return suite(family)
    except ValueError as err:
        raise BenchError(str(err)) from err


def validate_policies(names: Sequence[str], suite: PolicySuite) -> tuple[str, ...]:
    """Known names, deduplicated in the given order; a clear :class:`BenchError` for unknown ones."""
    unknown = [n for n in names if n not in suite.all]
    if unknown:
        raise BenchError(f"unknown policy {', '.join(map(repr, unknown))}; known: {', '.join(suite.all)}")
    return tuple(dict.fromkeys(names))


def ablations(env_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """(world ablations, training ablations) of an environment's family, name -> what it changes."""
    import salesgym

    spec = salesgym.family(env_id)
    return dict(spec.world_ablations), dict(spec.training_ablations)


def validate_ablation(name: str | None, env_id: str) -> str | None:
    if name is None or name in ("", "none"):
        return None
    world, training = ablations(env_id)
    if name in training:
        raise BenchError(
            f"{name!r} is a training ablation: it changes only the reward ({training[name]}), which no fixed "
            "policy reads, so every score would be identical. Use it in a training run (the trainer adapters); "
            f"benchmark ablations change the world: {', '.join(world) or 'this family has none'}"
        )
    if name not in world:
        raise BenchError(f"unknown ablation {name!r}; benchmark ablations: {', '.join(world)}")
    return name


# -- one episode -----------------------------------------------------------------------------------
def trial_seed(territory_seed: int, trial: int) -> int:
    """The policy's seed in trial ``trial``: the territory seed for trial 0 (what every run before trials
    used), else a hash of both, cut to 63 bits (random-looking, reproducible, unrelated across trials)."""
    if trial == 0:
        return territory_seed
    digest = hashlib.sha256(f"salesgym/trial-seed/v1:{territory_seed}:{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % SEED_LIMIT


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """Everything that determines an episode (picklable, sent to workers).

    ``policy`` is the name the store and leaderboard use; ``build`` says how to build it (None: the registered
    policy of that name). ``private``: the split is private, so the trajectory leaves the seeds out.
    """

    policy: str
    territory: Territory
    ablation: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    trial: int = 0
    build: PolicySpec | None = None
    private: bool = False
    env_id: str = field(default_factory=lambda: unnamed_env_id())  # a manifest's, when it names none
    pack: str | None = None  # the template pack's directory of a split cut over one
    env_options: tuple[tuple[str, Any], ...] = ()  # more ``make`` arguments (a desk's language-model buyer)

    @property
    def policy_spec(self) -> PolicySpec:
        return self.build if self.build is not None else PolicySpec.builtin(self.policy)

    @property
    def policy_seed(self) -> int:
        return trial_seed(self.territory.seed, self.trial)

    def failed(self, error: str, wall_s: float = 0.0, steps: int = 0, tool_calls: int = 0) -> EpisodeRecord:
        """The record of an episode that could not be played to its end."""
        t = self.territory
        return EpisodeRecord(self.policy, t.id, t.seed, "error", None, wall_s, steps, tool_calls, error, self.trial)


def _jsonable(obj: Any) -> Any:
    """Round-trip through JSON so numpy scalars and tuples become plain data."""

    def default(o: Any) -> Any:
        if hasattr(o, "item"):
            return o.item()
        if hasattr(o, "tolist"):
            return o.tolist()
        if isinstance(o, set | frozenset):
            return sorted(o)
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")

    return json.loads(json.dumps(obj, default=default))


def territory_kwargs(territory: Territory | Slot, env_id: str) -> dict[str, Any]:
    """The ``make`` arguments of one split entry: its family reads the stored columns into its typed scenario
    (``FamilySpec.scenario``), which says what they are for its environment."""
    import salesgym

    return salesgym.family(env_id).scenario(territory.columns).make_kwargs()


def make_env(territory: Territory, ablation: str | None, env_id: str, pack: str | None = None,
             options: Sequence[tuple[str, Any]] = ()) -> Any:  # fmt: skip
    """The environment of one split territory (``territory_kwargs``), with the ablation if any, from the template
    pack at ``pack`` if its split was cut over one, with more ``make`` arguments ``options``."""
    import salesgym

    kwargs = {**territory_kwargs(territory, env_id), **dict(options)}
    if ablation is not None:
        kwargs["ablation"] = ablation
    if pack is not None:
        kwargs["pack"] = pack
    return salesgym.make(env_id, **kwargs)


def _status(end: str | None) -> str:
    if end is not None and end.startswith("stopped"):
        return "stopped"
    return "step_cap" if end == "step_cap" else "ok"


def _ended_by(env: Any) -> str | None:
    """Why the environment cut the episode short (its last ``episode_ended`` event's reason, e.g. the
    invalid-action ceiling), for the leaderboard's "ended by" column."""
    for event in reversed(env.event_log()):
        if event.get("kind") == "episode_ended":
            why = (event.get("payload") or {}).get("why")
            return str(why) if why is not None else None
    return None


def run_episode(spec: EpisodeSpec) -> EpisodeRecord:
    """Play one episode to its end (or the step cap), recording its trajectory; never raises: failures become
    ``status="error"``."""
    from salesgym.agents.base import Episode
    from salesgym.agents.trajectory import Recorder

    t = spec.territory
    start = time.perf_counter()
    steps = 0
    tool_calls = 0
    try:
        env = make_env(t, spec.ablation, spec.env_id, spec.pack, spec.env_options)
        env.reset(seed=t.seed)  # the oracle's hidden truth is read before its episode starts (operator side)
        build = spec.policy_spec
        family = family_of(spec.env_id)
        reference = build.kind == BUILTIN and policy_suite(family).reads_truth(spec.policy)
        policy = build.build(spec.policy_seed, env.hidden_truth() if reference else None, family)
        episode = Episode(env, policy, t.seed, spec.max_steps)
        seeds = {} if spec.private else {"policy_seed": spec.policy_seed}
        recorder = Recorder(episode, env_id=spec.env_id, policy=spec.policy, territory=t.id, trial=spec.trial, **seeds)
        episode_return = 0.0
        reward_by_tool: dict[str, float] = {}  # which mechanism the reward came through, step by step
        for step in recorder:
            steps += 1
            episode_return += step.reward
            tool = str(step.action.get("tool")) if isinstance(step.action, dict) else "?"
            reward_by_tool[tool] = reward_by_tool.get(tool, 0.0) + step.reward
            if step.info.get("tool_result", {}).get("status") != "error":
                tool_calls += 1
        metrics = _jsonable(
            {
                **env.score(),
                "return": round(episode_return, 6),
                "reward_by_tool": {k: round(v, 6) for k, v in sorted(reward_by_tool.items())},
                **({"ended_by": _ended_by(env)} if episode.end == "truncated" else {}),
            }
        )
        trajectory = _jsonable(recorder.trajectory)
        tape = getattr(env, "counterparty_tape", None)  # a model counterparty's replies: what a replay needs
        if tape is not None and tape():
            trajectory["counterparty_tape"] = _jsonable(tape())
            trajectory["event_log_sha256"] = env.event_log_hash()
        if spec.private:  # a private split's seed rebuilds its world: it stays with the episode row only
            trajectory["seed"] = None
        record = _jsonable(trajectory.get("totals") or {})
        return EpisodeRecord(
            spec.policy,
            t.id,
            t.seed,
            _status(episode.end),
            metrics,
            time.perf_counter() - start,
            steps,
            tool_calls,
            trial=spec.trial,
            end=episode.end,
            policy_record=record if isinstance(record, dict) else {"value": record},
            trajectory=encode_trajectory(trajectory),
        )
    except Exception as err:  # an episode failure is data, not a crash of the whole benchmark
        tb = traceback.format_exc(limit=6)
        return spec.failed(f"{type(err).__name__}: {err}\n{tb}"[-4000:], time.perf_counter() - start, steps, tool_calls)


# -- backends --------------------------------------------------------------------------------------
class Backend(Protocol):
    name: str

    def run(self, specs: Sequence[EpisodeSpec]) -> Iterator[EpisodeRecord]: ...


@dataclass(slots=True)
class LocalBackend:
    """``workers`` fresh processes (fork server or spawn: no state leaks in); ``workers=1`` runs in-process."""

    workers: int = 1
    name: str = "local"
    episode_fn: Callable[[EpisodeSpec], EpisodeRecord] = run_episode  # a module-level function (pickled by name)

    def run(self, specs: Sequence[EpisodeSpec]) -> Iterator[EpisodeRecord]:
        if self.workers <= 1 or len(specs) <= 1:
            for spec in specs:
                yield self.episode_fn(spec)
            return
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(specs)),
            mp_context=_mp_context(),
            initializer=exit_with_parent,
            initargs=(os.getpid(),),
        )
        try:
            futures: dict[Future[EpisodeRecord], EpisodeSpec] = {pool.submit(self.episode_fn, s): s for s in specs}
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield _result_or_error(fut, futures[fut])
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


PRELOAD = ("salesgym", "salesgym.bench.runner", "salesgym.agents", "numpy")  # plus the split's environment


def _mp_context() -> BaseContext:
    """A fork server that has already imported the environment (fast worker start, no inherited threads);
    plain spawn where fork servers do not exist."""
    if "forkserver" in get_all_start_methods():
        ctx = get_context("forkserver")
        import salesgym

        env_modules = sorted({entry["entry_point"].split(":")[0] for entry in salesgym.registry().values()})
        ctx.set_forkserver_preload([m for m in (*PRELOAD, *env_modules) if importlib.util.find_spec(m) is not None])
        return ctx
    return get_context("spawn")


def exit_with_parent(parent_pid: int) -> None:
    """Pool initializer: end this worker as soon as the process that started the pool is gone.

    A worker whose parent is killed (``kill -9``, the OOM killer) would otherwise wait forever on its task
    queue: it holds that queue's write end itself, so it never sees EOF. Once the workers are gone, the fork
    server and the resource tracker follow on their own: each exits when the last holder of its pipe (the
    parent and the workers, which inherit it) has closed it.
    """
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="salesgym-parent-watch", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(parent_pid)
        except ProcessLookupError:
            os._exit(1)  # the parent died before this worker started
        except OSError:
            pass  # pidfd unsupported by this kernel: poll instead
        else:
            select.select([fd], [], [])  # readable when the process exits (Linux >= 5.3)
            os._exit(1)
    while True:  # fork-server workers are not the parent's children: poll for its pid instead
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass  # alive (signalling it is not allowed, but it exists)
        time.sleep(0.5)


def _result_or_error(fut: Future[EpisodeRecord], spec: EpisodeSpec) -> EpisodeRecord:
    try:
        return fut.result()
    except Exception as err:  # a worker died (e.g. out of memory): record it, keep going
        return spec.failed(f"worker failed: {err!r}")


@dataclass(slots=True)
class RayBackend:
    """Each episode a Ray task; a local cluster by default, an existing one with ``address``."""

    address: str | None = None
    workers: int | None = None
    name: str = "ray"
    episode_fn: Callable[[EpisodeSpec], EpisodeRecord] = run_episode

    def run(self, specs: Sequence[EpisodeSpec]) -> Iterator[EpisodeRecord]:
        started_here = init_ray(self.address, self.workers)
        import ray  # init_ray has checked it is installed

        try:
            task = ray.remote(num_cpus=1, max_retries=0)(self.episode_fn)
            refs = {task.remote(s): s for s in specs}
            waiting = list(refs)
            while waiting:
                done, waiting = ray.wait(waiting, num_returns=1)
                for ref in done:
                    try:
                        yield ray.get(ref)
                    except Exception as err:
                        yield refs[ref].failed(f"ray task failed: {err!r}")
        finally:
            if started_here:
                ray.shutdown()


def init_ray(address: str | None = None, workers: int | None = None) -> bool:
    """Connect to ``address`` or start a local cluster (``workers`` CPUs); True if this call started Ray.

    Workers of a local cluster get this package's source directory on ``PYTHONPATH``, so an uninstalled
    checkout works too; a remote cluster must have salesgym installed.
    """
    try:
        import ray
    except ImportError as err:
        raise BenchError("the ray backend needs Ray: pip install 'salesgym[ray]'") from err
    if ray.is_initialized():
        return False
    src = str(Path(__file__).resolve().parents[2])
    pythonpath = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "runtime_env": {"env_vars": {"PYTHONPATH": pythonpath}},
    }
    if address:
        kwargs["address"] = address
    elif workers:
        kwargs["num_cpus"] = workers
    try:
        ray.init(**kwargs)
    except Exception as err:
        raise BenchError(f"cannot start Ray on {address or 'a local cluster'}: {err}") from err
    return True


def make_backend(name: str, workers: int, address: str | None = None) -> Backend:
    if name == "local":
        if address:
            raise BenchError("--ray-address only applies to --backend ray")
        return LocalBackend(workers=workers)
    if name == "ray":
        if importlib.util.find_spec("ray") is None:
            raise BenchError("the ray backend needs Ray: pip install 'salesgym[ray]'")
        return RayBackend(address=address, workers=workers)
    raise BenchError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")


# -- a whole run -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunConfig:
    """What defines a run's results; the run id is a hash of it (workers and backend do not count)."""

    split: str
    split_sha256: str
    policies: tuple[str, ...]
    territories: tuple[str, ...]
    ablation: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    # room for training-side ablations (no curriculum, no failure mining) when trainer adapters land
    training: tuple[tuple[str, str], ...] = ()
    code: str = ""  # code_fingerprint() of the run's source
    private: bool = False  # a private split: exports leave its derived seeds out
    trials: int = 1
    agents: tuple[PolicySpec, ...] = ()  # the policies that are not registered ones (--agent, --policy llm)
    env_id: str = field(default_factory=lambda: unnamed_env_id())  # a manifest's, when it names none
    env_options: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "split": self.split,
            "split_sha256": self.split_sha256,
            "policies": list(self.policies),
            "territories": list(self.territories),
            "ablation": self.ablation,
            "max_steps": self.max_steps,
            "training": dict(self.training),
            "code": self.code,
        }
        if self.private:  # only then: public runs keep the ids they always had
            out[PRIVATE_KEY] = True
        if self.trials != 1:  # likewise
            out["trials"] = self.trials
        if self.agents:
            out["agents"] = {a.name: a.to_dict() for a in self.agents}
        if self.env_id != unnamed_env_id():  # likewise: runs of manifests that name no env_id keep their ids
            out["env_id"] = self.env_id
            out["family"] = family_of(self.env_id)
        if self.env_options:  # likewise: a run with other environment arguments is another run
            out["env_options"] = dict(self.env_options)
        return out

    def run_id(self, package_version: str) -> str:
        ident = {**self.to_dict(), "policies": sorted(self.policies), "package_version": package_version}
        digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:10]
        suffix = f"-{self.ablation}" if self.ablation else ""
        return f"{self.split}{suffix}-{digest}"


def package_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("salesgym")
    except PackageNotFoundError:
        try:
            import salesgym

            return str(getattr(salesgym, "__version__", "0+unknown"))
        except ImportError:
            return "0+unknown"


RESULT_CODE_EXCLUDE = ("bench/", "serve/", "service_api/", "adapters/", "cli.py", "demo.py")
RESULT_CODE_KEEP = ("bench/runner.py", "bench/policyspec.py")  # how episodes are played and policies built


def code_fingerprint() -> str:
    """sha256 of the package source that decides episode results (environments, engine, policies, runner).

    Part of the run id, so editing a policy or the environment starts a new run instead of silently reusing
    episodes played by the old code. Reports, CLI and storage code are left out: they do not change results.
    """
    pkg = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith(RESULT_CODE_EXCLUDE) and rel not in RESULT_CODE_KEEP:
            continue
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def git_revision() -> str | None:
    """The checkout's commit, read from ``.git`` without running git; None outside a repository."""
    root = Path(__file__).resolve().parents[3]
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        ref_file = git / ref
        if ref_file.is_file():
            return ref_file.read_text().strip() or None
        packed = git / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


@dataclass(frozen=True, slots=True)
class RunOutcome:
    run: RunRecord
    played: int
    skipped: int


PolicyLike = str | PolicySpec


def _specs(policies: Sequence[PolicyLike]) -> list[PolicySpec]:
    """Policy names and specs as specs, deduplicated by name in the given order."""
    out: dict[str, PolicySpec] = {}
    for p in policies:
        spec = PolicySpec.builtin(p) if isinstance(p, str) else p
        out.setdefault(spec.name, spec)
    return list(out.values())


def plan(
    manifest: Manifest,
    policies: Sequence[PolicyLike],
    episodes: int | None,
    ablation: str | None,
    max_steps: int,
    trials: int = 1,
    env_options: Mapping[str, Any] | None = None,
) -> tuple[RunConfig, list[EpisodeSpec]]:
    if episodes is not None and episodes < 1:
        raise BenchError(f"--episodes must be >= 1, got {episodes}")
    if trials < 1:
        raise BenchError(f"--trials must be >= 1, got {trials}")
    if manifest.locked:
        raise BenchError(f"{manifest.path or manifest.name}: {locked_message(manifest.name)}")
    if manifest.pack is not None and manifest.pack_dir is None:
        raise BenchError(f"{manifest.path or manifest.name}: {pack_message(manifest)}")
    territories = manifest.limited(episodes)
    specs = _specs(policies)
    options = tuple(sorted((env_options or {}).items()))
    config = RunConfig(
        split=manifest.name,
        split_sha256=manifest.sha256,
        policies=tuple(s.name for s in specs),
        territories=tuple(t.id for t in territories),
        ablation=ablation,
        max_steps=max_steps,
        code=code_fingerprint(),
        private=manifest.private,
        trials=trials,
        agents=tuple(s for s in specs if s.kind != BUILTIN),
        env_id=manifest.env_id,
        env_options=options,
    )
    episodes_ = [
        EpisodeSpec(s.name, t, ablation, max_steps, k, None if s.kind == BUILTIN else s, manifest.private,
                    manifest.env_id, manifest.pack_dir, options)
        for s in specs
        for t in territories
        for k in range(trials)
    ]
    return config, episodes_


def run_benchmark(
    store: Store,
    manifest: Manifest,
    policies: Sequence[PolicyLike],
    backend: Backend,
    *,
    episodes: int | None = None,
    ablation: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    trials: int = 1,
    force: bool = False,
    retry_errors: bool = False,
    on_plan: Callable[[int, int], None] | None = None,
    on_result: Callable[[EpisodeRecord], None] | None = None,
    env_options: Mapping[str, Any] | None = None,
) -> RunOutcome:
    """Create or resume the run for this configuration and play only the missing episodes.

    ``policies`` are registered names or :class:`PolicySpec` s. ``on_plan(to_play, already_done)`` is called
    once before playing; ``on_result`` after each episode.
    """
    config, specs = plan(manifest, policies, episodes, ablation, max_steps, trials, env_options)
    version = package_version()
    run = store.ensure_run(
        RunRecord(
            id=config.run_id(version),
            created="",
            split=manifest.name,
            split_sha256=manifest.sha256,
            policies=config.policies,
            config=config.to_dict(),
            package_version=version,
            git_revision=git_revision(),
        )
    )
    keys = ((s.policy, s.territory.id, s.trial) for s in specs)
    todo_keys = set(store.pending(run.id, keys, force=force, retry_errors=retry_errors))
    todo = [s for s in specs if (s.policy, s.territory.id, s.trial) in todo_keys]
    if on_plan is not None:
        on_plan(len(todo), len(specs) - len(todo))
    for record in backend.run(todo):
        store.record(run.id, record)
        if on_result is not None:
            on_result(record)
    return RunOutcome(run=run, played=len(todo), skipped=len(specs) - len(todo))
