"""Every registered environment, and a few scenarios worth their own run, pass the whole conformance kit.

A new family gets all of this by registering its ids; a new scenario is one more ``Case`` line below.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

import salesgym
from salesgym.testing import CHECKS, Case, registered_cases

CASES = (
    *registered_cases(),
    Case("territory-v0", {"n_opportunities": 10, "horizon_days": 30, "family": "healthcare",
                          "template": "budget_freeze"}),
    Case("territory-v0", {"n_opportunities": 4, "horizon_days": 30, "family": "enterprise_security",
                          "template": "big_committee"}),
    Case("territory-v0", {"n_opportunities": 10, "horizon_days": 30, "family": "public_sector",
                          "template": "procurement_gauntlet"}),
    # conversational workflows: a scripted mid-episode message, facts behind conditions, a canned reply
    Case("workflows-v0", {"template": "sched-reschedule-request"}),
    Case("workflows-v0", {"template": "crm-budget-colleague"}),
    Case("workflows-v0", {"template": "outbound-locked-mailbox"}),  # a hidden fact that is a phrase, four apps
)
SLOW = {"determinism_across_processes"}  # one subprocess per case is enough on the registered ids


def _marked(case: Case) -> Any:
    """A case of a family whose episodes need a browser runs with the browser sweep (``-m ui_sweep``), not by
    default: minutes per check (``-m ui_sweep tests/testing/test_conformance.py``; docs/computer-use.md says
    what their whole runs found)."""
    slow = salesgym.family(case.env_id).kit_campaign
    return pytest.param(case, marks=pytest.mark.ui_sweep, id=str(case)) if slow else pytest.param(case, id=str(case))


@pytest.fixture(autouse=True, scope="module")
def _stop_browsers_after_the_module() -> Iterator[None]:
    """The browser family's cases leave this process's Chromium warm; a live Playwright marks an asyncio loop
    running on this thread, which would break a later module's ``anyio.run`` on the same worker."""
    yield
    browser = sys.modules.get("salesgym.envs.workflows_ui.browser")
    if browser is not None:
        browser.stop_browsers()


@pytest.mark.parametrize("case", [_marked(c) for c in CASES])
@pytest.mark.parametrize("check", sorted(CHECKS))
def test_conformance(case: Case, check: str) -> None:
    if check in SLOW and case not in registered_cases():
        pytest.skip("run on the registered ids only")
    CHECKS[check](case)
