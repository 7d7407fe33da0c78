"""The observation marks elements with BrowserGym's own script, polling faster for its visibility observer: the
marks (ids, visibility ratios, set-of-marks flags, the ids pushed into ARIA attributes, written values) are the
ones BrowserGym's ``_pre_extract`` gives, on pages of every app."""

from __future__ import annotations

from typing import Any

import pytest

from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.envs.workflows_ui import observe
from salesgym.envs.workflows_ui.env import WorkflowsUIEnv

MARKS_JS = """() => Array.from(document.querySelectorAll('*')).map(e => [e.tagName,
  ...['bid', 'browsergym_visibility_ratio', 'browsergym_set_of_marks', 'aria-roledescription', 'aria-description',
      'value', 'checked'].map(a => e.getAttribute(a))])"""
PAGES = [
    "http://task.salesgym.test/",
    "http://crm.salesgym.test/contacts/101",
    "http://crm.salesgym.test/contacts/101/edit",
    "http://sequencer.salesgym.test/prospects",
    "http://scheduler.salesgym.test/",
    "http://prospecting.salesgym.test/",
]


@pytest.fixture(scope="module")
def env() -> Any:
    e = WorkflowsUIEnv(template="new-exec-full-cycle", screenshot=False, axtree=False)
    e.reset(seed=1)
    yield e
    e.close()


def _marks(env: Any, url: str, marking: Any) -> list[Any]:
    page = env.session.page
    page.goto(keyed(url), wait_until="load")  # a fresh document: marking numbers the elements once per page
    marking(page)
    return list(page.evaluate(MARKS_JS))


@pytest.mark.parametrize("url", PAGES)
def test_the_faster_marking_gives_browsergyms_marks(env: Any, url: str) -> None:
    from browsergym.core.observation import _pre_extract

    theirs = _marks(env, url, lambda page: _pre_extract(page, tags_to_mark="standard_html", lenient=True))
    ours = _marks(env, url, observe.mark)
    assert len(ours) > 20 and any(row[1] is not None for row in ours)  # the page was marked
    assert ours == theirs


def test_the_script_is_browsergyms_with_only_the_poll_changed() -> None:
    import pkgutil

    original = (pkgutil.get_data("browsergym.core", "javascript/frame_mark_elements.js") or b"").decode()
    assert observe.mark_script() != original  # else the speed-up silently went away with a new BrowserGym
    assert observe.mark_script() == original.replace("interval=40)", "interval=4)")
