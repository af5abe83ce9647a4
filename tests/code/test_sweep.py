"""A killed harness's sandbox folders are swept at the next start: in the temporary folder, and in
/tmp, where a zygote's socket folder goes when TMPDIR is too deep for a socket's path."""

from __future__ import annotations

import subprocess
import sys
import tempfile

from randori.sandbox import root


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_harnesss_folders_go_and_a_live_ones_stay(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(root, "_swept", False)
    dead = dead_pid()
    in_tmpdir = tmp_path / f"randori-sbx-{dead}-abc"
    in_slash_tmp = tempfile.mkdtemp(prefix=f"randori-zygote-{dead}-", dir="/tmp")
    live = tmp_path / f"randori-zygote-{root.os.getpid()}-own"
    other = tmp_path / f"someone-else-{dead}-x"
    for d in (in_tmpdir, live, other):
        d.mkdir()
    root.sweep_stale()
    assert not in_tmpdir.exists() and not root.os.path.exists(in_slash_tmp)
    assert live.exists() and other.exists()
