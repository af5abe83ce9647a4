"""A run that cannot reach its server stops early with status 2 and says why; a run whose every case
failed exits non-zero; a case whose follow-up request failed keeps what it had already spent."""

from __future__ import annotations

import json
import socket
import sqlite3

from tests.fakes.openai_server import FakeOpenAIServer, Fault, serve_first
from tests.helpers import benign_cases, randori
from tests.models.helpers import run_one

FAST = {"RANDORI_RETRY_BASE_DELAY": "0.001"}
CASES = ["-s", "banking", "--no-attack"]  # every user task benign, and every injection task alone


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def last_line(r):
    return r.stderr.strip().splitlines()[-1]


def store_rows(results, sql):
    con = sqlite3.connect(results / "randori.sqlite")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_closed_port_stops_the_run_at_once_with_a_diagnosis(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    r = randori("run", *CASES, "-m", "openai/x", "--base-url", url, "-r", str(tmp_path), env=FAST)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert last_line(r).startswith(f"randori: error: cannot reach {url}, no request has been answered: "
                                   "openai/x: connection failed (connection refused")
    assert "is the server running there, and is --base-url right?" in last_line(r)
    assert store_rows(tmp_path, "SELECT status FROM runs") == [("stopped",)]
    assert store_rows(tmp_path, "SELECT COUNT(*) FROM cases") == [(0,)]


def test_an_unknown_host_is_named_as_such(tmp_path):
    r = randori("run", *CASES, "-m", "openai/x", "--base-url", "http://no-such-host.invalid/v1", "-r", str(tmp_path),
                "--max-retries", "0", env=FAST)
    assert r.returncode == 2 and "host name not found" in last_line(r)


def test_a_server_that_goes_away_stops_the_run(tmp_path):
    answers = serve_first(["Nothing to do."] * 5, lambda req: Fault(drop=True))
    with FakeOpenAIServer(answers) as server:
        r = randori("run", *CASES, "-m", "openai/x", "--base-url", server.base_url, "-r", str(tmp_path),
                    "--max-retries", "0", "--concurrency", "1", env=FAST)
    assert r.returncode == 2, r.stderr
    assert "stopped answering: 10 requests in a row failed after 5 answered" in last_line(r)
    assert len(server.requests) == 15
    assert store_rows(tmp_path, "SELECT status, COUNT(*) FROM cases GROUP BY status") == [("error", 9), ("ok", 5)]


def test_a_run_whose_every_case_failed_exits_non_zero(tmp_path):
    with FakeOpenAIServer(lambda req: Fault(status=400)) as server:
        r = randori("run", *CASES, "-m", "openai/x", "--base-url", server.base_url, "-r", str(tmp_path), env=FAST)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    planned = benign_cases("banking")
    assert last_line(r).startswith(f"randori: error: every case of this run failed (bad_request {planned})")
    assert store_rows(tmp_path, "SELECT COUNT(*) FROM cases WHERE status = 'error'") == [(planned,)]
    rep = randori("report", "-r", str(tmp_path), "-f", "json")
    assert json.loads(rep.stdout)["rows"][0]["errors"] == planned


def test_a_case_keeps_the_cost_of_a_reply_before_a_failed_follow_up():
    # An empty reply is answered with a nudge; the server rejects the nudge: the case is an error,
    # but the reply it got first was paid for.
    with FakeOpenAIServer(serve_first(["", Fault(status=400)], lambda req: "unused")) as server:
        result = run_one("openai/fake", server)
    assert result.status == "error" and result.error_category == "bad_request"
    assert (result.model_calls, result.input_tokens, result.output_tokens) == (1, 101, 10)
    assert "the replies before it are counted" in json.dumps(result.messages)
