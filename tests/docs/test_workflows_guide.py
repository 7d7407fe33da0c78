"""docs/workflows.md: the worked example of a team's own workflow is real: the three files it shows make a template
pack; in a fresh interpreter the pack loads, the reference passes, doing nothing fails, and the red team finds
nothing on it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "workflows.md"


def _files(text: str) -> dict[str, str]:
    """The guide's files, by the path its first line names (``// my-pack/...`` or ``# my-pack/...``)."""
    found = re.findall(r"```(?:json|python)\n(?://|#) (my-pack/\S+)\n(.*?)```", text, re.S)
    return {path: body for path, body in found}


def test_the_guides_pack_loads_passes_its_reference_and_resists_the_red_team(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    files = _files(text)
    usage = re.search(r"and print it\)\. Then:\n\n```python\n(.*?)```", text, re.S)
    assert set(files) == {"my-pack/pack.json", "my-pack/fixtures.py", "my-pack/templates/inbound.json"} and usage, (
        "docs/workflows.md lost its worked example")
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body, encoding="utf-8")
    script = (usage.group(1) +
              "from salesgym.agents.workflows.sweep import sweep\n"
              "assert sweep(['acme-student-lead'], [1, 2, 3], pack='my-pack') == []\n"
              "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
