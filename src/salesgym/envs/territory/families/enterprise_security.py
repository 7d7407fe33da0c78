"""Enterprise security: SIEM, XDR and identity platforms sold to large enterprises.

Big committees, $150k-$1.2M deals, security and legal review on almost every deal, and an incumbent in
most accounts. The hard part is finding real authority in a crowded committee and surviving the review.
"""

from __future__ import annotations

from salesgym.envs.territory.catalog import FamilySpec, Pain, TemplateSpec

PAINS: tuple[Pain, ...] = (
    Pain(
        id="alert_fatigue",
        label="alert fatigue in the SOC",
        keywords=("alert fatigue", "false positives", "soc burnout"),
        headlines=(
            "{company} security team reports alert fatigue as headcount stays flat",
            "{company} analysts chase thousands of false positives a week, internal memo says",
        ),
    ),
    Pain(
        id="breach_response",
        label="recent incident",
        keywords=("ransomware attack", "data breach", "incident response"),
        headlines=(
            "{company} discloses ransomware attack affecting regional operations",
            "{company} confirms data breach and hires an outside forensics firm",
            "{company} board orders review of incident response readiness",
        ),
    ),
    Pain(
        id="identity_sprawl",
        label="identity sprawl",
        keywords=("identity sprawl", "privileged access", "orphaned accounts"),
        headlines=(
            "{company} internal review finds thousands of orphaned accounts after layoffs",
            "{company} tightens privileged access following contractor misuse",
        ),
    ),
    Pain(
        id="compliance_audit",
        label="audit findings",
        keywords=("audit finding", "sox compliance", "control gaps"),
        headlines=(
            "{company} discloses a material audit finding on access reviews",
            "{company} shareholders press for faster fixes to control gaps",
        ),
    ),
    Pain(
        id="siem_cost",
        label="SIEM cost overrun",
        keywords=("log ingestion costs", "siem renewal", "retention limits"),
        headlines=(
            "{company} faces steep SIEM renewal as log volumes triple",
            "{company} CISO caps log ingestion costs in annual budget review",
        ),
    ),
    Pain(
        id="cloud_visibility",
        label="cloud blind spots",
        keywords=("multi-cloud", "cloud misconfiguration", "cloud workloads"),
        headlines=(
            "{company} announces move to a multi-cloud architecture",
            "{company} exposed storage bucket traced to a cloud misconfiguration",
        ),
    ),
    Pain(
        id="zero_trust",
        label="legacy perimeter and VPN",
        keywords=("zero trust", "vpn replacement", "remote access"),
        headlines=(
            "{company} board mandates a zero trust roadmap by year end",
            "{company} accelerates VPN replacement after shift to hybrid work",
        ),
    ),
    Pain(
        id="merger_integration",
        label="M&A security integration",
        keywords=("acquisition integration", "inherited tooling", "merged networks"),
        headlines=(
            "{company} closes purchase of a rival; security leaders warn of inherited tooling",
            "{company} sets an 18-month timeline for acquisition integration",
        ),
    ),
    Pain(
        id="staffing_gap",
        label="security staffing gap",
        keywords=("analyst shortage", "unfilled security roles", "managed detection"),
        headlines=(
            "{company} turns to managed detection amid an analyst shortage",
            "{company} reports dozens of unfilled security roles in annual filing",
        ),
    ),
    Pain(
        id="disclosure_rules",
        label="new disclosure and insurance pressure",
        keywords=("disclosure rules", "board reporting", "cyber insurance"),
        headlines=(
            "{company} prepares cyber risk board reporting under new disclosure rules",
            "{company} sees cyber insurance premiums double at renewal",
        ),
    ),
)

TITLES: dict[str, tuple[str, ...]] = {
    "champion": (
        "Director of Security Operations",
        "SOC Manager",
        "Head of Identity and Access Management",
        "Principal Security Engineer",
    ),
    "economic_buyer": ("CISO", "CIO", "VP Information Security"),
    "technical_evaluator": (
        "Security Architect",
        "Detection Engineering Lead",
        "IAM Engineer",
        "Staff Security Engineer",
    ),
    "security": ("Director of GRC", "Risk and Compliance Manager", "Third-Party Risk Analyst"),
    "legal": ("Deputy General Counsel", "Privacy Counsel", "Senior Contracts Counsel"),
    "procurement": ("Strategic Sourcing Manager", "IT Category Manager", "Global Procurement Director"),
    "user": ("SOC Analyst", "Threat Hunter", "Incident Responder"),
    "blocker": ("Enterprise Architect", "VP Infrastructure", "Network Security Manager"),
}

