"""docs/workflows.md: the worked example of a team's own workflow is real code. In a fresh interpreter (the
catalogue is process-wide), the module registers its template, the reference passes, doing nothing fails, and
the red team finds nothing on it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "workflows.md"


def _blocks() -> tuple[str, str]:
    text = GUIDE.read_text(encoding="utf-8")
    module = re.search(r"```python\n# my_workflows\.py\n(.*?)```", text, re.S)
    usage = re.search(r"Then, with the module imported \(`import my_workflows`\):\n\n```python\n(.*?)```", text, re.S)
    assert module and usage, "docs/workflows.md lost its worked example"
    return module.group(1), usage.group(1)


def test_the_guides_workflow_registers_passes_its_reference_and_resists_the_red_team(tmp_path: Path) -> None:
    module, usage = _blocks()
    (tmp_path / "my_workflows.py").write_text(module, encoding="utf-8")
    script = ("import my_workflows\n" + usage +
              "from salesgym.agents.workflows.sweep import sweep\n"
              "assert sweep(['acme-student-lead'], [1, 2, 3]) == []\n"
              "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
