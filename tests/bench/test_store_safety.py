"""The results store as a user meets it: `report` and the viewer only read it (even a read-only one),
a store from an older randori is read as it is and upgraded only by a run, and a store that cannot be
written is one line naming it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from randori.bench.store import APPLICATION_ID, STORE_FILE, Store
from tests.helpers import randori

RUN = ["run", "-s", "banking", "-u", "user_task_1", "-i", "injection_task_0", "-m", "scripted/gullible"]


@pytest.fixture
def results(tmp_path):
    r = randori(*RUN, "-r", str(tmp_path / "results"))
    assert r.returncode == 0, r.stderr
    return tmp_path / "results"


def schema(path):
    con = sqlite3.connect(path / STORE_FILE)
    try:
        return (con.execute("PRAGMA application_id").fetchone()[0],
                con.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall())
    finally:
        con.close()


def test_report_never_changes_the_store(results, tmp_path):
    before = (results / STORE_FILE).read_bytes()
    for args in (["-f", "json"], ["-f", "csv", "--table", "tasks"], [], ["--html", str(tmp_path / "r.html")]):
        r = randori("report", "-r", str(results), *args)
        assert r.returncode == 0, r.stderr
    assert (results / STORE_FILE).read_bytes() == before


def make_old_store(results):
    """A store as randori wrote it before stores were marked and runs had a heartbeat."""
    con = sqlite3.connect(results / STORE_FILE)
    con.executescript("""
        PRAGMA application_id = 0;
        DROP TABLE claims;
        ALTER TABLE cases DROP COLUMN attack_tries;
        ALTER TABLE runs DROP COLUMN pid;
        ALTER TABLE runs DROP COLUMN host;
        ALTER TABLE runs DROP COLUMN heartbeat_at;
    """)
    con.close()


def test_an_older_store_is_read_as_it_is_and_upgraded_only_by_a_run(results):
    make_old_store(results)
    old = schema(results)
    r = randori("report", "-r", str(results), "-f", "json")
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)["rows"]
    assert row["attack_success"]["n"] == 1
    assert schema(results) == old  # nothing created, nothing altered
    with Store(results, readonly=True) as store:
        assert store.missing_columns() == ["cases.attack_tries", "runs.pid", "runs.host", "runs.heartbeat_at"]
        assert {c["attack_tries"] for c in store.cases()} == {None}
        assert [r["status"] for r in store.runs()] == ["finished"]
    pytest.importorskip("starlette")
    view = randori("view", "-r", str(results), "--port", "1")
    assert view.returncode == 2 and "written by an older randori (it has no cases.attack_tries)" in view.stderr
    again = randori(*RUN, "-r", str(results))
    assert again.returncode == 0 and "already in" in again.stderr
    app, tables = schema(results)
    assert app == APPLICATION_ID and "claims" in {name for name, _ in tables}


def read_only(path):
    """A command prefix that runs a command with `path` on a read-only mount (as root, where file
    modes do not stop writes: bubblewrap, else util-linux's unshare), [] when file modes are enough
    (not root), or None when neither is possible here."""
    if os.geteuid() != 0:
        return []
    from randori.sandboxing import find_bwrap

    candidates = []
    if bwrap := find_bwrap():
        candidates.append([bwrap, "--die-with-parent", "--dev-bind", "/", "/", "--ro-bind", str(path), str(path), "--"])
    if shutil.which("unshare"):
        candidates.append(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"', str(path)])
    for prefix in candidates:
        probe = subprocess.run([*prefix, "sh", "-c", f'! touch "{path}/.probe" 2>/dev/null'], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return None


@contextlib.contextmanager
def made_read_only(path):
    """The command prefix under which `path` (a directory and its files) cannot be written."""
    prefix = read_only(path)
    if prefix is None:
        pytest.skip("cannot make a directory read-only here (root without bubblewrap or mount namespaces)")
    modes = []
    if not prefix:  # not root: file modes are enough
        for p in (path, *path.iterdir()):
            modes.append((p, p.stat().st_mode))
            p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        yield prefix
    finally:
        for p, mode in modes:
            p.chmod(mode)


def run_read_only(path, *args):
    with made_read_only(path) as prefix:
        env = {**os.environ, "COLUMNS": "200"}
        return subprocess.run([*prefix, sys.executable, "-m", "randori", *args], capture_output=True, text=True,
                              env=env, timeout=120)


def test_a_read_only_store_can_be_reported_but_not_run_into(results):
    assert sorted(p.name for p in results.iterdir()) == [STORE_FILE]  # no -wal or -shm file beside it
    rep = run_read_only(results, "report", "-r", str(results), "-f", "json")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["rows"][0]["attack_success"]["n"] == 1
    run = run_read_only(results, *RUN, "-u", "user_task_2", "-r", str(results))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith(f"randori: error: {results / STORE_FILE}") and "read-only" in line
    sub = run_read_only(results, *RUN, "-r", str(results / "more"))
    assert sub.returncode == 2 and "Traceback" not in sub.stderr
    assert sub.stderr.strip().splitlines()[-1].startswith(
        f"randori: error: cannot create the results directory {results / 'more'}")


def test_a_read_only_store_can_be_viewed(results):
    pytest.importorskip("starlette")
    import httpx

    assert sorted(p.name for p in results.iterdir()) == [STORE_FILE]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with made_read_only(results) as prefix:
        # A session of its own, ended whole: the viewer runs as the wrapper's child.
        proc = subprocess.Popen([*prefix, sys.executable, "-m", "randori", "view", "-r", str(results), "--port",
                                 str(port)], stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    pages = [httpx.get(f"http://127.0.0.1:{port}{u}", timeout=5) for u in ("/", "/cases")]
                    break
                except httpx.TransportError:
                    assert proc.poll() is None, proc.stderr.read()
                    assert time.monotonic() < deadline, "viewer did not start"
                    time.sleep(0.2)
            key = re.search(r'href="/case/([0-9a-f]+)', pages[1].text).group(1)
            pages.append(httpx.get(f"http://127.0.0.1:{port}/case/{key}", timeout=5))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    assert [p.status_code for p in pages] == [200, 200, 200]
    assert "user_task_1" in pages[2].text
    assert sorted(p.name for p in results.iterdir()) == [STORE_FILE]
