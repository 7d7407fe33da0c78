"""Behaviour of the scenario-family catalogue: every family and template is well-formed data."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from itertools import combinations

import pytest

from salesgym.envs.territory.catalog import APPROVALS, MECHANISMS, RESOURCES, ROLES, FamilySpec, TemplateSpec
from salesgym.envs.territory.families import FAMILIES, get_family, template_of
from salesgym.envs.territory.families.names import FIRST_NAMES, LAST_NAMES

EXPECTED_FAMILIES = ("midmarket_saas", "enterprise_security", "healthcare", "public_sector")
FAMILY_LIST: list[FamilySpec] = [FAMILIES[name] for name in EXPECTED_FAMILIES]
FLOAT_FIELDS: frozenset[str] = frozenset(f.name for f in dataclasses.fields(FamilySpec) if f.type in ("float", float))
RATE_PARAMS: frozenset[str] = frozenset({"nonviable_rate", "competitor_rate"})
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _family_id(family: FamilySpec) -> str:
    return family.name


per_family = pytest.mark.parametrize("family", FAMILY_LIST, ids=_family_id)


# --- registry ---------------------------------------------------------------------------------------------


def test_registry_has_the_four_families_keyed_by_name() -> None:
    assert set(FAMILIES) == set(EXPECTED_FAMILIES)
    for key, family in FAMILIES.items():
        assert isinstance(family, FamilySpec)
        assert family.name == key


@pytest.mark.parametrize("name", EXPECTED_FAMILIES)
def test_get_family_returns_the_registered_family(name: str) -> None:
    assert get_family(name) is FAMILIES[name]


def test_get_family_unknown_name_raises_key_error_listing_valid_families() -> None:
    with pytest.raises(KeyError) as excinfo:
        get_family("no_such_family")
    message = str(excinfo.value)
    assert "no_such_family" in message
    for name in EXPECTED_FAMILIES:
        assert name in message


@per_family
def test_template_of_returns_templates_and_names_valid_ones_on_error(family: FamilySpec) -> None:
    for name, template in family.templates.items():
        assert template_of(family, name) is template
    with pytest.raises(KeyError) as excinfo:
        template_of(family, "no_such_template")
    message = str(excinfo.value)
    assert "no_such_template" in message
    assert family.name in message
    for name in family.templates:
        assert name in message


# --- templates --------------------------------------------------------------------------------------------


@per_family
def test_family_has_at_least_three_well_formed_templates(family: FamilySpec) -> None:
    assert len(family.templates) >= 3
    for key, template in family.templates.items():
        assert isinstance(template, TemplateSpec)
        assert template.name == key, "templates must be keyed by their own name (unique within the family)"
        assert SNAKE.match(template.name)
        assert template.description.strip()
        assert 1 <= len(template.mechanisms) <= 2, "every template switches on one or two mechanisms"
        assert len(set(template.mechanisms)) == len(template.mechanisms)
        for mechanism in template.mechanisms:
            assert mechanism in MECHANISMS, f"{family.name}/{template.name}: unknown mechanism {mechanism!r}"


@per_family
def test_family_has_a_standard_template_with_one_mild_mechanism(family: FamilySpec) -> None:
    assert "standard" in family.templates
    assert family.templates["standard"].mechanisms == ("late_budget",)


@per_family
def test_template_params_override_numeric_family_fields_with_sane_values(family: FamilySpec) -> None:
    assert {"nonviable_rate", "competitor_rate"} <= FLOAT_FIELDS
    for template in family.templates.values():
        for key, value in template.params.items():
            assert key in FLOAT_FIELDS or key == "deal_scale", f"{template.name}: bad param {key!r}"
            assert isinstance(value, float)
            if key in RATE_PARAMS:
                assert 0.0 <= value <= 1.0
            if key == "deal_scale":
                assert 0.0 < value <= 5.0


def test_every_mechanism_is_used_somewhere_in_the_catalogue() -> None:
    used = {m for family in FAMILY_LIST for template in family.templates.values() for m in template.mechanisms}
    assert used == set(MECHANISMS)


@per_family
def test_every_family_has_a_template_name_no_other_family_has(family: FamilySpec) -> None:
    others = {name for other in FAMILY_LIST if other is not family for name in other.templates}
    assert set(family.templates) - others


def test_some_template_name_and_mechanism_mix_exists_in_only_one_family() -> None:
    mixes = Counter(
        (template.name, template.mechanisms) for family in FAMILY_LIST for template in family.templates.values()
    )
    assert any(count == 1 for count in mixes.values())
    mechanism_sets = Counter(
        frozenset(template.mechanisms) for family in FAMILY_LIST for template in family.templates.values()
    )
    assert any(count == 1 for count in mechanism_sets.values()), "some mechanism mix should be family-specific"


# --- pains and keywords -----------------------------------------------------------------------------------


@per_family
def test_family_has_at_least_eight_well_formed_pains(family: FamilySpec) -> None:
    assert len(family.pains) >= 8
    ids = [pain.id for pain in family.pains]
    assert len(ids) == len(set(ids)), "pain ids must be unique within a family"
    for pain in family.pains:
        assert SNAKE.match(pain.id)
        assert pain.label.strip()
        assert family.pain(pain.id) is pain
        assert len(pain.keywords) >= 2
        assert 1 <= len(pain.headlines) <= 3
        assert any("{company}" in headline for headline in pain.headlines)


@per_family
def test_keywords_are_lowercase_and_trimmed(family: FamilySpec) -> None:
    for pain in family.pains:
        for keyword in pain.keywords:
            assert keyword == keyword.lower(), f"{pain.id}: keyword {keyword!r} is not lowercase"
            assert keyword == keyword.strip() and "  " not in keyword
            assert len(keyword) >= 4


@per_family
def test_no_keyword_belongs_to_two_pains(family: FamilySpec) -> None:
    owner: dict[str, str] = {}
    for pain in family.pains:
        for keyword in pain.keywords:
            assert keyword not in owner or owner[keyword] == pain.id, (
                f"keyword {keyword!r} belongs to both {owner[keyword]!r} and {pain.id!r}"
            )
            owner[keyword] = pain.id
        assert len(set(pain.keywords)) == len(pain.keywords)


@per_family
def test_no_keyword_is_a_substring_of_another(family: FamilySpec) -> None:
    keywords = [keyword for pain in family.pains for keyword in pain.keywords]
    for a, b in combinations(keywords, 2):
        assert a not in b and b not in a, f"ambiguous keywords {a!r} and {b!r}"


@per_family
def test_headlines_format_and_reveal_only_their_own_pain(family: FamilySpec) -> None:
    for pain in family.pains:
        other_keywords = [k for other in family.pains if other is not pain for k in other.keywords]
        for headline in pain.headlines:
            assert "{company}" in headline
            text = headline.format(company="Acme Test Co").lower()
            assert "{" not in text and "}" not in text
            assert any(keyword in text for keyword in pain.keywords), (
                f"{pain.id}: headline {headline!r} contains none of its keywords"
            )
            leaked = [k for k in other_keywords if k in text]
            assert not leaked, f"{pain.id}: headline {headline!r} also matches other pains' keywords {leaked}"


@per_family
def test_every_keyword_is_reachable_through_a_message(family: FamilySpec) -> None:
    # A message that quotes a keyword must be attributed to exactly one pain (case-insensitive substring).
    for pain in family.pains:
        for keyword in pain.keywords:
            message = f"Saw the note about {keyword.upper()} and wanted to share how peers handled it."
            matched = {p.id for p in family.pains for k in p.keywords if k in message.lower()}
            assert matched == {pain.id}


# --- people, companies, competitors -----------------------------------------------------------------------


@per_family
def test_titles_exist_for_every_role(family: FamilySpec) -> None:
    assert set(family.titles) == set(ROLES)
    for role in ROLES:
        titles = family.titles[role]
        assert 2 <= len(titles) <= 5, f"{role}: expected 2-5 titles"
        assert all(title.strip() for title in titles)
        assert len(set(titles)) == len(titles)


@per_family
def test_company_words_and_competitors(family: FamilySpec) -> None:
    assert len(family.company_words) >= 30
    assert len(set(family.company_words)) == len(family.company_words)
    for word in family.company_words:
        assert word[:1].isupper() and word.isalpha(), f"company word {word!r} should be one capitalised word"
    assert 3 <= len(family.competitors) <= 5
    assert len(set(family.competitors)) == len(family.competitors)
    assert not set(family.competitors) & set(family.company_words)


@per_family
def test_descriptive_fields_are_non_empty_and_unique(family: FamilySpec) -> None:
    assert family.description.strip()
    for values in (family.industries, family.regions, family.product_lines, family.stacks):
        assert len(values) >= 3
        assert len(set(values)) == len(values)
        assert all(value.strip() for value in values)


def test_stakeholder_name_lists() -> None:
    for names in (FIRST_NAMES, LAST_NAMES):
        assert len(names) >= 60
        assert len(set(names)) == len(names)
        assert all(name.strip() == name and name for name in names)


# --- numbers ----------------------------------------------------------------------------------------------


@per_family
def test_ranges_and_rates_are_sane(family: FamilySpec) -> None:
    lo_emp, hi_emp = family.employees
    assert 0 < lo_emp <= hi_emp
    lo_deal, hi_deal = family.deal_size_k
    assert 0 < lo_deal <= hi_deal
    lo_com, hi_com = family.committee_size
    assert 3 <= lo_com <= hi_com <= 9
    assert set(family.approval_rates) == set(APPROVALS)
    for rate in (*family.approval_rates.values(), family.nonviable_rate, family.competitor_rate):
        assert 0.0 <= rate <= 1.0
    for resource, hours in family.capacity.items():
        assert resource in RESOURCES
        assert 0 < hours <= 60


def test_families_differ_in_market() -> None:
    mm = get_family("midmarket_saas")
    sec = get_family("enterprise_security")
    hc = get_family("healthcare")
    ps = get_family("public_sector")
    assert mm.deal_size_k[1] < sec.deal_size_k[1]
    assert mm.committee_size[1] < sec.committee_size[1]
    for family in (sec, hc):
        assert family.approval_rates["security"] >= 0.85 and family.approval_rates["legal"] >= 0.85
    assert mm.approval_rates["security"] < 0.5
    assert ps.approval_rates["procurement"] == max(f.approval_rates["procurement"] for f in FAMILY_LIST)
    assert ps.approval_rates["procurement"] >= 0.9
    assert ps.nonviable_rate == max(f.nonviable_rate for f in FAMILY_LIST)
    assert len({f.deal_size_k for f in FAMILY_LIST}) == len(FAMILY_LIST)
