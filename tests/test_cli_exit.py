"""How the command line leaves: without the interpreter's teardown (which only frees objects one by
one after the work is done), but with everything an ordinary exit does that a user can see: the exit
status, the whole output, the exit handlers; and the ordinary way under a profiler or while a thread
still runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.helpers import randori

# Output to a pipe is block-buffered, as for a user who pipes randori's output (not line by line).
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_statuses_and_the_whole_output_survive_the_quick_exit(tmp_path):
    listed = randori("suites", "list", "--format", "json")
    assert listed.returncode == 0 and {s["name"] for s in json.loads(listed.stdout)} >= {"banking", "workspace"}
    bad = randori("run", "--executor", "bogus", "--results", str(tmp_path))
    assert bad.returncode == 2 and bad.stderr.startswith("randori: error:") and "executor" in bad.stderr
    # More output than a pipe holds, through a pipe: nothing buffered is lost at the exit.
    run = randori("run", "-s", "banking", "-u", "user_task_0", "-m", "scripted/oracle", "--results",
                  str(tmp_path / "r"))
    report = subprocess.run([sys.executable, "-m", "randori", "report", "--results", str(tmp_path / "r"),
                             "--format", "json"], capture_output=True, text=True, timeout=120, env=BUFFERED)
    assert run.returncode == 0 and report.returncode == 0
    assert json.loads(report.stdout)  # complete JSON: the last bytes were written too


def _main(code: str, tmp_path) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=BUFFERED)


def test_exit_handlers_run_and_buffered_text_is_written(tmp_path):
    r = _main("""
        import atexit, sys
        atexit.register(lambda: print("exit handler ran"))
        sys.stdout.write("buffered, no newline")
        from randori.cli import main
        main(["--version"])
    """, tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("buffered, no newline")
    assert "randori " in r.stdout and r.stdout.rstrip().endswith("exit handler ran")


def test_a_profiler_and_a_running_thread_get_the_ordinary_exit(tmp_path):
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "out.prof"), "-m", "randori",
                               "--version"], capture_output=True, text=True, timeout=120)
    assert profiled.returncode == 0 and (tmp_path / "out.prof").stat().st_size > 0  # written after main ended
    r = _main("""
        import threading, time
        from randori.cli import main  # imported first: the thread outlives `--version` by far
        def late():
            time.sleep(2)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        main(["--version"])
    """, tmp_path)
    assert r.returncode == 0 and "thread finished" in r.stdout  # the interpreter waited for it
