"""Serving salesgym environments to agents in other processes: an HTTP service (``salesgym serve``), an MCP
server (``salesgym mcp``) and a terminal player (``salesgym play``). See README.md here and docs/serve.md.

Importing this package imports no web or MCP library; each module that needs one imports it itself.
"""
