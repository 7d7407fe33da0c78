"""What a failed comparison of two steps says: the path to the first difference and both sides, cut short."""

from __future__ import annotations

from salesgym.testing.conformance import first_difference


def test_the_path_of_the_first_difference_is_named_with_both_sides() -> None:
    a = ({"text": "x", "data": {"rows": [1, 2, 3]}}, 0.0, False)
    b = ({"text": "x", "data": {"rows": [1, 2, 4]}}, 0.0, False)
    assert first_difference(a, b) == "step[0]['data']['rows'][2]: 3 != 4"


def test_a_key_on_one_side_and_lists_of_other_lengths_are_said_as_such() -> None:
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "step['b'] is on one side only"
    assert first_difference([1, 2], [1, 2, 3]) == "step has 2 items on one side, 3 on the other"


def test_long_values_are_cut_short() -> None:
    said = first_difference({"png": b"\x00" * 500}, {"png": b"\x01" * 500})
    assert said.startswith("step['png']: b'\\x00") and "characters)" in said and len(said) < 420
