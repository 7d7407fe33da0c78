"""Healthcare: clinical workflow, EHR integration and revenue-cycle software for provider organisations.

HIPAA makes security and legal review (and a business associate agreement) the norm; deals of $80k-$600k
move slowly through clinical, IT and finance stakeholders, and thin operating margins make budgets fragile.
"""

from __future__ import annotations

from salesgym.envs.territory.catalog import FamilySpec, Pain, TemplateSpec

PAINS: tuple[Pain, ...] = (
    Pain(
        id="claim_denials",
        label="rising claim denials",
        keywords=("claim denials", "denial rate", "payer rejections"),
        headlines=(
            "{company} reports its denial rate climbing for a third straight quarter",
            "{company} finance chief flags claim denials as the top threat to margins",
        ),
    ),
    Pain(
        id="prior_auth",
        label="prior authorization delays",
        keywords=("prior authorization", "authorization backlog", "delayed procedures"),
        headlines=(
            "{company} surgeons complain of delayed procedures while paperwork waits",
            "{company} adds staff to clear a prior authorization queue of several weeks",
        ),
    ),
    Pain(
        id="ehr_integration",
        label="EHR integration gaps",
        keywords=("ehr integration", "interface engine", "hl7 feeds"),
        headlines=(
            "{company} selects a new interface engine as integration projects stall",
            "{company} IT team struggles with brittle HL7 feeds from affiliated labs",
            "{company} names an EHR integration lead after a failed go-live",
        ),
    ),
    Pain(
        id="clinician_burnout",
        label="documentation burden",
        keywords=("clinician burnout", "documentation burden", "after-hours charting"),
        headlines=(
            "{company} survey finds after-hours charting driving physician exits",
            "{company} launches a task force on clinician burnout",
        ),
    ),
    Pain(
        id="hipaa_exposure",
        label="HIPAA exposure",
        keywords=("hipaa audit", "phi exposure", "privacy complaint"),
        headlines=(
            "{company} notifies patients of PHI exposure after a vendor error",
            "{company} prepares for a HIPAA audit following a privacy complaint",
        ),
    ),
    Pain(
        id="patient_throughput",
        label="bed flow and boarding",
        keywords=("patient throughput", "bed management", "emergency department boarding"),
        headlines=(
            "{company} reports record emergency department boarding times this winter",
            "{company} opens a command center to improve patient throughput",
        ),
    ),
    Pain(
        id="nurse_staffing",
        label="nurse staffing costs",
        keywords=("nurse staffing", "travel nurse", "agency labor"),
        headlines=(
            "{company} cuts reliance on agency labor after a costly year",
            "{company} travel nurse spending tops budget by double digits",
        ),
    ),
    Pain(
        id="system_consolidation",
        label="post-merger consolidation",
        keywords=("health system merger", "ehr consolidation", "newly acquired clinics"),
        headlines=(
            "{company} announces a health system merger with a regional provider",
            "{company} begins EHR consolidation across newly acquired clinics",
        ),
    ),
    Pain(
        id="value_based_care",
        label="value-based contract pressure",
        keywords=("value-based care", "readmission penalties", "quality scores"),
        headlines=(
            "{company} hit with readmission penalties for a second year",
            "{company} signs first value-based care contract with a regional insurer",
        ),
    ),
    Pain(
        id="charge_capture",
        label="revenue leakage",
        keywords=("charge capture", "coding backlog", "unbilled accounts"),
        headlines=(
            "{company} audit finds missed charge capture in outpatient services",
            "{company} coding backlog leaves millions in unbilled accounts",
        ),
    ),
)

TITLES: dict[str, tuple[str, ...]] = {
    "champion": (
        "Director of Clinical Informatics",
        "Revenue Cycle Director",
        "Nurse Informaticist",
        "Director of Patient Access",
    ),
    "economic_buyer": ("CFO", "COO", "Chief Medical Information Officer", "VP Revenue Cycle"),
    "technical_evaluator": ("EHR Analyst", "Integration Engineer", "Clinical Applications Manager"),
    "security": ("HIPAA Security Officer", "Information Security Manager", "Chief Privacy Officer"),
    "legal": ("Associate General Counsel", "Compliance Counsel", "Contracts Administrator"),
    "procurement": ("Supply Chain Director", "Purchasing Manager", "Vendor Management Lead"),
    "user": ("Charge Nurse", "Billing Specialist", "Hospitalist", "Patient Access Representative"),
    "blocker": ("Director of IT Infrastructure", "Chief Nursing Officer", "EHR Team Lead"),
}

