"""Layout: no control spills out of the card that holds it, on one page of each app and the task desk in every
look (the pipeline board's stage selector once overflowed its deal card)."""

from __future__ import annotations

from typing import Any

import pytest

from salesgym.envs.workflows_ui.docs import SEED, SHOTS, TEMPLATE
from salesgym.envs.workflows_ui.env import WorkflowsUIEnv
from salesgym.webapps.variants import VARIANTS

SPILLS = """() => {
  const out = [];
  for (const box of document.querySelectorAll('.dealcard, .column, form.card, .props, .timeline, .week')) {
    const edge = box.getBoundingClientRect();
    for (const el of box.querySelectorAll('input, select, textarea, button, a')) {
      const r = el.getBoundingClientRect();
      if (r.width && (r.right > edge.right + 1 || r.left < edge.left - 1)) out.push(`${el.tagName} ${el.id}`);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("look", sorted(VARIANTS))
def test_no_control_spills_out_of_its_card(look: str) -> None:
    env = WorkflowsUIEnv(template=TEMPLATE, variant=look, screenshot=False)
    env.reset(seed=SEED)
    spilled: dict[str, Any] = {}
    for name, _, url in SHOTS:
        env.step({"tool": "goto", "args": {"url": url}})
        assert env.session is not None
        found = env.session.page.evaluate(SPILLS)
        if found:
            spilled[name] = found
    env.close()
    assert not spilled, spilled
