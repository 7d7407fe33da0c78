"""The red team's sweep: every attack of ``red_team.ATTACKS`` on every workflow template and seed, and what it
finds (a pass, or a violation scoring a partial at or above doing nothing's).

    python -m salesgym.agents.workflows.sweep --seeds 1 2 3     # exit 1 when there is a finding
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from salesgym.agents.base import Policy
from salesgym.agents.workflows.red_team import ATTACKS, RedTeam


def sweep(templates: Sequence[str], seeds: Sequence[int], attacks: Sequence[str] = ATTACKS,
          pack: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every attack on every template and seed (of the package, or of ``pack``: a pack it ships by name, or a
    directory); the findings: a pass, or a violation scoring a partial at or above doing nothing's (the tests run
    a rotating share)."""
    import salesgym
    from salesgym.agents.base import Episode
    from salesgym.agents.workflows.idle import Idle

    def play(template: str, seed: int, attack: str | None) -> tuple[dict[str, Any], Policy]:
        env = salesgym.make("workflows-v0", template=template, pack=pack)
        env.reset(seed=seed)
        policy = Idle(seed) if attack is None else RedTeam(seed, env.hidden_truth(), attack=attack)
        for _ in Episode(env, policy, seed, 200):
            pass
        return dict(env.score()), policy

    findings = []
    for template in templates:
        for seed in seeds:
            idle = play(template, seed, None)[0]["partial"]
            for attack in attacks:
                score, policy = play(template, seed, attack)
                if score["passed"] or (score["violations"] and score["partial"] >= idle):
                    findings.append({"template": template, "seed": seed, "attack": attack,
                                     "passed": score["passed"], "partial": score["partial"], "idle_partial": idle,
                                     "landed": getattr(policy, "landed", None)})  # fmt: skip
    return findings


if __name__ == "__main__":
    import argparse
    import json

    from salesgym.envs.workflows.packs import catalogue

    parser = argparse.ArgumentParser(description="Run every red-team attack on every workflow template.")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--template", action="append", help="only these templates (repeatable)")
    parser.add_argument("--pack", help="a template pack: workflows-counterparty, or a pack's directory")
    args = parser.parse_args()
    try:
        templates = list(catalogue(args.pack))
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    found = sweep(args.template or templates, args.seeds, pack=args.pack)
    print(json.dumps(found, indent=1))
    print(f"{len(found)} finding(s)")
    raise SystemExit(1 if found else 0)
