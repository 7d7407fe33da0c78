"""Public sector: case management, permitting, records and grants software for agencies and local government.

Procurement is almost always required, budgets follow a fixed fiscal cycle, and more opportunities are not
viable (no appropriation this year, a sole-source incumbent, a solicitation already written for someone else).
"""

from __future__ import annotations

from salesgym.envs.territory.catalog import FamilySpec, Pain, TemplateSpec

PAINS: tuple[Pain, ...] = (
    Pain(
        id="legacy_modernization",
        label="legacy system risk",
        keywords=("legacy mainframe", "modernization mandate", "end-of-life system"),
        headlines=(
            "{company} receives state funding to meet a modernization mandate",
            "{company} warns its legacy mainframe has no remaining vendor support",
        ),
    ),
    Pain(
        id="service_backlog",
        label="constituent service backlog",
        keywords=("permit backlog", "caseload backlog", "constituent complaints"),
        headlines=(
            "{company} permit backlog stretches to six months, council told",
            "{company} faces rising constituent complaints over slow service",
        ),
    ),
    Pain(
        id="grant_deadlines",
        label="grant spend-down pressure",
        keywords=("grant funding", "federal grant", "spend-down deadline"),
        headlines=(
            "{company} awarded federal grant for digital services",
            "{company} risks losing unspent grant funding ahead of a spend-down deadline",
        ),
    ),
    Pain(
        id="audit_finding",
        label="audit findings",
        keywords=("audit finding", "inspector general", "material weakness"),
        headlines=(
            "{company} cited for a material weakness in its annual financial audit",
            "{company} responds to an inspector general report on records handling",
        ),
    ),
    Pain(
        id="cyber_mandate",
        label="cybersecurity mandate",
        keywords=("cybersecurity mandate", "ransomware recovery", "fedramp authorization"),
        headlines=(
            "{company} completes ransomware recovery after weeks of service outages",
            "{company} must comply with a new statewide cybersecurity mandate",
        ),
    ),
    Pain(
        id="records_transparency",
        label="records and transparency load",
        keywords=("public records requests", "records retention", "transparency portal"),
        headlines=(
            "{company} struggles to answer a surge in public records requests",
            "{company} launches a transparency portal after press criticism",
        ),
    ),
    Pain(
        id="workforce_retirement",
        label="retiring staff and knowledge loss",
        keywords=("retirement wave", "staffing vacancies", "knowledge loss"),
        headlines=(
            "{company} braces for a retirement wave among senior staff",
            "{company} reports staffing vacancies in a third of its field offices",
        ),
    ),
    Pain(
        id="interagency_data",
        label="data sharing across agencies",
        keywords=("interagency data sharing", "siloed databases", "data exchange"),
        headlines=(
            "{company} signs an agreement on interagency data sharing",
            "{company} oversight committee blames siloed databases for duplicate payments",
        ),
    ),
    Pain(
        id="budget_scrutiny",
        label="cost scrutiny",
        keywords=("budget shortfall", "cost savings target", "taxpayer scrutiny"),
        headlines=(
            "{company} projects a budget shortfall for the coming fiscal year",
            "{company} leadership sets a cost savings target for every department",
        ),
    ),
    Pain(
        id="emergency_readiness",
        label="emergency readiness",
        keywords=("emergency dispatch", "disaster recovery", "continuity of operations"),
        headlines=(
            "{company} reviews disaster recovery plans after a regional flood",
            "{company} emergency dispatch outage prompts calls for an upgrade",
        ),
    ),
)

TITLES: dict[str, tuple[str, ...]] = {
    "champion": ("Deputy Director of Operations", "Program Manager", "Digital Services Lead", "Chief Data Officer"),
    "economic_buyer": ("Agency Director", "Chief Financial Officer", "City Manager", "Deputy Secretary"),
    "technical_evaluator": ("Systems Analyst", "IT Project Manager", "Solutions Architect"),
    "security": ("Chief Information Security Officer", "Information Security Officer", "Cybersecurity Program Manager"),
    "legal": ("Agency Counsel", "Assistant County Attorney", "Deputy City Attorney"),
    "procurement": ("Contracting Officer", "Procurement Officer", "Purchasing Agent", "Chief Procurement Officer"),
    "user": ("Case Worker", "Permit Technician", "Dispatcher", "Program Analyst"),
    "blocker": ("Budget Office Analyst", "IT Division Director", "Records Manager"),
}

