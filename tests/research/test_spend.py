"""Spend control as a user meets it: --sample, --limit, --dry-run and --max-cost."""

import json
import math
import re
import sqlite3

import pytest

from randori.bench.pricing import Price
from randori.suites import get_suite
from tests.fakes.openai_server import FakeOpenAIServer
from tests.helpers import randori

FAST = {"RANDORI_RETRY_BASE_DELAY": "0.001"}
PRICE = Price(input=200.0, output=400.0)  # USD per million tokens: dear, so a cap bites after a few cases


def _prices(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text(f'["openai/fake-model"]\ninput = {PRICE.input}\noutput = {PRICE.output}\n')
    return path


def _cases(store_dir, where="1"):
    con = sqlite3.connect(store_dir / "randori.sqlite")
    con.row_factory = sqlite3.Row
    return [dict(r) for r in con.execute(f"SELECT * FROM cases WHERE {where}")]


def _runs(store_dir):
    con = sqlite3.connect(store_dir / "randori.sqlite")
    return [(json.loads(c), s) for c, s in con.execute("SELECT config, status FROM runs ORDER BY id")]


def test_sample_is_stratified_recorded_and_extended_without_rerunning(tmp_path):
    suite = get_suite("banking")
    n_user, n_inj = len(suite.user_tasks), len(suite.injection_tasks)
    args = ("run", "-s", "banking", "-m", "scripted/oracle", "--results", str(tmp_path))
    r = randori(*args, "--sample", "0.25", "--sample-seed", "7")
    assert r.returncode == 0, r.stderr
    quarter = _cases(tmp_path)
    attacked = [c for c in quarter if c["kind"] == "attacked"]
    per_user = {u: sum(1 for c in attacked if c["user_task"] == u) for u in suite.user_tasks}
    # Every user task keeps its share of injection tasks (rounded up), not a random number of them.
    assert set(per_user.values()) == {math.ceil(0.25 * n_inj)}
    assert sum(1 for c in quarter if c["kind"] == "benign") == math.ceil(0.25 * n_user)
    assert _runs(tmp_path)[0][0]["sample"] == {"fraction": 0.25, "seed": 7}

    r = randori(*args, "--sample", "0.5", "--sample-seed", "7")
    assert r.returncode == 0, r.stderr
    half = _cases(tmp_path)
    assert {c["key"] for c in quarter} < {c["key"] for c in half}  # a larger sample keeps the smaller one
    full = randori(*args)
    planned = n_user + n_inj + n_user * n_inj
    assert f"{planned} cases planned, {len(half)} already in" in full.stderr
    assert len(_cases(tmp_path)) == planned


def test_limit_runs_whole_pairs_and_the_next_run_continues(tmp_path):
    args = ("run", "-s", "banking", "-u", "user_task_2", "-u", "user_task_5", "-m", "scripted/gullible",
            "-d", "none", "-d", "tool_filter", "--results", str(tmp_path), "--limit", "10")
    first = randori(*args)
    assert first.returncode == 0, first.stderr
    rows = _cases(tmp_path)
    assert len(rows) == 10
    # A limited run keeps pairs together: every case ran under both defenses.
    units = {}
    for c in rows:
        units.setdefault((c["kind"], c["user_task"], c["injection_task"]), set()).add(c["defense"])
    assert all(d == {"none", "tool_filter"} for d in units.values())
    second = randori(*args)
    assert "10 to run" in second.stderr
    assert len(_cases(tmp_path)) == 20 and _runs(tmp_path)[1][0]["limit"] == {"cases": 10, "seed": 0}


def test_dry_run_prints_the_plan_and_cost_and_writes_nothing(tmp_path):
    prices = _prices(tmp_path)
    results = tmp_path / "r"
    r = randori("run", "-s", "banking", "-u", "user_task_1", "-m", "openai/fake-model", "--base-url",
                "http://127.0.0.1:9/v1", "--no-attack", "--prices", str(prices), "--results", str(results),
                "--dry-run", env={"OPENAI_API_KEY": "sk-test", "COLUMNS": "100"})
    assert r.returncode == 0, r.stderr
    assert not results.exists()
    assert "12 would run" in r.stderr and "estimate" in r.stderr and "Nothing is run" in r.stderr
    assert re.search(r"total +12 ", r.stderr)


@pytest.mark.parametrize("model, key", [("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_a_run_is_priced_before_there_is_a_key_and_only_the_run_needs_one(model, key, tmp_path):
    if key == "ANTHROPIC_API_KEY":
        pytest.importorskip("anthropic")
    results = tmp_path / "r"
    args = ("run", "-s", "banking", "-u", "user_task_1", "-m", model, "--no-attack", "--results", str(results))
    env = {key: "", "OPENAI_BASE_URL": "", "ANTHROPIC_BASE_URL": "", "COLUMNS": "100"}
    r = randori(*args, "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert "would run" in r.stderr and "$" in r.stderr and "Nothing is run" in r.stderr
    run = randori(*args, env=env)
    assert run.returncode == 2 and f"{key} is not set" in run.stderr
    assert not (results / "randori.sqlite").exists()


def _fake_run(server, tmp_path, results, *extra):
    return randori("run", "-s", "banking", "-u", "user_task_1", "-u", "user_task_2", "-u", "user_task_3",
                   "-m", "openai/fake-model", "--base-url", server.base_url, "--prices", str(_prices(tmp_path)),
                   "--results", str(results), *extra, env={**FAST, "OPENAI_API_KEY": "sk-test", "COLUMNS": "120"})


def _cost(row):
    return PRICE.cost(row["input_tokens"], row["output_tokens"])


@pytest.mark.parametrize("executor", ["inprocess", "processes=2"])  # the driver admits, wherever cases run
def test_max_cost_stops_within_one_case_of_the_cap_and_resume_continues(executor, tmp_path):
    results = tmp_path / "r"
    cap = 0.25
    # Every reply is a final answer: one model call per case, whose prompt tokens grow with each request.
    with FakeOpenAIServer(lambda req: "Done.") as server:
        r = _fake_run(server, tmp_path, results, "--max-cost", str(cap), "--executor", executor)
        assert r.returncode == 0, r.stderr
        rows = _cases(results)
        spent = sum(_cost(c) for c in rows)
        largest = max(_cost(c) for c in rows)
        assert 0 < len(rows) < 3 + 11 + 33  # stopped before the end
        assert cap - largest <= spent <= cap + largest
        assert "Stopped at the cost cap" in r.stderr and "$" in r.stderr
        assert _runs(results)[0] == (_runs(results)[0][0], "cost_cap")
        assert _runs(results)[0][0]["max_cost_usd"] == cap
        # The progress line shows tokens and dollars.
        assert re.search(r"\d+(\.\d)?k? tok, \$\d", r.stdout)

        again = _fake_run(server, tmp_path, results, "--max-cost", "100")
        assert again.returncode == 0, again.stderr
        assert f"{len(rows)} already in" in again.stderr
        assert len(_cases(results)) == 3 + 11 + 33


def test_dry_run_uses_tokens_measured_in_the_store(tmp_path):
    results = tmp_path / "r"
    with FakeOpenAIServer(lambda req: "Done.") as server:
        assert _fake_run(server, tmp_path, results, "--no-attack").returncode == 0
        rows = _cases(results, "kind = 'benign'")
        r = _fake_run(server, tmp_path, results, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "measured" in r.stderr
    mean_in = sum(c["input_tokens"] for c in rows) / len(rows)
    assert mean_in < 1000  # the fake server's prompts are small; the documented estimate is far larger
    assert "33 would run" in r.stderr or "attacked 33" in r.stderr


def test_max_cost_needs_a_price(tmp_path):
    r = randori("run", "-s", "banking", "-m", "openai/unpriced-model", "--max-cost", "1", "--results",
                str(tmp_path), env={"OPENAI_API_KEY": "sk-test"})
    assert r.returncode == 2 and "--max-cost needs a price for openai/unpriced-model" in r.stderr
