import os
import subprocess
import sys


def randori(*args, env=None, timeout=600, **kw):
    """Run the CLI as a user would, in a child process. `timeout` is a guard against a hang, not a
    bound on speed: `suites check` of every suite takes 35 s on an idle 2-core machine and several
    minutes on a loaded one."""
    full_env = {**os.environ, "COLUMNS": "200"}
    full_env.pop("RANDORI_MODEL", None)  # a developer's own default model must not change what tests run
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "randori", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, **kw)


def alive_with(marker: str) -> list[int]:
    """PIDs of live (not zombie) processes whose command line holds `marker`, randori's own aside. An
    agent's processes are found so from outside its container, where its PID numbers mean nothing."""
    from pathlib import Path

    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and "randori" not in cmdline and state != "Z":
            pids.append(int(pid))
    return pids


CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright's own browser download is never used
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def playwright_or_skip():
    """Playwright's sync API for a browser test module, or the whole module skipped with the reason."""
    import pytest

    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"browser test skipped: Debian's Chromium is not at {CHROMIUM} "
                    "(apt-get install chromium; .ci/run does this)", allow_module_level=True)
    return pytest.importorskip("playwright.sync_api", reason="browser test skipped: the playwright package "
                               "is not installed (pip install -e '.[dev]')")


def benign_cases(suite: str) -> int:
    """How many cases `run -s SUITE --no-attack` plans: each user task alone and each injection task
    alone. Tests that count a run's requests or errors take it from the suite, not a number that every
    new task makes wrong."""
    from randori.suites import get_suite

    s = get_suite(suite)
    return len(s.user_tasks) + len(s.injection_tasks)
