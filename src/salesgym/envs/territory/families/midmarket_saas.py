"""Mid-market SaaS: revenue-operations and CRM tooling sold to 100-2,000 person companies.

Small committees, quick cycles, deals of $20k-$150k. Security and legal reviews happen but are light and
often skipped; the hard part is volume, a crowded field of point tools and champions who change jobs.
"""

from __future__ import annotations

from salesgym.envs.territory.catalog import FamilySpec, Pain, TemplateSpec

PAINS: tuple[Pain, ...] = (
    Pain(
        id="forecast_accuracy",
        label="forecast misses",
        keywords=("forecast accuracy", "missed forecast", "pipeline visibility"),
        headlines=(
            "{company} reports revenue shortfall, citing poor pipeline visibility",
            "{company} investors question forecast accuracy after a second quarterly miss",
            "{company} CEO blames missed forecast on late-stage slippage",
        ),
    ),
    Pain(
        id="crm_data_quality",
        label="dirty CRM data",
        keywords=("duplicate records", "data hygiene", "crm cleanup"),
        headlines=(
            "{company} launches CRM cleanup ahead of its annual sales kickoff",
            "{company} sales ops team tackles a data hygiene backlog after rapid growth",
        ),
    ),
    Pain(
        id="manual_reporting",
        label="manual reporting burden",
        keywords=("manual reconciliation", "spreadsheet reporting", "reporting backlog"),
        headlines=(
            "{company} finance team moves away from spreadsheet reporting",
            "{company} hires analysts to clear a growing reporting backlog",
        ),
    ),
    Pain(
        id="tool_sprawl",
        label="too many point tools",
        keywords=("tool sprawl", "tool consolidation", "overlapping subscriptions"),
        headlines=(
            "{company} announces tool consolidation to cut software spend",
            "{company} CIO targets tool sprawl in company-wide cost review",
        ),
    ),
    Pain(
        id="rep_ramp",
        label="slow rep onboarding",
        keywords=("ramp time", "sales onboarding", "new sales hires"),
        headlines=(
            "{company} doubles its go-to-market team and plans 40 new sales hires this year",
            "{company} sets goal to halve ramp time for account executives",
        ),
    ),
    Pain(
        id="churn_risk",
        label="customer churn",
        keywords=("net retention", "churn spike", "renewal risk"),
        headlines=(
            "{company} shares slide on a churn spike in its small-business segment",
            "{company} names its first chief customer officer to lift net retention",
        ),
    ),
    Pain(
        id="lead_routing",
        label="slow lead response",
        keywords=("lead routing", "speed to lead", "inbound surge"),
        headlines=(
            "{company} overhauls lead routing after an inbound surge from its free tier",
            "{company} marketing chief vows to fix speed to lead",
        ),
    ),
    Pain(
        id="quoting_errors",
        label="quoting errors",
        keywords=("quote-to-cash", "quoting errors", "discount approvals"),
        headlines=(
            "{company} delays invoices after quoting errors in its new price book",
            "{company} starts a quote-to-cash overhaul alongside usage-based pricing",
        ),
    ),
    Pain(
        id="territory_design",
        label="unbalanced territories",
        keywords=("territory design", "quota attainment", "capacity planning"),
        headlines=(
            "{company} reports quota attainment below half and rethinks territory design",
            "{company} brings in consultants for sales capacity planning",
        ),
    ),
    Pain(
        id="commission_disputes",
        label="commission disputes",
        keywords=("commission disputes", "incentive compensation", "comp plan errors"),
        headlines=(
            "{company} sales staff raise commission disputes after a mid-year plan change",
            "{company} hires a head of incentive compensation",
        ),
    ),
)