COMPANY_WORDS: tuple[str, ...] = (
    "Riverbend", "Clearspring", "Hillcrest", "Sunmeadow", "Bayview", "Stonebridge", "Greenvale", "Lakeshore",
    "Pinecrest", "Wellhaven", "Brookmere", "Calderwood", "Elmstead", "Fairmeadow", "Glenhollow", "Heathfield",
    "Kindlewood", "Lindenwood", "Mistwood", "Oakhollow", "Primrose", "Quietwater", "Rosemont", "Silverbrook",
    "Tamarind", "Valleybrook", "Westbrook", "Alderbank", "Bramblewood", "Cypresswood", "Dawnridge", "Everbrook",
    "Harmonia", "Linwood",
)  # fmt: skip

TEMPLATES: dict[str, TemplateSpec] = {
    t.name: t
    for t in (
        TemplateSpec(
            name="standard",
            description=(
                "An ordinary provider quarter: capital and operating budgets are approved late by finance "
                "committees, so budget confirmation comes near quarter end while HIPAA reviews run long."
            ),
            mechanisms=("late_budget",),
        ),
        TemplateSpec(
            name="compliance_gauntlet",
            description=(
                "Every deal needs procurement and legal (BAAs, security questionnaires) on top of the usual "
                "HIPAA review, and committees balloon to include clinical, IT, compliance and finance. Hard "
                "because desk hours run out and the real decision-maker hides among many stakeholders."
            ),
            mechanisms=("procurement_heavy", "large_committee"),
            params={"nonviable_rate": 0.24},
        ),
        TemplateSpec(
            name="budget_freeze",
            description=(
                "A reimbursement cut triggers spending freezes across many systems mid-episode. Hard "
                "because qualified deals suddenly cannot confirm budget or sign, and the seller must shift "
                "hours to accounts the freeze spared."
            ),
            mechanisms=("budget_freeze",),
            params={"nonviable_rate": 0.3},
        ),
        TemplateSpec(
            name="champion_churn",
            description=(
                "Informatics and revenue-cycle leaders are poached by other systems: some champions leave "
                "mid-episode. Hard because long clinical cycles give the loss time to happen."
            ),
            mechanisms=("champion_leaves",),
        ),
    )
}

FAMILY = FamilySpec(
    name="healthcare",
    description=(
        "Clinical workflow, EHR integration and revenue-cycle software for provider organisations: "
        "HIPAA-driven security and legal review, $80k-$600k deals, slow cycles and fragile budgets."
    ),
    industries=(
        "hospital system",
        "academic medical center",
        "ambulatory care network",
        "behavioral health",
        "specialty clinic group",
        "home health",
        "diagnostic laboratory",
        "rural critical access hospital",
    ),
    regions=("US Northeast", "US Southeast", "US Midwest", "US Southwest", "US West"),
    product_lines=(
        "Clinical Workflow",
        "EHR Integration Hub",
        "Revenue Cycle Management",
        "Prior Authorization Automation",
        "Patient Flow",
    ),
    stacks=(
        "single-vendor EHR",
        "multiple EHRs after mergers",
        "legacy practice management system",
        "outsourced billing service",
        "on-prem interface engine",
        "cloud EHR for ambulatory sites",
    ),
    pains=PAINS,
    titles=TITLES,
    company_words=COMPANY_WORDS,
    employees=(500, 40000),
    deal_size_k=(80.0, 600.0),
    committee_size=(4, 7),
    approval_rates={"security": 0.92, "legal": 0.9, "procurement": 0.55},
    nonviable_rate=0.22,
    competitors=("Caretrellis", "Medivane", "Clinexa", "Pulsebridge"),
    competitor_rate=0.45,
    capacity={"legal": 4.0},
    templates=TEMPLATES,
)
