"""A killed or interrupted run keeps every finished case; re-running finishes the rest, once each."""

import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.helpers import randori

pytestmark = pytest.mark.slow  # sandboxes, worker processes or a browser: `make test-fast` skips these

TASKS = ["-u", "user_task_0", "-u", "user_task_1", "-u", "user_task_2"]
PLANNED = 3 + 11 + 33


def count(path):
    con = sqlite3.connect(path / "randori.sqlite")
    try:
        return con.execute("select count(*), count(distinct key) from cases").fetchone()
    except sqlite3.OperationalError:  # the run has created the file but not yet its tables
        return 0, 0
    finally:
        con.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_resumes_without_redoing_cases(sig, tmp_path):
    with FakeOpenAIServer(lambda req: "Nothing to do.", latency=0.1) as server:
        args = ["run", "-s", "banking", *TASKS, "-m", "openai/fake", "--base-url", server.base_url,
                "--concurrency", "2", "--results", str(tmp_path)]
        proc = subprocess.Popen([sys.executable, "-m", "randori", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            time.sleep(0.2)
            if (tmp_path / "randori.sqlite").exists() and count(tmp_path)[0] >= 5:
                break
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        done, distinct = count(tmp_path)
        assert 5 <= done < PLANNED and done == distinct
        if sig == signal.SIGINT:
            assert proc.returncode == 130 and "run the same command to resume" in err
            assert "Traceback" not in err
        requests_before = len(server.requests)
        r = randori(*args)
        assert r.returncode == 0, r.stderr
        assert f"{PLANNED} cases planned, {done} already in" in r.stderr
        # Each remaining case needs exactly one model call with this policy: no finished case is redone.
        assert len(server.requests) - requests_before == PLANNED - done
    assert count(tmp_path) == (PLANNED, PLANNED)
