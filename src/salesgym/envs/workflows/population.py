"""Seeded synthetic data for the four replicas, with provenance: ``Builder`` holds tables being built and
``populate(seed)`` fills the shared population (owners, companies, contacts, pipelines, deals; sequencer users,
mailboxes, accounts, prospects, sequences; the scheduler's host, event types, busy times; the prospecting
database's accounts, leads, lists and credits). Task fixtures then add what their template needs.

Every record is drawn from keyed streams (``stream(seed, "population", part)``), so one part of the population
does not shift the dice of another; every record has a provenance naming generator, seed and part
(``Builder.provenance``, kept beside the tables so that no tool shows it and the platforms' shapes stay exact).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from salesgym.core.rng import Dice, stream
from salesgym.envs.workflows.apps import crm, scheduler, sequencer
from salesgym.envs.workflows.apps.common import format_id
from salesgym.envs.workflows.contract import BASE_DATE, SLOT_INCREMENT_MINUTES, WORKDAY_HOURS, iso
from salesgym.envs.workflows.world import GENERATOR_VERSION

FIRST = ("Ava", "Ben", "Chloe", "Dev", "Ella", "Finn", "Grace", "Hugo", "Isla", "Jon", "Kira", "Leo", "Maya", "Nico",
         "Olive", "Priya", "Quinn", "Ravi", "Sara", "Theo", "Uma", "Vic", "Wren", "Yara", "Zane", "Ana", "Bruno",
         "Carla", "Dmitri", "Elif", "Femi", "Gita", "Hana", "Ivo", "Jana", "Kofi", "Lena", "Marek", "Noor")  # fmt: skip
LAST = ("Abbott", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jones", "Khan", "Lopez",
        "Moreau", "Novak", "Okafor", "Patel", "Reyes", "Silva", "Tanaka", "Usman", "Varga", "Walsh", "Young",
        "Berg", "Costa", "Dahl", "Engel", "Farah", "Greco", "Haas", "Iqbal", "Jensen", "Kowal", "Lund")  # fmt: skip
COMPANIES = (("Acme Analytics", "COMPUTER_SOFTWARE"), ("Globex Logistics", "LOGISTICS_AND_SUPPLY_CHAIN"),
             ("Initech Finance", "FINANCIAL_SERVICES"), ("Umbrella Health", "HOSPITAL_HEALTH_CARE"),
             ("Stark Retail", "RETAIL"), ("Wayne Manufacturing", "MANUFACTURING"),
             ("Hooli Telecom", "TELECOMMUNICATIONS"), ("Pied Piper Labs", "COMPUTER_SOFTWARE"),
             ("Vandelay Imports", "LOGISTICS_AND_SUPPLY_CHAIN"), ("Soylent Foods", "RETAIL"),
             ("Tyrell Robotics", "MANUFACTURING"), ("Cyberdyne Systems", "COMPUTER_SOFTWARE"),
             ("Wonka Learning", "HIGHER_EDUCATION"), ("Oscorp Bio", "HOSPITAL_HEALTH_CARE"))  # fmt: skip
TLDS = (".io", ".com", ".co", ".net")
REGIONS = (("EMEA", "Germany"), ("NA East", "United States"), ("NA West", "Canada"), ("APAC", "Singapore"))
TITLES = {"Engineering": ("Software Engineer", "Engineering Manager", "Director of Engineering",
                          "VP Engineering", "CTO"),
          "Sales": ("Account Executive", "Sales Manager", "Director of Sales", "VP Sales", "Chief Revenue Officer"),
          "Operations": ("Operations Analyst", "Operations Manager", "Director of Operations", "VP Operations",
                         "COO"),
          "Finance": ("Financial Analyst", "Finance Manager", "Director of Finance", "VP Finance", "CFO"),
          "Marketing": ("Marketing Specialist", "Marketing Manager", "Director of Marketing", "VP Marketing",
                        "CMO")}  # fmt: skip
SENIORITY = ("Senior", "Manager", "Director", "VP", "CXO")  # by the title's index in TITLES
DEFAULT_STAGES = (("appointmentscheduled", "Appointment Scheduled", 0.2, False),
                  ("qualifiedtobuy", "Qualified To Buy", 0.4, False),
                  ("presentationscheduled", "Presentation Scheduled", 0.6, False),
                  ("decisionmakerboughtin", "Decision Maker Bought-In", 0.8, False),
                  ("contractsent", "Contract Sent", 0.9, False), ("closedwon", "Closed Won", 1.0, True),
                  ("closedlost", "Closed Lost", 0.0, True))  # fmt: skip
# a custom pipeline: its id and its stages' ids are the portal's own numbers (keyed by the seed, ``Builder.renewal``)
RENEWAL_STAGES = (("due", "Renewal Due", 0.5, False), ("negotiation", "Negotiation", 0.7, False),
                  ("renewed", "Renewed", 1.0, True), ("churned", "Churned", 0.0, True))  # fmt: skip
SEQUENCES = (("Webinar Follow-up", ("email", "call"), True, "none"), ("SQL Outbound", ("email", "call"), True, "none"),
             ("Exec Intro", ("email",), True, "none"), ("Win-back", ("email",), True, "none"),
             ("Cold Outbound Q1", ("email",), False, "none"),
             ("Enterprise Nurture", ("email", "call"), True, "all_sequences"))  # fmt: skip
EVENT_TYPES = (("30 Minute Demo", "demo", 30, True), ("Discovery Call", "discovery", 30, True),
               ("Technical Deep Dive", "deep-dive", 60, True), ("Legacy Intro", "legacy-intro", 45, False))
HORIZON_DAYS = 28  # busy times are drawn this far ahead


class Builder:
    """Tables under construction: ``add`` gives a record the table's next id; ``put`` stores it under a key."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.tables: dict[str, dict[str, dict[str, Any]]] = {}
        self.counters: dict[str, int] = {}
        weeks = stream(seed, "population", "anchor").randint(0, 40)
        self.start = BASE_DATE + timedelta(weeks=weeks)
        self.anchor = iso(self.start)
        self.names_used: set[tuple[str, str]] = set()
        self.provenance: dict[str, str] = {}  # "table/key" -> generator, seed and part

    def key(self, table: str) -> tuple[str, int]:
        """The table's next id (keyed by the seed, ``apps.common.format_id``) and its counter."""
        n = self.counters.get(table, 0) + 1
        self.counters[table] = n
        return format_id(table, n, self.seed), n

    def next_id(self, table: str) -> str:
        """The id the table's next record will get (the agent's first create, once the scene is set)."""
        return format_id(table, self.counters.get(table, 0) + 1, self.seed)

    @property
    def renewal(self) -> dict[str, str]:
        """The Renewals pipeline's id (``pipeline``) and its stages' ids (``due``, ``negotiation``, ``renewed``,
        ``churned``)."""
        ids = {"pipeline": format_id("crm.pipelines", 1, self.seed)}
        ids.update({key: format_id("crm.stages", i + 1, self.seed) for i, (key, *_) in enumerate(RENEWAL_STAGES)})
        return ids

    @property
    def sequence_ids(self) -> dict[str, int]:
        """Sequence ids by name."""
        return {r["attributes"]["name"]: int(r["id"]) for r in self.rows("sequencer.sequences").values()}

    @property
    def event_types(self) -> dict[str, str]:
        """Event type ids by slug (``demo``, ``discovery``, ``deep-dive``, ``legacy-intro``)."""
        return {r["slug"]: key for key, r in self.rows("scheduler.event_types").items()}

    def put(self, table: str, key: str, record: dict[str, Any], part: str) -> dict[str, Any]:
        self.provenance[f"{table}/{key}"] = f"{GENERATOR_VERSION}:{self.seed}:{part}"
        self.tables.setdefault(table, {})[key] = record
        return record

    def rows(self, table: str) -> dict[str, dict[str, Any]]:
        return self.tables.setdefault(table, {})

    def person(self, rng: Dice) -> tuple[str, str]:
        for _ in range(200):
            name = (rng.choice(FIRST), rng.choice(LAST))
            if name not in self.names_used:
                self.names_used.add(name)
                return name
        raise AssertionError("name pool exhausted")

    def day(self, offset: int, hour: int, minute: int = 0) -> datetime:
        return (self.start + timedelta(days=offset)).replace(hour=hour, minute=minute)


