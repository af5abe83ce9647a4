import os
import time
import uuid
from pathlib import Path

import pytest

from randori import errors
from randori.suites import get_suite, suite_names

# Every process the test suite starts inherits this variable (tests.helpers.randori and subprocess
# both pass the environment on): at the end of the session, any live process that carries it was
# started by a test that did not end it.
SESSION_MARK = "RANDORI_TEST_SESSION"
LEFTOVER_WAIT = 60.0  # seconds processes a test killed may take to be gone (a guard, not a bound)


def pytest_configure(config):
    os.environ.setdefault(SESSION_MARK, uuid.uuid4().hex)


def processes_marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of the live processes, this one aside, whose environment holds `mark`."""
    needle = f"{SESSION_MARK}={mark}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append((int(pid), Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except (OSError, IndexError):
            continue
    return found


def pytest_sessionfinish(session, exitstatus):
    """The run fails if a process a test started outlived the session."""
    if not os.path.isdir("/proc") or os.environ.get(SESSION_MARK) is None:
        return
    # What randori itself ends at exit is not left behind: a Python agent's idle worker, kept for a
    # next case on its run's event loop, goes when the interpreter does (or here).
    from randori.agents.external.process import end_idle_workers

    end_idle_workers()
    deadline = time.monotonic() + LEFTOVER_WAIT
    while (left := processes_marked(os.environ[SESSION_MARK])) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(left)} process(es) started by the tests are still alive:",
                 *(f"  {pid} {cmd[:200]}" for pid, cmd in left)]
        if reporter is not None:
            reporter.write("\n")
        for line in lines:
            reporter.write_line(line, red=True) if reporter else print(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(params=suite_names())
def suite(request):
    return get_suite(request.param)


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only():
    """Keys a test registers (models register theirs) are masked in every later message of the
    process, down to 6-character fragments: one test's fake key ("sk-test-adaptive-0") must not
    garble another test's messages ("the *** attack")."""
    before = set(errors._registered)
    yield
    errors._registered.clear()
    errors._registered.update(before)