COMPANY_WORDS: tuple[str, ...] = (
    "Ashcombe", "Bridgemoor", "Canterfield", "Dalesford", "Eastmoor", "Fallowmere", "Glenmorrow", "Hawthorne",
    "Ironwood", "Jasperton", "Kettleby", "Lowmarsh", "Millbrook", "Newhollow", "Oxleigh", "Prairieview",
    "Queensbury", "Rockmoor", "Stillwater", "Tallowdale", "Upperdale", "Verdant", "Wrenfield", "Yellowpine",
    "Alderbrook", "Bexmoor", "Coppervale", "Dunholt", "Elmridge", "Foxmere", "Greenhollow", "Hazelton",
    "Kirkwell", "Lanford",
)  # fmt: skip

TEMPLATES: dict[str, TemplateSpec] = {
    t.name: t
    for t in (
        TemplateSpec(
            name="standard",
            description=(
                "An ordinary fiscal year: appropriations land late and most budget confirmations arrive near "
                "year end. Hard because sellers who push early waste hours on buyers who cannot yet commit."
            ),
            mechanisms=("late_budget",),
        ),
        TemplateSpec(
            name="procurement_gauntlet",
            description=(
                "Formal solicitations for everything: every deal needs procurement and legal, the "
                "procurement desk is scarce and lead times are longer. Hard because desk hours, not buyer "
                "interest, become the bottleneck and must go to the deals most likely to close."
            ),
            mechanisms=("procurement_heavy",),
        ),
        TemplateSpec(
            name="fiscal_cliff",
            description=(
                "A revenue shortfall freezes discretionary spending mid-episode and what remains is released "
                "only at year end. Hard because the freeze and the late release compound: timing, not "
                "persuasion, decides which deals can close."
            ),
            mechanisms=("budget_freeze", "late_budget"),
            params={"nonviable_rate": 0.35},
        ),
        TemplateSpec(
            name="zombie_pipeline",
            description=(
                "An inherited pipeline full of deals with no appropriation, a sole-source incumbent or a "
                "solicitation already wired for someone else. Hard because most of the work is finding and "
                "disqualifying dead deals early, without dropping the few live ones."
            ),
            mechanisms=("many_unviable",),
            params={"nonviable_rate": 0.45},
        ),
    )
}

FAMILY = FamilySpec(
    name="public_sector",
    description=(
        "Case management, permitting, records and grants software for state and local government: "
        "procurement on almost every deal, fixed budget cycles, $100k-$900k deals and many non-viable ones."
    ),
    industries=(
        "state agency",
        "county government",
        "city government",
        "transit authority",
        "public university",
        "school district",
        "port authority",
        "water utility",
    ),
    regions=("Northeast", "Southeast", "Midwest", "Mountain West", "Pacific", "Federal"),
    product_lines=(
        "Case Management",
        "Permitting and Licensing",
        "Records Management",
        "Grants Management",
        "Citizen Services Portal",
    ),
    stacks=(
        "mainframe",
        "off-the-shelf case system from the 2000s",
        "paper and spreadsheets",
        "shared-services cloud",
        "state data center",
        "regional consortium hosting",
    ),
    pains=PAINS,
    titles=TITLES,
    company_words=COMPANY_WORDS,
    employees=(200, 60000),
    deal_size_k=(100.0, 900.0),
    committee_size=(4, 8),
    approval_rates={"security": 0.6, "legal": 0.75, "procurement": 0.98},
    nonviable_rate=0.3,
    competitors=("CivicForge", "Govanta", "Publica Systems", "Ledgerline"),
    competitor_rate=0.35,
    capacity={"procurement": 3.0},
    templates=TEMPLATES,
)
