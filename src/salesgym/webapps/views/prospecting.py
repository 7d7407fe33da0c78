"""The prospecting tool's pages (Sales Navigator-shaped): lead search with the documented filters (AND across
filters, OR within one; the changed-jobs spotlight), lead profiles (job changes, "left the company", degree,
Open Profile, TeamLink) with "save to list", the InMail composer with the credit counter, account search,
lead lists and the sent InMails. Every read is a prospecting read tool, every form one prospecting write."""

from __future__ import annotations

from typing import Any

from salesgym.envs.workflows.apps.crm import INDUSTRIES
from salesgym.envs.workflows.apps.prospecting import HEADCOUNT_BANDS, SENIORITY_CODES
from salesgym.webapps.page import Cell, Field, Form, Heading, Link, Notice, Page, Props, Redirect, Table
from salesgym.webapps.request import Q
from salesgym.webapps.run import Refused
from salesgym.webapps.views.common import PAGE_SIZE, keep, options, page_of, pager, refusal, status_of, titled
from salesgym.webapps.views.common import write_form as _write_form

FUNCTIONS = ("Engineering", "Sales", "Marketing", "Finance", "Operations", "Information Technology",
             "Human Resources")  # fmt: skip


DEGREES = {1: "1st", 2: "2nd", 3: "3rd"}


