"""The conformance kit every registered environment passes (the promises of docs/architecture.md).

Every id in ``salesgym.registry()`` is a :class:`Case` by default, so a new family gets the whole suite by
registering its ids; a scenario worth its own run is one more line::

    from salesgym.testing import CHECKS, Case, registered_cases

    CASES = (*registered_cases(), Case("territory-v0", {"n_opportunities": 10, "family": "healthcare"}))

    @pytest.mark.parametrize("case", CASES, ids=str)
    @pytest.mark.parametrize("check", CHECKS)
    def test_conformance(case: Case, check: str) -> None:
        CHECKS[check](case)

Each check asserts one promise: the API shape, same-seed equality (in process and across processes), replay
equals live, clone independence, strict OpenAI and MCP schemas that accepted calls conform to, bad input as
data, confidentiality of observations, tool outputs, rewards and ``info``, no side channel (a twin world with
other hidden truth looks the same until a public event), consistent results at the end and at the ceiling,
the Gymnasium adapter, and no blind replay (the calls that solved one instance solve at most one of twenty
others). A family plugs its own knowledge in through a ``conformance`` module its registered spec names
(``FamilySpec.conformance``: ``random_call``, ``hidden_variant``, ``LeakScanner``, ``reference_calls``,
``solved`` and ``same_observation``, for observations equal up to a renderer's noise); without one, the generic
driver and the generic checks still run. A family registered at run time (outside ``salesgym/__init__.py``) is
registered the same way in the interpreter the cross-process check starts.
"""

from __future__ import annotations

from salesgym.testing.conformance import CHECKS, Case, registered_cases

__all__ = ["CHECKS", "Case", "registered_cases"]
