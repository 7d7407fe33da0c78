"""The computer-use guide's screenshots (``docs/computer-use/*.png``), made by the environment itself: the same
pages an agent sees, for one fixed task instance, each shrunk and reduced to a palette so the repository stays
small. Rendering is deterministic, so a test checks that the committed images are what this makes.

    python -m salesgym.envs.workflows_ui.docs            # writes docs/computer-use/*.png
    python -m salesgym.envs.workflows_ui.docs --check    # exit 1 if an image is missing or differs
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
from pathlib import Path

from salesgym.envs.workflows.apps.written_ids import keyed
from salesgym.webapps.origins import TEST_DOMAIN

TEMPLATE, SEED = "new-exec-full-cycle", 1
OUT = Path("docs") / "computer-use"
WIDTH = 960  # the 1280-pixel viewport, shrunk
# (file, look, address): one page of each app, the task desk, a form with a refusal's look, two other looks
SHOTS = keyed((
    ("task-desk", "default", f"http://task.{TEST_DOMAIN}/"),
    ("crm-contacts", "default", f"http://crm.{TEST_DOMAIN}/contacts"),
    ("crm-contact", "default", f"http://crm.{TEST_DOMAIN}/contacts/101"),
    ("crm-board", "default", f"http://crm.{TEST_DOMAIN}/deals/board"),
    ("sequencer-enrol", "default", f"http://sequencer.{TEST_DOMAIN}/sequences/3/add"),
    ("scheduler-slots", "default", f"http://scheduler.{TEST_DOMAIN}/event-types/ET0001"),
    ("prospecting-leads", "default", f"http://prospecting.{TEST_DOMAIN}/leads?seniority=VP&seniority=CXO"),
    ("prospecting-inmail", "default", f"http://prospecting.{TEST_DOMAIN}/leads/L0001/inmail"),
    ("crm-contacts-dark", "dark", f"http://crm.{TEST_DOMAIN}/contacts"),
    ("crm-contacts-rearranged", "rearranged", f"http://crm.{TEST_DOMAIN}/contacts"),
), SEED)  # records by their place in their tables (written_ids), the instance's ids


def shrink(png: bytes) -> bytes:
    """The screenshot at ``WIDTH`` pixels wide, as a 64-color palette PNG (deterministic)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    height = round(image.height * WIDTH / image.width)
    small = image.resize((WIDTH, height), Image.Resampling.LANCZOS).quantize(colors=64, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue()


def shots() -> dict[str, bytes]:
    from salesgym.envs.workflows_ui.env import WorkflowsUIEnv

    out: dict[str, bytes] = {}
    envs: dict[str, WorkflowsUIEnv] = {}
    for name, look, url in SHOTS:
        if look not in envs:
            envs[look] = WorkflowsUIEnv(template=TEMPLATE, variant=look)
            envs[look].reset(seed=SEED)
        obs = envs[look].step({"tool": "goto", "args": {"url": url}})[0]
        out[name] = shrink(base64.b64decode(obs["data"]["screenshot"]))
    for env in envs.values():
        env.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = parser.parse_args(argv)
    stale = []
    for name, png in shots().items():
        path = args.out / f"{name}.png"
        if args.check:
            if not path.is_file() or path.read_bytes() != png:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        print(f"wrote {path} ({len(png) // 1024} KiB)")
    if stale:
        print("stale or missing (run python -m salesgym.envs.workflows_ui.docs): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
