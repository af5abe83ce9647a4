"""An external agent's own model calls: randori cannot see them, so the agent reports them (Python:
`case.add_usage`; a process: one JSON line per call in $RANDORI_USAGE_FILE). They reach the store,
the report's token columns and, with a price for the agent, its cost; a malformed report fails the
case with a message that says what is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from randori.agents.external.session import usage_of
from randori.bench.store import Store
from randori.cli import run_cli
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.replay import Replay, oracle_agent
from tests.helpers import randori

REPO = Path(__file__).resolve().parents[2]
MCP_AGENT = f"mcp:{sys.executable} -S {REPO / 'tests' / 'fakes' / 'mcp_agent.py'}"
# Two benign cases and the injection task alone: three cases.
THREE_CASES = ["-s", "banking", "-u", "user_task_0", "-u", "user_task_3", "-i", "injection_task_0", "--no-attack"]


async def counting_agent(case: Any) -> str:
    answer = await oracle_agent(case)
    case.add_usage(1000, 50, cached_input_tokens=400)
    case.add_usage(2000, 30, calls=2, cache_write_tokens=100)
    return answer


async def spending_then_crashing_agent(case: Any) -> str:
    case.add_usage(700, 20)
    raise RuntimeError("the model provider went away")


async def miscounting_agent(case: Any) -> str:
    answer = await oracle_agent(case)
    case.add_usage(-5, 10)
    return answer


def _report(results: Path, *extra: str) -> dict[str, Any]:
    r = randori("report", "-r", str(results), "-f", "json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_python_agents_reported_usage_is_stored_reported_and_priced(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('["*:counting_agent@7"]\ninput = 2.0\noutput = 10.0\ncache_read = 0.5\ncache_write = 2.5\n')
    results = tmp_path / "r"
    assert run_cli(["run", "--agent", f"{__name__}:counting_agent", "--agent-version", "7", *THREE_CASES,
                    "-r", str(results)]) == 0
    with Store(results) as store:
        rows = store.cases()
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}
    for r in rows:
        assert (r["model_calls"], r["input_tokens"], r["output_tokens"]) == (3, 3000, 80)
        assert (r["cached_input_tokens"], r["cache_write_tokens"]) == (400, 100)
    [row] = _report(results, "--prices", str(prices))["rows"]
    assert (row["model_calls"], row["input_tokens"], row["output_tokens"]) == (9, 9000, 240)
    per_case = (2500 * 2.0 + 400 * 0.5 + 100 * 2.5 + 80 * 10.0) / 1e6
    assert row["cost_usd"] == pytest.approx(3 * per_case) and row["price_source"] == str(prices)
    # Without a price for the agent, the cost is unknown, never zero, and the report says how to give one.
    assert _report(results)["rows"][0]["cost_usd"] is None
    text = randori("report", "-r", str(results)).stdout
    assert f"prices of {__name__}:counting_agent@7: unknown: cost not shown (add a price with --prices FILE)" in text


def test_a_python_agent_that_reports_a_negative_count_fails_its_case(tmp_path):
    assert run_cli(["run", "--agent", f"{__name__}:miscounting_agent", *THREE_CASES, "-r", str(tmp_path)]) == 1
    with Store(tmp_path) as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"]) for r in rows} == {("error", "agent_crash")}
    assert "usage input_tokens must be a whole number >= 0, not -5" in rows[0]["error_message"]


@pytest.mark.parametrize("counts, message", [
    ({"input_tokens": 10}, "usage needs output_tokens"),
    ({"input_tokens": 10, "output_tokens": 1, "tokens": 3}, "unknown usage field 'tokens'"),
    ({"input_tokens": 10, "output_tokens": 1.5}, "output_tokens must be a whole number"),
    ({"input_tokens": 10, "output_tokens": True}, "output_tokens must be a whole number"),
    ({"input_tokens": 10, "output_tokens": 1, "cached_input_tokens": 8, "cache_write_tokens": 3}, "cannot exceed"),
])
def test_usage_reports_are_checked(counts, message):
    with pytest.raises(ValueError, match=message):
        usage_of(counts)
    assert usage_of({"input_tokens": 10, "output_tokens": 1}).model_calls == 1


@pytest.fixture(scope="module")
def oracle_server():
    with FakeOpenAIServer(Replay().policy, record=False) as server:
        yield server


def test_an_mcp_agent_reports_its_tokens_in_a_file(tmp_path, oracle_server):
    proc = randori("run", "--agent", MCP_AGENT, *THREE_CASES, "-r", str(tmp_path),
                   env={"MODEL_BASE_URL": oracle_server.base_url, "MCP_AGENT_USAGE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    with Store(tmp_path) as store:
        rows = store.cases()
    assert len(rows) == 3
    for r in rows:
        # The fake server answers every chat request with 100+ prompt tokens and 10 completion tokens.
        assert r["status"] == "ok" and r["model_calls"] >= 2
        assert r["output_tokens"] == 10 * r["model_calls"] and r["input_tokens"] >= 100 * r["model_calls"]


def test_an_mcp_agents_malformed_usage_report_fails_its_case(tmp_path, oracle_server):
    proc = randori("run", "--agent", MCP_AGENT, *THREE_CASES, "-r", str(tmp_path),
                   env={"MODEL_BASE_URL": oracle_server.base_url, "MCP_AGENT_USAGE": "bad"})
    assert proc.returncode == 1
    with Store(tmp_path) as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"]) for r in rows} == {("error", "agent_crash")}
    assert "$RANDORI_USAGE_FILE line 1: usage input_tokens must be a whole number >= 0, not -1" in \
        rows[0]["error_message"]


def test_a_spend_cap_on_an_external_agent_needs_its_price_and_counts_what_it_reports(tmp_path):
    agent = ["--agent", f"{__name__}:counting_agent", "--agent-version", "7"]
    r = randori("run", *agent, *THREE_CASES, "--max-cost", "1", "-r", str(tmp_path / "a"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"--max-cost needs a price for {__name__}:counting_agent@7" in r.stderr
    prices = tmp_path / "prices.toml"
    prices.write_text('["*:counting_agent@7"]\ninput = 2.0\noutput = 10.0\ncache_read = 0.5\ncache_write = 2.5\n')
    # A case costs $0.00625 at these prices: after the first, a second would pass a $0.01 cap.
    r = randori("run", *agent, *THREE_CASES, "--max-cost", "0.01", "--prices", str(prices), "--concurrency", "1",
                "-r", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    with Store(tmp_path / "b") as store:
        assert len(store.cases()) == 1
        assert store.runs()[-1]["status"] == "cost_cap"


def test_a_failed_case_keeps_the_tokens_the_agent_reported_before_it_failed(tmp_path):
    assert run_cli(["run", "--agent", f"{__name__}:spending_then_crashing_agent", *THREE_CASES,
                    "-r", str(tmp_path / "py")]) == 1
    with Store(tmp_path / "py") as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"]) for r in rows} == {("error", "agent_crash")}
    assert {(r["model_calls"], r["input_tokens"], r["output_tokens"]) for r in rows} == {(1, 700, 20)}
    # A process that reports, then exits non-zero: the same.
    script = tmp_path / "agent.sh"
    script.write_text('echo \'{"input_tokens": 500, "output_tokens": 7}\' >> "$RANDORI_USAGE_FILE"\nexit 3\n')
    proc = randori("run", "--agent", f"mcp:sh {script}", *THREE_CASES, "-r", str(tmp_path / "mcp"))
    assert proc.returncode == 1, proc.stderr
    with Store(tmp_path / "mcp") as store:
        rows = store.cases()
    assert {(r["status"], r["error_category"]) for r in rows} == {("error", "agent_crash")}
    assert {(r["model_calls"], r["input_tokens"], r["output_tokens"]) for r in rows} == {(1, 500, 7)}
