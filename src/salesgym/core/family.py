"""The family contract: what a family registers beside its environment ids (``salesgym.register(..., spec=)``).

The benchmark, the service, the adapters and the reports know a family only through its :class:`FamilySpec`:
its typed split entry (:class:`Scenario`), its split plan and the rules between its splits, its policy suite,
its report words and breakdown tags, its ablations and its hooks (conformance kit, verifier API). A family
builds one in its own folder (``envs/<family>/family.py``); a field it leaves out is a type error
(``mypy``) and a ``TypeError`` when the module loads, so adding a family is one folder and one registration.

A split file stores every family's entries in the same four columns (:class:`SplitColumns`, named after the
territory's, the first family, so that frozen files keep their hashes); a family reads them into its own
:class:`Scenario`, which names them in its own terms (a desk's buyer variant, lead mix, leads and shift days)
and says how they become the environment's arguments. Nothing here imports a family.

>>> columns = SplitColumns("midmarket_saas", "standard", 10, 30)
>>> columns.as_dict()
{'family': 'midmarket_saas', 'template': 'standard', 'n_opportunities': 10, 'horizon_days': 30}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

COLUMN_NAMES = ("family", "template", "n_opportunities", "horizon_days")


class SplitColumns(NamedTuple):
    """The four scenario columns of a split entry as the file stores them (the entry's id and seed aside)."""

    family: str
    template: str
    n_opportunities: int
    horizon_days: int

    def as_dict(self) -> dict[str, Any]:
        return dict(zip(COLUMN_NAMES, self, strict=True))


class Scenario(Protocol):
    """A family's typed split entry: what one scored item of its splits is, in the family's words."""

    def columns(self) -> SplitColumns: ...  # back to the stored columns (reading then writing changes nothing)

    def make_kwargs(self) -> dict[str, Any]: ...  # the registered environment's arguments for this item

    def check(self, pack: str | None) -> None: ...  # ``ValueError`` saying what is allowed, if it cannot be built


class Pack(Protocol):
    """A template pack (scenario data the operator holds outside the package), as the benchmark sees it."""

    @property
    def name(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def path(self) -> Path: ...


class StructurePrint(NamedTuple):
    """A world's shape without its names (``FamilySpec.structure``; the split audit compares it with train's)."""

    world: str  # the whole world's graph, canonicalised (renaming anything leaves it unchanged)
    parts: tuple[str, ...]  # one print per unit the world is made of (a territory's deals: their committees)


SplitBody = dict[str, Any]  # {"description", "territories": [entry dicts with ids and seeds], "contamination"}


def no_held_out_choice(family: str, held_out: str | None) -> None:
    """For a family whose plan fixes what it holds out: refuse a choice, clearly."""
    if held_out is not None:
        raise ValueError(f"--held-out-family applies to plans that let one choose; {family}'s splits are cut by its "
                         "own plan")


@dataclass(frozen=True, kw_only=True)
class FamilySpec:
    """Everything outside a family's folder may know about it. Required fields have no default.

    ``policies`` and the hook modules are ``"module:ATTR"`` / module paths, imported only by whoever needs them
    (a family's folder never imports the policy layer, and ``import salesgym`` imports no family).
    """

    name: str  # the benchmark's family name (``--family``, a run's ``family``, the policies' key)
    scenario: Callable[[SplitColumns], Scenario]  # read a stored split entry (``ValueError`` if malformed)
    catalogue: Callable[[], Mapping[str, Any]]  # scenario groups by name, each with its ``templates``
    # its public splits as data (the bench seals them); the argument: a scenario group to hold out of train, where
    # the family's plan lets one choose (``--held-out-family``), else None (a plan that cannot raises ValueError)
    split_plan: Callable[[str | None], Mapping[str, SplitBody]]
    split_rules: Callable[[Mapping[str, Any]], list[str]]  # violations of the rules between its splits
    default_split: str  # what ``salesgym bench --family NAME`` runs
    split_prefix: str  # its split names' prefix: calibration's ``train``/``eval``/``held-out`` are prefix + kind
    policies: str  # ``"module:ATTR"`` of its ``salesgym.agents.base.PolicySuite`` (baselines, probes, floors)
    report_words: Mapping[str, Any]  # the report's words and metric names (``bench/vocabulary.py`` reads them)
    scenario_words: Mapping[str, str]  # what each stored column means, for breakdown titles (a column: a word)
    # tag breakdowns: a list the score carries -> what one item of it is called ("apps" -> "app")
    scenario_tags: Mapping[str, str] = field(default_factory=dict)
    # name -> what it changes; world ablations change every policy's score (benchmark ablations), training ones
    # only the reward (for training runs)
    world_ablations: Mapping[str, str] = field(default_factory=dict)
    training_ablations: Mapping[str, str] = field(default_factory=dict)
    trajectory_data: tuple[str, ...] | None = None  # what a trajectory keeps of ``obs["data"]`` (None: all)
    # a keyed private split ``(name, template pack directory, held-out group)``, if it has them
    private_plan: Callable[[str, str | None, str | None], SplitBody] | None = None
    load_pack: Callable[[str | Path], Pack] | None = None  # its template packs, if it has them
    # the packs the package itself ships, by name: a split over one runs without --templates-dir, and a service
    # offers them by name (never a directory of its own)
    shipped_packs: Callable[[], Mapping[str, Pack]] | None = None
    conformance: str | None = None  # module of the conformance kit's hooks (``random_call``, ``LeakScanner``...)
    verifier_api: str | None = None  # module of the HTTP verifier API's family side, if it offers one
    kit_ids: tuple[str, ...] | None = None  # the ids the conformance kit runs (None: every registered id)
    # the shape of a split entry's world (its columns and seed), for ``salesgym splits audit``, if it has one
    structure: Callable[[SplitColumns, int], StructurePrint] | None = None
    kit_campaign: bool = False  # the kit runs it in the campaign run only (episodes too costly for the suite)
    splits_folder: str = ""  # its manifests' subfolder of ``splits/`` ("": the folder itself, the first family's)
    unnamed_manifests: bool = False  # its manifests name no ``env_id`` (the first family's, frozen before ids)

    def __post_init__(self) -> None:
        if not self.name or self.policies.count(":") != 1:
            raise ValueError(f"family {self.name!r}: a name and policies as 'module:ATTR' are required")
        unknown = set(self.scenario_words) - set(COLUMN_NAMES)
        if unknown:
            raise ValueError(f"family {self.name!r}: scenario_words names no stored column: {sorted(unknown)}")
