"""Scenario families and generative templates as data.

A family is the *market* (industries, products, pains and the words that reveal them, titles, deal sizes,
how often approvals are required). A template is a *mechanism mix* applied on top (an entrenched
competitor, a budget freeze, procurement-heavy buying, a large committee, the champion leaving, a fast
small-business motion). Adding either is a new entry in ``families/``; nothing in ``core/`` changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from salesgym.envs.territory.contract import APPROVALS, RESOURCES

__all__ = ["APPROVALS", "MECHANISMS", "RESOURCES", "ROLES", "FamilySpec", "Pain", "TemplateSpec"]

ROLES = (
    "champion",
    "economic_buyer",
    "technical_evaluator",
    "security",
    "legal",
    "procurement",
    "user",
    "blocker",
)

# Known mechanism names a template may switch on; each is implemented in ``generator.py``.
MECHANISMS = (
    "entrenched_competitor",  # a competitor is present almost everywhere, aggressive, moves often
    "budget_freeze",  # a freeze hits many accounts mid-episode: no budget confirmation, contracts stall
    "procurement_heavy",  # every deal needs procurement + legal; desk capacity scarce, lead times longer
    "large_committee",  # 7-9 stakeholders, misleading titles, authority hidden among them
    "champion_leaves",  # the champion leaves some accounts mid-episode
    "fast_smb",  # small deals, 3-4 person committees, fast replies, few approvals
    "late_budget",  # budgets only become available late in the quarter
    "many_unviable",  # a larger share of deals cannot close; disqualifying early pays
)


@dataclass(frozen=True, slots=True)
class Pain:
    id: str
    label: str  # how the buyer describes it, e.g. "migration risk"
    keywords: tuple[str, ...]  # words that reveal it in research and that a relevant message references
    headlines: tuple[str, ...]  # news templates with {company}; researching the account surfaces them


@dataclass(frozen=True, slots=True)
class TemplateSpec:
    name: str
    description: str
    mechanisms: tuple[str, ...]
    # numeric overrides of the family defaults (e.g. {"nonviable_rate": 0.35}); mechanisms do the rest
    params: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FamilySpec:
    name: str
    description: str
    industries: tuple[str, ...]
    regions: tuple[str, ...]
    product_lines: tuple[str, ...]
    stacks: tuple[str, ...]
    pains: tuple[Pain, ...]
    # public titles per role; the generator sometimes gives a role a title from another role
    titles: Mapping[str, tuple[str, ...]]
    company_words: tuple[str, ...]  # parts for synthetic company names
    employees: tuple[int, int]
    deal_size_k: tuple[float, float]  # true deal value range, in $k
    committee_size: tuple[int, int]
    approval_rates: Mapping[str, float]  # probability each approval is required
    nonviable_rate: float
    competitors: tuple[str, ...]
    competitor_rate: float
    capacity: Mapping[str, float] = field(default_factory=dict)  # weekly hours overriding the defaults
    templates: Mapping[str, TemplateSpec] = field(default_factory=dict)
    _pain_by_id: Mapping[str, Pain] = field(init=False, repr=False, compare=False)  # pains is the source

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pain_by_id", {p.id: p for p in self.pains})  # looked up on many steps

    def pain(self, pain_id: str) -> Pain:
        return self._pain_by_id[pain_id]
