"""Runs as the store records them: a killed run shows as interrupted, and two runs on one results
directory share the work instead of both running every case."""

from __future__ import annotations

import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from randori.bench.store import STALE_AFTER, Store, run_status
from tests.fakes.openai_server import FakeOpenAIServer

TASKS = ["-u", "user_task_0", "-u", "user_task_1", "-u", "user_task_2"]
PLANNED = 3 + 11 + 33


def run_args(server, results, concurrency=2):
    return [sys.executable, "-m", "randori", "run", "-s", "banking", *TASKS, "-m", "openai/fake", "--base-url",
            server.base_url, "--concurrency", str(concurrency), "--results", str(results)]


def stored(results):
    try:
        con = sqlite3.connect(results / "randori.sqlite")
        try:
            return con.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_a_killed_run_shows_as_interrupted(tmp_path):
    results = tmp_path / "results"
    with FakeOpenAIServer(lambda req: "Nothing to do.", latency=0.1) as server:
        proc = subprocess.Popen(run_args(server, results), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline and stored(results) < 3:
            time.sleep(0.1)
        with Store(results, readonly=True) as store:
            [live] = store.runs()
        assert live["status"] == "running" and live["pid"] == proc.pid and live["host"] == socket.gethostname()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with Store(results, readonly=True) as store:  # read-only: judged as read, not yet written back
        [run] = store.runs()
    assert run["status"] == "interrupted"
    pytest.importorskip("starlette")
    from randori.viewer import queries

    with queries.connect(results / "randori.sqlite") as conn:
        assert [r["status"] for r in queries.runs(conn)] == ["interrupted"]
    with Store(results):  # the next writer records it
        pass
    con = sqlite3.connect(results / "randori.sqlite")
    assert con.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]


def test_run_status_judges_process_and_heartbeat():
    now = time.time()
    here = socket.gethostname()
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
    assert run_status({"status": "running", "host": here, "pid": int(dead_pid), "heartbeat_at": now}) == "interrupted"
    assert run_status({"status": "running", "host": here, "pid": 1, "heartbeat_at": now}) == "running"
    # On another machine only the heartbeat tells.
    assert run_status({"status": "running", "host": "elsewhere", "pid": 1, "heartbeat_at": now - 5}) == "running"
    assert run_status({"status": "running", "host": "elsewhere", "pid": 1,
                       "heartbeat_at": now - STALE_AFTER - 1}) == "interrupted"
    assert run_status({"status": "finished", "host": here, "pid": int(dead_pid)}) == "finished"


def test_two_identical_runs_share_the_cases(tmp_path):
    results = tmp_path / "results"
    # The server holds every reply until a third request waits beside the first run's two: the
    # second run then has claimed a case of its own, however slowly either process starts.
    lock, both = threading.Lock(), threading.Event()
    held = [0]

    def gate(req):
        with lock:
            held[0] += 1
            if held[0] >= 3:
                both.set()
        both.wait(timeout=120)
        return "Nothing to do."

    with FakeOpenAIServer(gate) as server:
        first = subprocess.Popen(run_args(server, results), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and held[0] < 2:  # the first run is at work on its two cases
            time.sleep(0.05)
        second = subprocess.Popen(run_args(server, results), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = [p.communicate(timeout=240) for p in (first, second)]
        assert first.returncode == 0 and second.returncode == 0, out
        assert both.is_set()
    # Each case takes exactly one request with this server: no case ran twice.
    assert len(server.requests) == PLANNED
    con = sqlite3.connect(results / "randori.sqlite")
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM cases").fetchone() == (PLANNED, PLANNED)
    per_run = dict(con.execute("SELECT run_id, COUNT(*) FROM cases GROUP BY run_id").fetchall())
    assert len(per_run) == 2 and all(n > 0 for n in per_run.values())  # both did part of the work
    assert "being run by another randori run" in out[0][1] + out[1][1]
    assert con.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)
    assert [s for (s,) in con.execute("SELECT status FROM runs")] == ["finished", "finished"]
