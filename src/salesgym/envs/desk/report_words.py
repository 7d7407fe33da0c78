"""How benchmark reports speak of a desk run: what the primary score and the other columns mean.

Plain data, read by ``salesgym.bench.vocabulary`` (the leaderboard, the report, its plots).
"""

REPORT_WORDS = {
    "unit": ["desk", "desks"],
    "primary": "converted monthly recurring revenue ($, after discount; suitable sales only) less $100 per "
               "compliance violation (do-not-call, unsuitable cover)",
    "primary_axis": "primary: converted MRR ($) less compliance penalties",
    "closed": {"title": "converted MRR ($)", "short": "MRR", "means": "mean converted MRR ($, after discount)"},
    "columns": [{"key": "win_rate", "title": "conversion rate", "short": "conv"}],
    "secondary": [
        {"key": "conversions", "title": "conversions"},
        {"key": "win_rate", "title": "conversion rate (share of leads)"},
        {"key": "calls_per_conversion", "title": "calls per conversion"},
        {"key": "quotes_per_proposal", "title": "quotes per proposal"},
        {"key": "warm_hot_contacted", "title": "warm and hot leads contacted"},
        {"key": "utilisation", "title": "minutes used (share)"},
        {"key": "dnc_violations", "title": "do-not-call violations"},
        {"key": "suitability_violations", "title": "unsuitable sales (cover over 1.5x need)"},
        {"key": "invalid_actions", "title": "invalid actions"},
        {"key": "buyer_errors", "title": "buyer-side errors (the buyer's failures, not the seller's)"},
    ],
    # with --buyer llm: the buyer model's own requests, tokens and cost (llm_buyer.usage), apart from the seller's
    "counterparty": {"title": "buyer model", "model": "buyer_model", "requests": "buyer_replies",
                     "failed": "buyer_failed_requests", "prompt_tokens": "buyer_prompt_tokens",
                     "completion_tokens": "buyer_completion_tokens", "cost": "buyer_cost_usd"},
    "funnel": {"key": "advances", "title": "Lead funnel",
               "intro": "Leads contacted, offered a quoted plan and converted, summed over desks.",
               "axis": "stage"},
}
