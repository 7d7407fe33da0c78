"""`earliest-deadline`: work deals in order of their target quarter, earliest first (then by value).

Deadline-driven selling: this quarter's deals before next quarter's. It runs the standard playbook on the
most urgent deal that has something to do, without capacity planning, economic-buyer warming or
disqualification; it books internal hours as generously as `expected-value` (enough for a buyer's review to
pass at the first attempt where the week has them), so its deals do not wait weeks on a resubmitted review.
"""

from __future__ import annotations

from salesgym.agents.territory.memory import Deal, quarter_end_day
from salesgym.agents.territory.playbook import Style
from salesgym.agents.territory.seller import ScriptedSeller


class EarliestDeadline(ScriptedSeller):
    name = "earliest-deadline"
    style = Style(disqualify=False, warm_economic_buyer=False, follow_up=False, se_hours=10.0, se_hours_least=4.0,
                  review_hours=6.0, review_hours_least=2.0)

    def order(self, deals: list[Deal]) -> list[Deal]:
        return sorted(deals, key=lambda d: (quarter_end_day(d.target) or 10**6, -d.value_mid, d.id))
