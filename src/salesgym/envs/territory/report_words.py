"""How benchmark reports speak of a territory run: what the primary score and the other columns mean.

Plain data, read by ``salesgym.bench.vocabulary`` (the leaderboard, the report, its plots).
"""

REPORT_WORDS = {
    "unit": ["territory", "territories"],
    "primary": "verified value-weighted milestone advances (Commit and Closed at the agreed price) per 100 "
               "constrained seller hours",
    "primary_axis": "primary: value-weighted verified advances per 100 seller hours",
    "closed": {"title": "closed value ($k)", "short": "closed",
               "means": "mean closed value ($k, after discount)"},
    "columns": [{"key": "win_rate", "title": "win rate", "short": "win"}],
    "secondary": [
        {"key": "closed_value", "title": "closed value ($k)"},
        {"key": "win_rate", "title": "win rate"},
        {"key": "disqualification_accuracy", "title": "disqualification accuracy"},
        {"key": "cycle_time_days", "title": "cycle time (days)"},
        {"key": "utilisation", "title": "seller-hour utilisation"},
        {"key": "invalid_actions", "title": "invalid actions"},
    ],
    "funnel": {"key": "advances", "title": "Milestone funnel",
               "intro": "Verified advances into each milestone, summed over territories (from the verifier's "
                        "evidence ledger).",
               "axis": "milestone"},
}
