"""What the computer-use agent sees after each action: a screenshot (PNG), the accessibility tree with element
ids (BrowserGym's marking and text form, so a BrowserGym agent reads it as it always does), the interactive
elements with their boxes (for pixel agents), the URL and the open tabs, plus the task, the clock, what the
requester said and the inbox (the tool path's public observation, without its last tool result).

Everything comes from the page as rendered and from the task's public observation: nothing hidden is read.
"""

from __future__ import annotations

import base64
import functools
import pkgutil
from typing import Any

from salesgym.core.observation_text import episode_line

# interactive elements once BrowserGym has marked them: id, role, label, value, state and box (CSS pixels)
ELEMENTS_JS = """() => {
  const picked = 'a[href], button, input, select, textarea, summary, [draggable="true"], option';
  const out = [];
  for (const e of document.querySelectorAll(picked)) {
    const bid = e.getAttribute('bid');
    if (!bid) continue;
    const r = e.getBoundingClientRect();
    const label = (e.labels && e.labels.length) ? e.labels[0].innerText : (e.getAttribute('aria-label') || '');
    const text = (e.tagName === 'SELECT') ? '' : (e.innerText || '').trim();
    const shown = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 &&
                  r.top < window.innerHeight && r.left < window.innerWidth;
    out.push({bid: bid, tag: e.tagName.toLowerCase(), type: e.getAttribute('type') || '', id: e.id || '',
              name: e.getAttribute('name') || '', label: (label || text).trim().slice(0, 120),
              value: ('value' in e && !['BUTTON', 'OPTION'].includes(e.tagName)) ? String(e.value).slice(0, 200) : '',
              checked: !!e.checked, disabled: !!e.disabled, visible: shown,
              box: [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height)]});
  }
  let focused = document.activeElement;
  focused = (focused && focused !== document.body) ? (focused.getAttribute('bid') || null) : null;
  return {elements: out, focused: focused};
}"""
MAX_AXTREE_CHARS = 60_000
# Chromium's rasteriser, on a loaded machine, now and then paints an anti-aliased edge one level off (seen: 11
# pixels of a card's rounded corner, one level, about once in a thousand steps): two views of the same state are
# the same when their screenshots differ by at most this many levels on at most this many pixels. Any text, shape
# or colour the page shows differs by far more (a letter is tens of pixels by a hundred levels).
RASTER_NOISE_LEVELS, RASTER_NOISE_PIXELS = 2, 256
IGNORED_ROLES = ["LineBreak", "InlineTextBox"]  # Chromium lists every line box; BrowserGym's tree text skips them


@functools.cache
def mark_script() -> str:
    """BrowserGym's marking script, polling every 4 ms instead of 40 for the visibility observer's first callbacks
    (they come with the next frame): the same marks, about 35 ms sooner per observation. Unchanged if a BrowserGym
    version words its poll differently."""
    script = (pkgutil.get_data("browsergym.core", "javascript/frame_mark_elements.js") or b"").decode("utf-8")
    return script.replace("interval=40)", "interval=4)")


def mark(page: Any) -> None:
    """Give every element its BrowserGym id, as ``browsergym.core.observation._pre_extract`` does; a page with
    frames (the apps have none) goes through BrowserGym's own routine, which marks frame by frame."""
    from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE
    from browsergym.core.observation import _pre_extract

    if page.main_frame.child_frames:
        _pre_extract(page, tags_to_mark="standard_html", lenient=True)
    else:
        page.main_frame.evaluate(mark_script(), ["", BROWSERGYM_ID_ATTRIBUTE, "standard_html"])


def axtree(cdp: Any) -> dict[str, Any]:
    """The page's accessibility tree with BrowserGym's element ids, as BrowserGym extracts it (the apps have no
    frames, so the main frame's tree is the whole tree; one DevTools call on the page's session)."""
    from browsergym.core.observation import extract_data_items_from_aria

    tree: dict[str, Any] = cdp.send("Accessibility.getFullAXTree", {})
    for node in tree["nodes"]:
        items: list[str] = []
        for i, prop in enumerate(node.get("properties", [])):
            if prop["name"] == "roledescription":
                items, rest = extract_data_items_from_aria(prop["value"]["value"])
                prop["value"]["value"] = rest
                if rest == "":
                    del node["properties"][i]
                break
        if "description" in node:
            more, rest = extract_data_items_from_aria(node["description"]["value"])
            node["description"]["value"] = rest
            if rest == "":
                del node["description"]
            items = items or more
        if items:
            node["browsergym_id"] = items[0]
    return tree


