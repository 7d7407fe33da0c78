"""The territory's markets are data: one JSON file each, every file in the folder is in the catalogue, and a
file that does not describe a market is refused with one line naming the file and the field."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from salesgym.envs.territory import families
from salesgym.envs.territory.families import FAMILIES, MarketFileError, load_market

FOLDER = resources.files(families.__name__)


def test_every_market_file_is_in_the_catalogue() -> None:
    shipped = sorted(p.name.removesuffix(".json") for p in FOLDER.iterdir() if p.name.endswith(".json"))
    assert shipped == sorted(FAMILIES) and len(shipped) == 4


def test_a_market_is_read_whole_from_its_file() -> None:
    for name, market in FAMILIES.items():
        raw = json.loads(FOLDER.joinpath(f"{name}.json").read_text(encoding="utf-8"))
        assert market.name == name and [t.name for t in market.templates.values()] == [t["name"] for t in
                                                                                       raw["templates"]]  # fmt: skip
        assert market.pains and all(isinstance(p.keywords, tuple) for p in market.pains)
        assert market.employees[0] < market.employees[1] and isinstance(market.deal_size_k[0], float)


def _healthcare(**change: object) -> str:
    raw = json.loads(FOLDER.joinpath("healthcare.json").read_text(encoding="utf-8"))
    raw.update(change)
    return json.dumps(raw)


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not JSON"),
    ("[]", "a JSON object is expected"),
    (_healthcare(margin=0.3), "unknown field(s) margin"),
    (_healthcare(employees="many"), "employees: Input should be a valid tuple"),
    (_healthcare(templates=[{"description": "no name"}]), "each with a name"),
    (_healthcare(pains=[{"id": "x"}]), "pains.0.label: Field required"),
])  # fmt: skip
def test_a_bad_market_file_is_one_line_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(MarketFileError) as err:
        load_market(text, "mine.json")
    assert str(err.value).startswith("mine.json: ") and message in str(err.value) and "\n" not in str(err.value)
