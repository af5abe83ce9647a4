"""Fault accounting as a user meets it: `randori run` against a failing server, then the store and
`randori report`."""

import json
import sqlite3

from randori.bench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Fault, scripted_policy, serve_first
from tests.helpers import randori
from tests.models.helpers import REFUND_STEPS

FAST = {"RANDORI_RETRY_BASE_DELAY": "0.001"}


def first_user_text(request):
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def run(server, tmp_path, *extra, env=None):
    return randori("run", "-s", "banking", "-u", "user_task_1", "-u", "user_task_2", "-i", "injection_task_1",
                   "--no-attack", "-m", "openai/fake-model", "--base-url", server.base_url, "--results",
                   str(tmp_path), "--max-retries", "2", *extra, env={**FAST, **(env or {})})


def test_permanent_500_on_some_cases_becomes_errors_excluded_from_rates(tmp_path):
    # The refund question is rate limited once, then answered; every other case meets a broken server.
    ok = serve_first([Fault(status=429, retry_after="0.05")], scripted_policy(REFUND_STEPS))

    def policy(req):
        return ok(req) if "Brightwave" in first_user_text(req) else Fault(status=500)

    with FakeOpenAIServer(policy) as server:
        r = run(server, tmp_path)
        assert r.returncode == 0, r.stderr
    with Store(tmp_path) as store:
        cases = {c["user_task"] or c["injection_task"]: c for c in store.cases()}
    assert cases["user_task_1"]["status"] == "ok" and cases["user_task_1"]["utility"] == 1
    for failed in ("user_task_2", "injection_task_1"):
        assert cases[failed]["status"] == "error" and cases[failed]["error_category"] == "server"
        assert cases[failed]["utility"] is None
    [row] = json.loads(randori("report", "-r", str(tmp_path), "-f", "json").stdout)["rows"]
    assert row["errors"] == 2
    assert row["benign_utility"]["n"] == 1 and row["benign_utility"]["rate"] == 1.0
    assert row["injection_task_utility"]["n"] == 0
    # Two turns for the good case, 3 attempts for each failing one, and the refused (429) request.
    assert len(server.requests) == 2 + 2 * 3 + 1


def test_auth_failure_stops_the_run_with_exit_2_and_one_line(tmp_path):
    with FakeOpenAIServer(lambda req: Fault(status=401)) as server:
        r = run(server, tmp_path, "--concurrency", "1")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("randori: error: openai/fake-model: authentication failed (HTTP 401)")
    assert len(server.requests) == 1  # stopped at once: no retry, no further case
    con = sqlite3.connect(tmp_path / "randori.sqlite")
    assert con.execute("SELECT status FROM runs").fetchall() == [("auth_error",)]
    assert con.execute("SELECT COUNT(*) FROM cases").fetchone() == (0,)


def test_reasoning_effort_is_sent_and_is_part_of_the_case_key(tmp_path):
    with FakeOpenAIServer(scripted_policy(REFUND_STEPS)) as server:
        assert run(server, tmp_path).returncode == 0
        assert "reasoning_effort" not in server.requests[0]
        n = len(server.requests)
        r = run(server, tmp_path, "--reasoning-effort", "high")
        assert r.returncode == 0, r.stderr
        assert "0 already in" in r.stderr  # a different setting is a different case
        assert server.requests[n]["reasoning_effort"] == "high"