def domain_of(name: str, tld: str) -> str:
    return name.split()[0].lower().replace(" ", "") + tld


def populate(seed: int) -> Builder:
    b = Builder(seed)
    _crm(b, stream(seed, "population", "crm"))
    _sequencer(b, stream(seed, "population", "sequencer"))
    _scheduler(b, stream(seed, "population", "scheduler"))
    _prospecting(b, stream(seed, "population", "prospecting"))
    return b


def _crm(b: Builder, rng: Dice) -> None:
    at = b.anchor
    for i, (team, _) in enumerate(REGIONS):
        key, _ = b.key("crm.owners")
        first, last = b.person(rng)
        b.put("crm.owners", key, {"id": key, "email": f"{first.lower()}.{last.lower()}@sandbox-sales.com",
                                  "firstName": first, "lastName": last, "userId": int(key) + 10_000_000,
                                  "teams": [{"id": str(800 + i), "name": team, "primary": True}],
                                  "archived": False}, "owner")  # fmt: skip
    owners = list(b.rows("crm.owners"))
    b.put("crm.pipelines", "default", {"id": "default", "label": "Sales Pipeline", "displayOrder": 0,
                                       "stages": [_stage(*s, i) for i, s in enumerate(DEFAULT_STAGES)]}, "pipeline")
    renewal = b.renewal
    b.counters["crm.pipelines"] = 1
    stages = [_stage(renewal[key], label, p, closed, i) for i, (key, label, p, closed) in enumerate(RENEWAL_STAGES)]
    b.put("crm.pipelines", renewal["pipeline"], {"id": renewal["pipeline"], "label": "Renewals", "displayOrder": 1,
                                                 "stages": stages}, "pipeline")  # fmt: skip
    picked = rng.sample(range(len(COMPANIES)), 9)
    for idx in picked:
        name, industry = COMPANIES[idx]
        region = rng.randint(0, len(REGIONS) - 1)
        key, _ = b.key("crm.companies")
        props = {"name": name, "domain": domain_of(name, rng.choice(TLDS)), "industry": industry,
                 "numberofemployees": str(rng.choice((40, 120, 450, 900, 2500, 7000))),
                 "country": REGIONS[region][1], "hubspot_owner_id": owners[region]}  # fmt: skip
        b.put("crm.companies", key, crm.crm_object(key, props, at), "company")
    for ckey, company in list(b.rows("crm.companies").items()):
        for _ in range(2):
            add_contact(b, rng, company, ckey, lifecycle=rng.choice(("lead", "marketingqualifiedlead", "customer",
                                                                     "salesqualifiedlead")))  # fmt: skip
    companies = list(b.rows("crm.companies").items())
    for _ in range(4):
        ckey, company = rng.choice(companies)
        stage = rng.choice(DEFAULT_STAGES[:5])[0]
        add_deal(b, ckey, company, f"{company['properties']['name']} - expansion", "default", stage,
                 str(rng.randint(10, 90) * 1000))


