"""`crm-stage`: work the deals furthest along first, by verified milestone and then by CRM stage.

The classic pipeline-review habit: whatever is closest to the finish gets the next hour. It keeps its CRM
stage in step with the verified milestone (the CRM hygiene a manager asks for) and runs the standard
playbook, but does not plan capacity, warm reluctant economic buyers or drop deals that cannot close, so it
spreads itself over every deal that has something to do.
"""

from __future__ import annotations

from salesgym.agents.base import call
from salesgym.agents.territory.memory import Deal
from salesgym.agents.territory.playbook import Move, Style
from salesgym.agents.territory.seller import ScriptedSeller
from salesgym.envs.territory.contract import OPEN_CRM_STAGES

STAGE_FOR_MILESTONE = (
    "Prospecting", "Discovery", "Qualified", "Solution", "Proposal", "Negotiation", "Commit", "Commit",
)


class CrmStage(ScriptedSeller):
    name = "crm-stage"
    style = Style(disqualify=False, warm_economic_buyer=False, follow_up=False)

    @staticmethod
    def crm_rank(deal: Deal) -> int:
        return OPEN_CRM_STAGES.index(deal.crm_stage) if deal.crm_stage in OPEN_CRM_STAGES else 0

    def order(self, deals: list[Deal]) -> list[Deal]:
        return sorted(deals, key=lambda d: (-d.stage, -self.crm_rank(d), -d.value_mid, d.id))

    def choose(self) -> Move | None:
        for deal in self.order(self.mem.open_deals()):
            wanted = STAGE_FOR_MILESTONE[deal.stage]
            if OPEN_CRM_STAGES.index(wanted) > self.crm_rank(deal):
                move = Move(deal.id, call("update_crm", opportunity_id=deal.id, stage=wanted, fields=[],
                                          next_step=None), "keep the CRM in step")
                if self.allowed(move):
                    return move
        return super().choose()
