"""The contamination audit's structure axis (``salesgym splits audit``): how many of a split's world shapes also
occur in its family's train split. A manifest's contamination note compares names (families, templates,
mechanisms); two templates with different names could still build the same graphs, which this compares, by the
family's name-free prints (``FamilySpec.structure``). Computed on demand, so no frozen manifest changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from salesgym.bench.splits import Manifest
from salesgym.core.family import SplitColumns, StructurePrint

Printer = Callable[[SplitColumns, int], StructurePrint]


@dataclass(frozen=True, slots=True)
class Overlap:
    """One split against train: distinct world prints (and part prints) it has, and how many train has too."""

    split: str
    reference: str
    worlds: int
    worlds_shared: int
    parts: int
    parts_shared: int

    def line(self) -> str:
        return (f"{self.split}: {self.worlds_shared}/{self.worlds} world structures and {self.parts_shared}/"
                f"{self.parts} committee structures also occur in {self.reference}")  # fmt: skip


def prints(manifest: Manifest, printer: Printer) -> list[StructurePrint]:
    """The structure of every territory of a manifest with seeds (a locked private one has none to build)."""
    return [printer(t.columns, t.seed) for t in manifest.territories]


def overlap(split: str, found: Sequence[StructurePrint], reference: str,
            train: Sequence[StructurePrint]) -> Overlap:  # fmt: skip
    worlds, train_worlds = {p.world for p in found}, {p.world for p in train}
    parts, train_parts = {x for p in found for x in p.parts}, {x for p in train for x in p.parts}
    return Overlap(split, reference, len(worlds), len(worlds & train_worlds), len(parts), len(parts & train_parts))


def audit(manifests: Mapping[str, Manifest], reference: str, printer: Printer,
          only: str | None = None) -> list[Overlap | str]:  # fmt: skip
    """One family's splits (``only``: just that one) against ``reference``: an :class:`Overlap` per split, or a
    line saying why a split is left out (a private split's seeds come from its key)."""
    train = manifests.get(reference)
    if train is None:
        raise ValueError(f"no {reference!r} split to compare with")
    train_prints = prints(train, printer)
    out: list[Overlap | str] = []
    for name in sorted(manifests) if only is None else [only]:
        m = manifests[name]
        if name == reference:
            out.append(f"{name}: the split the others are compared with")
            continue
        if m.locked:
            out.append(f"{name}: private, its seeds come from the key; not audited")
            continue
        out.append(overlap(name, prints(m, printer), reference, train_prints))
    return out