def add_rep(b: Builder, rng: Dice) -> str:
    """One more sales rep: a CRM owner on a random team, their sequencer user and mailbox; the owner's id."""
    key, _ = b.key("crm.owners")
    first, last = b.person(rng)
    email = f"{first.lower()}.{last.lower()}@sandbox-sales.com"
    team = rng.randint(0, len(REGIONS) - 1)
    b.put("crm.owners", key, {"id": key, "email": email, "firstName": first, "lastName": last,
                              "userId": int(key) + 10_000_000, "teams": [{"id": str(800 + team),
                              "name": REGIONS[team][0], "primary": True}], "archived": False}, "owner")  # fmt: skip
    ukey, _ = b.key("sequencer.users")
    b.put("sequencer.users", ukey, sequencer.resource("user", int(ukey), {"email": email, "firstName": first,
          "lastName": last, "locked": False}), "user")  # fmt: skip
    mkey, _ = b.key("sequencer.mailboxes")
    b.put("sequencer.mailboxes", mkey, sequencer.resource("mailbox", int(mkey), {"email": email,
          "userId": int(ukey), "sendDisabled": False}, user=sequencer.ref("user", int(ukey))), "mailbox")  # fmt: skip
    return key


def _stage(sid: str, label: str, probability: float, closed: bool, order: int) -> dict[str, Any]:
    return {"id": sid, "label": label, "displayOrder": order,
            "metadata": {"probability": probability, "isClosed": closed}}  # fmt: skip


