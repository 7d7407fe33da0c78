"""ForkMap: a dict whose copy shares storage. It must behave exactly like a dict (and like independent dicts after a
fork) while a fork costs the same whatever its size."""

from __future__ import annotations

import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from salesgym.core.state import ForkMap

KEYS = st.one_of(st.text(max_size=4), st.tuples(st.text(max_size=3), st.text(max_size=3)).map(lambda t: "|".join(t)))
OPS = st.lists(
    st.tuples(st.sampled_from(["set", "add", "del", "fork", "switch"]), KEYS, st.integers()), max_size=200
)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_forkmaps_behave_like_independent_dicts(ops: list[tuple[str, str, int]]) -> None:
    maps: list[ForkMap[str, int]] = [ForkMap()]
    dicts: list[dict[str, int]] = [{}]
    cur = 0
    for op, key, value in ops:
        m, d = maps[cur], dicts[cur]
        if op == "set":
            m[key] = value
            d[key] = value
        elif op == "add":
            m.add(key, value, 5)
            d[key] = d.get(key, 5) + value
        elif op == "del" and key in d:
            del m[key]
            del d[key]
        elif op == "fork":
            maps.append(m.copy())
            dicts.append(dict(d))
        elif op == "switch":
            cur = value % len(maps)
        for mm, dd in zip(maps, dicts, strict=True):  # every map, not only the one written to
            assert len(mm) == len(dd)
            assert dict(mm.items()) == dd
            assert list(mm) == sorted(dd)
            assert all(mm[k] == v and k in mm and mm.get(k) == v for k, v in dd.items())
            assert mm.get("\x00absent", -1) == -1 and "\x00absent" not in mm


def _bytes_of_copy(m: ForkMap[Any, Any]) -> int:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    twin = m.copy()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del twin
    return after - before


def test_a_fork_costs_the_same_at_any_size() -> None:
    small: ForkMap[str, int] = ForkMap({f"k{i}": i for i in range(10)})
    large: ForkMap[str, int] = ForkMap({f"k{i}": i for i in range(20_000)})
    assert _bytes_of_copy(large) <= _bytes_of_copy(small) + 64
    twin = large.copy()
    twin["k1"] = -1  # one write copies one bucket (about 1/32 of the entries), not the map
    shared = sum(a is b for a, b in zip(twin._buckets, large._buckets, strict=True))
    assert shared == ForkMap.BUCKETS - 1
    assert large["k1"] == 1 and twin["k1"] == -1
