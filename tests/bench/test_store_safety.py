"""The results store as a user meets it: `report` and the viewer only read it (even a read-only one),
a store from an older randori is read as it is and upgraded only by a run, and a store that cannot be
written is one line naming it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

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
    modes do not stop writes), or None when that is not possible here."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("unshare"):
        return None
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
              'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"', str(path)]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def run_read_only(path, *args):
    prefix = read_only(path)
    if prefix is None:
        pytest.skip("cannot make a directory read-only here (root without mount namespaces)")
    modes = []
    if not prefix:  # not root: file modes are enough
        for p in (path, *path.iterdir()):
            modes.append((p, p.stat().st_mode))
            p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        env = {**os.environ, "COLUMNS": "200"}
        return subprocess.run([*prefix, sys.executable, "-m", "randori", *args], capture_output=True, text=True,
                              env=env, timeout=120)
    finally:
        for p, mode in modes:
            p.chmod(mode)


def test_a_read_only_store_can_be_reported_but_not_run_into(results):
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
