"""The buyer model's accounting in reports: a run whose buyers a language model played (a real loopback server,
scripted) gets a table of the buyer's requests, tokens and cost in ``salesgym report`` and one figure in the
episode view; a rule-based run gets neither, its report as before."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from llm_buyer_helpers import KEY_ENV, reply
from rich.console import Console
from typer.testing import CliRunner

pytest.importorskip("openai")

from salesgym.bench import counterparty, view
from salesgym.bench import splits as sp
from salesgym.bench import vocabulary as vc
from salesgym.bench.report import write_report
from salesgym.bench.store import EpisodeRecord, Store
from salesgym.cli import app
from salesgym.envs.desk.llm_buyer import request_seed
from salesgym.testing.scripted_openai import ScriptedOpenAI

MOVES = [reply("reject", "Not yet.", "not_convinced"), reply("accept", "Fine, I'll take it.")] * 20
WORDS = vc.for_family("desk").counterparty


def _bench(db: Path, *extra: str) -> str:
    result = CliRunner().invoke(app, ["bench", "--family", "desk", "--episodes", "1", "-p", "quote-then-fit",
                                      "--workers", "1", "--db", str(db), *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def _model_buyer(db: Path, *prices: str) -> tuple[int, str]:
    """A bench run whose buyers the scripted model plays; how many requests it was sent, and what bench printed."""
    first = sp.load("desk-eval").territories[0]
    scripts = {request_seed(first.seed, f"L{i:03d}"): MOVES for i in range(first.n_opportunities)}
    with ScriptedOpenAI(scripts) as server:
        printed = _bench(db, "--buyer", "llm", "--buyer-model", "scripted-buyer", "--buyer-base-url",
                         server.base_url, "--buyer-api-key-env", KEY_ENV, *prices)  # fmt: skip
        return len(server.requests), printed


PRINTED: dict[str, str] = {}  # what bench printed, per run kind


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, int]:
    """(the store, the model-buyer run, the rule-based run, requests the buyer model was sent)."""
    db = tmp_path_factory.mktemp("buyer-report") / "runs.sqlite"
    asked, PRINTED["model"] = _model_buyer(db)
    PRINTED["rules"] = _bench(db)
    with Store(db, readonly=True) as store:
        model = next(r for r in store.runs() if "env_options" in r.config)
        rules = next(r for r in store.runs() if r.id != model.id)
    return db, model.id, rules.id, asked


def test_the_leaderboard_of_a_model_buyer_run_has_the_buyers_line(runs: tuple[Path, str, str, int]) -> None:
    db, model_run, _, asked = runs
    with Store(db, readonly=True) as store:
        [episode] = store.episodes(model_run)
    m = episode.metrics
    assert m is not None
    [line] = [x for x in PRINTED["model"].splitlines() if x.startswith("buyer model")]
    assert line == (f"buyer model scripted-buyer for quote-then-fit: {asked} requests (0 failed) over 1 episodes, "
                    f"tokens/ep prompt/completion {m['buyer_prompt_tokens']:,}/{m['buyer_completion_tokens']:,}, "
                    "unpriced")  # fmt: skip


def test_a_rule_based_leaderboard_has_no_buyer_line(runs: tuple[Path, str, str, int]) -> None:
    assert "buyer model" not in PRINTED["rules"]
    rules = EpisodeRecord("a", "t", 1, "ok", {"primary": 1.0}, 0.1, 5, 5)
    assert counterparty.leaderboard_lines([rules], ["a"], WORDS) == []
    assert counterparty.leaderboard_lines([_episode("a", 0.01)], ["a"], None) == []


def test_a_priced_buyer_line_has_the_cost_per_episode() -> None:
    lines = counterparty.leaderboard_lines([_episode("a", 0.0012, 3), _episode("a", 0.0030, 4), _episode("b", None)],
                                           ["b", "a", "c"], WORDS)  # fmt: skip
    assert lines == ["buyer model m for b: 3 requests (1 failed) over 1 episodes, tokens/ep prompt/completion "
                     "1,000/200, unpriced",
                     "buyer model m for a: 7 requests (2 failed) over 2 episodes, tokens/ep prompt/completion "
                     "1,000/200, $0.0042 ($0.0021/ep)"]  # fmt: skip


def test_the_report_of_a_model_buyer_run_has_the_buyers_requests_and_tokens(
        runs: tuple[Path, str, str, int], tmp_path: Path) -> None:  # fmt: skip
    db, model_run, _, asked = runs
    with Store(db, readonly=True) as store:
        [episode] = store.episodes(model_run)
        files = write_report(store, model_run, tmp_path / "report")
    m = episode.metrics
    assert m is not None and asked > 0
    text = files.markdown.read_text()
    assert "## Counterparty: buyer model" in text
    row = next(line for line in text.splitlines() if line.startswith("| quote-then-fit | scripted-buyer"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:5] == ["1", str(asked), "0"]  # episodes, requests, failed
    assert cells[6] == f"{m['buyer_prompt_tokens']:,}" and cells[7] == f"{m['buyer_completion_tokens']:,}"
    assert cells[9] == "—"  # no buyer prices given: unpriced, never $0
    assert "Counterparty: buyer model" in files.html.read_text()


def test_a_rule_based_run_reports_no_buyer_model(runs: tuple[Path, str, str, int], tmp_path: Path) -> None:
    db, _, rules_run, _ = runs
    with Store(db, readonly=True) as store:
        files = write_report(store, rules_run, tmp_path / "rules")
    assert "Counterparty" not in files.markdown.read_text() and "buyer model" not in files.markdown.read_text()


def _viewed(db: Path, run_id: str) -> str:
    with Store(db, readonly=True) as store:
        [episode] = store.episodes(run_id)
        trajectory = store.trajectory(run_id, episode.policy, episode.territory_id)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    view.render(trajectory, episode.metrics, console)
    page = view.html(trajectory, episode.metrics)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert ("buyer model" in out) == ("buyer model" in page)
    return str(out)


def test_the_episode_view_gathers_the_buyers_accounting_into_one_figure(runs: tuple[Path, str, str, int]) -> None:
    db, model_run, rules_run, asked = runs
    shown = _viewed(db, model_run)
    assert f"buyer model scripted-buyer · requests {asked} (0 failed)" in shown and "unpriced" in shown
    assert "buyer_prompt_tokens" not in shown  # gathered, not repeated as raw keys
    assert "buyer model" not in _viewed(db, rules_run)


def _episode(policy: str, cost: float | None, replies: int = 3) -> EpisodeRecord:
    metrics = {"primary": 1.0, "buyer_model": "m", "buyer_replies": replies, "buyer_failed_requests": 1,
               "buyer_prompt_tokens": 1000, "buyer_completion_tokens": 200, "buyer_cost_usd": cost}
    return EpisodeRecord(policy, f"t{replies}", 1, "ok", metrics, 0.1, 5, 5)


def test_costs_add_up_only_when_every_episode_was_priced() -> None:
    assert WORDS is not None
    priced = [_episode("a", 0.0012, 3), _episode("a", 0.0030, 4)]
    total = counterparty.totals(priced, "a", WORDS)
    assert total is not None and total.cost == pytest.approx(0.0042) and total.requests == 7 and total.failed == 2
    assert (total.prompt_tokens, total.completion_tokens, total.episodes) == (2000, 400, 2)
    half = counterparty.totals([_episode("a", 0.0012, 3), _episode("a", None, 4)], "a", WORDS)
    assert half is not None and half.cost is None and half.priced == 1
    table = counterparty.table(priced, ["a", "b"], WORDS)
    assert table is not None and [r[0] for r in table[1]] == ["a"] and table[1][0][9] == "$0.0042"
    rules = EpisodeRecord("a", "t", 1, "ok", {"primary": 1.0}, 0.1, 5, 5)
    assert counterparty.table([rules], ["a"], WORDS) is None and counterparty.table(priced, ["a"], None) is None


def test_buyer_prices_on_the_command_line_price_the_buyer_model(runs: tuple[Path, str, str, int],
                                                                tmp_path: Path) -> None:  # fmt: skip
    db = tmp_path / "priced.sqlite"
    asked, printed = _model_buyer(db, "--buyer-price-in", "2.5", "--buyer-price-out", "10")
    with Store(db, readonly=True) as store:
        [run] = store.runs()
        [episode] = store.episodes(run.id)
        files = write_report(store, run.id, tmp_path / "report")
    m = episode.metrics
    assert m is not None and m["buyer_replies"] == asked == runs[3]
    expected = round((m["buyer_prompt_tokens"] * 2.5 + m["buyer_completion_tokens"] * 10) / 1e6, 6)
    assert m["buyer_cost_usd"] == expected > 0
    assert run.config["env_options"]["buyer_price_in"] == 2.5 and run.id != runs[1]  # another run than unpriced
    row = next(line for line in files.markdown.read_text().splitlines() if line.startswith("| quote-then-fit | scr"))
    assert f"${expected:,.4f}" in row
    [line] = [x for x in printed.splitlines() if x.startswith("buyer model scripted-buyer for quote-then-fit")]
    assert line.endswith(f", ${expected:,.4f} (${expected:,.4f}/ep)")


@pytest.mark.parametrize(("args", "message", "code"), [
    (["--buyer-price-in", "-1"], "Invalid value for '--buyer-price-in'", 2),
    (["--buyer-price-out", "-0.5"], "Invalid value for '--buyer-price-out'", 2),
    (["--buyer-price-in", "nan"], "Invalid value for '--buyer-price-in'", 2),
    (["--buyer-price-out", "inf"], "Invalid value for '--buyer-price-out'", 2),
    (["--buyer-price-in", "cheap"], "Invalid value for '--buyer-price-in'", 2),
    (["--buyer-price-in", "2"], "apply to --buyer llm", 1),
    (["--buyer", "rules", "--buyer-price-out", "2"], "apply to --buyer llm", 1),
])
def test_bad_buyer_prices_are_one_line_errors(tmp_path: Path, args: list[str], message: str, code: int) -> None:
    db = tmp_path / "runs.sqlite"
    result = CliRunner().invoke(app, ["bench", "--family", "desk", "--episodes", "1", "-p", "idle", "--workers", "1",
                                      "--db", str(db), *args])  # fmt: skip
    assert result.exit_code == code and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and not db.exists(), result.output


@pytest.mark.parametrize("price", [-1, float("nan"), float("inf"), True, "2"])
def test_the_environment_refuses_a_bad_buyer_price(price: object) -> None:
    import salesgym
    from salesgym.envs.desk.llm_buyer import LLMBuyer

    with pytest.raises(ValueError, match="price_in must be a number >= 0"):
        LLMBuyer("m", price_in=price)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="price_out must be a number >= 0"):
        salesgym.make("desk-v0", buyer="llm", buyer_model="m", buyer_price_out=price)


def test_buyer_prices_apply_to_a_model_buyer_only() -> None:
    import salesgym

    with pytest.raises(ValueError, match="apply to buyer='llm'"):
        salesgym.make("desk-v0", buyer_price_in=1.0)
    env = salesgym.make("desk-v0", buyer="llm", buyer_model="m", buyer_price_in=1.0, buyer_price_out=4.0)
    assert (env.family.buyer.config.price_in, env.family.buyer.config.price_out) == (1.0, 4.0)