COMPANY_WORDS: tuple[str, ...] = (
    "Granitefall", "Ironbark", "Westmarch", "Stormhaven", "Blackridge", "Crestline", "Deepwater", "Eastgate",
    "Frostbury", "Goldmere", "Highcliff", "Irongate", "Kingsbrook", "Lockhart", "Meridian", "Northstar",
    "Oakmont", "Pellridge", "Quarrystone", "Ravensworth", "Silverpine", "Thornbury", "Umberlane", "Valemont",
    "Whitford", "Ashgrove", "Bellweather", "Coldharbor", "Dovecourt", "Everhold", "Fairhaven", "Greystone",
    "Hartwell", "Larchmont",
)  # fmt: skip

TEMPLATES: dict[str, TemplateSpec] = {
    t.name: t
    for t in (
        TemplateSpec(
            name="standard",
            description=(
                "An ordinary enterprise quarter: budgets are released late, so qualification waits on the "
                "fiscal calendar while security and legal reviews still need to be started early."
            ),
            mechanisms=("late_budget",),
        ),
        TemplateSpec(
            name="big_committee",
            description=(
                "Buying committees of 7-9 with misleading titles: the person called 'VP' may have no budget "
                "and a staff engineer may hold the veto. Hard because authority must be discovered, not read "
                "off the org chart."
            ),
            mechanisms=("large_committee",),
        ),
        TemplateSpec(
            name="incumbent_displacement",
            description=(
                "A legacy SIEM/XDR incumbent is in nearly every account and many deals are locked in by a "
                "multi-year renewal. Hard because the seller must tell winnable displacements from locked "
                "accounts early, and fight the incumbent's counter-moves on the rest."
            ),
            mechanisms=("entrenched_competitor", "many_unviable"),
            params={"competitor_rate": 0.9, "nonviable_rate": 0.32},
        ),
        TemplateSpec(
            name="reorg_shuffle",
            description=(
                "A wave of security reorganisations: some champions leave and some budgets freeze "
                "mid-episode. Hard because a deal that looked qualified can lose both its sponsor and its "
                "money, and the seller must re-thread or re-prioritise quickly."
            ),
            mechanisms=("champion_leaves", "budget_freeze"),
        ),
    )
}

FAMILY = FamilySpec(
    name="enterprise_security",
    description=(
        "SIEM, XDR and identity platforms for large enterprises: committees of 5-8, $150k-$1.2M deals, "
        "security and legal approval on almost every deal, and an incumbent in most accounts."
    ),
    industries=(
        "banking",
        "insurance",
        "telecommunications",
        "energy and utilities",
        "retail",
        "manufacturing",
        "pharmaceuticals",
        "technology",
    ),
    regions=("North America", "EMEA", "APAC", "LATAM"),
    product_lines=("SIEM", "XDR", "Identity Governance", "Privileged Access Management", "Cloud Security Posture"),
    stacks=(
        "on-prem SIEM",
        "cloud-native SIEM",
        "legacy antivirus and VPN",
        "EDR with an outsourced SOC",
        "homegrown log pipeline",
        "directory-only identity",
    ),
    pains=PAINS,
    titles=TITLES,
    company_words=COMPANY_WORDS,
    employees=(2000, 80000),
    deal_size_k=(150.0, 1200.0),
    committee_size=(5, 8),
    approval_rates={"security": 0.97, "legal": 0.92, "procurement": 0.6},
    nonviable_rate=0.2,
    competitors=("Bastionix", "Vigilor", "Ironveil", "Watchgrid", "Keystrata"),
    competitor_rate=0.65,
    capacity={"se": 12.0, "legal": 4.0},
    templates=TEMPLATES,
)
