"""The territory's reading tools: the portfolio or one deal in full, account research, the buying committee."""

from __future__ import annotations

from operator import attrgetter

from salesgym.core.evidence import Evidence
from salesgym.core.tools import ToolError, ToolOutcome, quote
from salesgym.envs.territory import buyers
from salesgym.envs.territory.buyers import Ctx
from salesgym.envs.territory.contract import (
    MILESTONES,
    RESEARCH_AGAIN_HOURS,
    stamp,
)
from salesgym.envs.territory.tools_args import (
    AccountArgs,
    OppArgs,
    ViewArgs,
)
from salesgym.envs.territory.tools_lookups import done, opportunity, page_of


def view_opportunity(ctx: Ctx, a: ViewArgs) -> ToolOutcome:
    if a.opportunity_id is None:
        from salesgym.envs.territory.observe import portfolio

        return done({"portfolio": portfolio(ctx.state)}, "view_opportunity")
    opp = opportunity(ctx, a.opportunity_id, open_only=False)
    s, w = ctx.state, ctx.world
    deal, crm, account = s.deals[opp.id], s.crm[opp.id], w.accounts[opp.account_id]
    researched = opp.account_id in s.researched
    meetings, more_meetings = page_of(list(deal.meetings), a.page)
    bookings, more_bookings = page_of(list(deal.bookings), a.page)
    out = {
        "opportunity": {
            **opp.public(),
            "status": deal.status,
            "milestone": MILESTONES[deal.milestone],
            "crm": {"stage": crm.stage, "fields": dict(crm.fields), "next_step": crm.next_step},
        },
        "account": {
            **account.public(),
            **({"stack": list(account.stack), "news": [n.headline for n in account.news]} if researched else {}),
        },
        # Stakeholder.public()'s fields written out, then what the seller learnt: a frame and a dict less a person
        "stakeholders": [
            {"id": who.id, "name": who.name, "title": who.title, "role": p.role, "engaged": p.engaged, "left": p.left}
            for who, p in zip(
                map(w.stakeholders.__getitem__, opp.stakeholder_ids),
                map(s.people.__getitem__, opp.stakeholder_ids),
                strict=True,
            )
            if p.known
        ],
        "learned": {
            "keywords": sorted(buyers.known_keywords(ctx, opp)),
            "pains": [w.pain_label(p) for p in sorted(deal.pains_known)],
            "required_approvals": list(deal.approvals_known) if deal.approvals_known is not None else "unknown",
            "budget_band": list(deal.budget_known) if deal.budget_known else "unknown",
            "economic_buyer": deal.eb_hint or "unknown",
            "budget_timing": deal.budget_timing or "unknown",
        },
        "evidence": _evidence_summary(deal.evidence),
        "meetings": [
            {
                "id": m.id,
                "start": stamp(m.start),
                "invited": list(m.invitees),
                "accepted": list(m.accepted),
                "declined": list(m.declined),
                "discovery_done": m.discovery_done,
            }
            for m in map(s.meetings.__getitem__, meetings)
        ],
        "bookings": [
            {"id": b.id, "resource": b.resource, "hours": b.hours, "start": stamp(b.start), "status": b.status}
            for b in map(s.bookings.__getitem__, bookings)
        ],
        "terms": {
            "offered_pct": _pct(deal.offered_discount),
            "buyer_asks_pct": _pct(deal.asked_discount),
            "agreed_pct": _pct(deal.agreed_discount),
            "management_approved_pct": _pct(deal.mgmt_discount),
            "contract_out": deal.contract_out,
        },
        "in_progress": sorted(deal.pending),
    }
    if more_meetings or more_bookings:  # long lists are cut: say how much, and how to see the rest
        out["more"] = {"meetings": more_meetings, "bookings": more_bookings, "note": "pass page=N for older items"}
    return done(out, "view_opportunity")


_SOURCE_ACTOR = attrgetter("source_actor")


def _evidence_summary(evidence: tuple[Evidence, ...]) -> list[dict[str, object]]:
    """Verified buyer evidence on a deal, one line per type: how many, from whom, first and last time."""
    by_type: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_type.setdefault(e.type, []).append(e)
    return [
        {
            "type": t,
            "count": len(es),
            "from": sorted(set(map(_SOURCE_ACTOR, es))),
            "first": stamp(es[0].timestamp),
            "last": stamp(es[-1].timestamp),
        }
        for t, es in by_type.items()
    ]


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 1)


def research_account(ctx: Ctx, a: AccountArgs) -> ToolOutcome:
    account = ctx.world.accounts.get(a.account_id)
    if account is None:
        raise ToolError(f"unknown account {quote(a.account_id)}; ids look like 'a000'")
    if account.id in ctx.state.researched:
        already = {"note": "already researched", "keywords": sorted(ctx.state.researched[account.id])}
        return done(already, "research_account", RESEARCH_AGAIN_HOURS)
    keywords = sorted({n.keyword for n in account.news})
    ctx.emit("account_researched", "agent", {"account_id": account.id, "keywords": keywords})
    return done(
        {
            "account": {**account.public(), "stack": list(account.stack)},
            "news": [n.headline for n in account.news],
            "keywords": keywords,
        },
        "research_account",
    )


def find_stakeholders(ctx: Ctx, a: OppArgs) -> ToolOutcome:
    opp = opportunity(ctx, a.opportunity_id)
    ctx.emit("stakeholders_found", "agent", {"opportunity_id": opp.id, "stakeholder_ids": list(opp.stakeholder_ids)})
    found = [
        {**ctx.world.stakeholders[sid].public(), "left": ctx.state.people[sid].left} for sid in opp.stakeholder_ids
    ]
    return done({"stakeholders": found}, "find_stakeholders")
