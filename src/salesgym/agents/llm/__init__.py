"""The generic language-model policy: any OpenAI-compatible chat-completions endpoint plays any registered
environment with that environment's tools (docs/llm.md).

>>> from salesgym.agents.llm import LLMConfig, sampling_seed
>>> LLMConfig(model="m").context, LLMConfig().tool_choice, LLMConfig().context_tokens is None
('state', 'auto', True)
>>> sampling_seed(7) == sampling_seed(7) != sampling_seed(8)
True

Importing this package does not import the ``openai`` SDK; making a client does (``pip install
'salesgym[llm]'``), and ``ensure_sdk()`` checks for it up front.
"""

from __future__ import annotations

from salesgym.agents.llm.policy import FAILURE_KINDS, LLMPolicy, sampling_seed
from salesgym.llm.client import ensure_sdk
from salesgym.llm.config import LLMConfig

__all__ = ["FAILURE_KINDS", "LLMConfig", "LLMPolicy", "ensure_sdk", "sampling_seed"]
