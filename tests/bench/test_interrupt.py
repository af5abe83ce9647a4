"""Ctrl-C during a run, sent as a real SIGINT to the command line in a child process."""

import os
import signal
import subprocess
import sys
import time

import pytest

from randori.bench.store import STORE_FILE, open_existing
from tests.helpers import randori

pytestmark = pytest.mark.slow


def _stored(results) -> int:
    if not (results / STORE_FILE).exists():
        return 0
    try:
        with open_existing(results, readonly=True) as store:
            return len(store.done_keys())
    except Exception:  # the run is still creating its tables
        return 0


def _start(results):
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("RANDORI_MODEL", None)
    return subprocess.Popen([sys.executable, "-m", "randori", "run", "--model", "scripted/gullible",
                             "--results", str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _wait_for_cases(proc, results, timeout=300.0):
    deadline = time.monotonic() + timeout
    while _stored(results) < 1:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no case was stored"
        time.sleep(0.1)


def test_first_ctrl_c_stops_the_scripted_run_keeps_what_finished_and_a_rerun_resumes(tmp_path):
    results = tmp_path / "r"
    proc = _start(results)
    try:
        _wait_for_cases(proc, results)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    saved = _stored(results)
    # it stopped: far from every case ran, and what finished is in the partial table and the hint
    assert "Interrupted:" in err and f"{saved} of " in err and "run the same command to resume" in err
    of = int(err.split(f"{saved} of ", 1)[1].split()[0])
    assert saved < of / 2, (saved, of)
    assert "banking" in out or "suite" in out.lower(), out  # the table of what finished
    again = randori("run", "--model", "scripted/gullible", "--results", str(results), "--limit", "3")
    assert again.returncode == 0, again.stderr
    assert f"{of} cases planned" in again.stderr and ", 3 to run." in again.stderr.replace("\n", " ")
    assert _stored(results) == saved + 3  # the rerun kept what the interrupted run stored


def test_a_second_ctrl_c_exits_at_once_quietly(tmp_path):
    results = tmp_path / "r"
    proc = _start(results)
    try:
        _wait_for_cases(proc, results)
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
