"""How benchmark reports speak of a workflows run: what the primary score and the other columns mean.

Plain data, read by ``salesgym.bench.vocabulary`` (the leaderboard, the report, its plots).
"""

REPORT_WORDS = {
    "unit": ["task", "tasks"],
    "primary": "1 if the verifier passes the task (all assertions, no unexpected change, no forbidden action), "
               "else 0: its mean is the pass rate",
    "primary_axis": "pass rate (share of tasks passed)",
    "closed": {"title": "partial score", "short": "partial", "means": "mean partial score (share of checks passed)"},
    "columns": [],
    "secondary": [
        {"key": "closed_value", "title": "partial score (share of checks passed)"},
        {"key": "tool_calls", "title": "tool calls"},
        {"key": "messages_received", "title": "messages received"},
        {"key": "invalid_actions", "title": "invalid actions"},
    ],
    "funnel": None,
}
