"""A user's own agents, as a module file written into a temp directory (the way ``--agent`` finds them in the
current directory). Each call writes a module with a fresh name, so no test sees another's import."""

from __future__ import annotations

import itertools
from pathlib import Path

AGENT_SOURCE = '''
from salesgym.agents.territory.random_policy import RandomPolicy

PROMPT, COMPLETION, CACHED = 1000, 50, 400  # tokens per turn this pretend model reports


class CoinSeller(RandomPolicy):
    """The random seller (so trials differ), reporting token usage like a language-model policy."""

    name = "coin-seller"

    def reset(self, observation, tool_schemas, instructions=""):
        super().reset(observation, tool_schemas, instructions)
        self.turns = 0

    def act(self, observation):
        self.turns += 1
        return super().act(observation)

    def turn_record(self):
        return {"usage": {"prompt_tokens": PROMPT, "completion_tokens": COMPLETION, "cached_tokens": CACHED}}

    def episode_record(self):
        n = self.turns
        usage = {"prompt_tokens": PROMPT * n, "completion_tokens": COMPLETION * n, "cached_tokens": CACHED * n}
        return {"usage": usage, "failures": {}}


def make_seller(seed):
    """A factory: the same seller, built by a function."""
    return CoinSeller(seed)


class Waiter:
    """Duck-typed: no base class, no name, none of the optional methods; waits for the next event."""

    def __init__(self, seed):
        self.seed = seed

    def reset(self, observation, tool_schemas, instructions):
        self.tools = [t["function"]["name"] for t in tool_schemas]

    def act(self, observation):
        return {"tool": "wait", "args": {"hours": None, "until": "next_week"}}


class SeedTeller(Waiter):
    """Reports the seed it was built with (to check what seed code from outside the package gets)."""

    name = "seed-teller"

    def episode_record(self):
        return {"seed": self.seed}


class NoAct:
    def __init__(self, seed):
        pass

    def reset(self, observation, tool_schemas, instructions):
        pass


def broken(seed):
    raise RuntimeError("no model today")


def takes_nothing():
    return Waiter(0)


NOT_CALLABLE = 3


class Quitter(RandomPolicy):
    """Gives up after a few turns, as a language model out of budget would."""

    name = "quitter"

    def reset(self, observation, tool_schemas, instructions=""):
        super().reset(observation, tool_schemas, instructions)
        self.turns = 0

    def act(self, observation):
        from salesgym.agents.base import StopEpisode

        self.turns += 1
        if self.turns > 5:
            raise StopEpisode("token budget spent")
        return super().act(observation)


class Impostor(Waiter):
    name = "random"  # a registered policy's name
'''

_counter = itertools.count()


def write_agent_module(directory: Path, source: str = AGENT_SOURCE) -> str:
    """Write ``source`` as a new module in ``directory``; returns its name."""
    name = f"my_agents_{next(_counter)}_{abs(hash(str(directory))) % 10_000}"
    (directory / f"{name}.py").write_text(source)
    return name
