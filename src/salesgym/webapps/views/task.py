"""The task desk: the request and who asked, links to the task's apps, the conversation with the requester
(``ask_requester``), the inbox of messages that arrive mid-task (``reply_message``), and the button that declares
the task done (``finish_task``). After the end it shows the verdict, as the tool path's last observation does."""

from __future__ import annotations

from typing import Any

from salesgym.webapps.page import Field, Heading, Link, Notice, Page, Props, Redirect, Text, Timeline
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import refusal, status_of, when, write_form


def _ask(q: Q, tool: str, args: dict[str, Any], question: str, to: str) -> list[Any]:
    try:
        out = q.write(tool, args)
    except Refused as err:
        return [refusal(err)]
    q.run.chat.append({"from": "You", "to": to, "text": question})
    q.run.chat.append({"from": str(out.get("from", to)), "to": "You", "text": str(out.get("answer", ""))})
    return []


def desk(q: Q) -> Page | Redirect:
    data = q.run.observation()
    task, clock, episode = data["task"], data["clock"], data["episode"]
    requester = task["requester"].split(" (")[0]
    problem: list[Any] = []
    if q.posted and q.path.get("what") == "ask":
        problem = _ask(q, "ask_requester", {"question": q.form.get("question")}, q.form.get("question"), requester)
        if not problem:
            return Redirect("/#conversation")
    elif q.posted and q.path.get("what") == "finish":
        try:
            q.write("finish_task", {"summary": q.form.get("summary")})
        except Refused as err:
            problem = [refusal(err)]
        else:
            return Redirect("/")
    elif q.posted and q.path.get("what") == "reply":
        message = next((m for m in data["inbox"] if m["id"] == q.form.get("message_id")), None)
        who = message["from"] if message else q.form.get("message_id")
        problem = _ask(q, "reply_message", {"message_id": q.form.get("message_id"), "text": q.form.get("text")},
                       q.form.get("text"), who)  # fmt: skip
        if not problem:
            return Redirect("/#inbox")
    apps = [Link(f"{a}{' (read only)' if a in task['read_only'] else ''}", q.origins[a] + "/", f"app-{a}")
            for a in task["apps"]]  # fmt: skip
    blocks: list[Any] = [*problem, Heading(task["title"], apps)]
    if episode["terminated"] or episode["truncated"]:
        blocks.append(Notice(f"This task is closed. Verdict: {episode['verdict']}.",
                             "success" if episode["verdict"] == "pass" else "warning", "verdict"))  # fmt: skip
    blocks += [
        Props([(q.word("requester"), task["requester"]), (q.word("apps"), ", ".join(
            f"{a}{' (read only)' if a in task['read_only'] else ''}" for a in task["apps"])),
            (q.word("clock"), when(clock["now"])), (q.word("calls_left"), str(clock["calls_left"]))]),
        Heading(q.word("request"), level=2), Text(task["prompt"]),
        Timeline([("", m["from"], m["text"], "") for m in q.run.chat], q.word("conversation")),
        write_form(q, "/ask", [Field("question", f"{q.word('question')} ({requester})", "textarea", "", required=True)],
                   "ask", form_id="ask-form"),
    ]  # fmt: skip
    if data["inbox"]:
        blocks.append(Heading(q.word("inbox"), level=2))
    for m in data["inbox"]:
        blocks += [Timeline([(when(m["at"]), m["id"], m["from"], m["text"])]),
                   _reply_form(q, m)]
    blocks.append(write_form(q, "/finish", [Field("summary", q.word("summary_text"), "textarea", "",
                                                  help="what you did (your own record; it is not graded)")],
                             "finish_task", form_id="finish-form"))  # fmt: skip
    return Page("task", task["title"], blocks, status=status_of(problem))


def _reply_form(q: Q, m: dict[str, Any]) -> Any:
    fields = [Field("message_id", "Message", "select", m["id"], [(m["id"], m["id"])],
                    html_id=f"f-message_id-{m['id']}"),
              Field("text", f"{q.word('reply')} ({m['from']})", "textarea", "", required=True,
                    html_id=f"f-text-{m['id']}")]  # fmt: skip
    form = write_form(q, "/reply", fields, "reply", form_id=f"reply-{m['id']}")
    form.submit_id = f"btn-reply-{m['id']}"
    return form


def ask(q: Q) -> Page | Redirect:
    q.path["what"] = "ask"
    return desk(q)


def finish(q: Q) -> Page | Redirect:
    q.path["what"] = "finish"
    return desk(q)


def reply(q: Q) -> Page | Redirect:
    q.path["what"] = "reply"
    return desk(q)


ROUTES = [("/", desk, ("GET",)), ("/ask", ask, ("POST",)), ("/finish", finish, ("POST",)),
          ("/reply", reply, ("POST",))]  # fmt: skip
NAV: list[tuple[str, str]] = [("task", "/")]
