"""`salesgym demo`: the built-in seller's readable trace, and clear errors for bad arguments."""

from __future__ import annotations

from typer.testing import CliRunner

from salesgym.cli import app


def test_demo_prints_a_trace_with_buyer_replies_milestones_and_the_score() -> None:
    result = CliRunner().invoke(app, ["demo", "--seed", "7", "-n", "5", "--horizon-days", "30"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "research_account(" in out and "send_message(" in out  # the seller's tool calls
    assert "<-" in out  # buyer replies arriving later
    assert "verified milestone -> Engaged" in out  # milestones advancing on evidence
    assert "verifier score" in out and "primary" in out


def test_demo_refuses_bad_arguments_without_a_traceback() -> None:
    for args in (["demo", "-n", "7"], ["demo", "--family", "nope"], ["demo", "--horizon-days", "45"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "error:" in result.output and "Traceback" not in result.output
