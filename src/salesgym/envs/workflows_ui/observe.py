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