def add_contact(b: Builder, rng: Dice, company: dict[str, Any], company_key: str, lifecycle: str = "lead",
                jobtitle: str | None = None, lead_status: str | None = None, associate: bool = True,
                person: tuple[str, str] | None = None) -> tuple[str, dict[str, Any]]:  # fmt: skip
    first, last = person or b.person(rng)
    props = company["properties"]
    contact = {"email": f"{first.lower()}.{last.lower()}@{props['domain']}", "firstname": first, "lastname": last,
               "jobtitle": jobtitle if jobtitle is not None else rng.choice(TITLES[rng.choice(list(TITLES))]),
               "company": props["name"], "country": props["country"], "lifecyclestage": lifecycle,
               "hs_lead_status": lead_status or rng.choice(("NEW", "OPEN", "IN_PROGRESS", "CONNECTED")),
               "hubspot_owner_id": props["hubspot_owner_id"]}  # fmt: skip
    key, _ = b.key("crm.contacts")
    record = b.put("crm.contacts", key, crm.crm_object(key, contact, b.anchor), "contact")
    if associate:
        associate_crm(b, "contacts", key, "companies", company_key, 279)
    return key, record


def associate_crm(b: Builder, from_type: str, from_id: str, to_type: str, to_id: str, type_id: int) -> None:
    for args in ((from_type, from_id, to_type, to_id, type_id), (to_type, to_id, from_type, from_id,
                                                                 crm.INVERSE[type_id])):  # fmt: skip
        key, record = crm.association(*args)
        b.put("crm.associations", key, record, "association")


def add_deal(b: Builder, company_key: str, company: dict[str, Any], name: str, pipeline: str, stage: str,
             amount: str, closedate: str | None = None) -> str:  # fmt: skip
    props = {"dealname": name, "pipeline": pipeline, "dealstage": stage, "amount": amount,
             "hubspot_owner_id": company["properties"]["hubspot_owner_id"]}  # fmt: skip
    if closedate is not None:
        props["closedate"] = closedate
    key, _ = b.key("crm.deals")
    b.put("crm.deals", key, crm.crm_object(key, props, b.anchor), "deal")
    associate_crm(b, "deals", key, "companies", company_key, 5)
    return key


def _sequencer(b: Builder, rng: Dice) -> None:
    at = b.anchor
    for owner in b.rows("crm.owners").values():
        key, _ = b.key("sequencer.users")
        n = int(key)
        b.put("sequencer.users", key, sequencer.resource("user", n, {"email": owner["email"], "firstName":
              owner["firstName"], "lastName": owner["lastName"], "locked": False}), "user")  # fmt: skip
        mkey, _ = b.key("sequencer.mailboxes")
        b.put("sequencer.mailboxes", mkey, sequencer.resource("mailbox", int(mkey), {"email": owner["email"],
              "userId": n, "sendDisabled": False}, user=sequencer.ref("user", n)), "mailbox")  # fmt: skip
    first_user = int(next(iter(b.rows("sequencer.users"))))
    for name, steps, enabled, exclusivity in SEQUENCES:
        key, _ = b.key("sequencer.sequences")
        ruleset = {"permitDuplicateProspects": "disallow", "emailOptOutAction": "exclude",
                   "sequenceExclusivity": exclusivity, "meetingBookedAction": "finish"}  # fmt: skip
        b.put("sequencer.sequences", key, sequencer.resource("sequence", int(key), {"name": name, "enabled": enabled,
              "locked": False, "sequenceType": "interval", "shareType": "shared", "stepTypes": list(steps),
              "ruleset": ruleset}, owner=sequencer.ref("user", first_user)), "sequence")  # fmt: skip
    companies = list(b.rows("crm.companies").values())
    for company in companies[:6]:  # the rest have no sequencer account yet
        add_account(b, company)
    for contact in rng.sample(list(b.rows("crm.contacts").values()), 6):
        account = account_for(b, contact["properties"]["company"])
        if account is not None:
            add_prospect(b, contact["properties"], account, tags=[rng.choice(("q1-import", "trade-show",
                                                                              "newsletter"))])  # fmt: skip
    prospects = list(b.rows("sequencer.prospects").values())
    for p in prospects[:2]:
        add_state(b, p["id"], b.sequence_ids["SQL Outbound"], "finished", at)


