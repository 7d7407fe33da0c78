"""The territory's business calendar: time is a float of *business hours* since the quarter started.

8-hour days and 5-day weeks, so "wait until Monday" and weekly capacity are arithmetic, and weekends simply
do not exist on the clock. The engine's clock (``core.clock``) only orders happenings; the calendar is ours.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

HOURS_PER_DAY = 8.0
DAYS_PER_WEEK = 5
HOURS_PER_WEEK = HOURS_PER_DAY * DAYS_PER_WEEK
START_DATE = dt.date(2027, 1, 4)  # a Monday; every territory starts its quarter here
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def business_days(calendar_days: int) -> int:
    """Business days in a span of calendar days that starts on a Monday."""
    weeks, rest = divmod(calendar_days, 7)
    return weeks * DAYS_PER_WEEK + min(rest, DAYS_PER_WEEK)


def day_of(t: float) -> int:
    return int(t // HOURS_PER_DAY)


def week_of(t: float) -> int:
    return int(t // HOURS_PER_WEEK)


def start_of_day(day: int) -> float:
    return day * HOURS_PER_DAY


def start_of_week(week: int) -> float:
    return week * HOURS_PER_WEEK


def date_of(t: float) -> dt.date:
    weeks, weekday = divmod(day_of(t), DAYS_PER_WEEK)
    return START_DATE + dt.timedelta(days=weeks * 7 + weekday)


_CLOCK = tuple(f"{9 + m // 60:02d}:{m % 60:02d}" for m in range(int(HOURS_PER_DAY * 60) + 1))  # minute of day -> text


@lru_cache(maxsize=1024)
def _day_label(day: int) -> str:
    return f"{WEEKDAYS[day % DAYS_PER_WEEK]} {date_of(day * HOURS_PER_DAY).isoformat()}"


@lru_cache(maxsize=4096)  # a step stamps its clock, its inbox items and a meeting's start (asked again per answer)
def stamp(t: float) -> str:
    """Human-readable simulated time, e.g. ``Tue 2027-01-05 13:30`` (days start at 09:00).

    >>> stamp(9.5)
    'Tue 2027-01-05 10:30'
    """
    return f"{_day_label(int(t // HOURS_PER_DAY))} {_CLOCK[round((t % HOURS_PER_DAY) * 60)]}"
