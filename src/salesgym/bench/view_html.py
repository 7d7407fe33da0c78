"""The episode as one self-contained HTML page: nothing is fetched (its Content-Security-Policy forbids it), every
text is escaped, tool outputs and observations sit in collapsed details, and a filter narrows the turns."""

from __future__ import annotations

import base64
import hashlib
import html as html_lib

from salesgym.bench.view_model import (
    EpisodeView,
    Item,
    ModelTurn,
    Pairs,
    Row,
    TurnView,
    change_text,
    cost_text,
    fold,
    usage_text,
)
from salesgym.bench.view_text import OUTPUT_LIMIT, cut, cut_note, number

PAGE_LIMIT = 6000  # characters of any one text on the page

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:78em;padding:0 1em;color:#1d232a}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #d8dde3}
h4{margin:.4em 0 0;font-size:.9em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dt{font-weight:600}dd{margin:0}
.headline dd{font-weight:600;color:#116329}
ol.trace,ol.inner{list-style:none;padding:0}
ol.trace li{border-top:1px solid #e6e9ed;padding:.35em 0;display:grid;gap:.6em;
grid-template-columns:5em 11em minmax(0,1fr)}
ol.trace li[hidden]{display:none}
.num{text-align:right;color:#57606a}.time{color:#57606a}
.call{font-family:ui-monospace,monospace;font-weight:600;overflow-wrap:anywhere}
.result{color:#57606a;overflow-wrap:anywhere}.error{color:#b3261e;font-weight:600}
.reward{color:#9a6700;font-weight:600}
.item{color:#0a5e8a}.item.evidence{color:#116329}.item.milestone{color:#116329;font-weight:700}
.changes{color:#8250df;font-weight:700}.alert{color:#9a6700}.model{color:#0550ae}.failure{color:#b3261e}
.cut,.when{color:#57606a;font-style:italic}.when{font-size:.85em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0;font:12px/1.4 ui-monospace,monospace;
background:#f6f8fa;padding:.4em}
details>summary{cursor:pointer;color:#57606a}details[open]~.fold-events{display:none}
.controls{display:flex;gap:1.5em;align-items:center;margin:.5em 0}
"""

SCRIPT = """
(() => {
  const filter = document.getElementById("filter-text"), eventful = document.getElementById("eventful-only");
  const shown = document.getElementById("shown");
  const rows = Array.from(document.querySelectorAll("ol.trace > li"));
  const total = rows.reduce((n, r) => n + Number(r.dataset.turns), 0);
  function apply() {
    const needle = filter.value.trim().toLowerCase();
    let n = 0;
    for (const row of rows) {
      const show = (!needle || row.textContent.toLowerCase().includes(needle))
        && (!eventful.checked || row.dataset.eventful === "1");
      row.hidden = !show;
      if (show) n += Number(row.dataset.turns);
    }
    shown.textContent = n + " of " + total + " turns shown";
  }
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("filter")) filter.value = params.get("filter");
  if (params.has("eventful")) eventful.checked = true;
  filter.addEventListener("input", apply);
  eventful.addEventListener("change", apply);
  apply();
})();
"""


def _script_hash(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{_script_hash(SCRIPT)}'; base-uri 'none'; form-action 'none'"
)


def _e(text: str) -> str:
    return html_lib.escape(text, quote=True)


def _page_text(body: str, full: bool, tag: str = "span", cls: str = "") -> str:
    shown, left = (body, 0) if full else cut(body, PAGE_LIMIT)
    attr = f' class="{cls}"' if cls else ""
    note = f'<span class="cut">{_e(cut_note(left))}</span>' if left else ""
    return f"<{tag}{attr}>{_e(shown)}</{tag}>{note}"


def _h_pairs(pairs: Pairs, cls: str = "meta") -> str:
    inner = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in pairs)
    return f'<dl class="{cls}">{inner}</dl>'


def _h_item(it: Item, full: bool) -> str:
    cls = "item milestone" if it.milestone else "item evidence" if it.evidence else "item"
    mark = "★" if it.milestone else "✉"
    tags = f' <span class="tags">[{_e(", ".join(f"{k} {v}" for k, v in it.tags))}]</span>' if it.tags else ""
    where = f" {_e(it.where)}" if it.where else ""
    text = f" {_page_text(it.text, full)}" if it.text else ""
    when = f' <span class="when">{_e(it.time)}</span>' if it.time else ""
    return f'<div class="{cls}">{mark} <b>{_e(it.kind)}</b>{where}{tags}{text}{when}</div>'


def _h_events(row: Row, full: bool) -> str:
    parts = [_h_item(it, full) for it in row.inbox]
    if row.changes:
        parts.append(f'<div class="changes">▲ milestones {_e(change_text(row.changes))}</div>')
    parts.extend(f'<div class="alert">! {_e(a)}</div>' for a in row.alerts)
    return "".join(parts)


def _h_model(m: ModelTurn, full: bool) -> str:
    parts = []
    for msg in m.messages:
        if msg.content:
            parts.append(f'<div class="model">» {_e(msg.role)}: {_page_text(msg.content, full)}</div>')
        parts.extend(f'<div class="model">» {_e(msg.role)} calls {_page_text(c, full)}</div>' for c in msg.calls)
    figures = usage_text(m.requests, m.usage)
    if figures:
        parts.append(f'<div class="model usage">» {_e(figures)}</div>')
    parts.extend(
        f'<div class="failure">✗ <b>{_e(kind)}</b>: {_page_text(detail, full)}</div>' for kind, detail in m.failures
    )
    return "".join(parts)


def _h_turn_body(t: TurnView, full: bool) -> str:
    ok = t.status == "ok"
    reward = f' · <span class="reward">reward {t.reward:+.4g}</span>' if t.reward else ""
    output = ""
    if t.output:  # an error in full, a result's start (the whole of it is in the details below)
        short, left = cut(t.output, OUTPUT_LIMIT * 2) if ok else (t.output, 0)
        output = f' · <span class="{"output" if ok else "error"}">{_e(short)}</span>' + ("…" if left else "")
    parts = [
        f'<div class="call">{_page_text(t.call, full)}</div>',
        f'<div class="result"><span class="{"ok" if ok else "error"}">{_e(t.status)}</span>'
        f" · {_e(cost_text(t))}{reward}{output}</div>",
    ]
    if t.model:
        parts.append(_h_model(t.model, full))
    parts.append(_h_events(t, full))
    texts = [(name, body) for name, body in (("output", t.output), ("observation", t.observation)) if body]
    if texts:
        summary = " · ".join(name for name, _ in texts)
        inner = "".join(f"<h4>{name}</h4>{_page_text(body, full, 'pre')}" for name, body in texts)
        parts.append(f"<details><summary>{summary}</summary>{inner}</details>")
    return "".join(parts)


def _h_row(row: Row, full: bool) -> str:
    if isinstance(row, TurnView):
        attrs = f'class="turn" id="turn-{row.number}" data-tool="{_e(row.tool)}" data-turns="1"'
        attrs += f' data-eventful="{int(row.eventful)}" data-status="{_e(row.status)}"'
        cells = f'<span class="num">{row.number}</span><span class="time">{_e(row.time)}</span>'
        return f"<li {attrs}>{cells}<div>{_h_turn_body(row, full)}</div></li>"
    inner = "".join(_h_row(t, full) for t in row.turns)
    hours = number(sum(t.time_cost for t in row.turns))
    until = f" · until {row.turns[-1].time}" if row.turns[-1].time else ""
    summary = f"{row.tool} ×{len(row.turns)} · {hours}h{until}"
    attrs = f'class="fold" data-tool="{_e(row.tool)}" data-turns="{len(row.turns)}" data-eventful="{int(row.eventful)}"'
    cells = f'<span class="num">{_e(row.span)}</span><span class="time">{_e(row.turns[0].time)}</span>'
    usage = f'<div class="model usage">» {_e(row.usage())}</div>' if row.usage() else ""
    body = f'<details><summary class="call">{_e(summary)}</summary><ol class="inner">{inner}</ol></details>{usage}'
    events = f'<div class="fold-events">{_h_events(row, full)}</div>'  # hidden while the fold is open
    return f"<li {attrs}>{cells}<div>{body}{events}</div></li>"


def page(episode: EpisodeView, *, full: bool = False) -> str:
    """One episode as a self-contained HTML page (no external asset; nothing is fetched): the same header, trace,
    end and score as the terminal, folded calls expandable, a text filter and an "only turns where something
    arrived or changed" switch (also set from the address: ``#filter=send_message&eventful``); each turn is an
    anchor (``#turn-40``)."""
    obs, rest = episode.observation, episode.score_rest
    title = f"salesgym episode: {episode.title}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _h_pairs(episode.meta),
        '<section id="score"><h2>Final score</h2>',
        _h_pairs(episode.score_head, "meta headline") if episode.score_head else "<p>no score recorded</p>",
        f"<details><summary>all figures</summary>{_h_pairs(rest)}</details>" if rest else "",
        "</section>",
        '<section id="start"><h2>Start</h2>',
        _h_pairs(episode.start) if episode.start else "",
        f"<details><summary>first observation</summary>{_page_text(obs, full, 'pre')}</details>" if obs else "",
        "</section>",
        f'<section id="trace"><h2>Trace ({_e(episode.trace_note)})</h2>',
        '<div class="controls"><label>filter <input id="filter-text" type="search" placeholder="tool, id or text">'
        '</label><label><input id="eventful-only" type="checkbox"> only turns where something arrived or changed'
        '</label><span id="shown"></span></div>',
        '<ol class="trace">',
        *(_h_row(r, full) for r in fold(episode.turns)),
        "</ol></section>",
        '<section id="end"><h2>End</h2>',
        _h_pairs(episode.end),
        "</section>",
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"
