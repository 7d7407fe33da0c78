"""The business calendar and the scheduled-event queue."""

from __future__ import annotations

import datetime as dt

import pytest

from salesgym.core.clock import Scheduled, Scheduler
from salesgym.envs.territory.calendar import (
    HOURS_PER_DAY,
    HOURS_PER_WEEK,
    START_DATE,
    business_days,
    date_of,
    day_of,
    stamp,
    start_of_day,
    start_of_week,
    week_of,
)


@pytest.mark.parametrize(("calendar", "business"), [(0, 0), (1, 1), (5, 5), (6, 5), (7, 5), (8, 6), (14, 10),
                                                   (30, 22), (90, 65), (180, 130)])
def test_business_days_in_calendar_spans_from_a_monday(calendar: int, business: int) -> None:
    assert business_days(calendar) == business


def test_day_and_week_arithmetic() -> None:
    assert START_DATE.weekday() == 0
    assert day_of(0.0) == 0 and day_of(7.99) == 0 and day_of(8.0) == 1
    assert week_of(HOURS_PER_WEEK - 0.01) == 0 and week_of(HOURS_PER_WEEK) == 1
    assert start_of_day(3) == 3 * HOURS_PER_DAY and start_of_week(2) == 2 * HOURS_PER_WEEK
    for t in (0.0, 13.25, 41.0, 399.9):
        assert start_of_day(day_of(t)) <= t < start_of_day(day_of(t) + 1)


def test_dates_skip_weekends() -> None:
    assert date_of(0.0) == dt.date(2027, 1, 4)
    assert date_of(4 * HOURS_PER_DAY) == dt.date(2027, 1, 8)  # Friday
    assert date_of(5 * HOURS_PER_DAY) == dt.date(2027, 1, 11)  # next Monday
    for day in range(60):
        assert date_of(start_of_day(day)).weekday() < 5


def test_stamp_is_readable() -> None:
    assert stamp(0.0) == "Mon 2027-01-04 09:00"
    assert stamp(HOURS_PER_DAY + 4.5) == "Tue 2027-01-05 13:30"
    assert stamp(5 * HOURS_PER_DAY + 7.75) == "Mon 2027-01-11 16:45"


def _item(due: float, item_id: int) -> Scheduled:
    return Scheduled(due, item_id, "reply", {"n": item_id})


def test_scheduler_pops_in_time_then_id_order() -> None:
    q = Scheduler()
    for due, item_id in [(5.0, 3), (1.0, 9), (5.0, 2), (0.5, 7)]:
        q.push(_item(due, item_id))
    assert len(q) == 4
    assert [(i.due, i.item_id) for i in q.pending()] == [(0.5, 7), (1.0, 9), (5.0, 2), (5.0, 3)]
    order = []
    while (head := q.peek()) is not None:
        order.append(q.pop(head.item_id).item_id)
    assert order == [7, 9, 2, 3]


def test_scheduler_refuses_to_pop_an_item_that_is_not_due_next() -> None:
    q = Scheduler()
    q.push(_item(1.0, 1))
    q.push(_item(2.0, 2))
    with pytest.raises(ValueError, match="not due next"):
        q.pop(2)


def test_scheduler_fork_is_independent() -> None:
    q = Scheduler()
    q.push(_item(1.0, 1))
    twin = q.fork()
    twin.push(_item(0.5, 2))
    q.pop(1)
    assert len(q) == 0 and [i.item_id for i in twin.pending()] == [2, 1]
