"""The one OpenAI-compatible chat client of the package and its configuration, below every family and policy:
the LLM policy (``salesgym.agents.llm``), the desk's language-model buyer and voice, and the adapters use it
(``client.ChatClient``: key lookup, retries with backoff, timeouts, usage; ``config.LLMConfig``); and the tool prompt
for chat templates that drop the tools they are given (``tool_prompt``), which the adapters and the SFT export share."""