def add_account(b: Builder, company: dict[str, Any]) -> dict[str, Any]:
    key, _ = b.key("sequencer.accounts")
    props = company["properties"]
    return b.put("sequencer.accounts", key, sequencer.resource("account", int(key), {"name": props["name"], "domain":
                 props["domain"], "industry": props["industry"], "numberOfEmployees":
                 int(props["numberofemployees"]), "createdAt": b.anchor, "updatedAt": b.anchor}), "account")


def account_for(b: Builder, company_name: str) -> dict[str, Any] | None:
    return next((a for a in b.rows("sequencer.accounts").values() if a["attributes"]["name"] == company_name), None)


def user_for_owner(b: Builder, owner_id: str) -> int:
    owner = b.rows("crm.owners")[owner_id]
    return int(next(u["id"] for u in b.rows("sequencer.users").values() if u["attributes"]["email"] == owner["email"]))


def add_prospect(b: Builder, contact: dict[str, Any], account: dict[str, Any], tags: list[str],
                 opted_out: bool = False) -> dict[str, Any]:  # fmt: skip
    key, _ = b.key("sequencer.prospects")
    attrs = {"emails": [contact["email"]], "firstName": contact["firstname"], "lastName": contact["lastname"],
             "title": contact.get("jobtitle", ""), "company": contact.get("company", ""), "tags": tags,
             "optedOut": opted_out, "createdAt": b.anchor, "updatedAt": b.anchor}  # fmt: skip
    owner = user_for_owner(b, contact["hubspot_owner_id"])
    return b.put("sequencer.prospects", key, sequencer.resource("prospect", int(key), attrs,
                 account=sequencer.ref("account", account["id"]), owner=sequencer.ref("user", owner)), "prospect")


def add_state(b: Builder, prospect: int, sequence: int, state: str, at: str, replied: str | None = None,
              mailbox: int | None = None) -> dict[str, Any]:  # fmt: skip
    """A sequence state (from ``mailbox``, by default the first user's)."""
    mailbox = mailbox if mailbox is not None else int(next(iter(b.rows("sequencer.mailboxes"))))
    key, _ = b.key("sequencer.sequence_states")
    return b.put("sequencer.sequence_states", key, sequencer.resource("sequenceState", int(key), {"state": state,
                 "createdAt": at, "activeAt": at, "finishedAt": at if state == "finished" else None,
                 "repliedAt": replied, "pauseReason": None, "errorReason": None},
                 prospect=sequencer.ref("prospect", prospect), sequence=sequencer.ref("sequence", sequence),
                 mailbox=sequencer.ref("mailbox", mailbox)), "sequence_state")  # fmt: skip


def _scheduler(b: Builder, rng: Dice) -> None:
    first, last = b.person(rng)
    ukey, _ = b.key("scheduler.users")
    user_uri = f"{scheduler.API}/users/{ukey}"
    b.put("scheduler.users", ukey, {"uri": user_uri, "name": f"{first} {last}",
          "email": f"{first.lower()}.{last.lower()}@sandbox-sales.com", "timezone": "UTC",
          "current_organization": f"{scheduler.API}/organizations/O{ukey[1:]}",
          "scheduling_url": f"https://calendly.com/{first.lower()}-{last.lower()}"}, "host")  # fmt: skip
    for name, slug, duration, active in EVENT_TYPES:
        key, _ = b.key("scheduler.event_types")
        b.put("scheduler.event_types", key, scheduler.event_type_record(key, name, slug, duration, user_uri, active),
              "event_type")
    for offset in range(HORIZON_DAYS):
        day = b.start + timedelta(days=offset)
        if day.weekday() >= 5:
            continue
        for _ in range(rng.randint(1, 4)):
            hour = rng.randint(WORKDAY_HOURS[0], WORKDAY_HOURS[1] - 1)
            start = day.replace(hour=hour, minute=SLOT_INCREMENT_MINUTES * rng.randint(0, 1))
            add_busy(b, start, start + timedelta(minutes=30 * rng.randint(1, 4)))