TITLES: dict[str, tuple[str, ...]] = {
    "champion": ("Director of Revenue Operations", "Head of RevOps", "Sales Operations Manager", "VP Sales Operations"),
    "economic_buyer": ("CFO", "VP Finance", "COO", "Chief Revenue Officer"),
    "technical_evaluator": ("CRM Administrator", "Business Systems Analyst", "Senior Systems Engineer"),
    "security": ("Head of IT", "IT Manager", "Security Lead"),
    "legal": ("General Counsel", "Corporate Counsel", "Contracts Manager"),
    "procurement": ("Procurement Manager", "Controller", "Finance Operations Lead"),
    "user": ("Account Executive", "Regional Sales Manager", "Customer Success Manager", "SDR Team Lead"),
    "blocker": ("IT Architect", "Director of Business Systems", "VP Marketing Operations"),
}

COMPANY_WORDS: tuple[str, ...] = (
    "Northwind", "Bluefin", "Harbor", "Brightlane", "Copperleaf", "Driftwood", "Emberly", "Fernwick",
    "Glassbay", "Hollowell", "Ivyridge", "Junebright", "Kestrel", "Lumenwick", "Maplecrest", "Nimbly",
    "Orchardine", "Pebblestone", "Quillby", "Redwillow", "Saltmarsh", "Tidewell", "Upland", "Velvetine",
    "Willowby", "Yarrow", "Zephyrine", "Amberfield", "Birchway", "Cobaltix", "Dunmore", "Foxglove",
    "Greyling", "Larkspur",
)  # fmt: skip

TEMPLATES: dict[str, TemplateSpec] = {
    t.name: t
    for t in (
        TemplateSpec(
            name="standard",
            description=(
                "The ordinary mid-market quarter: most buyers only release budget in the last weeks, so "
                "early qualification stalls and the seller must keep deals warm without burning hours."
            ),
            mechanisms=("late_budget",),
        ),
        TemplateSpec(
            name="smb_velocity",
            description=(
                "A high-velocity small-business motion: many small deals, 3-4 person committees, quick "
                "replies and few approvals. Hard because the value per deal is small and every hour spent "
                "on the wrong deal is an hour not spent on three right ones."
            ),
            mechanisms=("fast_smb",),
            params={"deal_scale": 0.6, "nonviable_rate": 0.22},
        ),
        TemplateSpec(
            name="entrenched_competitor",
            description=(
                "A well-funded point-tool rival is already in most accounts and answers every demo with a "
                "price cut. Hard because winning needs technical proof and pain-led messaging, not volume."
            ),
            mechanisms=("entrenched_competitor",),
            params={"competitor_rate": 0.8},
        ),
        TemplateSpec(
            name="champion_churn",
            description=(
                "RevOps leaders change jobs often: some champions leave mid-episode. Hard because deals "
                "single-threaded through one person collapse; multi-threading early is the defence."
            ),
            mechanisms=("champion_leaves",),
        ),
    )
}

FAMILY = FamilySpec(
    name="midmarket_saas",
    description=(
        "Revenue-operations and CRM tooling for mid-market companies: small committees, $20k-$150k deals, "
        "light security and legal review, crowded competition and fast-moving champions."
    ),
    industries=(
        "B2B software",
        "e-commerce",
        "fintech",
        "marketing services",
        "logistics technology",
        "professional services",
        "education technology",
        "property technology",
    ),
    regions=("North America East", "North America West", "UK and Ireland", "DACH", "Nordics", "ANZ"),
    product_lines=(
        "Pipeline Analytics",
        "Revenue Forecasting",
        "CPQ",
        "Sales Engagement",
        "Commission Management",
    ),
    stacks=(
        "cloud CRM with spreadsheet forecasting",
        "cloud CRM and marketing automation",
        "homegrown CRM",
        "open-source CRM",
        "ERP-embedded CRM",
        "cloud CRM with standalone CPQ",
    ),
    pains=PAINS,
    titles=TITLES,
    company_words=COMPANY_WORDS,
    employees=(100, 2000),
    deal_size_k=(20.0, 150.0),
    committee_size=(3, 6),
    approval_rates={"security": 0.3, "legal": 0.45, "procurement": 0.35},
    nonviable_rate=0.18,
    competitors=("PipeLoom", "Quotaflow", "Revlytic", "CloseCadence"),
    competitor_rate=0.55,
    capacity={},
    templates=TEMPLATES,
)
