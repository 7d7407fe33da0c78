"""The episode page as a person sees it: loaded by a real headless Chromium with no network, its DOM read back
after load, its filter and folds driven from a probe page that holds it in a frame."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from view_fakes import expected_value, hostile, wait_runs

from salesgym.bench import view

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (.ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: no name resolves
         "--enable-logging=stderr", "--v=0",  # console messages (errors, CSP violations) go to stderr
         "--virtual-time-budget=10000"]  # let the page settle (virtual time: nothing here waits on a clock)


class _Tags(HTMLParser):
    """Every start tag of a document with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(dom: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(dom)
    return parser.tags


def _chromium(tmp_path: Path, *args: str) -> tuple[str, list[str]]:
    """(stdout, the console messages) of one headless Chromium run."""
    assert CHROMIUM is not None
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def episode() -> tuple[dict[str, Any], dict[str, Any]]:
    """expected-value's real episode as if a language model had played it, hostile text in its first turn."""
    traj, _ = hostile(expected_value()[0])
    _, score = expected_value()
    return traj, {**score, "note": "</script><b>bold</b>"}


@pytest.fixture
def page(tmp_path: Path, episode: tuple[dict[str, Any], dict[str, Any]]) -> Path:
    return view.write_html(*episode, tmp_path / "episode.html")


def test_page_loads_offline_with_no_console_messages(page: Path, episode: tuple[dict[str, Any], Any]) -> None:
    traj, score = episode
    dom, console = _chromium(page.parent, "--dump-dom", page.as_uri())
    assert console == []  # no script error, no blocked fetch, no CSP violation
    n = len(traj["turns"])
    assert f"{n} of {n} turns shown" in dom  # the page's script ran under its own Content-Security-Policy
    tags = _tags(dom)
    # the turn list: every turn, a fold for each run of waits, in order
    ids = [a["id"] for t, a in tags if t == "li" and (a.get("id") or "").startswith("turn-")]
    assert ids == [f"turn-{i}" for i in range(1, n + 1)]
    folds = [a for t, a in tags if t == "li" and a.get("class") == "fold"]
    runs = wait_runs(traj["turns"])
    assert [int(a["data-turns"] or 0) for a in folds] == [last - first + 1 for first, last in runs]
    # the score: headline figures and the rest
    headline = dom.split('<dl class="meta headline">', 1)[1].split("</dl>", 1)[0]
    assert f"<dt>primary</dt><dd>{view.number(score['primary'])}</dd>" in headline
    assert f"<dt>advances</dt><dd>Engaged {score['advances']['Engaged']}, " in dom
    assert "<dt>why</dt><dd>horizon</dd>" in dom
    assert f"<dt>end</dt><dd>{traj['end']}</dd>" in dom
    # buyer replies and verified milestones
    replies = [i for t in traj["turns"] for i in t["data"]["inbox"] if i["kind"] in ("reply", "milestone")]
    assert replies and all(html.escape(view.clean(i["text"]), quote=False) in dom for i in replies)
    milestones = sum(i["kind"] == "milestone" for i in replies)
    folded = [t for first, last in runs for t in traj["turns"][first - 1 : last]]
    in_folds = sum(i["kind"] == "milestone" for t in folded for i in t["data"]["inbox"])
    assert dom.count('class="item milestone"') == milestones + in_folds  # a fold lists them, and its turns do
    # nothing is fetched: no address outside the page, and a policy that forbids any
    refs = [v for _, a in tags for k, v in a.items() if k in ("src", "href", "action", "srcset", "poster") and v]
    assert refs == []
    csp = next(a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None and "default-src 'none'" in csp


def test_hostile_text_stays_text(page: Path, episode: tuple[dict[str, Any], Any]) -> None:
    traj, _ = episode
    dom, console = _chromium(page.parent, "--dump-dom", page.as_uri())
    assert console == []
    tags = _tags(dom)
    assert [t for t, _ in tags].count("script") == 1 and "img" not in [t for t, _ in tags]
    assert not any(k.startswith("on") for _, a in tags for k in a)  # no event handler attribute got in
    assert "<b>bold</b>" not in dom
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1).startswith("salesgym episode: evil [bold red]")
    assert "&lt;img src=x onerror=" in dom and "&lt;/script&gt;&lt;script&gt;document.title=" in dom
    assert "[bold red]RED[/bold red]" in dom and "\\x1b[2J" in dom and "\x1b" not in dom and "\x00" not in dom
    assert "&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in dom  # the score's hostile value
    assert traj["policy"].startswith("evil")


PROBE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<iframe id="page" src="episode.html" width="1200" height="900"></iframe><pre id="out"></pre>
<script>
window.addEventListener("load", () => {
  const out = document.getElementById("out");
  try {
    const frame = document.getElementById("page"), doc = frame.contentDocument, win = frame.contentWindow;
    const rows = Array.from(doc.querySelectorAll("ol.trace > li"));
    const shown = () => rows.filter(r => win.getComputedStyle(r).display !== "none");
    const label = () => doc.getElementById("shown").textContent;
    const result = {title: doc.title, rows: rows.length, initial: {shown: shown().length, label: label()}};
    const filter = doc.getElementById("filter-text"), eventful = doc.getElementById("eventful-only");
    filter.value = "send_message";
    filter.dispatchEvent(new Event("input"));
    result.filtered = {shown: shown().length, label: label(),
                       all_match: shown().every(r => r.textContent.includes("send_message"))};
    filter.value = "";
    filter.dispatchEvent(new Event("input"));
    eventful.click();
    result.eventful = {shown: shown().length, label: label(),
                       all_eventful: shown().every(r => r.dataset.eventful === "1")};
    eventful.click();
    result.cleared = {shown: shown().length, label: label()};
    const fold = doc.querySelector("li.fold"), inner = fold.querySelector("ol.inner > li");
    const summary = fold.querySelector(".fold-events");
    result.fold = {before: [inner.checkVisibility(), summary.checkVisibility()]};
    fold.querySelector("summary").click();
    result.fold.after = [inner.checkVisibility(), summary.checkVisibility()];
    result.fold.open = fold.querySelector("details").open;
    out.textContent = JSON.stringify(result);
  } catch (e) {
    out.textContent = JSON.stringify({error: String(e)});
  }
});
</script></body></html>
"""


def test_filter_and_folds_work(page: Path, episode: tuple[dict[str, Any], Any]) -> None:
    traj, _ = episode
    probe = page.parent / "probe.html"
    probe.write_text(PROBE, encoding="utf-8")
    dom, console = _chromium(page.parent, "--allow-file-access-from-files", "--dump-dom", probe.as_uri())
    assert console == []
    found = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert found is not None
    result = json.loads(html.unescape(found.group(1)))
    assert "error" not in result, result
    n = len(traj["turns"])
    n_rows = n - sum(last - first for first, last in wait_runs(traj["turns"]))
    assert result["rows"] == n_rows and result["title"].startswith("salesgym episode: evil")
    assert result["initial"] == {"shown": n_rows, "label": f"{n} of {n} turns shown"}
    sends = sum(t["action"]["tool"] == "send_message" for t in traj["turns"])
    assert result["filtered"]["all_match"] and result["filtered"]["shown"] >= sends
    assert result["filtered"]["label"] == f"{result['filtered']['shown']} of {n} turns shown"  # no fold matches
    assert result["eventful"]["all_eventful"] and 0 < result["eventful"]["shown"] < n_rows
    assert result["cleared"] == result["initial"]
    # closed: what arrived during the fold shows; open: its turns show (each with what arrived), the summary hides
    assert result["fold"] == {"before": [False, True], "after": [True, False], "open": True}


def test_filter_from_the_address(page: Path, episode: tuple[dict[str, Any], Any]) -> None:
    traj, _ = episode
    dom, console = _chromium(page.parent, "--dump-dom", page.as_uri() + "#filter=disqualify&eventful")
    assert console == []
    visible = [a for a in _trace_rows(dom) if "hidden" not in a]
    disqualified = {f"turn-{n}" for n, t in enumerate(traj["turns"], 1) if t["action"]["tool"] == "disqualify"}
    assert disqualified and disqualified <= {a.get("id") for a in visible}
    assert all(a["data-eventful"] == "1" for a in visible)
    assert f"{len(visible)} of {len(traj['turns'])} turns shown" in dom


def _trace_rows(dom: str) -> list[dict[str, str | None]]:
    """The attributes of the rows of the trace itself (a fold's turns left out)."""
    trace = dom.split('<ol class="trace">', 1)[1].split("</section>", 1)[0]
    top = re.sub(r'<ol class="inner">.*?</ol>', "", trace, flags=re.S)
    return [a for t, a in _tags(top) if t == "li"]