def add_busy(b: Builder, start: datetime, end: datetime) -> None:
    key, _ = b.key("scheduler.busy_times")
    b.put("scheduler.busy_times", key, {"type": "external", "start_time": iso(start), "end_time": iso(end)}, "busy")


def _prospecting(b: Builder, rng: Dice) -> None:
    for company in b.rows("crm.companies").values():
        add_prospecting_account(b, company["properties"]["name"], company["properties"]["industry"],
                                int(company["properties"]["numberofemployees"]))  # fmt: skip
    for contact in list(b.rows("crm.contacts").values()):  # most CRM contacts have a profile
        p = contact["properties"]
        if rng.random() < 0.8:
            add_lead(b, rng, (p["firstname"], p["lastname"]), p["company"], title=p["jobtitle"])
    accounts = [a["name"] for a in b.rows("prospecting.accounts").values()]
    for _ in range(12):
        add_lead(b, rng, b.person(rng), rng.choice(accounts))
    key, _ = b.key("prospecting.lists")
    b.put("prospecting.lists", key, {"id": key, "name": "Q1 Targets", "type": "LEAD", "shared": False}, "list")
    b.put("prospecting.credits", "inmail", {"available": rng.randint(5, 40), "monthly_allowance": 50,
                                            "banked_max": 150}, "credits")  # fmt: skip


def add_prospecting_account(b: Builder, name: str, industry: str, headcount: int) -> dict[str, Any]:
    key, _ = b.key("prospecting.accounts")
    return b.put("prospecting.accounts", key, {"account_id": key, "name": name, "industry": industry,
                                               "headcount": headcount, "headcount_growth_pct": 0,
                                               "hq": "Berlin, Germany"}, "account")  # fmt: skip


def add_lead(b: Builder, rng: Dice, person: tuple[str, str], company: str, title: str | None = None,
             function: str | None = None, level: int | None = None, changed_jobs: bool | None = None,
             left_for: tuple[str, str] | None = None, degree: int | None = None,
             open_profile: bool | None = None) -> dict[str, Any]:  # fmt: skip
    function = function or next((f for f, ts in TITLES.items() if title in ts), None) or rng.choice(list(TITLES))
    level = level if level is not None else (TITLES[function].index(title) if title in TITLES[function]
                                             else rng.randint(0, 4))  # fmt: skip
    title = title or TITLES[function][level]
    account = next((a for a in b.rows("prospecting.accounts").values() if a["name"] == company), None)
    key, _ = b.key("prospecting.leads")
    first, last = person
    lead: dict[str, Any] = {
            "lead_id": key, "urn": f"urn:li:fs_salesProfile:{key}", "firstName": first, "lastName": last,
            "title": title, "company": company, "account_id": account["account_id"] if account else None,
            "geography": rng.choice(("Germany", "United States", "Canada", "Singapore", "United Kingdom")),
            "industry": account["industry"] if account else "COMPUTER_SOFTWARE", "seniority": SENIORITY[level],
            "function": function, "changed_jobs_recently": rng.random() < 0.2 if changed_jobs is None else changed_jobs,
            "degree": degree if degree is not None else rng.choice((1, 2, 2, 3, 3)),
            "open_profile": rng.random() < 0.15 if open_profile is None else open_profile,
            "teamlink": rng.random() < 0.2, "left_account": left_for is not None,
            "current_company": left_for[0] if left_for else company,
            "current_title": left_for[1] if left_for else title, "past_companies": [],
            "summary": f"{title} at {company}"}  # fmt: skip
    return b.put("prospecting.leads", key, lead, "lead")
