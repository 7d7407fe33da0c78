"""The kit's checks can fail: environments with the defects it looks for are caught."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any

import pytest

import salesgym
from salesgym.core.tools import ToolBox, ToolOutcome, ToolSpec
from salesgym.envs.territory.env import TerritoryEnv, TerritoryRules
from salesgym.testing import CHECKS, Case
from salesgym.testing.conformance import check_no_side_channel


class _LeakyRules(TerritoryRules):
    """Counts buyers' scheduled decisions as public: a result's ids then tell whether a reply will come."""

    public_events = TerritoryRules.public_events | {"scheduled", "disposition_changed"}


class _LeakyEnv(TerritoryEnv):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.family = _LeakyRules(self.family.reward_config)


class _PeekingRewardRules(TerritoryRules):
    """Pays a reward that reads the hidden true value of closed-in-the-future deals."""

    def reward(self, ctx, phi_before, phi_after, started, new):  # type: ignore[no-untyped-def]
        return super().reward(ctx, phi_before, phi_after, started, new) + 1e-6 * sum(
            o.true_value for o in ctx.world.opportunities.values())


class _PeekingEnv(TerritoryEnv):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.family = _PeekingRewardRules(self.family.reward_config)


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    for env_id, entry in (("leaky-ids-v0", "_LeakyEnv"), ("peeking-reward-v0", "_PeekingEnv")):
        if env_id not in salesgym.registry():
            salesgym.register(env_id, f"{__name__}:{entry}", spec="salesgym.envs.territory.family:SPEC",
                              n_opportunities=10, horizon_days=30)


class _Outreach(Case):
    """Researches, maps the committee, then writes relevant messages to everyone: replies get scheduled."""

    def driver(self, env: Any) -> Any:
        def call(env: Any, rng: random.Random) -> dict[str, Any]:
            s, w = env._state, env._world
            for oid, opp in sorted(w.opportunities.items()):
                if opp.account_id not in s.researched:
                    return {"tool": "research_account", "args": {"account_id": opp.account_id}}
                if not s.people[opp.stakeholder_ids[0]].known:
                    return {"tool": "find_stakeholders", "args": {"opportunity_id": oid}}
            sid = rng.choice(sorted(p for p, person in s.people.items() if person.known))
            words = " ".join(sorted(s.researched[w.stakeholders[sid].opportunity_id.replace("o", "a")]))
            return {"tool": "send_message", "args": {"stakeholder_id": sid, "subject": "ideas", "body": words}}

        return call


def test_a_side_channel_through_event_ids_is_caught() -> None:
    check_no_side_channel(_Outreach("territory-v0", {"n_opportunities": 10, "horizon_days": 30}), twins=2)  # sound
    with pytest.raises(AssertionError, match="tell the twins apart"):
        check_no_side_channel(_Outreach("leaky-ids-v0"), twins=2)


def test_a_reward_that_reads_hidden_values_is_caught() -> None:
    with pytest.raises(AssertionError, match="rewards depend on a hidden value"):
        CHECKS["confidentiality"](Case("peeking-reward-v0"))


# --- outputs that do not fit their models: a handler's key too many, a key missing, a value of the wrong type ---
def _planted(defect: str) -> Any:
    def spoil(output: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(output)
        first = next(iter(out))
        if defect == "extra":
            out["planted"] = 1
        elif defect == "missing":
            del out[first]
        else:  # mistyped: no output field of the territory is a list of lists
            out[first] = [[1]]
        return out

    def wrap(spec: ToolSpec[Any, Any]) -> ToolSpec[Any, Any]:
        handler = spec.handler

        def run(ctx: Any, a: Any) -> ToolOutcome:
            outcome = handler(ctx, a)
            return outcome._replace(output=spoil(outcome.output))

        return dataclasses.replace(spec, handler=run)

    class Rules(TerritoryRules):
        tools = ToolBox([wrap(s) for s in TerritoryRules.tools.specs.values()])

    class Env(TerritoryEnv):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)  # type: ignore[arg-type]
            self.family = Rules(self.family.reward_config)

    return Env


class _ExtraKeyObservation(TerritoryRules):
    def observe(self, ctx, result, new):  # type: ignore[no-untyped-def]
        obs = super().observe(ctx, result, new)
        return {**obs, "data": {**obs["data"], "planted": True}}


class _ExtraKeyObservationEnv(TerritoryEnv):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.family = _ExtraKeyObservation(self.family.reward_config)


_EXTRA, _MISSING, _MISTYPED = _planted("extra"), _planted("missing"), _planted("mistyped")


@pytest.mark.parametrize(("entry", "said"), [("_EXTRA", "unknown field 'planted'"),
                                             ("_MISSING", "missing required field"),
                                             ("_MISTYPED", "field "),
                                             ("_ExtraKeyObservationEnv", "the first observation's data")])
def test_an_output_or_observation_that_does_not_fit_its_model_is_caught(entry: str, said: str) -> None:
    env_id = f"planted{entry.lower()}-v0"
    if env_id not in salesgym.registry():
        salesgym.register(env_id, f"{__name__}:{entry}", spec="salesgym.envs.territory.family:SPEC",
                          n_opportunities=10, horizon_days=30)
    with pytest.raises(AssertionError, match=said):
        CHECKS["typed_outputs"](Case(env_id))
    CHECKS["typed_outputs"](Case("territory-debug-v0"))  # the same check passes the real environment