def page_view(page: Any, cdp: Any, screenshot: bool = True, with_axtree: bool = True) -> dict[str, Any]:
    """The page as the agent sees it: ``axtree`` (text, with ``[bid]`` ids; empty without ``with_axtree``),
    ``elements``, ``focused`` and a base64 PNG ``screenshot`` (the viewport). Bids are BrowserGym's (its marking
    script)."""
    from browsergym.core.observation import _post_extract
    from browsergym.utils.obs import flatten_axtree_to_str

    mark(page)
    try:
        tree = axtree(cdp) if with_axtree else None
        found = page.evaluate(ELEMENTS_JS)
    finally:
        _post_extract(page)
    text = flatten_axtree_to_str(tree, ignored_roles=IGNORED_ROLES) if tree is not None else ""
    if len(text) > MAX_AXTREE_CHARS:
        text = text[:MAX_AXTREE_CHARS] + "\n... (the tree is cut here; scroll or open a narrower page)"
    view: dict[str, Any] = {"axtree": text, "elements": found["elements"], "focused": found["focused"]}
    if screenshot:
        png = page.screenshot(type="png", animations="disabled", caret="hide", scale="css")
        view["screenshot"] = base64.b64encode(png).decode("ascii")
    return view


def same_screen(png_a: str, png_b: str) -> bool:
    """Two base64 PNG screenshots show the same thing: equal, or equal up to the rasteriser's noise
    (``RASTER_NOISE_LEVELS`` on at most ``RASTER_NOISE_PIXELS`` pixels)."""
    if png_a == png_b:
        return True
    import io

    from PIL import Image, ImageChops

    a, b = (Image.open(io.BytesIO(base64.b64decode(p))).convert("RGB") for p in (png_a, png_b))
    if a.size != b.size:
        return False
    red, green, blue = ImageChops.difference(a, b).split()
    counts = ImageChops.lighter(ImageChops.lighter(red, green), blue).histogram()  # pixels by their worst channel
    return sum(counts[RASTER_NOISE_LEVELS + 1:]) == 0 and sum(counts[1:]) <= RASTER_NOISE_PIXELS


def same_view(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two observations are what the agent would see as the same: every field equal, the screenshots by
    :func:`same_screen`."""
    if a == b:
        return True
    shot_a, shot_b = a.get("data", {}).get("screenshot"), b.get("data", {}).get("screenshot")
    if not isinstance(shot_a, str) or not isinstance(shot_b, str):
        return False
    rest = [{**o, "data": {k: v for k, v in o["data"].items() if k != "screenshot"}} for o in (a, b)]
    return rest[0] == rest[1] and same_screen(shot_a, shot_b)


def render_text(data: dict[str, Any]) -> str:
    """The observation as text: the task line, the clock, the page, what was said, the last error, the tree."""
    task, clock, episode = data["task"], data["clock"], data["episode"]
    lines = [f"{clock['now']} | calls left {clock['calls_left']} | actions left {episode['actions_left']} | "
             f"task: {task['title']}"]  # fmt: skip
    tabs = data["tabs"]
    lines.append("Tabs: " + " | ".join(f"[{t['index']}]{'*' if t['active'] else ''} {t['title']} ({t['url']})"
                                       for t in tabs))  # fmt: skip
    lines.append(f"URL: {data['url']}")
    if data["told"]:
        lines.append("The requester told you: " + "; ".join(f"{k}: {v}" for k, v in data["told"].items()))
    for m in data["chat"]:
        lines.append(f"Chat, {m['role']}: {m['text']}")
    for m in data["inbox"]:
        lines.append(f"Message {m['id']} from {m['from']} at {m['at']}: {m['text']} (reply on the task desk)")
    if data["last_action_error"]:
        lines.append(f"Last action failed: {data['last_action_error']}")
    for call in data["app_calls"]:
        outcome = call["output"].get("error") if call["status"] == "error" else "ok"
        lines.append(f"The page called {call['tool']}: {outcome}")
    over = episode_line(episode)
    if over is not None:
        lines.append(over)
    lines.append("Accessibility tree:")
    lines.append(data["axtree"])
    return "\n".join(lines)
