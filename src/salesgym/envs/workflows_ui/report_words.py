"""How benchmark reports speak of a computer-use workflows run: the same tasks, verdict and metrics as the
workflows family's (the same verifier judges the end state, whichever way the agent worked).

Plain data, read by ``salesgym.bench.vocabulary``.
"""

from salesgym.envs.workflows.report_words import REPORT_WORDS

__all__ = ["REPORT_WORDS"]