def _listed(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _lead_search(q: Q, page: int) -> dict[str, Any]:
    args: dict[str, Any] = {"start": (page - 1) * PAGE_SIZE, "count": PAGE_SIZE}
    for name in ("keywords", "title"):
        if q.query.get(name):
            args[name] = q.query.get(name)
    for name in ("company", "geography"):
        if _listed(q.query.get(name)):
            args[name] = _listed(q.query.get(name))
    for name, field in (("industry", "industry"), ("seniority_level", "seniority"), ("function_area", "function")):
        if q.query.getlist(field):
            args[name] = q.query.getlist(field)
    if q.query.get("changed_jobs"):
        args["changed_jobs"] = True
    return args


def leads(q: Q) -> Page:
    page = page_of(q)
    problem: list[Any] = []
    try:
        found = q.read("sales_search_leads", _lead_search(q, page))
    except Refused as err:
        found, problem = {"elements": [], "paging": {"total": 0}}, [refusal(err)]
    columns = q.run.variant.order(["name", "title", "company", "geography", "seniority", "function", "changed",
                                   "degree"])  # fmt: skip
    rows = []
    for lead in found["elements"]:
        cells = {"name": Cell(f"{lead['firstName']} {lead['lastName']}", f"/leads/{lead['lead_id']}",
                              f"open-{lead['lead_id']}"),
                 "title": Cell(lead["title"]), "company": Cell(lead["company"]), "geography": Cell(lead["geography"]),
                 "seniority": Cell(lead["seniority"]), "function": Cell(lead["function"]),
                 "changed": Cell("changed jobs" if lead["changed_jobs_recently"] else ""),
                 "degree": Cell(DEGREES.get(lead["degree"], str(lead["degree"])))}  # fmt: skip
        rows.append([cells[c] for c in columns])
    labels = {"name": q.word("name"), "title": q.word("title"), "company": q.word("company"),
              "geography": q.word("geography"), "seniority": q.word("seniority"), "function": q.word("function"),
              "changed": "Spotlight", "degree": q.word("degree")}  # fmt: skip
    filters = [
        Field("keywords", q.word("keywords"), "text", q.query.get("keywords")),
        Field("title", q.word("title"), "text", q.query.get("title")),
        Field("company", q.word("current_company"), "text", q.query.get("company"), help="names, comma-separated"),
        Field("geography", q.word("geography"), "text", q.query.get("geography"), help="comma-separated"),
        Field("industry", q.word("industry"), "checkboxes", q.query.getlist("industry"),
              [(i, titled(i)) for i in INDUSTRIES]),
        Field("seniority", q.word("seniority"), "checkboxes", q.query.getlist("seniority"),
              [(s, s) for s in SENIORITY_CODES]),
        Field("function", q.word("function"), "checkboxes", q.query.getlist("function"), [(f, f) for f in FUNCTIONS]),
        Field("changed_jobs", q.word("changed_jobs"), "checkbox", bool(q.query.get("changed_jobs"))),
    ]  # fmt: skip
    return Page("prospecting", q.word("leads"), [
        Heading(q.word("leads")),
        Form("/leads", filters, q.word("search"), "btn-search", method="get", id="filters"),
        *problem, Table([labels[c] for c in columns], rows, "No leads match these filters.", id="records"),
        pager(q, "/leads", int(found["paging"]["total"]), page),
    ])  # fmt: skip


def profile(q: Q) -> Page | Redirect:
    key = q.path["key"]
    problem: list[Any] = []
    if q.posted:
        try:
            out = q.write("save_lead", {"lead_id": key, "list_id": q.form.get("list_id")})
        except Refused as err:
            problem = [refusal(err)]
        else:
            q.say(f"Saved to the list ({out['size']} leads).")
            return Redirect(f"/leads/{key}")
    p = q.read("get_sales_profile", {"lead_id": key})
    rows = [(q.word("title"), p["title"]), (q.word("company"), p["company"]), (q.word("geography"), p["geography"]),
            (q.word("industry"), titled(p["industry"])), (q.word("seniority"), p["seniority"]),
            (q.word("function"), p["function"]), (q.word("degree"), str(p["degree"])),
            (q.word("changed_jobs"), "yes" if p["changed_jobs_recently"] else "no"),
            (q.word("left_account"), "yes" if p["left_account"] else "no"),
            (q.word("current_company"), p["current_company"]), (q.word("current_title"), p["current_title"]),
            (q.word("open_profile"), "yes" if p["open_profile"] else "no"),
            (q.word("teamlink"), "yes" if p["teamlink"] else "no"),
            (q.word("past_companies"), ", ".join(p["past_companies"])), (q.word("summary"), p["summary"]),
            ("URN", p["urn"])]  # fmt: skip
    lists = [(lst["id"], lst["name"]) for lst in q.read("get_lead_lists")["elements"]]
    blocks: list[Any] = [*problem, Heading(f"{p['firstName']} {p['lastName']}", [
        Link(q.word("inmail"), f"/leads/{key}/inmail", "inmail")])]
    if p["left_account"]:
        blocks.append(Notice(f"No longer at {p['company']}: now {p['current_title']} at {p['current_company']}.",
                             "warning", "left-account"))  # fmt: skip
    blocks += [Props(rows), _write_form(q, f"/leads/{key}", [Field("list_id", q.word("list"), "select",
                                                                   keep(q, "list_id", ""), options(lists), True)],
                                        "save_lead", form_id="save-form")]  # fmt: skip
    return Page("prospecting", f"{p['firstName']} {p['lastName']}", blocks, status=status_of(problem),
                crumbs=[Link(q.word("leads"), "/leads")])


def inmail(q: Q) -> Page | Redirect:
    key = q.path["key"]
    p = q.read("get_sales_profile", {"lead_id": key})
    problem: list[Any] = []
    if q.posted:
        try:
            out = q.write("send_inmail", {"recipient_urn": p["urn"], "subject": q.form.get("subject"),
                                          "body": q.form.get("body")})
        except Refused as err:
            problem = [refusal(err)]
        else:
            spent = "one credit spent" if out["credit_spent"] else "free (no credit spent)"
            q.say(f"InMail sent: {spent}; {out['credits_left']} credits left.")
            return Redirect(f"/leads/{key}")
    credits = q.read("get_inmail_credits")
    free = p["degree"] == 1 or p["open_profile"]
    cost = "Free: a 1st-degree connection or an Open Profile." if free else "Costs 1 InMail credit."
    fields = [Field("subject", q.word("subject"), "text", keep(q, "subject", ""),
                    required=True, help="at most 200 characters"),
              Field("body", q.word("body"), "textarea", keep(q, "body", ""),
                    required=True, help="at most 2,000 characters")]
    return Page("prospecting", f"{q.word('inmail')}: {p['firstName']} {p['lastName']}", [
        *problem, Heading(f"{q.word('inmail')}: {p['firstName']} {p['lastName']}", level=2),
        Props([(q.word("credits"), f"{credits['available']} available"), ("Cost", cost)]),
        _write_form(q, f"/leads/{key}/inmail", fields, "send", form_id="inmail-form"),
    ], status=status_of(problem), crumbs=[Link(q.word("leads"), "/leads"),
                                          Link(f"{p['firstName']} {p['lastName']}", f"/leads/{key}")])  # fmt: skip


def accounts(q: Q) -> Page:
    page = page_of(q)
    args: dict[str, Any] = {"start": (page - 1) * PAGE_SIZE, "count": PAGE_SIZE}
    if q.query.get("keywords"):
        args["keywords"] = q.query.get("keywords")
    if q.query.getlist("industry"):
        args["industry"] = q.query.getlist("industry")
    if q.query.getlist("headcount"):
        args["headcount"] = q.query.getlist("headcount")
    problem: list[Any] = []
    try:
        found = q.read("sales_search_accounts", args)
    except Refused as err:
        found, problem = {"elements": [], "paging": {"total": 0}}, [refusal(err)]
    rows = [[Cell(a["name"], f"/accounts/{a['account_id']}", f"open-{a['account_id']}"), Cell(titled(a["industry"])),
             Cell(str(a["headcount"])), Cell(a.get("hq", ""))] for a in found["elements"]]
    bands = [(b, f"{lo:,}-{hi:,}" if hi < 10**9 else f"{lo:,}+") for b, (lo, hi) in HEADCOUNT_BANDS.items()]
    filters = [Field("keywords", q.word("keywords"), "text", q.query.get("keywords")),
               Field("industry", q.word("industry"), "checkboxes", q.query.getlist("industry"),
                     [(i, titled(i)) for i in INDUSTRIES]),
               Field("headcount", q.word("headcount"), "checkboxes", q.query.getlist("headcount"), bands)]
    return Page("prospecting", q.word("account_search"), [
        Heading(q.word("account_search")),
        Form("/accounts", filters, q.word("search"), "btn-search", method="get", id="filters"), *problem,
        Table([q.word("name"), q.word("industry"), q.word("headcount"), q.word("hq")], rows, "No accounts match.",
              id="records"), pager(q, "/accounts", int(found["paging"]["total"]), page)])  # fmt: skip


def account(q: Q) -> Page:
    a = q.read("get_account", {"account_id": q.path["key"]})
    rows = [(q.word(k), titled(str(v)) if k == "industry" else str(v)) for k, v in a.items()
            if k not in ("account_id", "name")]  # fmt: skip
    return Page("prospecting", a["name"], [
        Heading(a["name"], [Link("Leads here", q.href("/leads", company=a["name"]), "account-leads")]),
        Props(rows)], crumbs=[Link(q.word("account_search"), "/accounts")])  # fmt: skip


def lists(q: Q) -> Page:
    found = q.read("get_lead_lists")["elements"]
    rows = [[Cell(lst["name"], f"/lists/{lst['id']}", f"open-{lst['id']}"), Cell(str(lst["size"])),
             Cell("shared" if lst.get("shared") else "private")] for lst in found]
    return Page("prospecting", q.word("lists"), [Heading(q.word("lists")),
                                                 Table([q.word("name"), q.word("size"), "Sharing"], rows)])


def members(q: Q) -> Page:
    key = q.path["key"]
    found = q.read("get_lead_list_members", {"list_id": key})["elements"]
    name = next((lst["name"] for lst in q.read("get_lead_lists")["elements"] if lst["id"] == key), key)
    rows = [[Cell(f"{m['firstName']} {m['lastName']}", f"/leads/{m['lead_id']}"), Cell(m["title"]),
             Cell(m["company"])] for m in found]  # fmt: skip
    return Page("prospecting", name, [Heading(name), Table([q.word("name"), q.word("title"), q.word("company")], rows,
                                                           "This list is empty.", id="records")],
                crumbs=[Link(q.word("lists"), "/lists")])  # fmt: skip


def messages(q: Q) -> Page:
    found = q.read("get_conversations")["elements"]
    credits = q.read("get_inmail_credits")
    rows = [[Cell(m["lead_id"], f"/leads/{m['lead_id']}"), Cell(m["subject"]), Cell(m["sent_at"]),
             Cell("yes" if m["credit_spent"] else "no"), Cell("yes" if m.get("replied") else "")] for m in found]
    return Page("prospecting", q.word("messages"), [
        Heading(q.word("messages")), Props([(q.word("credits"), f"{credits['available']} available")]),
        Table(["Lead", q.word("subject"), "Sent", "Credit spent", "Replied"], rows, "No InMails sent yet.",
              id="records")])  # fmt: skip


ROUTES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("/leads", leads, ("GET",)), ("/leads/{key}", profile, ("GET", "POST")), ("/leads/{key}/inmail", inmail,
                                                                              ("GET", "POST")),
    ("/accounts", accounts, ("GET",)), ("/accounts/{key}", account, ("GET",)), ("/lists", lists, ("GET",)),
    ("/lists/{key}", members, ("GET",)), ("/messages", messages, ("GET",)),
]  # fmt: skip
NAV = [("leads", "/leads"), ("account_search", "/accounts"), ("lists", "/lists"), ("messages", "/messages")]
