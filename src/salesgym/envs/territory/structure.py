"""A territory's structure, name-free: what two templates with different names (and worlds with different
people, companies and competitors) could share. The split audit (``salesgym splits audit``) compares it with
train's; it is computed on demand and is no part of any manifest (their hashes stay frozen).

A deal's **committee print** is its committee graph: the members' true roles, each marked when its public title
belongs to another role, the deal's required approvals, each with the role that reviews it (its approver, the
fallback, or none: ``buyers.APPROVER_ROLES``), and whether a competitor is on it. The generator draws no
influence edge of its own: who moves whom follows from roles (a champion opens the senior members' doors and
carries the economic buyer), so the roles and the approval routing are the graph.

A territory's **world print** is the graph of its deals, each labelled with its committee print, two deals
linked when they share an account or face the same named competitor (every deal also draws on the same team
hours, a link to every other deal that tells no two worlds apart). It is canonicalised by Weisfeiler-Lehman
refinement over the labels, so ids, names and the order of deals do not change it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from salesgym.core.family import SplitColumns, StructurePrint
from salesgym.envs.territory.buyers import APPROVER_ROLES
from salesgym.envs.territory.world import Opportunity, Stakeholder, TerritoryWorld

REFINEMENT_ROUNDS = 3  # Weisfeiler-Lehman rounds: deals see neighbours of neighbours of neighbours


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def committee_print(opp: Opportunity, people: Iterable[Stakeholder], titles: Mapping[str, Iterable[str]]) -> str:
    """The deal's committee graph as a hash (see the module's docstring); ``titles``: each role's public titles."""
    members = sorted((p.role, p.title not in set(titles.get(p.role, ()))) for p in people)
    roles = {role for role, _ in members}
    routed = sorted((a, next((r for r in APPROVER_ROLES.get(a, (a,)) if r in roles), ""))
                    for a in opp.required_approvals)  # fmt: skip
    return _digest({"members": members, "approvals": routed, "competitor": opp.competitor is not None})[:16]


def world_print(world: TerritoryWorld) -> StructurePrint:
    """The territory's world print and one committee print per deal (in the world's deal order)."""
    titles = world.spec.titles
    label = {oid: committee_print(opp, (world.stakeholders[s] for s in opp.stakeholder_ids), titles)
             for oid, opp in world.opportunities.items()}  # fmt: skip
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for oid, opp in world.opportunities.items():
        groups[("account", opp.account_id)].append(oid)
        if opp.competitor is not None:
            groups[("competitor", opp.competitor)].append(oid)
    links: dict[str, list[tuple[str, str]]] = {oid: [] for oid in label}
    for (kind, _), members in groups.items():
        for a in members:
            links[a] += [(kind, b) for b in members if b != a]
    current = dict(label)
    for _ in range(REFINEMENT_ROUNDS):
        current = {oid: _digest([current[oid], sorted((kind, current[b]) for kind, b in links[oid])])[:16]
                   for oid in current}  # fmt: skip
    world_hash = _digest(sorted(Counter(current.values()).items()))[:16]
    return StructurePrint(world_hash, tuple(label.values()))


def structure(columns: SplitColumns, seed: int) -> StructurePrint:
    """The structure of a split entry's world (``FamilySpec.structure``)."""
    from salesgym.envs.territory.generator import generate

    family, template, n_opportunities, horizon_days = columns
    return world_print(generate(seed, family, template, n_opportunities, horizon_days))
