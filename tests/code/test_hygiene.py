"""A harness leaves nothing behind: its memory cgroups and temporary folders go on a normal exit,
and what a killed harness left is swept at the next start."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from randori.sandbox import root as sandbox_root

ONE_RUN = ("import sys, time\n"
           "from randori.sandbox.runner import Limits, Sandbox, TestJob\n"
           "job = TestJob(code='def f():\\n    return 1\\n',"
           " tests='def check(candidate):\\n    assert candidate() == 1\\n', entry_point='f', test_names=['check'])\n"
           "assert Sandbox(Limits(wall_s=10)).run_sync(job).passed\n"
           "print('ran', flush=True)\n"
           "if sys.argv[1] == 'stay':\n    time.sleep(600)\n")


def _left_by(pid: int) -> list[str]:
    """Temporary folders and cgroups owned by `pid`."""
    tmp = tempfile.gettempdir()
    found = [os.path.join(tmp, n) for n in os.listdir(tmp) if re.match(rf"randori-\w+-{pid}-", n)]
    mine = sandbox_root.memory_cgroup()
    if mine is not None:
        cgroup = os.path.join(os.path.dirname(mine), f"randori-{pid}")
        if os.path.isdir(cgroup):
            found.append(cgroup)
    return found


def _wait_until(predicate, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_a_normal_exit_leaves_nothing():
    proc = subprocess.Popen([sys.executable, "-c", ONE_RUN, "exit"], stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "ran" in out
    assert _wait_until(lambda: not _left_by(proc.pid), 5), _left_by(proc.pid)


def test_what_a_killed_harness_left_is_swept_at_the_next_start():
    proc = subprocess.Popen([sys.executable, "-c", ONE_RUN, "stay"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ran"
        left = _left_by(proc.pid)
        assert any("randori-root-" in p for p in left), left
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _left_by(proc.pid) == left  # nobody cleaned up after the kill
    time.sleep(1.5)  # its fork servers notice that their harness is gone and exit
    nxt = subprocess.run([sys.executable, "-c", ONE_RUN, "exit"], capture_output=True, text=True, timeout=120)
    assert nxt.returncode == 0, nxt.stderr[-2000:]
    assert _wait_until(lambda: not _left_by(proc.pid), 10), _left_by(proc.pid)
    assert not Path(left[0]).exists()
