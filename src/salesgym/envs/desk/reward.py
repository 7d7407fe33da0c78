"""The per-step reward: the change of the score as the seller sees it (docs/desk.md, "Reward").

The score (``verifier.py``) is converted MRR (each suitable accepted offer's premium after discount, as the
buyer accepted it) minus ``DNC_PENALTY`` per do-not-call violation and ``SUITABILITY_PENALTY`` per sale
outside the buyer's suitable cover. All are public the moment they happen: the buyer's answer, the premium
and the compliance verdict are in the tool result, and a lead's do-not-call status is on its record. So the
potential

    Φ(s) = converted MRR − DNC_PENALTY · DNC violations − SUITABILITY_PENALTY · suitability violations

is a function of public information only, and the per-step reward Φ(s') − Φ(s) telescopes to the score:
the return never pays for delay, for ending early or truncating, nor for quoting, proposing or anything else
the score does not value (a seller that quotes and proposes without converting earns exactly nothing, like
one that does nothing). A refused call changes neither term: its reward is 0 (its cost is the time lost and
the invalid-action ceiling).
"""

from __future__ import annotations

from salesgym.envs.desk.contract import DNC_PENALTY, SUITABILITY_PENALTY
from salesgym.envs.desk.state import DeskState


def potential(state: DeskState) -> float:
    return state.mrr - DNC_PENALTY * state.dnc_violations - SUITABILITY_PENALTY * state.suitability_violations
