"""The computer-use environment's actions, as typed tools (strict JSON Schemas, like every salesgym tool).

Three action sets:

- ``browsergym`` (the default): BrowserGym's high-level actions by element id (``click``, ``fill``,
  ``select_option``, ``press``, ``hover``, ``focus``, ``clear``, ``dblclick``, ``drag_and_drop``, ``scroll``),
  navigation (``goto``, ``go_back``, ``go_forward``), tabs (``new_tab``, ``tab_focus``, ``tab_close``), chat
  (``send_msg_to_user``: a question to the requester, who answers in the chat), ``report_infeasible`` (ends the
  task) and ``noop``, plus its coordinate actions (``mouse_click``, ``mouse_dblclick``, ``mouse_move``,
  ``mouse_down``, ``mouse_up``, ``mouse_drag_and_drop``, ``scroll_at``, ``keyboard_type``, ``keyboard_press``,
  ``keyboard_insert_text``). Same names, arguments and meaning as BrowserGym's ``HighLevelActionSet``, so an
  action string such as ``click('a12')`` is accepted as it is;
- ``bid``: BrowserGym's default subsets only (element ids, navigation, tabs, chat);
- ``computer``: pixels, after the common computer-use tool conventions (``click(x, y, button)``,
  ``double_click``, ``move``, ``drag``, ``scroll(x, y, scroll_x, scroll_y)``, ``type``, ``keypress``,
  ``wait``, ``screenshot``) and ``goto``.

An action runs in the episode's browser page (``Session``); a failure (no element with that id, a URL outside
the apps) is a ``ToolError`` with a short reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, StringConstraints

from salesgym.core.tools import ToolArgs, ToolBox, ToolError, ToolOutcome, ToolSpec, quote
from salesgym.envs.workflows_ui import outputs
from salesgym.webapps.origins import TEST_DOMAIN

Bid = Annotated[str, StringConstraints(min_length=1, max_length=20, pattern=r"^[A-Za-z]*[0-9]+$")]
Text = Annotated[str, StringConstraints(max_length=2000)]
Key = Annotated[str, StringConstraints(min_length=1, max_length=60)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Coord = Annotated[float, Field(ge=0, le=4000)]
Delta = Annotated[float, Field(ge=-5000, le=5000)]
Button = Literal["left", "middle", "right"]
Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]
ELEMENT_TIMEOUT_MS = 3000  # an element that cannot take the action fails within this; a navigation it starts
# is waited for afterwards by the session (``no_wait_after``): a slow page never turns a done click into an error
# choose a select's empty option as a person does (the input and change events fire)
EMPTY_OPTION_JS = """e => {
  const i = e.options ? Array.from(e.options).findIndex(o => o.value === '') : -1;
  if (i < 0 || e.disabled) return false;
  e.selectedIndex = i;
  e.dispatchEvent(new Event('input', {bubbles: true}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
}"""
# the wanted options a <select> has no option for (Playwright matches a value or a label; null: not a select)
MISSING_OPTIONS_JS = """(e, wanted) => {
  if (!e.options) return null;
  const options = Array.from(e.options);
  return wanted.filter(w => !options.some(o => o.value === w || o.label === w));
}"""
ALLOWED_URL = re.compile(rf"^https?://[a-z]+\.{re.escape(TEST_DOMAIN)}(:\d+)?(/[^\s]*)?$|^about:blank$")


class Session(Protocol):
    """What an action may touch: the active page, the context, tabs, and the task's chat."""

    @property
    def page(self) -> Any: ...

    def new_tab(self) -> None: ...

    def focus_tab(self, index: int) -> None: ...

    def close_tab(self) -> None: ...

    def say(self, text: str) -> str: ...

    def give_up(self, reason: str) -> None: ...


Handler = Callable[[Session, Any], ToolOutcome]


def _done(what: str) -> ToolOutcome:
    return ToolOutcome({"done": what}, 0.0)


def _element(s: Session, bid: str) -> Any:
    """The element with this bid (BrowserGym's lookup); the action itself scrolls it into view."""
    from browsergym.core.action.utils import get_elem_by_bid

    try:
        return get_elem_by_bid(s.page, bid, scroll_into_view=False)
    except ValueError:
        raise ToolError(f"no element with bid {quote(bid)} on this page (ids change when the page changes)") from None


def _run(what: str, do: Callable[[], Any]) -> Any:
    """``do()``'s value; a browser error is the action's refusal, in its first line."""
    try:
        return do()
    except ToolError:
        raise
    except Exception as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ToolError(f"{what} failed: {first[:200]}") from None


def _act(what: str, do: Callable[[], Any]) -> ToolOutcome:
    _run(what, do)
    return _done(what)


# --- argument models (the names and defaults of BrowserGym's functions) ------------------------------------------
class NoArgs(ToolArgs):
    pass


class BidArgs(ToolArgs):
    bid: Bid = Field(description="the element's id (the number in brackets in the accessibility tree)")


class ClickArgs(ToolArgs):
    bid: Bid
    button: Button = "left"
    modifiers: list[Modifier] = Field(default_factory=list, max_length=4)


class FillArgs(ToolArgs):
    bid: Bid
    value: Text = Field(description="the text the field holds afterwards")
    enable_autocomplete_menu: bool = False


class SelectArgs(ToolArgs):
    bid: Bid
    options: Annotated[str, StringConstraints(max_length=200)] | list[Annotated[
        str, StringConstraints(max_length=200)]] = Field(description="an option's value or label, or several")


class PressArgs(ToolArgs):
    bid: Bid
    key_comb: Key = Field(description="e.g. Enter, Tab, Control+a")


class DragArgs(ToolArgs):
    from_bid: Bid
    to_bid: Bid


class ScrollArgs(ToolArgs):
    delta_x: Delta
    delta_y: Delta


class GotoArgs(ToolArgs):
    url: Url = Field(description=f"an address on one of the apps (http://<app>.{TEST_DOMAIN}/...)")


class TabArgs(ToolArgs):
    index: int = Field(ge=0, le=20)


class MessageArgs(ToolArgs):
    text: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(
        description="a question for the colleague who asked for the task; the answer arrives in the chat")


class ReasonArgs(ToolArgs):
    reason: Annotated[str, StringConstraints(max_length=1000)]


class WaitArgs(ToolArgs):
    wait_ms: float = Field(0, ge=0, le=3000, description="nothing on the pages changes by itself: 0 is enough")


class XYArgs(ToolArgs):
    x: Coord
    y: Coord


class XYButtonArgs(ToolArgs):
    x: Coord
    y: Coord
    button: Button = "left"


class DragXYArgs(ToolArgs):
    from_x: Coord
    from_y: Coord
    to_x: Coord
    to_y: Coord


class ScrollAtArgs(ToolArgs):
    x: Coord
    y: Coord
    dx: Delta
    dy: Delta


class KeyArgs(ToolArgs):
    key: Key


class TypeArgs(ToolArgs):
    text: Text


class PixelScrollArgs(ToolArgs):
    x: Coord
    y: Coord
    scroll_x: Delta
    scroll_y: Delta


class KeysArgs(ToolArgs):
    keys: list[Key] = Field(min_length=1, max_length=5, description="pressed together, e.g. ['Control', 'a']")


class Point(ToolArgs):
    x: Coord
    y: Coord


class PathArgs(ToolArgs):
    path: list[Point] = Field(min_length=2, max_length=20)


# --- handlers --------------------------------------------------------------------------------------------------
def click(s: Session, a: ClickArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("click", lambda: el.click(button=a.button, modifiers=list(a.modifiers), timeout=ELEMENT_TIMEOUT_MS,
                                          no_wait_after=True))


def dblclick(s: Session, a: ClickArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("dblclick", lambda: el.dblclick(button=a.button, modifiers=list(a.modifiers),
                                                timeout=ELEMENT_TIMEOUT_MS, no_wait_after=True))  # fmt: skip


def fill(s: Session, a: FillArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("fill", lambda: el.fill(a.value, timeout=ELEMENT_TIMEOUT_MS))


def select_option(s: Session, a: SelectArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    if a.options in ("", [""]):  # Playwright reads an empty value (and index 0) as "none": choose it in the page
        chosen = el.evaluate(EMPTY_OPTION_JS)
        if not chosen:
            raise ToolError("select_option: this element has no empty option")
        return _done("select_option")
    wanted = [a.options] if isinstance(a.options, str) else a.options
    missing = _run("select_option", lambda: el.evaluate(MISSING_OPTIONS_JS, wanted))
    if missing:  # refused at once: Playwright would wait for the option to appear until its timeout
        raise ToolError(f"select_option: this element has no option {', '.join(map(quote, missing))}")
    return _act("select_option", lambda: el.select_option(a.options, timeout=ELEMENT_TIMEOUT_MS, no_wait_after=True))


def hover(s: Session, a: BidArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("hover", lambda: el.hover(timeout=ELEMENT_TIMEOUT_MS))


def press(s: Session, a: PressArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("press", lambda: el.press(a.key_comb, timeout=ELEMENT_TIMEOUT_MS, no_wait_after=True))


def focus(s: Session, a: BidArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("focus", lambda: el.focus(timeout=ELEMENT_TIMEOUT_MS))


def clear(s: Session, a: BidArgs) -> ToolOutcome:
    el = _element(s, a.bid)
    return _act("clear", lambda: el.clear(timeout=ELEMENT_TIMEOUT_MS))


def drag_and_drop(s: Session, a: DragArgs) -> ToolOutcome:
    source, target = _element(s, a.from_bid), _element(s, a.to_bid)
    return _act("drag_and_drop", lambda: source.drag_to(target, timeout=ELEMENT_TIMEOUT_MS))


def scroll(s: Session, a: ScrollArgs) -> ToolOutcome:
    return _act("scroll", lambda: s.page.mouse.wheel(a.delta_x, a.delta_y))


def goto(s: Session, a: GotoArgs) -> ToolOutcome:
    if not ALLOWED_URL.match(a.url):
        raise ToolError(f"goto: only the apps' addresses (http://<app>.{TEST_DOMAIN}/...), not {quote(a.url)}")
    return _act("goto", lambda: s.page.goto(a.url, wait_until="load"))


def go_back(s: Session, a: NoArgs) -> ToolOutcome:
    return _act("go_back", lambda: s.page.go_back(wait_until="load"))


def go_forward(s: Session, a: NoArgs) -> ToolOutcome:
    return _act("go_forward", lambda: s.page.go_forward(wait_until="load"))


def new_tab(s: Session, a: NoArgs) -> ToolOutcome:
    return _act("new_tab", s.new_tab)


def tab_focus(s: Session, a: TabArgs) -> ToolOutcome:
    return _act("tab_focus", lambda: s.focus_tab(a.index))


def tab_close(s: Session, a: NoArgs) -> ToolOutcome:
    return _act("tab_close", s.close_tab)


def send_msg_to_user(s: Session, a: MessageArgs) -> ToolOutcome:
    return ToolOutcome({"done": "send_msg_to_user", "answer": s.say(a.text)}, 0.0)


def report_infeasible(s: Session, a: ReasonArgs) -> ToolOutcome:
    return _act("report_infeasible", lambda: s.give_up(a.reason))


def noop(s: Session, a: WaitArgs) -> ToolOutcome:
    return _act("noop", lambda: s.page.wait_for_timeout(min(a.wait_ms, 3000)))


def mouse_click(s: Session, a: XYButtonArgs) -> ToolOutcome:
    return _act("mouse_click", lambda: s.page.mouse.click(a.x, a.y, button=a.button))


def mouse_dblclick(s: Session, a: XYButtonArgs) -> ToolOutcome:
    return _act("mouse_dblclick", lambda: s.page.mouse.dblclick(a.x, a.y, button=a.button))


def mouse_move(s: Session, a: XYArgs) -> ToolOutcome:
    return _act("mouse_move", lambda: s.page.mouse.move(a.x, a.y))


def mouse_down(s: Session, a: XYButtonArgs) -> ToolOutcome:
    def do() -> None:
        s.page.mouse.move(a.x, a.y)
        s.page.mouse.down(button=a.button)

    return _act("mouse_down", do)


def mouse_up(s: Session, a: XYButtonArgs) -> ToolOutcome:
    def do() -> None:
        s.page.mouse.move(a.x, a.y)
        s.page.mouse.up(button=a.button)

    return _act("mouse_up", do)


def mouse_drag_and_drop(s: Session, a: DragXYArgs) -> ToolOutcome:
    def do() -> None:
        s.page.mouse.move(a.from_x, a.from_y)
        s.page.mouse.down()
        s.page.mouse.move(a.to_x, a.to_y)
        s.page.mouse.up()

    return _act("mouse_drag_and_drop", do)


def scroll_at(s: Session, a: ScrollAtArgs) -> ToolOutcome:
    def do() -> None:
        s.page.mouse.move(a.x, a.y)
        s.page.mouse.wheel(a.dx, a.dy)

    return _act("scroll_at", do)


def keyboard_type(s: Session, a: TypeArgs) -> ToolOutcome:
    return _act("keyboard_type", lambda: s.page.keyboard.type(a.text))


def keyboard_insert_text(s: Session, a: TypeArgs) -> ToolOutcome:
    return _act("keyboard_insert_text", lambda: s.page.keyboard.insert_text(a.text))


def keyboard_press(s: Session, a: KeyArgs) -> ToolOutcome:
    return _act("keyboard_press", lambda: s.page.keyboard.press(a.key))


# the computer set: pixels only, the usual computer-use names
def px_click(s: Session, a: XYButtonArgs) -> ToolOutcome:
    return _act("click", lambda: s.page.mouse.click(a.x, a.y, button=a.button))


def px_double_click(s: Session, a: XYArgs) -> ToolOutcome:
    return _act("double_click", lambda: s.page.mouse.dblclick(a.x, a.y))


def px_drag(s: Session, a: PathArgs) -> ToolOutcome:
    def do() -> None:
        first, *rest = a.path
        s.page.mouse.move(first.x, first.y)
        s.page.mouse.down()
        for p in rest:
            s.page.mouse.move(p.x, p.y)
        s.page.mouse.up()

    return _act("drag", do)


def px_scroll(s: Session, a: PixelScrollArgs) -> ToolOutcome:
    return scroll_at(s, ScrollAtArgs(x=a.x, y=a.y, dx=a.scroll_x, dy=a.scroll_y))


def px_type(s: Session, a: TypeArgs) -> ToolOutcome:
    return _act("type", lambda: s.page.keyboard.type(a.text))


def px_keypress(s: Session, a: KeysArgs) -> ToolOutcome:
    return _act("keypress", lambda: s.page.keyboard.press("+".join(a.keys)))


def screenshot(s: Session, a: NoArgs) -> ToolOutcome:
    return _done("screenshot")


def _spec(name: str, description: str, args: type[ToolArgs], handler: Handler,
          output: type[BaseModel] = outputs.Done) -> ToolSpec[Any, Session]:
    """A browser action: every one answers ``{done: its name}`` (what it did shows in the next page)."""
    return ToolSpec(name, description, args, handler, "0 (the sandbox clock moves only when a form is submitted)",
                    side_effects="acts in the browser; a form submitted is one tool call of its app", output=output)


CHAT = [_spec("send_msg_to_user", "Send a message (a question) to the colleague who asked for the task; their "
              "answer appears in the chat.", MessageArgs, send_msg_to_user, outputs.Answered),
        _spec("report_infeasible", "Say the task cannot be done: the task ends there and is judged as it stands.",
              ReasonArgs, report_infeasible)]  # fmt: skip
BID = [
    _spec("click", "Click an element by its bid (left, middle or right button; optional modifier keys).", ClickArgs,
          click),
    _spec("dblclick", "Double-click an element by its bid.", ClickArgs, dblclick),
    _spec("fill", "Fill a text field or text area (by bid) with a value, replacing what it held.", FillArgs, fill),
    _spec("select_option", "Choose an option (by value or label) in a select element (by bid).", SelectArgs,
          select_option),
    _spec("hover", "Move the mouse over an element by its bid.", BidArgs, hover),
    _spec("press", "Focus an element by bid and press a key combination (e.g. Enter, Control+a).", PressArgs, press),
    _spec("focus", "Focus an element by its bid.", BidArgs, focus),
    _spec("clear", "Clear a text field by its bid.", BidArgs, clear),
    _spec("drag_and_drop", "Drag an element (by bid) and drop it on another (by bid).", DragArgs, drag_and_drop),
    _spec("scroll", "Scroll the page by a number of pixels (positive delta_y scrolls down).", ScrollArgs, scroll),
]  # fmt: skip
NAV = [_spec("goto", f"Open an address on one of the apps (http://<app>.{TEST_DOMAIN}/...).", GotoArgs, goto),
       _spec("go_back", "Go back to the previous page of the tab's history.", NoArgs, go_back),
       _spec("go_forward", "Go forward in the tab's history.", NoArgs, go_forward)]  # fmt: skip
TAB = [_spec("new_tab", "Open a new, empty tab and make it the active one.", NoArgs, new_tab),
       _spec("tab_focus", "Make the tab at this index (0 is the first) the active one.", TabArgs, tab_focus),
       _spec("tab_close", "Close the active tab (the previous one becomes active).", NoArgs, tab_close)]  # fmt: skip
WAIT = [_spec("noop", "Do nothing (optionally wait up to 3 s).", WaitArgs, noop)]
COORD = [
    _spec("mouse_click", "Click at a point of the page (x, y in CSS pixels from the top left).", XYButtonArgs,
          mouse_click),
    _spec("mouse_dblclick", "Double-click at a point of the page.", XYButtonArgs, mouse_dblclick),
    _spec("mouse_move", "Move the mouse to a point of the page.", XYArgs, mouse_move),
    _spec("mouse_down", "Move to a point and press a mouse button.", XYButtonArgs, mouse_down),
    _spec("mouse_up", "Move to a point and release a mouse button.", XYButtonArgs, mouse_up),
    _spec("mouse_drag_and_drop", "Drag from one point of the page to another.", DragXYArgs, mouse_drag_and_drop),
    _spec("scroll_at", "Scroll by dx, dy pixels with the mouse at a point.", ScrollAtArgs, scroll_at),
    _spec("keyboard_type", "Type text with the keyboard into the focused element.", TypeArgs, keyboard_type),
    _spec("keyboard_insert_text", "Insert text into the focused element at once.", TypeArgs, keyboard_insert_text),
    _spec("keyboard_press", "Press a key or a combination (e.g. Enter, Control+a).", KeyArgs, keyboard_press),
]  # fmt: skip
COMPUTER = [
    _spec("click", "Click at a point of the screenshot (x, y in pixels from its top left).", XYButtonArgs, px_click),
    _spec("double_click", "Double-click at a point of the screenshot.", XYArgs, px_double_click),
    _spec("move", "Move the mouse to a point of the screenshot.", XYArgs, mouse_move),
    _spec("drag", "Press the mouse at the first point, move through the others, release at the last.", PathArgs,
          px_drag),
    _spec("scroll", "Scroll by scroll_x, scroll_y pixels with the mouse at a point.", PixelScrollArgs, px_scroll),
    _spec("type", "Type text into the focused element.", TypeArgs, px_type),
    _spec("keypress", "Press keys together (e.g. ['Enter'] or ['Control', 'a']).", KeysArgs, px_keypress),
    _spec("wait", "Do nothing (optionally wait up to 3 s).", WaitArgs, noop),
    _spec("screenshot", "Take a screenshot (every observation has one; this only spends a step).", NoArgs,
          screenshot),
    NAV[0],
]  # fmt: skip
ACTION_SETS: dict[str, ToolBox[Session]] = {
    "browsergym": ToolBox([*CHAT, *BID, *NAV, *TAB, *WAIT, *COORD]),
    "bid": ToolBox([*CHAT, *BID, *NAV, *TAB, *WAIT]),
    "computer": ToolBox(COMPUTER),
}


def from_text(text: str, box: ToolBox[Session]) -> dict[str, Any] | None:
    """A BrowserGym action string (``click('a12')``, ``fill('45', "text")``) as a call ``{tool, args}``, or None
    when the text is not one: BrowserGym's own parser reads it (function-call syntax with literal arguments only,
    nothing is evaluated); positional arguments bind to the action's fields in order."""
    from browsergym.core.action.parsers import NamedArgument, highlevel_action_parser

    try:
        found = highlevel_action_parser.parse_string(text, parse_all=True).as_list()
    except Exception:
        return None
    if len(found) != 1:
        raise ToolError("one action a step: give exactly one function call")
    name, args = found[0]
    spec = box.specs.get(name)
    if spec is None:
        raise ToolError(f"unknown action {quote(name)}; available: {', '.join(box.specs)}")
    fields = list(spec.args.model_fields)
    positional = [a for a in args if not isinstance(a, NamedArgument)]
    if len(positional) > len(fields):
        raise ToolError(f"{name} takes at most {len(fields)} arguments")
    call = dict(zip(fields, positional, strict=False))
    for a in args:
        if isinstance(a, NamedArgument):
            if a.name in call:
                raise ToolError(f"{name}: argument {quote(a.name)} given twice")
            call[a.name] = a.value
    return {"tool": name, "args": call}
