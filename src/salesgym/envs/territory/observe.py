"""The agent's observation: compact text for a model and the same public content as a dict for code.

Built only from public views (portfolio rows, the seller's own calendar and inbox, capacity left, the last
tool result). The text says what changed since the last step, plus alerts and a one-line portfolio
summary, so it stays small at 100 opportunities; the full table is one ``view_opportunity`` call away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from salesgym.core.events import Event
from salesgym.core.observation_text import episode_line, result_line
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import HOURS_PER_DAY, INBOX_FIELDS, MILESTONES, RESOURCES, day_of, stamp, week_of
from salesgym.envs.territory.state import BOOKING_LIVE_HOURS, MEETING_LIVE_HOURS, TerritoryState

COLUMNS = ("id", "account", "milestone", "crm_stage", "value_low_k", "value_high_k", "target", "last_activity_day")
MAX_NEW_LINES = 12
ALERT_WINDOW_HOURS = 3 * HOURS_PER_DAY  # every alert is about an item that expires within this
MAX_RESULT_CHARS = 1500


STAGE_ORDER = {name: i for i, name in enumerate((*MILESTONES, "Disqualified"))}


def _stage_order(item: tuple[str, int]) -> int:
    return STAGE_ORDER.get(item[0], len(STAGE_ORDER))


# Capacity figures and pipeline counts take few distinct values in an episode, so their text is
# remembered rather than formatted every step (float formatting is among a step's dearest parts).
@lru_cache(maxsize=8192)
def _capacity_item(resource: str, left: float) -> str:
    return f"{resource} {left:g}"


@lru_cache(maxsize=8192)
def _hours_left(capacity: float, used: float) -> float:
    # "+ 0.0" turns the -0.0 an overdrawn week can round to into 0.0: a memo treats 0.0 and -0.0 (and 40 and
    # 40.0) as one key, so every value it can return must read the same whichever came first
    return float(round(capacity - used, 2)) + 0.0


@lru_cache(maxsize=256)
def _week_keys(week: int) -> tuple[tuple[str, int], ...]:
    return tuple((r, week) for r in RESOURCES)


@lru_cache(maxsize=4096)
def _row_text(r: tuple[Any, ...]) -> str:  # rows are immutable tuples and most do not change between listings
    return f"{r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:g}-{r[5]:g} | {r[6]}"


@lru_cache(maxsize=1024)
def _hours_text(hours: float) -> str:
    return f"{hours:g}h"


@lru_cache(maxsize=4096)
def _pipeline_text(counts: tuple[tuple[str, int], ...]) -> str:
    return "Pipeline: " + ", ".join(f"{k} {v}" for k, v in sorted(counts, key=_stage_order))


def portfolio(state: TerritoryState) -> dict[str, Any]:
    rows = state.rows_view
    if rows is None:  # rebuilt only after a row changed: most steps change none
        rows = state.rows_view = tuple(state.rows.values())
    return {"columns": COLUMNS, "rows": rows}


_NO_FIELDS = dict.fromkeys(INBOX_FIELDS)


def _inbox(events: Sequence[Event]) -> list[dict[str, Any]]:
    """New inbox items, each with the same typed keys (``contract.INBOX_FIELDS``, None where not applicable)."""
    items = []
    for e in events:
        if e.kind == "inbox_received":
            p = e.payload
            item = {
                **_NO_FIELDS,
                "time": stamp(e.time),
                "opportunity_id": p["opportunity_id"],
                "from": p["from"],
                "kind": p["kind"],
                "text": p["text"],
            }
            for k in _NO_FIELDS.keys() & p.keys():  # the typed fields this item has (a few of INBOX_FIELDS)
                item[k] = p[k]
            items.append(item)
        elif e.kind == "milestone_advanced":
            items.append(
                {
                    **_NO_FIELDS,
                    "time": stamp(e.time),
                    "opportunity_id": e.payload["opportunity_id"],
                    "from": "verifier",
                    "kind": "milestone",
                    "text": f"verified milestone -> {e.payload['name']}",
                    "decision": "advanced",
                    "milestone": e.payload["name"],
                }
            )
    return items


def _alerts(s: TerritoryState, now: float, seller_left: float) -> list[str]:
    alerts = []
    if seller_left <= 0:
        alerts.append("seller hours for this week are used up: only wait is possible until Monday")
    # every alert is about an open item that stops mattering within the window (as the expiry heap has it); the
    # open indexes hold the items' records, in the order live_meetings and live_bookings give them
    window_end = now + ALERT_WINDOW_HOURS
    today = day_of(now)
    for m in s.open_meetings.values():
        until = m.start + MEETING_LIVE_HOURS
        if until >= window_end or until <= now or m.discovery_done or not m.accepted:  # lapsed, held or unattended
            continue
        if m.start <= now:  # live meetings started less than a day ago
            alerts.append(f"meeting {m.id} ({m.opportunity_id}) is on now: run_discovery")
        elif day_of(m.start) == today + 1:
            alerts.append(f"meeting {m.id} ({m.opportunity_id}) tomorrow")
    lapse_soon = now + HOURS_PER_DAY - BOOKING_LIVE_HOURS  # bookings that started before this lapse within a day
    for b in s.open_bookings.values():
        until = b.start + BOOKING_LIVE_HOURS
        if until < window_end and until > now and b.start <= lapse_soon:
            alerts.append(f"booking {b.id} ({b.resource}, {b.opportunity_id}) lapses within a day")
    return alerts[:8]


def observe(ctx: Ctx, result: Mapping[str, Any] | None, new: Sequence[Event]) -> dict[str, Any]:
    s, w = ctx.state, ctx.world
    now = s.now
    week, day = week_of(now), day_of(now)
    usage, cap = s.usage, w.capacity
    used = usage.values_of(_week_keys(week), 0.0)  # one call for the five reads
    capacity = {r: _hours_left(cap[r], u) for r, u in zip(RESOURCES, used, strict=True)}
    counts = {k: v for k, v in s.row_counts.items() if v}
    inbox = _inbox(new)
    alerts = _alerts(s, now, capacity["seller"])
    last = result
    data = {
        "time": {
            "now_hours": round(now, 2),
            "stamp": stamp(now),
            "day": day,
            "week": week,
            "days_left": max(0, day_of(w.horizon) - day),
        },
        "capacity_left": capacity,
        "territory": w.facts,  # weekly capacity, lead times, discount authority, horizon: fixed per world
        "milestone_counts": counts,
        "portfolio": portfolio(s),
        "inbox": inbox,
        "alerts": alerts,
        "last_result": last,
        "episode": {"terminated": s.terminated, "truncated": s.truncated, "invalid_actions": s.invalid_actions},
    }
    return {"text": render_text(data), "data": data}


def render_text(data: dict[str, Any]) -> str:
    t = data["time"]
    lines = [
        f"{t['stamp']} | day {t['day']}, {t['days_left']} business days left | hours left this week: "
        + " ".join(map(_capacity_item, data["capacity_left"].keys(), data["capacity_left"].values())),
        _pipeline_text(tuple(data["milestone_counts"].items())),
    ]
    inbox = data["inbox"]
    if inbox:
        lines.append(f"New ({len(inbox)}):")
        lines += [f"- {i['time'][4:]} {i['opportunity_id']} {i['from']}: {i['text']}" for i in inbox[:MAX_NEW_LINES]]
        if len(inbox) > MAX_NEW_LINES:
            lines.append(f"- ... {len(inbox) - MAX_NEW_LINES} more (view_opportunity for details)")
    if data["alerts"]:
        lines.append("Alerts: " + "; ".join(data["alerts"]))
    last = data["last_result"]
    if last is not None and "portfolio" in last["output"]:
        lines.append(
            f"Last: ok ({last['time_cost']:g}h) portfolio (id | account | milestone | crm | value $k | target):"
        )
        lines += map(_row_text, last["output"]["portfolio"]["rows"])
    elif last is not None:  # a deal's full view is never cut
        lines.append(result_line(last, MAX_RESULT_CHARS, _hours_text(last["time_cost"]),
                                 whole="opportunity" in last["output"]))
    over = episode_line(data["episode"])
    if over is not None:
        lines.append(over)
    return "\n".join(lines)
